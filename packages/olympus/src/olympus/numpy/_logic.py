"""Comparisons of whole arrays and membership: isclose, allclose, array_equal, array_equiv,
isin."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

from .._src.library_jit import jitted as _jitted
from . import _shape
from . import _ufuncs as uf
from ._reductions import all as _all
from ._reductions import any as _any
from ._util import aval_of, ensure_arraylike, promote_dtypes_inexact


@_jitted(static_argnames=("equal_nan",))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``a == b or (isfinite(b) and |a - b| <= atol + rtol * |b|)`` (JAX's
    formulation), with NaNs equal only if `equal_nan`."""
    a, b = ensure_arraylike("isclose", a, b)
    # JAX compares integers as floats too (with the tolerances), and meets mismatched shapes
    # first in the `and` of the two isnan masks.
    a, b = promote_dtypes_inexact(a, b)
    dt = aval_of(a).dtype
    real = dtypes.finfo(dt).dtype if dtypes.is_complex(dt) else dt
    rtol = lax.convert_element_type(rtol, real, False)
    atol = lax.convert_element_type(atol, real, False)
    both_nan = uf.logical_and(uf.isnan(a), uf.isnan(b))
    check_fin = uf.isfinite(b)
    in_range = uf.less_equal(uf.abs(uf.subtract(a, b)),
                             uf.add(atol, uf.multiply(rtol, uf.abs(b))))
    out = uf.logical_or(uf.equal(a, b), uf.logical_and(check_fin, in_range))
    return uf.logical_or(out, both_nan) if equal_nan else out


@_jitted(static_argnames=("equal_nan",))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements are close (see isclose)."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether the arrays have the same shape and elements."""
    try:
        a1, a2 = ensure_arraylike("array_equal", a1, a2)
    except TypeError:
        return np.bool_(False)
    if aval_of(a1).shape != aval_of(a2).shape:
        return np.bool_(False)
    eq = uf.equal(a1, a2)
    if equal_nan:
        eq = uf.logical_or(eq, uf.logical_and(uf.isnan(a1), uf.isnan(a2)))
    return _all(eq)


def array_equiv(a1, a2):
    """Whether the arrays are equal after broadcasting against each other."""
    a1, a2 = ensure_arraylike("array_equiv", a1, a2)
    try:
        prom.broadcast_shapes(aval_of(a1).shape, aval_of(a2).shape)
    except ValueError:
        return np.bool_(False)
    return _all(uf.equal(a1, a2))


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Elementwise: whether each element of `element` is in `test_elements`."""
    element, test_elements = ensure_arraylike("isin", element, test_elements)
    shape = aval_of(element).shape
    e = _shape.ravel(element)
    t = _shape.ravel(test_elements)
    n, m = aval_of(e).shape[0], aval_of(t).shape[0]
    if m == 0:
        out = prom.broadcast_to(np.bool_(False), (n,))
    else:
        eq = uf.equal(lax.reshape(e, (n, 1)), lax.reshape(t, (1, m)))
        out = _any(eq, axis=-1)
    if invert:
        out = lax.bitwise_not(out)
    return lax.reshape(out, shape)
