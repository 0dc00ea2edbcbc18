"""Batching rules for dynamic slicing, gather and the scatter family.

gather/scatter never move the operand's batch dimension: a batched operand with unbatched
indices gets its batch dimension as one more (full-size) window dimension; batched indices
use the dimension numbers' batching dimensions (``operand_batching_dims`` paired with
``start_indices_batching_dims`` / ``scatter_indices_batching_dims``). dynamic_slice and
dynamic_update_slice with batched start indices become a gather / a scatter.
"""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P
from olympus_ir.prims.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)

from .. import lax_ops
from ..batching import batching_rules, matchaxis, moveaxis
from ..core import bind, get_aval
from ._util import insert_at, position_after, rank, shift_axes, unbatched_shape


def _index_dtype(idx):
    return get_aval(idx[0]).dtype if idx else np.dtype(np.int32)


def _stacked_starts(size, idx, bidx, limits):
    """The start indices as one ``[size, n]`` array, clamped into ``[0, limit]`` like
    dynamic_slice / dynamic_update_slice clamp them."""
    dt = _index_dtype(idx)
    cols = []
    for s, d, lim in zip(idx, bidx, limits, strict=True):
        s = matchaxis(size, d, 0, s)
        s = lax_ops.clamp(np.zeros((), dt), s, np.array(max(lim, 0), dt))
        cols.append(lax_ops.broadcast_in_dim(s, (size, 1), (0,)))
    return lax_ops.concatenate(cols, 1)


def _dynamic_slice_rule(axis_data, vals, dims, *, slice_sizes):
    x, *idx = vals
    bx, *bidx = dims
    size = axis_data.size
    slice_sizes = tuple(slice_sizes)
    if all(d is None for d in bidx):
        zero = np.zeros((), _index_dtype(idx))
        out = bind(P.dynamic_slice_p, x, *insert_at(idx, bx, zero),
                   slice_sizes=insert_at(slice_sizes, bx, size))
        return out, bx
    shape = unbatched_shape(x, bx)
    n = len(shape)
    starts = _stacked_starts(size, idx, bidx, [d - s for d, s in zip(shape, slice_sizes, strict=True)])
    if bx is None:
        dn = GatherDimensionNumbers(offset_dims=tuple(range(1, n + 1)), collapsed_slice_dims=(),
                                    start_index_map=tuple(range(n)))
        sizes, out_dim = slice_sizes, 0
    else:
        dn = GatherDimensionNumbers(
            offset_dims=tuple(i for i in range(n + 1) if i != bx), collapsed_slice_dims=(),
            start_index_map=shift_axes(range(n), bx), operand_batching_dims=(bx,),
            start_indices_batching_dims=(0,))
        sizes, out_dim = insert_at(slice_sizes, bx, 1), bx
    out = bind(P.gather_p, x, starts, dimension_numbers=dn, slice_sizes=sizes,
               indices_are_sorted=False, unique_indices=False, mode=GatherScatterMode.CLIP,
               fill_value=None)
    return out, out_dim


def _dynamic_update_slice_rule(axis_data, vals, dims):
    x, upd, *idx = vals
    bx, bu, *bidx = dims
    size = axis_data.size
    target = bx if bx is not None else bu
    if all(d is None for d in bidx):
        x = matchaxis(size, bx, target, x)
        upd = matchaxis(size, bu, target, upd)
        zero = np.zeros((), _index_dtype(idx))
        return bind(P.dynamic_update_slice_p, x, upd, *insert_at(idx, target, zero)), target
    target = 0 if target is None else target
    x = matchaxis(size, bx, target, x)
    shape = unbatched_shape(x, target)
    n = len(shape)
    ushape = unbatched_shape(upd, bu)
    ub = 0 if bu is None else bu
    upd = matchaxis(size, bu, ub, upd)
    starts = _stacked_starts(size, idx, bidx, [d - u for d, u in zip(shape, ushape, strict=True)])
    dn = ScatterDimensionNumbers(
        update_window_dims=tuple(i for i in range(n + 1) if i != ub), inserted_window_dims=(),
        scatter_dims_to_operand_dims=shift_axes(range(n), target),
        operand_batching_dims=(target,), scatter_indices_batching_dims=(0,))
    out = bind(P.scatter_p, x, starts, upd, dimension_numbers=dn, indices_are_sorted=True,
               unique_indices=True, mode=GatherScatterMode.CLIP)
    return out, target


