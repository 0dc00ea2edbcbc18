"""dot and matmul (the rest of linear algebra lives elsewhere), and trapezoid."""

from __future__ import annotations

from olympus_trace import array_ops as ops
from olympus_trace import lax_ops as lax

from ._util import aval_of, ensure_arraylike


def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's dot: a product with scalars; otherwise a contraction of the last axis of `a`
    with the only axis of a 1-D `b` or the second-to-last axis of an N-D `b` (the result's
    shape is ``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]``)."""
    a, b = ensure_arraylike("dot", a, b)
    a, b = ops.promote_dtypes(a, b)
    aa, ba = aval_of(a), aval_of(b)
    if aa.ndim == 0 or ba.ndim == 0:
        return ops.multiply(a, b)
    b_axis = 0 if ba.ndim == 1 else ba.ndim - 2
    if aa.shape[-1] != ba.shape[b_axis]:
        raise TypeError(f"Incompatible shapes for dot: {aa.shape} and {ba.shape}: the last "
                        f"axis of the first ({aa.shape[-1]}) must match axis {b_axis} of the "
                        f"second ({ba.shape[b_axis]}).")
    out = lax.dot_general(a, b, (((aa.ndim - 1,), (b_axis,)), ((), ())),
                          preferred_element_type=preferred_element_type or aa.dtype)
    return lax.convert_element_type(out, aa.dtype, aa.weak_type and ba.weak_type)


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's broadcasting of leading (batch) dimensions."""
    a, b = ensure_arraylike("matmul", a, b)
    return ops.matmul(a, b)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y along `axis` by the trapezoidal rule (sample points `x`, or spacing
    `dx`)."""
    from ._reductions import sum as _sum
    from ._shape import _slice_axis, moveaxis

    y = ensure_arraylike("trapezoid", y)
    (y,) = ops.promote_dtypes_inexact(y)
    y = moveaxis(y, axis, -1)
    n = aval_of(y).shape[-1]
    nd = aval_of(y).ndim
    if x is None:
        d = dx
    else:
        x = ensure_arraylike("trapezoid", x)
        if aval_of(x).ndim == 1:
            d = ops.subtract(_slice_axis(x, 0, 1, n), _slice_axis(x, 0, 0, n - 1))
        else:
            x = moveaxis(x, axis, -1)
            d = ops.subtract(_slice_axis(x, nd - 1, 1, n), _slice_axis(x, nd - 1, 0, n - 1))
    mid = ops.add(_slice_axis(y, nd - 1, 1, n), _slice_axis(y, nd - 1, 0, n - 1))
    return ops.multiply(0.5, _sum(ops.multiply(d, mid), axis=-1))
