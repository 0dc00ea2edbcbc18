"""Batching rules for the collectives: over the vmapped axis they name, psum/pmax/pmin
reduce the batch dimension, all_gather stacks it, axis_index numbers it. A collective
naming another axis passes through to the enclosing transformation."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_ir.prims.collectives import (
    COLLECTIVES,
    all_gather_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    psum_p,
)

from .. import lax_ops
from ..batching import axis_primitives, batching_rules, broadcast_batched, moveaxis
from ..core import bind, get_aval


def _psum_unbatched(x, size):
    if isinstance(x, (bool, int, float, complex)):
        return x * size
    if dtypes.is_bool(get_aval(x).dtype):
        x = lax_ops.convert_element_type(x, dtypes.default_int())
    return lax_ops.mul(x, size)


def _reduction_batcher(prim, reduce, unbatched):
    def rule(axis_data, vals, dims, *, axis_name):
        (x,), (d,) = vals, dims
        if axis_name != axis_data.name:
            return bind(prim, x, axis_name=axis_name), d
        if d is None:
            return unbatched(x, axis_data.size), None
        return reduce(x, (d,)), None

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


def _all_gather_rule(axis_data, vals, dims, *, axis_name, axis_size, axis=0, tiled=False):
    (x,), (d,) = vals, dims
    if axis_name != axis_data.name:
        if d is None:
            return bind(all_gather_p, x, axis_name=axis_name, axis_size=axis_size, axis=axis,
                        tiled=tiled), None
        x = moveaxis(x, d, 0)
        return bind(all_gather_p, x, axis_name=axis_name, axis_size=axis_size, axis=axis + 1,
                    tiled=tiled), 0
    x = broadcast_batched(x, axis_data.size, axis) if d is None else moveaxis(x, d, axis)
    if tiled:
        shape = list(get_aval(x).shape)
        shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
        x = lax_ops.reshape(x, shape)
    return x, None


def _axis_index_rule(axis_data, vals, dims, *, axis_name):
    if axis_name != axis_data.name:
        return bind(axis_index_p, axis_name=axis_name), None
    return lax_ops.iota(np.int32, axis_data.size), 0


batching_rules[psum_p] = _reduction_batcher(psum_p, lax_ops.reduce_sum, _psum_unbatched)
batching_rules[pmax_p] = _reduction_batcher(pmax_p, lax_ops.reduce_max, lambda x, n: x)
batching_rules[pmin_p] = _reduction_batcher(pmin_p, lax_ops.reduce_min, lambda x, n: x)
batching_rules[all_gather_p] = _all_gather_rule
batching_rules[axis_index_p] = _axis_index_rule
axis_primitives.update(COLLECTIVES)
