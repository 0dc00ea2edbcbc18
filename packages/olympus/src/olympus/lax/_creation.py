"""Arrays made from a shape and a fill value (`full`, `full_like`, `empty`) and `dtype`,
as ``jax.lax`` has them: strict lax-level versions (no NumPy promotion of the fill value
beyond a conversion to the requested dtype)."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_ir.avals import canonicalize_shape
from olympus_trace import lax_ops as lax
from olympus_trace.core import Tracer, get_aval

__all__ = ["full", "full_like", "empty", "dtype", "shape_as_value"]


def dtype(x):
    """The dtype of a value or dtype-like: an array's own, else canonicalized (a Python
    float is float32 unless x64 is on)."""
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, Tracer) or (hasattr(x, "aval") and hasattr(x, "dtype")):
        return get_aval(x).dtype
    return dtypes.canonicalize_dtype(dtypes.dtype(x))


def _fill(shape, fill_value, dt, weak):
    out = lax.broadcast_in_dim(lax.convert_element_type(fill_value, dt, weak_type=weak),
                               shape, ())
    if shape == () and not isinstance(out, Tracer):
        from ..numpy import asarray  # a rank-0 result is still an array, weak if asked

        out = asarray(out)
    return out


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with the scalar `fill_value` (converted to `dtype` if
    given; otherwise its own dtype, weak for a Python scalar)."""
    shape = canonicalize_shape(shape, "broadcast_in_dim shape")  # JAX checks it there
    a = get_aval(fill_value)
    if a.shape:
        raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                        f"{a.shape}.")
    weak = dtype is None and a.weak_type
    dt = a.dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
    return _fill(shape, fill_value, dt, weak)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like `x` (its shape and dtype, weak type included, unless given) filled
    with `fill_value`."""
    a = get_aval(x)
    weak = dtype is None and a.weak_type
    dt = a.dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
    shape = a.shape if shape is None else canonicalize_shape(shape, "full_like")
    return _fill(shape, fill_value, dt, weak)


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose values are not to be relied on (zeros here:
    Olympus never hands out uninitialized memory)."""
    return _fill(canonicalize_shape(shape, "empty"), 0, dtypes.canonicalize_dtype(dtype),
                 False)


def shape_as_value(shape):
    """`shape` as an integer array (int32 unless a dimension needs int64). Shapes are
    always concrete in Olympus (no shape polymorphism), so this is a NumPy array, except
    that the empty shape gives an empty int32 array, as in JAX."""
    shape = canonicalize_shape(shape, "shape_as_value")
    if not shape:
        return full((0,), np.int32(0))
    dt = np.int32 if max(shape) <= np.iinfo(np.int32).max else np.int64
    return np.asarray(shape, dtype=dt)
