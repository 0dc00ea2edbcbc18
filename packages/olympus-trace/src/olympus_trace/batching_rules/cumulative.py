"""Batching rules for cumulative reductions: renumber the axis around the batch dimension."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..batching import batching_rules
from ..core import bind


def _cumulative_batcher(prim):
    def rule(axis_data, vals, dims, *, axis, **params):
        (x,), (b,) = vals, dims
        return bind(prim, x, axis=axis + 1 if axis >= b else axis, **params), b

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


for _p in P.CUMULATIVES:
    batching_rules[_p] = _cumulative_batcher(_p)
