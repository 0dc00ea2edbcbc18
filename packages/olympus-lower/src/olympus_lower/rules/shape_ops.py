"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims,
concatenate, pad, rev, slice, iota, dim_as_value. With symbolic shapes the shape-making ops
are their dynamic forms (dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota,
real_dynamic_slice) with shape operands computed from the dimension variables."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo as hlo

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


@register_lowering("concatenate")
def _concatenate_lowering(ctx, *xs, dimension):
    return [hlo.concatenate(list(xs), int(dimension))]


@register_lowering("pad")
def _pad_lowering(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config, strict=True) if padding_config else ((), (), ())
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
