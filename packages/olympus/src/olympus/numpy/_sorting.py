"""Sorting and searching: sort, argsort, lexsort, partition, argpartition, searchsorted,
unique (with JAX's static `size=` / `fill_value=` for use under jit), sort_complex.

Sorts are stable and put NaNs last (the `sort` primitive's total order). `partition` and
`argpartition` follow JAX: the first ``kth + 1`` entries are the smallest in ascending
order and the rest the others in descending order (both from `top_k`). The composite
functions run their cores under `jit` (static arguments: the shapes and flags), so
op-by-op use compiles one executable per signature instead of one per primitive.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple

import numpy as np

from olympus_ir import dtypes
from olympus_ir.prims.indexing import GatherDimensionNumbers, GatherScatterMode
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace.ad_rules.linalg_lapack import take_along_last  # noqa: F401  (re-exported)
from olympus_trace.batching import moveaxis
from olympus_trace.core import Tracer
from olympus_trace.errors import ConcretizationTypeError

from .._src.jit import jit
from .._src.library_jit import jitted as _jitted
from ._util import arr1 as _arr
from ._util import dtype_of as _dt
from ._util import shape_of as _shape

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "searchsorted",
           "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "sort_complex"]


def _ravel(x):
    return lax.reshape(x, (int(np.prod(_shape(x), dtype=np.int64)),))


def _sort_along(ops_list, axis, num_keys=1):
    """Stable sort of the operands (all the same shape) along `axis`."""
    return list(lax.sort(tuple(ops_list), dimension=axis, is_stable=True, num_keys=num_keys))


# --- sort / argsort / lexsort ----------------------------------------------------------------


@_jitted(static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a, axis: int | None = -1, *, kind=None, order=None, stable=True, descending=False):
    """A sorted copy of `a` along `axis` (flattened when `axis` is None); nans sort last."""
    a = _arr("sort", a)
    if kind is not None:  # JAX 0.10.2 removed it (stability is `stable`)
        raise TypeError("'kind' argument to sort is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError("'order' argument to sort is not supported.")
    if axis is None:
        a, axis = _ravel(a), 0
    nd = len(_shape(a))
    if nd == 0:
        raise ValueError("sort: axis out of bounds for a 0-d array; use axis=None.")
    axis = prom.canonicalize_axis(axis, nd)
    (result,) = lax.sort((a,), dimension=axis, is_stable=bool(stable), num_keys=1)
    return lax.rev(result, (axis,)) if descending else result


@_jitted(static_argnames=("axis", "kind", "order", "stable", "descending"))
def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable=True,
            descending=False):
    """Indices that sort `a` along `axis` (stable unless `stable=False`; `descending` reverses
    the order, keeping ties in order).
    """
    a = _arr("argsort", a)
    if kind is not None:
        raise TypeError("'kind' argument to argsort is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError("'order' argument to argsort is not supported.")
    if axis is None:
        a, axis = _ravel(a), 0
    nd = len(_shape(a))
    if nd == 0:
        raise ValueError("argsort: axis out of bounds for a 0-d array; use axis=None.")
    axis = prom.canonicalize_axis(axis, nd)
    iota = lax.broadcasted_iota(np.int32, _shape(a), axis)
    # As JAX: a stable descending sort reverses the operands first, so that equal
    # elements keep their order once the indices are reversed.
    if descending and stable:
        a, iota = lax.rev(a, (axis,)), lax.rev(iota, (axis,))
    _, idx = lax.sort((a, iota), dimension=axis, is_stable=bool(stable), num_keys=1)
    return lax.rev(idx, (axis,)) if descending else idx


def lexsort(keys, axis: int = -1):
    """Indices sorting by the last key first, then the one before it, and so on."""
    keys = [_arr("lexsort", k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = _shape(keys[0])
    if builtins.any(_shape(k) != shape for k in keys):
        raise ValueError("all keys need to be the same shape")
    if len(shape) == 0:
        return np.int32(0)
    axis = prom.canonicalize_axis(axis, len(shape))
    iota = lax.broadcasted_iota(np.int32, shape, axis)
    outs = _sort_along(list(reversed(keys)) + [iota], axis, num_keys=len(keys))
    return outs[-1]


def sort_complex(a):
    """Sort a complex array by real part, then imaginary part; the result is complex."""
    a = _arr("sort_complex", a)
    dt = _dt(a)
    if not dtypes.is_complex(dt):
        cdt = np.dtype(np.complex128) if dt == np.float64 else np.dtype(np.complex64)
        a = lax.convert_element_type(a, cdt)
    return sort(a, axis=-1)


# --- partition ----------------------------------------------------------------------------------


def _order_reversed(x):
    """A transform of `x` whose ascending order is the descending order of `x`."""
    dt = _dt(x)
    if dt == np.bool_:
        return lax.neg(lax.convert_element_type(x, np.int32))
    if dtypes.is_integer(dt):
        return lax.bitwise_not(x)
    return lax.neg(x)


def _partition_indices(a, kth, axis):
    a = _arr("partition", a)
    return _partition_core(a, int(kth), int(axis))


@jit(static_argnums=(1, 2), inline=True)
def _partition_core(a, kth, axis):
    nd = len(_shape(a))
    if nd == 0:
        raise TypeError("partition requires an array of rank >= 1")
    axis = prom.canonicalize_axis(axis, nd)
    n = _shape(a)[axis]
    kth = int(kth)
    if kth < 0:
        kth += n
    if not 0 <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds ({n})")
    arr = moveaxis(a, axis, -1)
    bottom = lax.top_k(_order_reversed(arr), kth + 1)[1]
    top = lax.top_k(arr, n - kth - 1)[1]
    idx = lax.concatenate([bottom, top], len(_shape(arr)) - 1)
    return moveaxis(take_along_last(arr, idx), -1, axis), moveaxis(idx, -1, axis)


def partition(a, kth: int, axis: int = -1):
    """A copy of `a` with its `kth` smallest element along `axis` in its sorted position,
    smaller elements before it and larger ones after (in no given order).
    """
    return _partition_indices(a, kth, axis)[0]


def argpartition(a, kth: int, axis: int = -1):
    """Indices that partition `a` around its `kth` smallest element along `axis`: the index of
    the kth element lands at position kth, smaller ones before it, larger ones after.
    """
    return _partition_indices(a, kth, axis)[1]


# --- searchsorted -----------------------------------------------------------------------------


def _isnan(x):
    dt = _dt(x)
    if dtypes.is_complex(dt):
        return lax.bitwise_or(lax.ne(lax.real(x), lax.real(x)), lax.ne(lax.imag(x), lax.imag(x)))
    if dtypes.is_inexact(dt):
        return lax.ne(x, x)
    return None


def _lt(x, y):
    """x < y in the sort order (NaNs last; complex lexicographic)."""
    dt = _dt(x)
    if dtypes.is_complex(dt):
        xr, xi, yr, yi = lax.real(x), lax.imag(x), lax.real(y), lax.imag(y)
        lt = lax.bitwise_or(lax.lt(xr, yr), lax.bitwise_and(lax.eq(xr, yr), lax.lt(xi, yi)))
    elif dt == np.bool_:
        lt = lax.bitwise_and(lax.bitwise_not(x), y)
    else:
        lt = lax.lt(x, y)
    nx, ny = _isnan(x), _isnan(y)
    if nx is not None:
        lt = lax.bitwise_or(lt, lax.bitwise_and(ny, lax.bitwise_not(nx)))
    return lt


def _gather_1d(a, idx):
    """a[idx] for 1-D `a` and int32 `idx` of any shape (indices in bounds)."""
    shape = _shape(idx)
    r = len(shape)
    ind = lax.broadcast_in_dim(idx, shape + (1,), tuple(range(r)))
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    return lax.gather_bind(a, ind, dn, (1,),
                indices_are_sorted=False, unique_indices=False,
                mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Insertion indices of `v` into the sorted 1-D `a` (int32), by a binary search with
    ``ceil(log2(len(a) + 1))`` unrolled steps."""
    a = _arr("searchsorted", a)
    v = _arr("searchsorted", v)
    if len(_shape(a)) != 1:
        raise ValueError("a should be 1-dimensional")
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'")
    if sorter is not None:
        sorter = lax.convert_element_type(_arr("searchsorted", sorter), np.int32)
    return _searchsorted_core(a, v, sorter, side)


