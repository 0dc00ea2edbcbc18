"""Batching rules for elementwise primitives: align the batch dimensions, then apply."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..batching import batching_rules
from ..core import bind
from ._util import align_elementwise


def elementwise_batcher(prim):
    """Batch an n-ary elementwise primitive.

    Operands that are rank-0 per batch member stay rank-0 when unbatched (they broadcast);
    otherwise every batched operand gets its batch dimension at the position of the first
    batched operand of full rank, so no transpose is needed in the common case.
    """

    def rule(axis_data, vals, dims, **params):
        new, target = align_elementwise(axis_data.size, vals, dims)
        return bind(prim, *new, **params), target

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


for _p in (*P.UNARY, *P.BINARY, *P.COMPARISONS):
    batching_rules[_p] = elementwise_batcher(_p)
