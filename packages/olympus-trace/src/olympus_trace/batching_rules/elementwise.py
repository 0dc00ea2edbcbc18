"""Batching rules for elementwise primitives: align the batch dimensions, then apply."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..batching import batching_rules, matchaxis
from ..core import bind, get_aval


def _unbatched_rank(x, d):
    return get_aval(x).ndim - (0 if d is None else 1)


def elementwise_batcher(prim):
    """Batch an n-ary elementwise primitive.

    Operands that are rank-0 per batch member stay rank-0 when unbatched (they broadcast);
    otherwise every batched operand gets its batch dimension at the position of the first
    batched operand's, so no transpose is needed in the common case.
    """

    def rule(axis_data, vals, dims, **params):
        ranks = [_unbatched_rank(v, d) for v, d in zip(vals, dims)]
        out_rank = max(ranks)
        first = next(d for d, r in zip(dims, ranks) if d is not None)
        target = first if ranks[dims.index(first)] == out_rank else 0
        new = []
        for v, d, r in zip(vals, dims, ranks):
            if d is None and r == 0:
                new.append(v)  # a rank-0 operand broadcasts by itself
            elif r == 0 and out_rank > 0:
                # A batched scalar beside higher-rank operands: give it the full shape.
                v = matchaxis(axis_data.size, d, 0, v)
                shape = list(_full_shape(vals, dims, ranks, out_rank))
                shape.insert(target, axis_data.size)
                from ..lax_ops import broadcast_in_dim

                new.append(broadcast_in_dim(v, tuple(shape), (target,)))
            else:
                new.append(matchaxis(axis_data.size, d, target, v))
        return bind(prim, *new, **params), target

    return rule


def _full_shape(vals, dims, ranks, out_rank):
    for v, d, r in zip(vals, dims, ranks):
        if r == out_rank:
            s = list(get_aval(v).shape)
            if d is not None:
                del s[d]
            return tuple(s)
    raise AssertionError("no operand has the output rank")  # pragma: no cover


for _p in (*P.UNARY, *P.BINARY, *P.COMPARISONS):
    batching_rules[_p] = elementwise_batcher(_p)