@jit(static_argnums=(3,), inline=True)
def _searchsorted_core(a, v, sorter, side):
    if sorter is not None:
        a = _gather_1d(a, sorter)
    a, v = prom.promote_dtypes(a, v)
    a = lax.convert_element_type(a, _dt(a), False)
    v = lax.convert_element_type(v, _dt(v), False)
    n = _shape(a)[0]
    vshape = _shape(v)
    lo = lax.broadcast_in_dim(np.int32(0), vshape, ())
    if n == 0:
        return lo
    hi = lax.broadcast_in_dim(np.int32(n), vshape, ())
    for _ in range(max(1, math.ceil(math.log2(n + 1)))):
        active = lax.lt(lo, hi)
        mid = lax.shift_right_logical(lax.add(lo, hi), np.int32(1))
        mid_c = lax.min(mid, np.int32(n - 1))
        val = _gather_1d(a, mid_c)
        if side == "left":
            go_right = _lt(val, v)
        else:
            go_right = lax.bitwise_not(_lt(v, val))
        lo = lax.select(lax.bitwise_and(active, go_right), lax.add(mid, np.int32(1)), lo)
        hi = lax.select(lax.bitwise_and(active, lax.bitwise_not(go_right)), mid, hi)
    return lo


# --- unique -----------------------------------------------------------------------------------


