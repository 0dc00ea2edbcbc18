"""Batching rule for sort: operands share one batch dimension; the sorted dimension is
renumbered around it."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..batching import batching_rules, matchaxis
from ..core import bind


def _sort_rule(axis_data, vals, dims, *, dimension, **params):
    target = next(d for d in dims if d is not None)
    xs = [matchaxis(axis_data.size, d, target, x) for x, d in zip(vals, dims, strict=True)]
    new_dim = dimension + 1 if dimension >= target else dimension
    outs = bind(P.sort_p, *xs, dimension=new_dim, **params)
    return outs, [target] * len(outs)


batching_rules[P.sort_p] = _sort_rule
