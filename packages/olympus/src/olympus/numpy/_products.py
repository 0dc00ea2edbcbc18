"""dot and matmul (the rest of linear algebra lives elsewhere), and trapezoid."""

from __future__ import annotations

import builtins

import numpy as np

from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

from . import _ufuncs as uf
from ._util import aval_of, ensure_arraylike


def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's dot: a product with scalars; otherwise a contraction of the last axis of `a`
    with the only axis of a 1-D `b` or the second-to-last axis of an N-D `b` (the result's
    shape is ``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]``)."""
    a, b = ensure_arraylike("dot", a, b)
    a, b = prom.promote_dtypes(a, b)
    aa, ba = aval_of(a), aval_of(b)
    if aa.ndim == 0 or ba.ndim == 0:
        return uf.multiply(a, b)
    b_axis = 0 if ba.ndim == 1 else ba.ndim - 2
    if aa.shape[-1] != ba.shape[b_axis]:
        raise TypeError(f"Incompatible shapes for dot: {aa.shape} and {ba.shape}: the last "
                        f"axis of the first ({aa.shape[-1]}) must match axis {b_axis} of the "
                        f"second ({ba.shape[b_axis]}).")
    out = lax.dot_general(a, b, (((aa.ndim - 1,), (b_axis,)), ((), ())),
                          preferred_element_type=preferred_element_type or aa.dtype)
    return lax.convert_element_type(out, aa.dtype, aa.weak_type and ba.weak_type)


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's broadcasting of leading (batch) dimensions, as JAX
    computes it: one dot_general (batch dims where both operands have them, size-1 batch
    dims squeezed), then a transpose into NumPy's output order if needed."""
    a, b = ensure_arraylike("matmul", a, b)
    a, b = prom.promote_dtypes(a, b)
    aa, ba = aval_of(a), aval_of(b)
    for i, av in enumerate((aa, ba)):
        if av.ndim < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             f"ndim {av.ndim}")
    out_dtype = aa.dtype
    out_weak = aa.weak_type and ba.weak_type
    a_is_mat, b_is_mat = aa.ndim > 1, ba.ndim > 1
    a_batch_dims = aa.shape[:-2] if a_is_mat else ()
    b_batch_dims = ba.shape[:-2] if b_is_mat else ()
    nbatch = builtins.max(len(a_batch_dims), len(b_batch_dims))
    a_batch_dims = (None,) * (nbatch - len(a_batch_dims)) + tuple(a_batch_dims)
    b_batch_dims = (None,) * (nbatch - len(b_batch_dims)) + tuple(b_batch_dims)
    a_squeeze, b_squeeze, a_batch, b_batch = [], [], [], []
    idx_batch, idx_a_other, idx_b_other = [], [], []
    for i, (da, db) in enumerate(zip(a_batch_dims, b_batch_dims)):
        if da is None:
            idx_b_other.append(i)
        elif db is None:
            idx_a_other.append(i)
        elif da == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif db == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif da == db:
            a_batch.append(len(idx_batch) + len(idx_a_other))
            b_batch.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible shapes for matmul arguments: {aa.shape} and "
                             f"{ba.shape}")
    if a_is_mat:
        idx_a_other.append(nbatch)
    if b_is_mat:
        idx_b_other.append(nbatch + a_is_mat)
    perm = np.argsort(np.array(idx_batch + idx_a_other + idx_b_other, dtype=np.int64))
    a = lax.squeeze(a, a_squeeze)
    b = lax.squeeze(b, b_squeeze)
    na, nb_ = aval_of(a).ndim, aval_of(b).ndim
    out = lax.dot_general(a, b, (((na - 1,), (nb_ - 1 - b_is_mat,)),
                                 (tuple(a_batch), tuple(b_batch))),
                          preferred_element_type=out_dtype)
    out = lax.transpose(out, tuple(int(p) for p in perm))
    return lax.convert_element_type(out, out_dtype, out_weak)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y along `axis` by the trapezoidal rule (sample points `x`, or spacing
    `dx`)."""
    from ._reductions import sum as _sum
    from ._shape import _slice_axis, moveaxis

    y = ensure_arraylike("trapezoid", y)
    (y,) = prom.promote_dtypes_inexact(y)
    y = moveaxis(y, axis, -1)
    n = aval_of(y).shape[-1]
    nd = aval_of(y).ndim
    if x is None:
        d = dx
    else:
        x = ensure_arraylike("trapezoid", x)
        if aval_of(x).ndim == 1:
            d = uf.subtract(_slice_axis(x, 0, 1, n), _slice_axis(x, 0, 0, n - 1))
        else:
            x = moveaxis(x, axis, -1)
            d = uf.subtract(_slice_axis(x, nd - 1, 1, n), _slice_axis(x, nd - 1, 0, n - 1))
    mid = uf.add(_slice_axis(y, nd - 1, 1, n), _slice_axis(y, nd - 1, 0, n - 1))
    return uf.multiply(0.5, _sum(uf.multiply(d, mid), axis=-1))