def _neq_sorted(s):
    """s[1:] != s[:-1], with NaNs equal to each other."""
    n = _shape(s)[0]
    a, b = lax.slice(s, (1,), (n,)), lax.slice(s, (0,), (n - 1,))
    ne = lax.ne(a, b)
    na, nb = _isnan(a), _isnan(b)
    if na is not None:
        ne = lax.bitwise_and(ne, lax.bitwise_not(lax.bitwise_and(na, nb)))
    return ne


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None, sorted: bool = True):  # noqa: A002
    """The sorted unique values of `ar` (flattened), and optionally the index of the first
    occurrence of each, the inverse (shaped like `ar`) and the counts.

    Under jit the number of unique values is not known: pass a static `size`; results are
    then padded (values with `fill_value`, default the smallest value; indices with the
    first index; counts with 0) or truncated to `size`."""
    ar = _arr("unique", ar)
    shape = _shape(ar)
    if axis is not None:
        nd = len(shape)
        if nd == 1 and prom.canonicalize_axis(axis, 1) == 0:
            axis = None
        else:
            raise NotImplementedError("olympus.numpy.unique supports axis=None (or axis=0 of a "
                                      "1-D array) only.")
    if not equal_nan:
        raise NotImplementedError("olympus.numpy.unique: equal_nan=False is not supported.")
    x = _ravel(ar)
    n = _shape(x)[0]
    if n == 0:
        k = 0 if size is None else int(size)
        outs = [lax.broadcast_in_dim(np.zeros((), _dt(x)) if fill_value is None else
                                     np.asarray(fill_value, _dt(x)), (k,), ())]
        if return_index:
            outs.append(lax.broadcast_in_dim(np.int32(0), (k,), ()))
        if return_inverse:
            outs.append(lax.broadcast_in_dim(np.int32(0), shape, ()))
        if return_counts:
            outs.append(lax.broadcast_in_dim(np.int32(0), (k,), ()))
        return outs[0] if len(outs) == 1 else tuple(outs)
    s, perm, mask = _unique_mask(x)
    if size is None:
        if isinstance(mask, Tracer) and mask.to_concrete_value() is None:
            raise ConcretizationTypeError(
                mask, "The error arose in olympus.numpy.unique: the number of unique values "
                "is not static. Pass a static size= argument to use unique under jit.")
        m = np.asarray(mask.to_concrete_value() if isinstance(mask, Tracer) else mask)
        size = int(m.sum())
    if fill_value is not None:
        fill_value = lax.convert_element_type(prom.to_operand(fill_value), _dt(s))
    outs = _unique_core(s, perm, mask, fill_value, int(size), bool(return_index),
                        bool(return_inverse), bool(return_counts))
    if return_inverse:
        k = 1 + bool(return_index)
        outs = outs[:k] + [lax.reshape(outs[k], shape)] + outs[k + 1:]
    return outs[0] if len(outs) == 1 else tuple(outs)


