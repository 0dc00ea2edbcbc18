"""Batching rules for conversions, selection, clamp, iota, argmax/argmin and random bits."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray

from ..batching import batching_rules, moveaxis
from ..core import bind, get_aval
from ..staging import trace_to_olympuspr
from ._util import align_elementwise, rank, shift_axes


def _convert_element_type_rule(axis_data, vals, dims, **params):
    (x,), (b,) = vals, dims
    return bind(P.convert_element_type_p, x, **params), b


def _bitcast_convert_type_rule(axis_data, vals, dims, *, new_dtype):
    (x,), (b,) = vals, dims
    a = get_aval(x)
    if a.dtype.itemsize < np.dtype(new_dtype).itemsize and b == a.ndim - 1:
        # The conversion consumes the trailing dimension: it must not be the batch one.
        x, b = moveaxis(x, b, 0), 0
    return bind(P.bitcast_convert_type_p, x, new_dtype=new_dtype), b


def _broadcasting_batcher(prim, full_operands):
    """select_n and clamp: some operands are scalars or share the result's shape; those in
    `full_operands` (select_n's cases, clamp's operand) always have the result's shape."""

    def rule(axis_data, vals, dims, **params):
        full = [i in full_operands or (i > 0 and prim is P.select_n_p) for i in range(len(vals))]
        new, target = align_elementwise(axis_data.size, vals, dims, full)
        return bind(prim, *new, **params), target

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


def _iota_rule(axis_data, vals, dims, **params):
    # iota has no operands, so it is never batched; listed so every primitive has a rule.
    return bind(P.iota_p, **params), None


def _arg_reduction_batcher(prim):
    def rule(axis_data, vals, dims, *, axes, **params):
        (x,), (b,) = vals, dims
        out = bind(prim, x, axes=shift_axes(axes, b), **params)
        return out, b - sum(1 for a in axes if a < b)

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


def _rng_bit_generator_rule(axis_data, vals, dims, **params):
    """One generator call per batch member (so each member gets exactly what the
    unbatched call with its key gives), run as a `scan` over the stacked keys."""
    (keys,), (b,) = vals, dims
    keys = moveaxis(keys, b, 0)
    key_aval = ShapedArray((4,), dtypes.uint32)

    def body(k):
        return list(bind(P.rng_bit_generator_p, k, **params))

    closed, _ = trace_to_olympuspr(body, [key_aval])
    outs = bind(P.scan_p, keys, olympuspr=closed, length=axis_data.size, reverse=False,
                num_consts=0, num_carry=0, linear=(False,), unroll=1)
    return list(outs), [0, 0]


def _threefry2x32_rule(axis_data, vals, dims):
    # Keys may stay scalars; the counts must have the (batched) result shape.
    count_rank = rank(vals[2], dims[2])
    if rank(vals[3], dims[3]) != count_rank:  # pragma: no cover - shape rule forbids it
        raise TypeError("threefry2x32 counts must have equal shapes")
    new, target = align_elementwise(axis_data.size, vals, dims, full=(False, False, True, True))
    return list(bind(P.threefry2x32_p, *new)), [target, target]


batching_rules[P.convert_element_type_p] = _convert_element_type_rule
batching_rules[P.bitcast_convert_type_p] = _bitcast_convert_type_rule
batching_rules[P.select_n_p] = _broadcasting_batcher(P.select_n_p, ())
batching_rules[P.clamp_p] = _broadcasting_batcher(P.clamp_p, (1,))
batching_rules[P.iota_p] = _iota_rule
batching_rules[P.argmax_p] = _arg_reduction_batcher(P.argmax_p)
batching_rules[P.argmin_p] = _arg_reduction_batcher(P.argmin_p)
batching_rules[P.rng_bit_generator_p] = _rng_bit_generator_rule
batching_rules[P.threefry2x32_p] = _threefry2x32_rule