def _move_index_batch_dim(idx, bi):
    """The index vector dimension is the last one: keep the batch dimension before it."""
    nd = get_aval(idx).ndim
    if bi == nd - 1:
        return moveaxis(idx, bi, nd - 2), nd - 2
    return idx, bi


def _gather_rule(axis_data, vals, dims, *, dimension_numbers, slice_sizes, **params):
    (op, idx), (bo, bi) = vals, dims
    size = axis_data.size
    dn = GatherDimensionNumbers(*map(tuple, dimension_numbers))
    offset, collapsed, sim, obatch, ibatch = dn
    slice_sizes = tuple(slice_sizes)
    if bi is None:
        # The operand's batch dimension becomes one more window (offset) dimension.
        k = sum(1 for i in range(bo) if i not in collapsed and i not in obatch)
        p = position_after(offset, k)
        new_offset = insert_at(tuple(o if o < p else o + 1 for o in offset), k, p)
        new_dn = GatherDimensionNumbers(new_offset, shift_axes(collapsed, bo),
                                        shift_axes(sim, bo), shift_axes(obatch, bo), ibatch)
        out = bind(P.gather_p, op, idx, dimension_numbers=new_dn,
                   slice_sizes=insert_at(slice_sizes, bo, size), **params)
        return out, p
    idx, bi = _move_index_batch_dim(idx, bi)
    out_rank = len(offset) + rank(idx, bi) - 1
    batch_positions = [j for j in range(out_rank) if j not in offset]
    p = position_after(batch_positions, bi)  # bi index batch dims come before it
    new_offset = tuple(o if o < p else o + 1 for o in offset)
    ibatch = shift_axes(ibatch, bi)
    if bo is None:
        new_dn = GatherDimensionNumbers(new_offset, collapsed, sim, obatch, ibatch)
    else:
        obatch = shift_axes(obatch, bo)
        k = sum(1 for d in obatch if d < bo)
        new_dn = GatherDimensionNumbers(new_offset, shift_axes(collapsed, bo),
                                        shift_axes(sim, bo), insert_at(obatch, k, bo),
                                        insert_at(ibatch, k, bi))
        slice_sizes = insert_at(slice_sizes, bo, 1)
    out = bind(P.gather_p, op, idx, dimension_numbers=new_dn, slice_sizes=slice_sizes,
               **params)
    return out, p


def _scatter_batcher(prim):
    def rule(axis_data, vals, dims, *, dimension_numbers, indices_are_sorted, **params):
        (op, idx, upd), (bo, bi, bu) = vals, dims
        size = axis_data.size
        dn = ScatterDimensionNumbers(*map(tuple, dimension_numbers))
        uwd, iwd, sdod, obatch, ibatch = dn
        if bo is None:  # the result differs per batch member
            op, bo = matchaxis(size, None, 0, op), 0
        upd_rank = rank(upd, bu)
        if bi is None:
            # The operand's batch dimension is one more window dimension of the updates.
            k = sum(1 for i in range(bo) if i not in iwd and i not in obatch)
            p = position_after(uwd, k)
            upd = matchaxis(size, bu, p, upd)
            new_uwd = insert_at(tuple(w if w < p else w + 1 for w in uwd), k, p)
            new_dn = ScatterDimensionNumbers(new_uwd, shift_axes(iwd, bo), shift_axes(sdod, bo),
                                             shift_axes(obatch, bo), ibatch)
        else:
            idx, bi = _move_index_batch_dim(idx, bi)
            scatter_positions = [j for j in range(upd_rank) if j not in uwd]
            p = position_after(scatter_positions, bi)
            upd = matchaxis(size, bu, p, upd)
            new_uwd = tuple(w if w < p else w + 1 for w in uwd)
            obatch = shift_axes(obatch, bo)
            k = sum(1 for d in obatch if d < bo)
            new_dn = ScatterDimensionNumbers(new_uwd, shift_axes(iwd, bo), shift_axes(sdod, bo),
                                             insert_at(obatch, k, bo),
                                             insert_at(shift_axes(ibatch, bi), k, bi))
            indices_are_sorted = False
        out = bind(prim, op, idx, upd, dimension_numbers=new_dn,
                   indices_are_sorted=indices_are_sorted, **params)
        return out, bo

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


batching_rules[P.dynamic_slice_p] = _dynamic_slice_rule
batching_rules[P.dynamic_update_slice_p] = _dynamic_update_slice_rule
batching_rules[P.gather_p] = _gather_rule
for _p in P.SCATTERS:
    batching_rules[_p] = _scatter_batcher(_p)
