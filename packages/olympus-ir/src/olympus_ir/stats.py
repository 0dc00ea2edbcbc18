"""Static statistics of an olympuspr: equation counts by primitive and a FLOP estimate.

The FLOP estimate is a rough static count, not a cost model:

* ``dot_general``: ``2 * prod(batch) * prod(lhs free) * prod(rhs free) * prod(contracting)``;
* elementwise arithmetic (the unary, binary and comparison primitives of
  `olympus_ir.prims.elementwise`, ``select_n`` and ``clamp``): the output size;
  ``copy``, ``stop_gradient`` and type conversions count nothing;
* reductions (``reduce_*``, ``argmax``, ``argmin``) and cumulative ops (``cumsum`` ...):
  the input size;
* everything else (data movement, indexing, random bits, sorting): 0.

Sub-olympusprs held in params are counted too: a ``scan`` body ``length`` times, the most
expensive ``cond`` branch once, a ``while`` cond and body once each (the trip count is not
static), any other sub-olympuspr once.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from .core import ClosedOlympuspr, Eqn, Olympuspr

__all__ = ["equation_counts", "flop_estimate", "eqn_flops", "format_stats", "sub_olympusprs"]


def _elementwise_names() -> frozenset[str]:
    from .prims import elementwise as ew

    names = {p.name for p in (*ew.UNARY, *ew.BINARY, *ew.COMPARISONS)}
    names -= {"copy", "stop_gradient"}
    return frozenset(names | {"select_n", "clamp"})


ELEMENTWISE = _elementwise_names()
REDUCTIONS = frozenset({
    "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
    "reduce_xor", "argmax", "argmin",
    "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
})


def _open(j: Olympuspr | ClosedOlympuspr) -> Olympuspr:
    return j.olympuspr if isinstance(j, ClosedOlympuspr) else j


def sub_olympusprs(params: dict[str, Any]) -> list[tuple[str, Olympuspr]]:
    """(param name, open olympuspr) for every sub-olympuspr in `params`, in param order."""
    out = []
    for k in sorted(params):
        v = params[k]
        if isinstance(v, (Olympuspr, ClosedOlympuspr)):
            out.append((k, _open(v)))
        elif isinstance(v, (tuple, list)):
            out.extend((k, _open(x)) for x in v if isinstance(x, (Olympuspr, ClosedOlympuspr)))
    return out


def equation_counts(j: Olympuspr | ClosedOlympuspr) -> Counter:
    """Primitive name -> number of equations, sub-olympusprs included (each counted once)."""
    counts: Counter = Counter()
    for e in _open(j).eqns:
        counts[e.primitive.name] += 1
        for _, sub in sub_olympusprs(e.params):
            counts.update(equation_counts(sub))
    return counts


def _size(aval: Any) -> int:
    return math.prod(aval.shape)


def eqn_flops(e: Eqn) -> int:
    """The FLOP estimate of one equation, sub-olympusprs included."""
    name = e.primitive.name
    subs = sub_olympusprs(e.params)
    if subs:
        inner = [flop_estimate(s) for _, s in subs]
        if name == "scan":
            return int(e.params.get("length", 1)) * sum(inner)
        if name == "cond":
            return max(inner)
        return sum(inner)
    if name == "dot_general":
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        lhs, rhs = e.invars[0].aval.shape, e.invars[1].aval.shape
        batch = math.prod(lhs[d] for d in lb)
        contract = math.prod(lhs[d] for d in lc)
        lfree = math.prod(d for i, d in enumerate(lhs) if i not in lc and i not in lb)
        rfree = math.prod(d for i, d in enumerate(rhs) if i not in rc and i not in rb)
        return 2 * batch * lfree * rfree * contract
    if name in ELEMENTWISE:
        return sum(_size(v.aval) for v in e.outvars)
    if name in REDUCTIONS:
        return _size(e.invars[0].aval) if e.invars else 0
    return 0


def flop_estimate(j: Olympuspr | ClosedOlympuspr) -> int:
    """The static FLOP estimate of an olympuspr (see the module docstring)."""
    return sum(eqn_flops(e) for e in _open(j).eqns)


def format_stats(j: Olympuspr | ClosedOlympuspr) -> str:
    """The report printed by ``olympus-ir stats``: counts by primitive (most frequent first,
    ties by name), the total, and the FLOP estimate."""
    counts = equation_counts(j)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    width = max([len(k) for k in counts] + [9])
    lines = [f"equations: {sum(counts.values())}"]
    lines += [f"  {k:<{width}}  {n}" for k, n in rows]
    lines.append(f"flops: {flop_estimate(j)}")
    return "\n".join(lines)
