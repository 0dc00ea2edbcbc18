"""Set operations on 1-D arrays: union1d, intersect1d, setdiff1d, setxor1d.

The size of a set operation's result depends on the data, so under `jit` a static
``size=`` must be given (like `unique`): the result then holds the first `size` elements
and is padded with `fill_value` (default: the smallest element of the result, or 0 when the
result is empty; indices returned by ``intersect1d(..., return_indices=True)`` are padded
with the out-of-bounds index ``len(ar)``). Without `size`, the inputs must be concrete.

Each operation is computed in two jitted steps with static shapes: a boolean `keep` mask
over a fixed-length candidate array (sorted unique values of the inputs), then a stable
compaction of the kept candidates to the first `size` slots.
"""

from __future__ import annotations

import numpy as np

from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace.core import Tracer
from olympus_trace.errors import ConcretizationTypeError

from .._src.jit import jit
from ._logic import isin
from ._sorting import _gather_1d, _ravel, _unique_mask, searchsorted
from ._util import dtype_of as _dt
from ._util import ensure_arraylike, static_int
from ._util import shape_of as _shape

__all__ = ["union1d", "intersect1d", "setdiff1d", "setxor1d"]

_I32 = np.dtype(np.int32)


def _flat(name, *xs):
    xs = ensure_arraylike(name, *xs)
    xs = xs if isinstance(xs, list) else [xs]
    return [_ravel(x) for x in xs]


def _static_size(name, size):
    if size is None:
        return None
    size = static_int(size, f"the size argument of olympus.numpy.{name}")
    if size < 0:
        raise ValueError(f"{name}: size must be non-negative, got size={size}.")
    return size


def _count(name, keep):
    """The number of kept candidates as a Python int (the inputs must be concrete)."""
    if isinstance(keep, Tracer):
        v = keep.to_concrete_value()
        if v is None:
            raise ConcretizationTypeError(
                keep, f"The error arose in olympus.numpy.{name}: the size of the result "
                "depends on the values of the inputs. Pass a static size= argument (and "
                "optionally fill_value=) to use it under jit or other transformations.")
        keep = v
    return int(np.asarray(keep).sum())


def _fill_operand(fill_value, dt):
    if fill_value is None:
        return None
    fv = prom.to_operand(ensure_arraylike("fill_value", fill_value))
    if len(_shape(fv)) != 0:
        raise ValueError(f"fill_value must be a scalar, got an array of shape {_shape(fv)}.")
    return lax.convert_element_type(fv, dt, False)


def _sorted_unique(x):
    """(sorted values, original indices, first-of-run mask); all True-mask for empty x."""
    n = _shape(x)[0]
    if n == 0:
        return x, lax.iota(_I32, 0), lax.broadcast_in_dim(np.bool_(True), (0,), ())
    return tuple(_unique_mask(x))


def _sorted(x):
    n = _shape(x)[0]
    iota = lax.iota(_I32, n)
    if n == 0:
        return x, iota
    s, perm = lax.sort((x, iota), dimension=0, is_stable=True, num_keys=1)
    return s, perm


@jit(static_argnums=(1, 2), inline=True)
def _compact(keep, size, resort, vals, extras, val_fill, extra_fills):
    """The kept entries of `vals` (and of each array in `extras`) moved to the front
    (keeping their order, or sorted by value if `resort`), cut or padded to `size`; the
    padding is `val_fill` (None: the first kept value, or 0) and `extra_fills`."""
    n = _shape(vals)[0]
    dt = _dt(vals)
    if n == 0:
        vals = lax.broadcast_in_dim(np.zeros((), dt), (1,), ())
        extras = [lax.broadcast_in_dim(np.int32(0), (1,), ()) for _ in extras]
        keep = lax.broadcast_in_dim(np.bool_(False), (1,), ())
        n = 1
    drop = lax.convert_element_type(lax.bitwise_not(keep), _I32)
    if resort:
        outs = lax.sort((drop, vals, *extras), dimension=0, is_stable=True, num_keys=2)
    else:
        outs = lax.sort((drop, vals, *extras), dimension=0, is_stable=True, num_keys=1)
    outs = list(outs)[1:]
    count = lax.reduce_sum(lax.convert_element_type(keep, _I32), (0,))
    ks = lax.iota(_I32, size)
    valid = lax.lt(ks, lax.broadcast_in_dim(count, (size,), ()))
    idx = lax.min(ks, np.int32(n - 1)) if size else ks
    res = [_gather_1d(o, idx) for o in outs]
    if val_fill is None:
        first = lax.reshape(lax.slice(outs[0], (0,), (1,)), ())
        val_fill = lax.select(lax.gt(count, np.int32(0)), first, np.zeros((), dt))
    fills = [val_fill] + list(extra_fills)
    return [lax.select(valid, r, lax.broadcast_in_dim(lax.convert_element_type(f, _dt(r)),
                                                      (size,), ()))
            for r, f in zip(res, fills, strict=True)]


