"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims,
concatenate, pad, rev, slice, iota, dim_as_value. With symbolic shapes the shape-making ops
are their dynamic forms (dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota,
real_dynamic_slice) with shape operands computed from the dimension variables."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir import dtypes

from .. import dynamic_shapes as ds
from .. import mlir_utils as mu
from ._registry import register_lowering


@register_lowering("broadcast_in_dim")
def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions, sharding=None):
    if not ds.is_static(shape):
        return [hlo.dynamic_broadcast_in_dim(
            mu.aval_to_ir_type(ctx.avals_out[0]), x, ds.shape_value(shape),
            [int(d) for d in broadcast_dimensions])]
    return [hlo.broadcast_in_dim(mu.aval_to_ir_type(ctx.avals_out[0]), x,
                                 [int(d) for d in broadcast_dimensions])]


@register_lowering("reshape")
def _reshape_lowering(ctx, x, *, new_sizes, dimensions=None, sharding=None):
    if dimensions is not None and tuple(dimensions) != tuple(range(len(dimensions))):
        x = hlo.transpose(x, [int(d) for d in dimensions])
    return [_reshape(ctx, x)]


def _reshape(ctx, x):
    out = ctx.avals_out[0]
    if not ds.is_static(out.shape):
        return hlo.dynamic_reshape(mu.aval_to_ir_type(out), x, ds.shape_value(out.shape))
    return hlo.reshape(mu.aval_to_ir_type(out), x)


@register_lowering("transpose")
def _transpose_lowering(ctx, x, *, permutation):
    return [hlo.transpose(x, [int(p) for p in permutation])]


def _reshape_to_out(ctx, x, **params):
    return [_reshape(ctx, x)]


register_lowering("squeeze")(_reshape_to_out)
register_lowering("expand_dims")(_reshape_to_out)


#: XLA's CPU backend aborts the process emitting a concatenate of 2-bit integers that it
#: does not fuse (reference JAX 0.10.2 does too, e.g. on an eager ``lax.concatenate``);
#: they are concatenated as 8-bit integers instead, exactly.
_WIDENED_FOR_CONCATENATE = {dtypes.int2: np.dtype(np.int8), dtypes.uint2: np.dtype(np.uint8)}


def concatenate(xs, dimension: int, dtype) -> ir.Value:
    """``stablehlo.concatenate``, through 8-bit integers for the 2-bit ones."""
    wide = _WIDENED_FOR_CONCATENATE.get(np.dtype(dtype))
    if wide is None:
        return hlo.concatenate(list(xs), int(dimension))
    wide_xs = [hlo.convert(mu.tensor_type(mu.value_shape(x), wide), x) for x in xs]
    out = hlo.concatenate(wide_xs, int(dimension))
    return hlo.convert(mu.tensor_type(mu.value_shape(out), dtype), out)


@register_lowering("concatenate")
def _concatenate_lowering(ctx, *xs, dimension):
    return [concatenate(xs, dimension, ctx.avals_out[0].dtype)]


@register_lowering("pad")
def _pad_lowering(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config, strict=True) if padding_config else ((), (), ())
    if not (ds.is_static(lo) and ds.is_static(hi)):  # symbolic amounts (e.g. a slice's VJP)
        return [hlo.dynamic_pad(mu.aval_to_ir_type(ctx.avals_out[0]), x, padding_value,
                                ds.shape_value(lo), ds.shape_value(hi),
                                ds.shape_value(interior))]
    return [hlo.pad(x, padding_value, [int(v) for v in lo], [int(v) for v in hi],
                    [int(v) for v in interior])]


@register_lowering("rev")
def _rev_lowering(ctx, x, *, dimensions):
    if not dimensions:
        return [x]
    return [hlo.reverse(x, [int(d) for d in dimensions])]


@register_lowering("slice")
def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides=None):
    n = len(start_indices)
    strides = (1,) * n if strides is None else strides
    if not (ds.is_static(start_indices) and ds.is_static(limit_indices)):
        return [hlo.real_dynamic_slice(
            mu.aval_to_ir_type(ctx.avals_out[0]), x, ds.shape_value(start_indices),
            ds.shape_value(limit_indices), ds.shape_value(strides))]
    return [hlo.slice(x, [int(v) for v in start_indices], [int(v) for v in limit_indices],
                      [int(v) for v in strides])]


@register_lowering("iota")
def _iota_lowering(ctx, *, dtype, shape, dimension, sharding=None):
    return [mu.iota(dtype, shape, int(dimension))]


@register_lowering("dim_as_value")
def _dim_as_value_lowering(ctx, *, dim):
    """The dimension's value, computed from the dimension variables (the function's
    leading ``jax.global_constant`` arguments), in the result's integer type."""
    v = ds.dim_value(dim)
    out = mu.aval_to_ir_type(ctx.avals_out[0])
    return [v if v.type == out else hlo.convert(out, v)]


@register_lowering("tile")
def _tile_lowering(ctx, x, *, reps):
    # Broadcast to (r0, d0, r1, d1, ...) and merge each pair: row-major order repeats
    # the whole operand along each dimension.
    aval = ctx.avals_in[0]
    pairs = [k for r, d in zip(reps, aval.shape) for k in (int(r), d)]
    wide = hlo.broadcast_in_dim(mu.tensor_type(pairs, aval.dtype), x,
                                list(range(1, 2 * aval.ndim, 2)))
    return [hlo.reshape(mu.aval_to_ir_type(ctx.avals_out[0]), wide)]


@register_lowering("split")
def _split_lowering(ctx, x, *, sizes, axis):
    shape = list(ctx.avals_in[0].shape)
    outs, start = [], 0
    for s in sizes:
        lo = [0] * len(shape)
        hi = list(shape)
        lo[axis], hi[axis] = start, start + int(s)
        outs.append(hlo.slice(x, lo, hi, [1] * len(shape)))
        start += int(s)
    return outs


@register_lowering("stack")
def _stack_lowering(ctx, *xs, axis):
    shape = list(ctx.avals_in[0].shape)
    shape.insert(axis, 1)
    # `mu.reshape`: a dynamic reshape when the shape has symbolic dimensions.
    return [concatenate([mu.reshape(x, shape) for x in xs], int(axis),
                        ctx.avals_out[0].dtype)]


@register_lowering("unstack")
def _unstack_lowering(ctx, x, *, axis):
    shape = list(ctx.avals_in[0].shape)
    outs = []
    for i in range(shape[axis]):
        lo = [0] * len(shape)
        hi = list(shape)
        lo[axis], hi[axis] = i, i + 1
        part = hlo.slice(x, lo, hi, [1] * len(shape))
        outs.append(hlo.reshape(mu.aval_to_ir_type(ctx.avals_out[i]), part))
    return outs
