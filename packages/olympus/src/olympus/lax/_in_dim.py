"""Slicing and indexing along one dimension (JAX's ``*_in_dim`` conveniences) and
`index_take`: compositions of `slice`, `dynamic_slice`, `dynamic_update_slice`, `squeeze`
and `gather`, as in JAX."""

from __future__ import annotations

import operator

import numpy as np

from olympus_ir.shape_poly import is_symbolic_dim
from olympus_trace import lax_ops as lax
from olympus_trace.core import get_aval

__all__ = [
    "slice_in_dim", "index_in_dim", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "index_take",
]


def _shape(x):
    return get_aval(x).shape


def _bound(v):
    """A static slice bound: an integer, or a dimension expression (shape polymorphism)."""
    return v if is_symbolic_dim(v) else operator.index(v)


def slice_in_dim(operand, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0):
    """``operand[..., start_index:limit_index:stride]`` along `axis` (static bounds;
    None means the start or the end, a negative bound counts from the end)."""
    shape = _shape(operand)
    axis = int(axis)
    n = shape[axis]
    start = 0 if start_index is None else _bound(start_index)
    limit = n if limit_index is None else _bound(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return lax.slice(operand, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """``operand[..., index]`` along `axis` for a static `index` (kept as a dimension of
    size 1 when `keepdims`)."""
    index, axis = operator.index(index), int(axis)
    n = _shape(operand)[axis]
    wrapped = index + n if index < 0 else index
    if not 0 <= wrapped < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else lax.squeeze(out, (axis,))


def _zero_like_index(index):
    """A zero start index of `index`'s integer type (Python 0 for a Python int)."""
    if isinstance(index, (int, np.integer)) and not isinstance(index, np.ndarray):
        return 0 if isinstance(index, int) else type(index)(0)
    return np.zeros((), get_aval(index).dtype)


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """``operand[..., start_index:start_index + slice_size]`` along `axis`, with a
    possibly traced `start_index` (clamped into range like `dynamic_slice`)."""
    shape = _shape(operand)
    axis = int(axis)
    starts = [_zero_like_index(start_index)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    allow = [False] * len(shape)
    allow[axis] = bool(allow_negative_indices)
    return lax.dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """``operand[..., index]`` along `axis` with a possibly traced `index`."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else lax.squeeze(out, (int(axis),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """`operand` with `update` written from `start_index` along `axis` (every other
    dimension of `update` spans the operand's)."""
    axis = int(axis)
    starts = [_zero_like_index(start_index)] * len(_shape(operand))
    starts[axis] = start_index
    allow = [False] * len(starts)
    allow[axis] = bool(allow_negative_indices)
    return lax.dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True):
    """`operand` with `update` written at `index` along `axis`; `update` may lack that
    dimension (it is then added)."""
    axis = int(axis)
    if get_aval(update).ndim == len(_shape(operand)) - 1:
        update = lax.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def index_take(src, idxs, axes):
    """``src[idxs[0], idxs[1], ...]`` for 1-D index arrays `idxs` (one per axis in `axes`)
    as one `gather`; indices are taken modulo their axis's size, as in JAX."""
    axes = tuple(int(a) for a in axes)
    indices = lax.concatenate([lax.expand_dims(i, (1,)) for i in idxs], 1)
    ia = get_aval(indices)
    shape = _shape(src)
    bounds = lax.broadcast_in_dim(np.array([shape[a] for a in axes], ia.dtype), ia.shape,
                                  (1,))
    indices = lax.rem(lax.add(lax.rem(indices, bounds), bounds), bounds)  # floor modulo
    slice_sizes = tuple(1 if i in axes else d for i, d in enumerate(shape))
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - len(axes) + 1)), collapsed_slice_dims=axes,
        start_index_map=axes)
    return lax.gather(src, indices, dnums, slice_sizes)