def _finish(name, keep, size, resort, vals, extras=(), fill_value=None, extra_fills=()):
    count = None
    if size is None:
        # Compact to the (static) number of candidates, then cut: one compile per input
        # shape rather than one per result length.
        count = _count(name, keep)
        size = _shape(vals)[0]
    outs = _compact(keep, size, resort, vals, list(extras),
                    _fill_operand(fill_value, _dt(vals)),
                    [np.int32(f) for f in extra_fills])
    if count is not None and count != size:
        outs = [lax.slice(o, (0,), (count,)) for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _promote(a, b):
    a, b = prom.promote_dtypes(a, b)
    return (lax.convert_element_type(a, _dt(a), False),
            lax.convert_element_type(b, _dt(b), False))


# --- the operations ---------------------------------------------------------------------------


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values found in either input (both are flattened)."""
    a, b = _flat("union1d", ar1, ar2)
    size = _static_size("union1d", size)
    a, b = _promote(a, b)
    s, keep = _union_keep(a, b)
    return _finish("union1d", keep, size, False, s, fill_value=fill_value)


@jit(inline=True)
def _union_keep(a, b):
    s, _, keep = _sorted_unique(lax.concatenate([a, b], 0))
    return s, keep


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The unique values of `ar1` (sorted) that are not in `ar2`. With `assume_unique`,
    `ar1` is taken as already unique and its order is kept."""
    a, b = _flat("setdiff1d", ar1, ar2)
    size = _static_size("setdiff1d", size)
    a = lax.convert_element_type(a, _dt(a), False)
    s, keep = _setdiff_keep(a, b, bool(assume_unique))
    return _finish("setdiff1d", keep, size, False, s, fill_value=fill_value)


@jit(static_argnums=(2,), inline=True)
def _setdiff_keep(a, b, assume_unique):
    if assume_unique:
        s, first = a, lax.broadcast_in_dim(np.bool_(True), _shape(a), ())
    else:
        s, _, first = _sorted_unique(a)
    return s, lax.bitwise_and(first, isin(s, b, invert=True))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values found in both inputs; with `return_indices`, also the
    index of the first occurrence of each in the (flattened) `ar1` and `ar2`."""
    a, b = _flat("intersect1d", ar1, ar2)
    size = _static_size("intersect1d", size)
    a, b = _promote(a, b)
    s, keep, i1, i2 = _intersect_keep(a, b, bool(assume_unique))
    if not return_indices:
        return _finish("intersect1d", keep, size, False, s, fill_value=fill_value)
    return _finish("intersect1d", keep, size, False, s, (i1, i2), fill_value,
                   (_shape(a)[0], _shape(b)[0]))


@jit(static_argnums=(2,), inline=True)
def _intersect_keep(a, b, assume_unique):
    if assume_unique:
        s, i1 = _sorted(a)
        first = lax.broadcast_in_dim(np.bool_(True), _shape(a), ())
    else:
        s, i1, first = _sorted_unique(a)
    keep = lax.bitwise_and(first, isin(s, b))
    s2, perm2 = _sorted(b)
    m = _shape(b)[0]
    if m == 0:
        i2 = lax.broadcast_in_dim(np.int32(0), _shape(s), ())
    else:
        pos = lax.min(searchsorted(s2, s, side="left"), np.int32(m - 1))
        i2 = _gather_1d(perm2, pos)
    return s, keep, i1, i2


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values found in exactly one of the inputs."""
    a, b = _flat("setxor1d", ar1, ar2)
    size = _static_size("setxor1d", size)
    a, b = _promote(a, b)
    s, keep = _setxor_keep(a, b, bool(assume_unique))
    return _finish("setxor1d", keep, size, True, s, fill_value=fill_value)


@jit(static_argnums=(2,), inline=True)
def _setxor_keep(a, b, assume_unique):
    if assume_unique:
        s1, s2 = a, b
        f1 = lax.broadcast_in_dim(np.bool_(True), _shape(a), ())
        f2 = lax.broadcast_in_dim(np.bool_(True), _shape(b), ())
    else:
        s1, _, f1 = _sorted_unique(a)
        s2, _, f2 = _sorted_unique(b)
    k1 = lax.bitwise_and(f1, isin(s1, b, invert=True))
    k2 = lax.bitwise_and(f2, isin(s2, a, invert=True))
    return lax.concatenate([s1, s2], 0), lax.concatenate([k1, k2], 0)
