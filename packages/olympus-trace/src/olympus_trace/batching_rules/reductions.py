"""Batching rules for reductions and argmax/argmin: the reduced axes are renumbered around
the batch dimension, which never moves."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..batching import batching_rules
from ..core import bind
from ._util import shift_axes


def _reduction_batcher(prim):
    def rule(axis_data, vals, dims, *, axes, **params):
        (x,), (b,) = vals, dims
        out = bind(prim, x, axes=shift_axes(axes, b), **params)
        return out, b - sum(1 for a in axes if a < b)

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


for _p in (*P.REDUCTIONS, P.argmax_p, P.argmin_p):
    batching_rules[_p] = _reduction_batcher(_p)
