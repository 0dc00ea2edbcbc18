"""Batching rules for random bits: rng_bit_generator draws the whole batch from the first
member's key (JAX's rule), threefry2x32 broadcasts like an elementwise primitive."""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P

from .. import lax_ops
from ..batching import batching_rules, moveaxis
from ..core import bind
from ._util import align_elementwise, rank


def _rng_bit_generator_rule(axis_data, vals, dims, *, shape, **params):
    """As JAX's rule: one generator call with the *first* member's key draws the bits of
    the whole batch (shape ``(batch, *shape)``), and only that member's key advances.
    (So a vmapped rbg sampler is not the loop of unbatched calls; JAX's streams are.)"""
    (keys,), (b,) = vals, dims
    keys = moveaxis(keys, b, 0)
    size = axis_data.size
    first = lax_ops.reshape(lax_ops.slice(keys, (0, 0), (1, 4)), (4,))
    new_key, bits = bind(P.rng_bit_generator_p, first, shape=(size, *shape), **params)
    new_keys = lax_ops.dynamic_update_slice(keys, lax_ops.reshape(new_key, (1, 4)),
                                            (np.int32(0), np.int32(0)))
    return [new_keys, bits], [0, 0]


def _threefry2x32_rule(axis_data, vals, dims):
    # Keys may stay scalars; the counts must have the (batched) result shape.
    count_rank = rank(vals[2], dims[2])
    if rank(vals[3], dims[3]) != count_rank:  # pragma: no cover - shape rule forbids it
        raise TypeError("threefry2x32 counts must have equal shapes")
    new, target = align_elementwise(axis_data.size, vals, dims, full=(False, False, True, True))
    return list(bind(P.threefry2x32_p, *new)), [target, target]


batching_rules[P.rng_bit_generator_p] = _rng_bit_generator_rule
batching_rules[P.threefry2x32_p] = _threefry2x32_rule
