"""Bounds of symbolic dimension expressions, by eliminating terms against constraints.

The state holds, for single terms, an interval (``lb <= t <= ub``), and other constraints
``c >= 0`` / ``c == 0`` indexed by their leading term. To bound ``e = t*k + rest`` we combine
``e`` with each constraint ``c`` that contains ``t`` so that ``t`` cancels, and bound what
remains (which only has smaller terms) recursively. Implicit constraints come from the
structure of the terms: variables are >= 1, ``0 <= mod(a, k) < k`` for ``k > 0``,
``floordiv`` and products are bounded from their operands, ``max``/``min`` from theirs.

This is the same procedure as JAX's (so the same comparisons succeed and fail); like JAX's
it is incomplete: it may not find the tightest bounds.
"""

from __future__ import annotations

import itertools
import math

from .shape_poly import (
    _BEST,
    _GEQ0_OR_LEQ0,
    _GEQ0_OR_LT0,
    EQ,
    FLOORDIV,
    GEQ,
    MAX,
    MIN,
    MOD,
    DimExpr,
    InconclusiveDimensionOperation,
    SymbolicScope,
    _Term,
)

INF = math.inf


def _sufficient(precision: int, lb, ub) -> bool:
    if precision == _GEQ0_OR_LEQ0:
        return lb >= 0 or ub <= 0
    if precision == _GEQ0_OR_LT0:
        return lb >= 0 or ub < 0
    return False


def _sgn(x) -> int:
    return 1 if x >= 0 else -1


def _lincomb(terms1, k1: int, terms2, k2: int) -> list:
    """Sorted (largest first) terms of ``terms1*k1 + terms2*k2`` (non-zero only)."""
    acc: dict = {}
    for t, c in terms1:
        acc[t] = acc.get(t, 0) + c * k1
    for t, c in terms2:
        acc[t] = acc.get(t, 0) + c * k2
    out = [(t, c) for t, c in acc.items() if c != 0]
    out.sort(key=lambda p: p[0].key, reverse=True)
    return out


def _const_of(e):
    if isinstance(e, DimExpr):
        return e.constant()
    return int(e)


def bounds(e: DimExpr, precision: int) -> tuple:
    return _Decision.build(e.scope).bounds(e, precision, add_implicit=True)


