"""Lowering of the collectives inside a shard_map body: XLA collectives over the groups of
devices that share every mesh coordinate but those of the named axes.

Device ids are the logical ids (row-major positions in the mesh's device array, which is
also the module's device assignment), used as global ids (``use_global_device_ids``) with
a channel handle per collective, as JAX lowers them. ``axis_index`` is computed from
``partition_id``. A collective outside any shard_map body (e.g. under vmap, whose batching
rules replace them first) cannot be lowered.

``psend``/``precv`` are lowered only for GPUs in JAX; on CPU their rules raise JAX's
NotImplementedError. ``ragged_all_to_all`` is JAX's ``ragged_all_to_all`` custom call
(API version 4, replica groups and channel in its backend config), which XLA's CPU
compiler refuses (``UNIMPLEMENTED: HLO opcode `ragged-all-to-all` is not supported``),
as it refuses JAX's.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir.prims.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    precv_p,
    psend_p,
    psum_invariant_p,
    psum_p,
    psum_scatter_p,
    pvary_p,
    ragged_all_to_all_p,
)

from .. import mlir_utils as mu
from ._registry import register_lowering
from .sharding import all_manual, manual_mesh

__all__ = ["replica_groups"]


def _mesh(what: str):
    if not manual_mesh:
        raise NotImplementedError(
            f"{what} can only be lowered inside shard_map or pmap (under vmap it is "
            "replaced by ordinary operations before lowering)")
    return manual_mesh[-1]


def replica_groups(names: tuple, sizes: tuple, axes: tuple) -> list[list[int]]:
    """Logical device ids grouped by the mesh `axes`: one group per coordinate of the
    other axes, each listing the ids along `axes` in row-major order."""
    ids = np.arange(int(np.prod(sizes))).reshape(sizes)
    pos = [names.index(a) for a in axes]
    rest = [i for i in range(len(names)) if i not in pos]
    moved = np.transpose(ids, rest + pos)
    return moved.reshape(-1, int(np.prod([sizes[i] for i in pos]))).tolist()


def _groups_attr(groups) -> ir.Attribute:
    arr = np.asarray(groups, np.int64)
    return ir.DenseIntElementsAttr.get(arr, type=ir.RankedTensorType.get(
        arr.shape, ir.IntegerType.get_signless(64)))


def _channel(ctx) -> ir.Attribute:
    return ir.Attribute.parse(f"#stablehlo.channel_handle<handle = {ctx.next_channel()}, "
                              "type = 1>")


def _axes_of(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _all_reduce(ctx, x, axes, reducer, what):
    names, sizes = _mesh(what)
    aval = ctx.avals_in[0]
    groups = replica_groups(names, sizes, axes)
    t = x.type
    op = hlo.AllReduceOp([t], [x], _groups_attr(groups), channel_handle=_channel(ctx),
                         use_global_device_ids=ir.UnitAttr.get())
    scalar = mu.aval_to_ir_type(aval.update(shape=()))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        a, b = block.arguments
        if aval.dtype == np.bool_:
            r = hlo.OrOp(a, b) if reducer == "add" or reducer == "max" else hlo.AndOp(a, b)
        elif reducer == "add":
            r = hlo.AddOp(a, b)
        elif reducer == "max":
            r = hlo.MaxOp(a, b)
        else:
            r = hlo.MinOp(a, b)
        hlo.ReturnOp([r.result])
    return [op.result]


@register_lowering(psum_p)
def _psum_lowering(ctx, x, *, axis_name):
    return _all_reduce(ctx, x, _axes_of(axis_name), "add", "psum")


@register_lowering(psum_invariant_p)
def _psum_invariant_lowering(ctx, x, *, axes):
    return _all_reduce(ctx, x, tuple(axes), "add", "psum")


@register_lowering(pmax_p)
def _pmax_lowering(ctx, x, *, axis_name):
    return _all_reduce(ctx, x, _axes_of(axis_name), "max", "pmax")


@register_lowering(pmin_p)
def _pmin_lowering(ctx, x, *, axis_name):
    return _all_reduce(ctx, x, _axes_of(axis_name), "min", "pmin")


@register_lowering(pvary_p)
def _pvary_lowering(ctx, x, *, axes):
    return [x]


@register_lowering(axis_index_p)
def _axis_index_lowering(ctx, *, axis_name):
    names, sizes = _mesh("axis_index")
    i = names.index(axis_name)
    stride = int(np.prod(sizes[i + 1:]))
    out_type = mu.aval_to_ir_type(ctx.avals_out[0])

    def build():
        pid = hlo.PartitionIdOp().result
        if stride != 1:
            pid = hlo.DivOp(pid, mu.ir_constant(np.array(stride, np.uint32))).result
        pid = hlo.RemOp(pid, mu.ir_constant(np.array(sizes[i], np.uint32))).result
        return hlo.ConvertOp(out_type, pid).result

    return [all_manual(out_type, build)]


@register_lowering(all_gather_p)
def _all_gather_lowering(ctx, x, *, axis_name, axis_size, axis=0, tiled=False):
    names, sizes = _mesh("all_gather")
    groups = replica_groups(names, sizes, (axis_name,))
    aval = ctx.avals_in[0]
    if not tiled:  # gather along a new dimension of size 1 per member
        shape = list(aval.shape)
        shape.insert(axis, 1)
        x = hlo.ReshapeOp(mu.aval_to_ir_type(aval.update(shape=tuple(shape))), x).result
    op = hlo.AllGatherOp([mu.aval_to_ir_type(ctx.avals_out[0])], [x],
                         ir.IntegerAttr.get(ir.IntegerType.get_signless(64), axis),
                         _groups_attr(groups), channel_handle=_channel(ctx),
                         use_global_device_ids=ir.UnitAttr.get())
    return [op.results[0]]


@register_lowering(psum_scatter_p)
def _psum_scatter_lowering(ctx, x, *, axis_name, axis_size, scatter_dimension=0,
                           tiled=False):
    names, sizes = _mesh("psum_scatter")
    groups = replica_groups(names, sizes, (axis_name,))
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    block_shape = list(aval.shape)
    block_shape[scatter_dimension] //= axis_size
    block_type = mu.aval_to_ir_type(aval.update(shape=tuple(block_shape)))
    op = hlo.ReduceScatterOp(block_type, x, scatter_dimension, _groups_attr(groups),
                             channel_handle=_channel(ctx),
                             use_global_device_ids=ir.UnitAttr.get())
    scalar = mu.aval_to_ir_type(aval.update(shape=()))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        a, b = block.arguments
        r = hlo.OrOp(a, b) if aval.dtype == np.bool_ else hlo.AddOp(a, b)
        hlo.ReturnOp([r.result])
    res = op.result
    if not tiled:
        res = hlo.ReshapeOp(mu.aval_to_ir_type(out), res).result
    return [res]


@register_lowering(ppermute_p)
def _ppermute_lowering(ctx, x, *, axis_name, perm):
    names, sizes = _mesh("ppermute")
    groups = replica_groups(names, sizes, (axis_name,))
    n = len(groups[0])
    srcs, dsts = [s % n for s, _ in perm], [d % n for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if any(not (0 <= i < n) for pair in perm for i in pair):
        raise ValueError(f"ppermute: indices in perm {perm} must be in range(0, {n}).")
    pairs = [[g[s], g[d]] for g in groups for s, d in perm]
    arr = np.asarray(pairs, np.int64).reshape(-1, 2)
    attr = ir.DenseIntElementsAttr.get(arr, type=ir.RankedTensorType.get(
        arr.shape, ir.IntegerType.get_signless(64)))
    op = hlo.CollectivePermuteOp(x, attr, channel_handle=_channel(ctx))
    return [op.result]


@register_lowering(all_to_all_p)
def _all_to_all_lowering(ctx, x, *, axis_name, axis_size, split_axis, concat_axis,
                         tiled=False):
    names, sizes = _mesh("all_to_all")
    groups = replica_groups(names, sizes, (axis_name,))
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    split, concat = split_axis, concat_axis
    if not tiled:
        # A size-1 dimension that becomes the concatenated one; the split dimension (of
        # size axis_size) shrinks to 1 and is dropped by the final reshape.
        q = concat if concat <= split else concat + 1
        shape = list(aval.shape)
        shape.insert(q, 1)
        if q <= split:
            split += 1
        concat = q
        aval = aval.update(shape=tuple(shape))
        x = hlo.ReshapeOp(mu.aval_to_ir_type(aval), x).result
    op = hlo.AllToAllOp([x], split, concat, axis_size, _groups_attr(groups),
                        channel_handle=_channel(ctx))
    res = op.results[0]
    if not tiled:
        res = hlo.ReshapeOp(mu.aval_to_ir_type(out), res).result
    return [res]



@register_lowering(psend_p)
def _psend_lowering(ctx, x, *, axis_name, perm):
    raise NotImplementedError("psend is currently only implemented on GPU")


@register_lowering(precv_p)
def _precv_lowering(ctx, token, *, out_shape, axis_name, perm):
    raise NotImplementedError("precv is currently only implemented on GPU")


@register_lowering(ragged_all_to_all_p)
def _ragged_all_to_all_lowering(ctx, operand, output, input_offsets, send_sizes,
                                output_offsets, recv_sizes, *, axis_name, axis_index_groups):
    names, sizes = _mesh("ragged_all_to_all")
    groups = replica_groups(names, sizes, tuple(axis_name))
    if axis_index_groups is not None:
        groups = [[g[i] for i in sub] for g in groups for sub in axis_index_groups]
    if len({len(g) for g in groups}) != 1:
        raise ValueError("Replica groups must be equally sized")
    config = ir.DictAttr.get({
        "channel_id": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), ctx.next_channel()),
        "replica_groups": _groups_attr(groups),
    })
    op = hlo.CustomCallOp([output.type], [operand, output, input_offsets, send_sizes,
                                          output_offsets, recv_sizes],
                          call_target_name=ir.StringAttr.get("ragged_all_to_all"),
                          backend_config=config,
                          api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4))
    return list(op.results)
