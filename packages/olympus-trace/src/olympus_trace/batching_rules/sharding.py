"""Batching of ``sharding_constraint``: the batch dimension is left unconstrained (a None
entry inserted into the spec at its position)."""

from __future__ import annotations

from olympus_ir.prims.sharding import sharding_constraint_p

from ..batching import batching_rules
from ..core import bind, get_aval


def _constraint_batch_rule(axis_data, vals, dims, *, sharding):
    (x,), (d,) = vals, dims
    if d is None:
        return bind(sharding_constraint_p, x, sharding=sharding), None
    spec = sharding.spec
    ndim = get_aval(x).ndim
    entries = list(spec) + [None] * (ndim - 1 - len(spec))
    entries.insert(d, None)
    new = sharding.with_spec(type(spec)(*entries))
    return bind(sharding_constraint_p, x, sharding=new), d


batching_rules[sharding_constraint_p] = _constraint_batch_rule