class _Decision:
    def __init__(self, scope: SymbolicScope):
        self.scope = scope
        self.processed: set = set()
        self.term_bounds: dict = {}          # term -> (lb, ub)
        self.expr_constraints: dict = {}     # leading term -> {(cmp, k, expr)}

    @staticmethod
    def build(scope: SymbolicScope) -> _Decision:
        if not scope._initialized or not scope._explicit_constraints:
            return _Decision(scope).initialize()
        if scope._decision_state is None:
            scope._decision_state = _Decision(scope).initialize()
        base = scope._decision_state
        d = _Decision(scope)
        d.processed = set(base.processed)
        d.term_bounds = dict(base.term_bounds)
        d.expr_constraints = {t: set(cs) for t, cs in base.expr_constraints.items()}
        return d

    def initialize(self) -> _Decision:
        for cmp, debug_str, _e1, _e2, diff in self.scope._explicit_constraints:
            if isinstance(diff, DimExpr):
                self.add_implicit_expr(diff)
            self.add_constraint(cmp, diff, 0, debug_str)
            self.scope._bounds_cache.clear()
        return self

    # --- adding constraints ----------------------------------------------------------
    def add_constraint(self, cmp, e1, e2, debug_str=None) -> None:
        """Records ``e1 >= e2`` (or ``==``) and its combinations with what is known."""
        if isinstance(e1, float):
            if math.isinf(e1) and e1 >= 0 and cmp == GEQ:
                return
            e1 = int(e1)
        if isinstance(e2, float):
            if math.isinf(e2) and e2 <= 0 and cmp == GEQ:
                return
            e2 = int(e2)
        e = e1 - e2
        const = _const_of(e)
        if const is not None:
            if const < 0:
                raise ValueError(
                    f"Unsatisfiable constraint: {debug_str or str(e1) + ' >= ' + str(e2)}")
            return
        self._record(cmp, e, debug_str)
        for cmp2, e2_ in self._combine_with_existing(cmp, e, debug_str):
            self._record(cmp2, e2_, None)

    def _record(self, cmp, e: DimExpr, debug_str) -> None:
        single = e.single_term()
        if single is not None:
            n, k, t = single  # n + k*t (== | >=) 0
            lb, ub = self.term_bounds.get(t, (-INF, INF))
            if cmp == EQ:
                if n % k:
                    raise ValueError(f"Unsatisfiable constraint: {debug_str}")
                v = -(n // k)
                lb, ub = max(lb, v), min(ub, v)
            elif k > 0:
                lb = max(lb, math.ceil(-n / k))
            else:
                ub = min(ub, math.floor(-n / k))
            if lb > ub:
                raise ValueError(f"Unsatisfiable constraint: {debug_str}")
            self.term_bounds[t] = (lb, ub)
            return
        lead, lead_k = e.leading_term
        self.expr_constraints.setdefault(lead, set()).add((cmp, lead_k, e))

    def _term_with_constraints(self, t: _Term, k: int, only_leading: bool):
        """Constraints ``c (cmp) 0`` that can eliminate ``t`` from ``t*k``: tuples
        ``(cmp, c, c_s, t_s)`` such that ``t*k*t_s + c*c_s`` has no ``t`` and ``c_s > 0``."""
        out = []
        lb, ub = self.term_bounds.get(t, (-INF, INF))
        t_e = DimExpr(((t, 1),), self.scope)
        if lb == ub:
            out.append((EQ, t_e - int(lb), abs(k), -_sgn(k)))
        else:
            if lb > -INF:
                out.append((GEQ, t_e - int(lb), abs(k), -_sgn(k)))
            if ub < INF:
                out.append((GEQ, DimExpr(((t, -1),), self.scope) + int(ub), abs(k), _sgn(k)))
        groups = ([self.expr_constraints.get(t, set())] if only_leading
                  else list(self.expr_constraints.values()))
        for group in groups:
            for c_cmp, _, c in group:
                tc_k = dict(c.terms).get(t)
                if tc_k is not None:
                    out.append((c_cmp, c, abs(k), -tc_k * _sgn(k)))
        return out

    def _combine_with_existing(self, cmp, e: DimExpr, debug_str) -> set:
        out = set()
        for t, k in e.terms:
            if t.is_constant:
                continue
            for c_cmp, c, c_s, t_s in self._term_with_constraints(t, k, only_leading=False):
                if t_s > 0 or cmp == EQ:
                    new_cmp = EQ if (cmp == c_cmp == EQ) else GEQ
                    new_e = e._combine(t_s, c, c_s)
                    const = _const_of(new_e)
                    if const is not None:
                        if (new_cmp == GEQ and const < 0) or (new_cmp == EQ and const != 0):
                            raise ValueError(
                                f"Unsatisfiable constraints: {debug_str or str(e) + ' >= 0'}")
                    else:
                        out.add((new_cmp, new_e))
        return out

    # --- bounds -----------------------------------------------------------------------
    def bounds(self, e, precision: int, add_implicit: bool = False):
        const = _const_of(e)
        if const is not None:
            return (const, const)
        cached = self.scope._bounds_cache.get(e)
        if cached is not None:
            lb, ub, prev = cached
            if _sufficient(precision, lb, ub) or prev >= precision:
                return (lb, ub)
        if add_implicit:
            self.add_implicit_expr(e)
        lb, ub = self._bounds_terms(list(e.terms), 0, precision)
        lb = int(lb) if lb > -INF else lb
        ub = int(ub) if ub < INF else ub
        self.scope._bounds_cache[e] = (lb, ub, precision)
        return (lb, ub)

    def _bounds_terms(self, terms: list, i: int, precision: int):
        if i >= len(terms):
            return (0, 0)
        t, k = terms[i]
        if t.is_constant:
            return (k, k)
        lb, ub = -INF, INF
        for c_cmp, c, c_s, t_s in self._term_with_constraints(t, k, only_leading=True):
            rest = _lincomb(terms[i:], t_s, c.terms, c_s)
            r_lb, r_ub = self._bounds_terms(rest, 0, _BEST)
            if r_ub < INF:
                if t_s > 0:
                    ub = min(ub, math.floor(r_ub / t_s))
                else:
                    lb = max(lb, math.ceil(r_ub / t_s))
            if r_lb > -INF and c_cmp == EQ:
                if t_s > 0:
                    lb = max(lb, math.ceil(r_lb / t_s))
                else:
                    ub = min(ub, math.floor(r_lb / t_s))
            if _sufficient(precision, lb, ub):
                return (lb, ub)
        f = t.factor()
        if f is not None and f.operation in (MAX, MIN):
            op1, op2 = f.operands
            r1 = self._bounds_terms(_lincomb(terms[i + 1:], 1, op1.terms, k), 0, _BEST)
            r2 = self._bounds_terms(_lincomb(terms[i + 1:], 1, op2.terms, k), 0, _BEST)
            like_max = (k > 0) if f.operation == MAX else (k < 0)
            pick = max if like_max else min
            lb = max(lb, pick(r1[0], r2[0]))
            ub = min(ub, pick(r1[1], r2[1]))
        return (lb, ub)

    # --- implicit constraints -------------------------------------------------------------
    def add_implicit_expr(self, e: DimExpr) -> None:
        for t, _ in e.terms:
            if not t.is_constant:
                self.add_implicit_term(t)

    def add_implicit_term(self, t: _Term) -> None:
        if t in self.processed:
            return
        self.processed.add(t)
        scope = self.scope
        t_e = DimExpr._build({t: 1}, scope)
        f = t.factor()
        if f is None:
            per_factor = []
            for f1, exp in t.factors:
                f1_t = _Term(((f1, 1),))
                self.add_implicit_term(f1_t)
                lo, hi = self.bounds(DimExpr._build({f1_t: 1}, scope), _BEST)
                per_factor.append((lo ** exp, hi ** exp))
            candidates = [_prod(c) for c in itertools.product(*per_factor)]
            self.add_constraint(GEQ, t_e, min(candidates))
            self.add_constraint(GEQ, max(candidates), t_e)
            return
        if f.var is not None:
            self.add_constraint(GEQ, t_e, 1)
            return
        for o in f.operands:
            self.add_implicit_expr(o)
        op1, op2 = f.operands
        if f.operation == MOD:
            lo2, hi2 = self.bounds(op2, _GEQ0_OR_LT0)
            if lo2 > 0:
                self.add_constraint(GEQ, t_e, 0)
                self.add_constraint(GEQ, op2 - 1, t_e)
                self.add_constraint(GEQ, hi2 - 1, t_e)
            elif hi2 < 0:
                self.add_constraint(GEQ, t_e, op2 + 1)
                self.add_constraint(GEQ, t_e, lo2 + 1)
                self.add_constraint(GEQ, 0, t_e)
            return
        if f.operation == FLOORDIV:
            lo1, hi1 = self.bounds(op1, _BEST)
            lo2, hi2 = self.bounds(op2, _BEST)
            if lo2 <= 0 <= hi2:
                raise InconclusiveDimensionOperation(
                    f"Possible division by 0 in division by {op2}")
            candidates = [_floor_div_inf(a, b) for a in (lo1, hi1) for b in (lo2, hi2)]
            self.add_constraint(GEQ, t_e, min(candidates))
            self.add_constraint(GEQ, max(candidates), t_e)
            if lo2 >= 0:
                if lo1 >= 0:
                    self.add_constraint(GEQ, t_e, 0)
                mod_e = DimExpr.operation(MOD, op1, op2, scope=scope)
                if isinstance(mod_e, DimExpr):
                    self.add_implicit_expr(mod_e)
                self.add_constraint(EQ, op1, op2 * t_e + mod_e)
            return
        lo1, hi1 = self.bounds(op1, _BEST)
        lo2, hi2 = self.bounds(op2, _BEST)
        if f.operation == MAX:
            self.add_constraint(GEQ, t_e, max(lo1, lo2))
            self.add_constraint(GEQ, max(hi1, hi2), t_e)
            self.add_constraint(GEQ, t_e, op1)
            self.add_constraint(GEQ, t_e, op2)
        else:
            self.add_constraint(GEQ, t_e, min(lo1, lo2))
            self.add_constraint(GEQ, min(hi1, hi2), t_e)
            self.add_constraint(GEQ, op1, t_e)
            self.add_constraint(GEQ, op2, t_e)


def _prod(xs):
    out = 1
    for x in xs:
        out = out * x
    return out


def _floor_div_inf(a, b):
    """``floor(a / b)`` where either may be infinite (the limit of the quotient)."""
    if not math.isinf(b):
        if not math.isinf(a):
            return math.floor(a / b)
        return -INF if (a >= 0) != (b >= 0) else INF
    if not math.isinf(a):
        return -1 if (a >= 0) != (b >= 0) else 0
    return -INF if (a >= 0) != (b >= 0) else INF