@jit(inline=True)
def _unique_mask(x):
    n = _shape(x)[0]
    iota = lax.iota(np.int32, n)
    s, perm = _sort_along([x, iota], 0)
    mask = lax.concatenate([np.ones((1,), np.bool_), _neq_sorted(s)], 0) if n > 1 else \
        lax.broadcast_in_dim(np.bool_(True), (1,), ())
    return s, perm, mask


@jit(static_argnums=(4, 5, 6, 7), inline=True)
def _unique_core(s, perm, mask, fill_value, size, return_index, return_inverse,
                 return_counts):
    n = _shape(s)[0]
    i32 = np.dtype(np.int32)
    group = lax.sub(lax.cumsum(lax.convert_element_type(mask, i32), axis=0,
                         reverse=False), np.int32(1))
    nunique = lax.add(lax.slice(group, (n - 1,), (n,)), np.int32(1))  # shape (1,)
    ks = lax.iota(i32, size)
    pos = searchsorted(group, ks, side="left")
    valid = lax.lt(ks, lax.broadcast_in_dim(lax.reshape(nunique, ()), (size,), ()))
    pos_c = lax.select(valid, lax.min(pos, np.int32(n - 1)),
                       lax.broadcast_in_dim(np.int32(0), (size,), ()))
    vals = _gather_1d(s, pos_c)
    if fill_value is None:
        fill = lax.broadcast_in_dim(lax.reshape(lax.slice(s, (0,), (1,)), ()), (size,), ())
    else:
        fill = lax.broadcast_in_dim(fill_value, (size,), ())
    outs = [lax.select(valid, vals, fill)]
    if return_index:
        outs.append(_gather_1d(perm, pos_c))
    if return_inverse:
        _, inv = _sort_along([perm, group], 0)
        outs.append(inv)
    if return_counts:
        nxt = lax.concatenate([lax.slice(pos, (1,), (size,)) if size > 1 else
                               lax.broadcast_in_dim(np.int32(0), (0,), ()),
                               lax.broadcast_in_dim(np.int32(n), (1,), ())], 0) \
            if size > 0 else pos
        cnt = lax.sub(nxt, pos)
        outs.append(lax.select(valid, cnt, lax.broadcast_in_dim(np.int32(0), (size,), ())))
    return outs


def unique_values(x, *, size=None, fill_value=None):
    """The sorted unique values of `x`, flattened (array API)."""
    return unique(x, size=size, fill_value=fill_value)


class _UniqueAllResult(NamedTuple):
    """The array API's ``unique_all`` result (field names as the standard and JAX's)."""
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class _UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _inverse_shaped(inverse, x):
    # The standard's inverse_indices have x's shape (NumPy 2 and JAX agree).
    return lax.reshape(inverse, tuple(_shape(_arr("unique", x))))


def unique_counts(x, *, size=None, fill_value=None):
    """The unique values of `x` and how often each occurs (array API)."""
    return _UniqueCountsResult(*unique(x, return_counts=True, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, *, size=None, fill_value=None):
    """The unique values of `x` and, for each element of `x`, the index of its value among
    them, shaped like `x` (array API)."""
    values, inverse = unique(x, return_inverse=True, size=size, fill_value=fill_value)
    return _UniqueInverseResult(values, _inverse_shaped(inverse, x))


def unique_all(x, *, size=None, fill_value=None):
    """The unique values of `x`, the first index of each, the inverse indices and the counts
    (array API)."""
    values, indices, inverse, counts = unique(
        x, return_index=True, return_inverse=True, return_counts=True, size=size,
        fill_value=fill_value)
    return _UniqueAllResult(values, indices, _inverse_shaped(inverse, x), counts)
