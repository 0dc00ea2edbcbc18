"""Batching rules for random bits: rng_bit_generator runs once per batch member (a scan
over the keys), threefry2x32 broadcasts like an elementwise primitive."""

from __future__ import annotations

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray

from ..batching import batching_rules, moveaxis
from ..core import bind
from ..staging import trace_to_olympuspr
from ._util import align_elementwise, rank


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


batching_rules[P.rng_bit_generator_p] = _rng_bit_generator_rule
batching_rules[P.threefry2x32_p] = _threefry2x32_rule
