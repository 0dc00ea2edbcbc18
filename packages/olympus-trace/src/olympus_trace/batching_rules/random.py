"""Batching rules for random bits: rng_bit_generator draws the whole batch from the first
member's key (JAX's rule), threefry2x32 broadcasts like an elementwise primitive. The typed-key
primitives map over leading key dimensions (their shape rules take key arrays of any shape),
so a batch dimension moves to the front and the primitive is bound again, as in JAX."""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P

from .. import lax_ops
from ..batching import batching_rules, moveaxis
from ..core import bind
from ._util import align_elementwise, rank, to_front


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


def _keys_front_rule(prim):
    def rule(axis_data, vals, dims, **params):
        (x,), (d,) = vals, dims
        return bind(prim, moveaxis(x, d, 0), **params), 0

    rule.__name__ = rule.__qualname__ = f"_{prim.name}_rule"
    return rule


def _same_dim_rule(prim):
    def rule(axis_data, vals, dims, **params):
        (x,), (d,) = vals, dims
        return bind(prim, x, **params), d

    rule.__name__ = rule.__qualname__ = f"_{prim.name}_rule"
    return rule


def _random_fold_in_rule(axis_data, vals, dims):
    keys, msgs = (to_front(v, d, axis_data.size) for v, d in zip(vals, dims, strict=True))
    return bind(P.random_fold_in_p, keys, msgs), 0


for _p in (P.random_seed_p, P.random_wrap_p, P.random_split_p, P.random_bits_p):
    batching_rules[_p] = _keys_front_rule(_p)
for _p in (P.random_unwrap_p, P.random_clone_p, P.consume_p, P.assert_consumed_value_p):
    batching_rules[_p] = _same_dim_rule(_p)
batching_rules[P.random_fold_in_p] = _random_fold_in_rule


def _random_gamma_rule(axis_data, vals, dims, *, log_space):
    """As JAX's: both batch dimensions to the front (an unbatched operand broadcast), so the
    keys stay a prefix of the shape parameter's shape, and the primitive bound again."""
    keys, a = (to_front(v, d, axis_data.size) for v, d in zip(vals, dims, strict=True))
    return bind(P.random_gamma_p, keys, a, log_space=log_space), 0


batching_rules[P.random_gamma_p] = _random_gamma_rule
