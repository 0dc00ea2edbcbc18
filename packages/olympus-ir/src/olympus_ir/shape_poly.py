"""Symbolic dimension sizes: polynomials over dimension variables (JAX's shape polymorphism).

A dimension expression (`DimExpr`) is a sum of terms with integer coefficients; a term is a
product of factors raised to positive powers; a factor is a dimension variable (standing for
an integer >= 1) or one of the non-linear operations `floordiv`, `mod`, `max`, `min` applied
to expressions. Expressions are kept in a normal form (terms sorted by a syntactic order,
largest first, zero coefficients dropped, and a constant expression is a plain `int`), so
that printing, hashing and equality agree with JAX's.

Equality is total (two expressions are equal when their difference is the constant 0) so
that shapes hash and compare; the inequalities `>=`, `>`, `<=`, `<` are decided from bounds
(`shape_poly_decision`) and raise `InconclusiveDimensionOperation` when the bounds cannot
decide. Expressions belong to a `SymbolicScope`, which holds the user's constraints.

This module sits in the IR because avals carry shapes; it knows nothing of tracing. An
upper layer registers `set_dim_as_value` so that arithmetic with a float or an array turns
the dimension into an array value, as JAX does.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Sequence
from typing import Any

__all__ = [
    "DimExpr", "SymbolicScope", "InconclusiveDimensionOperation", "UnexpectedDimVar",
    "is_symbolic_dim", "is_constant_dim", "is_constant_shape", "is_dim", "max_dim", "min_dim",
    "symbolic_shape", "dim_vars", "to_dim", "evaluate_dim", "definitely_equal", "set_dim_as_value",
]


class InconclusiveDimensionOperation(Exception):
    """Raised when a computation with symbolic dimensions has no answer valid for all values
    of the dimension variables (e.g. ``a >= b``)."""

    _HELP = (
        "\nThis error arises for comparison operations with shapes that\n"
        "are non-constant, and the result of the operation cannot be represented as\n"
        "a boolean value for all values of the symbolic dimensions involved.\n\n"
        "Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
        "#comparison-of-symbolic-dimensions-is-partially-supported\nfor more details.\n")

    def __init__(self, message: str, *, help_text: bool = True):
        # JAX's comparison errors carry the help text; its shape-size errors do not.
        super().__init__(f"{message}{self._HELP}" if help_text else message)


class UnexpectedDimVar(Exception):
    """A dimension variable that the argument shapes do not determine."""


EQ = "=="
GEQ = ">="

FLOORDIV = "floordiv"
MOD = "mod"
MAX = "max"
MIN = "min"
OPERATIONS = (FLOORDIV, MOD, MAX, MIN)


class _Factor:
    """A variable, or an operation (`floordiv`, `mod`, `max`, `min`) on expressions."""

    __slots__ = ("var", "operation", "operands", "size", "key", "_hash")

    def __init__(self, var: str | None = None, operation: str | None = None,
                 operands: tuple = ()):
        self.var = var
        self.operation = operation
        self.operands = operands
        if var is not None:
            self.size = 1
            self.key = (1, var)
        else:
            self.size = 1 + sum(_size(o) for o in operands)
            self.key = (self.size, operation, tuple(_key(o) for o in operands))
        self._hash = None

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self.key)
        return self._hash

    def __eq__(self, other):
        return isinstance(other, _Factor) and self.key == other.key

    def __lt__(self, other):
        return self.key < other.key

    def __str__(self):
        if self.var is not None:
            return self.var
        return f"{self.operation}({', '.join(map(str, self.operands))})"

    __repr__ = __str__

    def vars(self) -> set[str]:
        if self.var is not None:
            return {self.var}
        out: set[str] = set()
        for o in self.operands:
            out |= dim_vars(o)
        return out


def _size(e) -> int:
    return e.size


def _key(e):
    return e.key


class _Term:
    """A product of factors with exponents >= 1; no factors is the constant 1."""

    __slots__ = ("factors", "size", "key", "_hash")

    def __init__(self, factors: tuple):
        # factors: ((factor, exponent), ...) sorted largest factor first.
        self.factors = factors
        self.size = sum(1 + k * f.size for f, k in factors)
        self.key = (self.size, tuple((f.key, k) for f, k in factors))
        self._hash = None

    @staticmethod
    def of(factor_exps: dict) -> _Term:
        items = [(f, k) for f, k in factor_exps.items() if k != 0]
        items.sort(key=lambda p: p[0].key, reverse=True)
        return _Term(tuple(items))

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self.key)
        return self._hash

    def __eq__(self, other):
        return isinstance(other, _Term) and self.key == other.key

    def __str__(self):
        parts = sorted(self.factors, key=lambda p: (p[0].key, p[1]))
        return "*".join(str(f) if k == 1 else f"{f}^{k}" for f, k in parts)

    __repr__ = __str__

    @property
    def is_constant(self) -> bool:
        return not self.factors

    def factor(self) -> _Factor | None:
        """The single factor of this term (with exponent 1), else None."""
        if len(self.factors) == 1 and self.factors[0][1] == 1:
            return self.factors[0][0]
        return None

    def mul(self, other: _Term) -> _Term:
        exps = dict(self.factors)
        for f, k in other.factors:
            exps[f] = exps.get(f, 0) + k
        return _Term.of(exps)

    def divide(self, other: _Term) -> _Term | None:
        """self / other when that is a term, else None."""
        exps = dict(self.factors)
        for f, k in other.factors:
            left = exps.get(f, 0) - k
            if left < 0:
                return None
            exps[f] = left
        return _Term.of(exps)

    def vars(self) -> set[str]:
        out: set[str] = set()
        for f, _ in self.factors:
            out |= f.vars()
        return out


_ONE = _Term(())

#: Set by an upper layer: turns a dimension into an array value (JAX's `dimension_as_value`),
#: used when a dimension meets a float, an array or a tracer in arithmetic.
_dim_as_value_fn = None


def set_dim_as_value(fn) -> None:
    """Registers the function that makes an array value of a symbolic dimension."""
    global _dim_as_value_fn
    _dim_as_value_fn = fn


def _is_int_like(x) -> bool:
    if isinstance(x, int):
        return True
    if isinstance(x, DimExpr) or hasattr(x, "aval"):
        return False
    try:
        operator.index(x)
        return True
    except Exception:
        return False


class DimExpr:
    """A symbolic dimension size. Behaves as an int under +, -, *, //, %, comparisons."""

    __slots__ = ("terms", "_scope", "size", "key", "_hash")
    __array_priority__ = 1000

    def __init__(self, terms: tuple, scope: SymbolicScope):
        # terms: ((term, coefficient), ...) normalized, largest term first.
        self.terms = terms
        self._scope = scope
        self.size = sum(1 + abs(c) * t.size for t, c in terms)
        self.key = (self.size, tuple((t.key, c) for t, c in terms))
        self._hash = None

    @property
    def scope(self) -> SymbolicScope:
        return self._scope

    # --- construction and normal form -----------------------------------------------
    @staticmethod
    def _build(coeffs: dict, scope: SymbolicScope):
        """The normal form of the sum of ``coeffs`` ({term: coefficient}): an int if
        constant, with the scope's equality constraints applied as rewrite rules."""
        coeffs = {t: c for t, c in coeffs.items() if c != 0}
        if scope._rules:
            coeffs = scope._rewrite(coeffs)
        terms = sorted(coeffs.items(), key=lambda p: p[0].key, reverse=True)
        if not terms:
            return 0
        if terms[0][0].is_constant:
            return terms[0][1]
        return DimExpr(tuple(terms), scope)

    @staticmethod
    def var(name: str, scope: SymbolicScope):
        return DimExpr._build({_Term(((_Factor(var=name), 1),)): 1}, scope)

    @staticmethod
    def operation(op: str, *operands, scope: SymbolicScope):
        ops = tuple(_ensure_expr(o, op, scope) for o in operands)
        return DimExpr._build({_Term(((_Factor(operation=op, operands=ops), 1),)): 1}, scope)

    def _coeffs(self) -> dict:
        return dict(self.terms)

    @property
    def leading_term(self):
        return self.terms[0]

    def constant(self) -> int | None:
        t, c = self.terms[0]
        return c if t.is_constant else None

    def single_term(self):
        """(k, c, term) when this is ``k + c*term``, else None."""
        k, found = 0, None
        for t, c in self.terms:
            if t.is_constant:
                k = c
            elif found is None:
                found = (t, c)
            else:
                return None
        return (k, found[1], found[0]) if found else None

    def to_term(self) -> _Term | None:
        if len(self.terms) == 1 and self.terms[0][1] == 1:
            return self.terms[0][0]
        return None

    def to_factor(self) -> _Factor | None:
        t = self.to_term()
        return t.factor() if t is not None else None

    def to_var(self) -> str | None:
        f = self.to_factor()
        return f.var if f is not None else None

    # --- printing, hashing, equality ---------------------------------------------------
    def __str__(self):
        pieces = []
        for t, c in self.terms:
            sign = "+" if c > 0 else "-"
            if t.is_constant:
                pieces.append(f"{sign} {abs(c)}" if c else "0")
            elif abs(c) == 1:
                pieces.append(f"{sign} {t}")
            else:
                pieces.append(f"{sign} {abs(c)}*{t}")
        out = " ".join(pieces)
        return out[2:] if out.startswith("+ ") else out

    __repr__ = __str__

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.key, id(self._scope)))
        return self._hash

    def __eq__(self, other: Any) -> bool:
        # Total, as JAX's: equal when the difference is the constant 0, else not equal
        # (even if some valuations make them equal), so shapes can be hashed and compared.
        if isinstance(other, DimExpr):
            if other._scope is not self._scope:
                return False
        elif not is_constant_dim(other):
            return False
        diff = self - other
        return not isinstance(diff, DimExpr) and diff == 0

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    # --- comparisons ---------------------------------------------------------------------
    def __ge__(self, other):
        return _geq(self, other, lambda: f"'{self}' >= '{other}'")

    def __le__(self, other):
        return _geq(other, self, lambda: f"'{self}' <= '{other}'")

    def __gt__(self, other):
        return not _geq(other, self, lambda: f"'{self}' > '{other}'")

    def __lt__(self, other):
        return not _geq(self, other, lambda: f"'{self}' < '{other}'")

    # --- arithmetic --------------------------------------------------------------------
    def _as_value(self):
        if _dim_as_value_fn is None:
            raise TypeError(f"Symbolic dimension '{self}' cannot be used as a value here")
        return _dim_as_value_fn(self)

    def _combine(self, k1: int, other, k2: int):
        """self*k1 + other*k2."""
        coeffs = {t: c * k1 for t, c in self.terms}
        if isinstance(other, DimExpr):
            self._scope._check_same_scope(other, "for linear combination")
            for t, c in other.terms:
                coeffs[t] = coeffs.get(t, 0) + c * k2
        else:
            coeffs[_ONE] = coeffs.get(_ONE, 0) + operator.index(other) * k2
        return DimExpr._build(coeffs, self._scope)

    def __add__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__add__(other)
        return self._combine(1, other, 1)

    def __radd__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__radd__(other)
        return self._combine(1, other, 1)

    def __sub__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__sub__(other)
        return self._combine(1, other, -1)

    def __rsub__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__rsub__(other)
        return self._combine(-1, other, 1)

    def __neg__(self):
        return self._combine(-1, 0, 0)

    def __pos__(self):
        return self

    def __mul__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__mul__(other)
        if not isinstance(other, DimExpr):
            k = operator.index(other)
            return self if k == 1 else self._combine(k, 0, 0)
        self._scope._check_same_scope(other, "for operation mul")
        coeffs: dict = {}
        for t1, c1 in self.terms:
            for t2, c2 in other.terms:
                t = t1.mul(t2)
                coeffs[t] = coeffs.get(t, 0) + c1 * c2
        return DimExpr._build(coeffs, self._scope)

    def __rmul__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__rmul__(other)
        return self.__mul__(other)

    def __pow__(self, power, modulo=None):
        if modulo is not None:
            raise NotImplementedError("__pow__ modulo not implemented")
        if isinstance(power, DimExpr):
            return self._as_value().__pow__(power)
        if power != int(power):
            raise ValueError("Symbolic dimension cannot be raised to non-integer powers: "
                             f"'{self}' ** '{power}'")
        if power < 0:
            raise ValueError("Symbolic dimension cannot be raised to negative powers: "
                             f"'{self}' ** '{power}'")
        out: Any = 1
        for _ in range(int(power)):
            out = self * out if isinstance(out, int) else out * self
        return out

    def __rpow__(self, other, modulo=None):
        return self._as_value().__rpow__(other)

    def __floordiv__(self, divisor):
        if not _is_poly_like(divisor):
            return self._as_value().__floordiv__(divisor)
        return self._divmod(divisor)[0]

    def __rfloordiv__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__rfloordiv__(other)
        return _ensure_expr(other, "floordiv", self._scope)._divmod(self)[0]

    def __mod__(self, divisor):
        if not _is_poly_like(divisor):
            return self._as_value().__mod__(divisor)
        return self._divmod(divisor)[1]

    def __rmod__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__rmod__(other)
        return _ensure_expr(other, "mod", self._scope)._divmod(self)[1]

    def __divmod__(self, divisor):
        if not _is_poly_like(divisor):
            return self._as_value().__divmod__(divisor)
        return self._divmod(divisor)

    def __rdivmod__(self, other):
        if not _is_poly_like(other):
            return self._as_value().__rdivmod__(other)
        return _ensure_expr(other, "divmod", self._scope)._divmod(self)

    def __truediv__(self, other):
        return self._as_value().__truediv__(other)

    def __rtruediv__(self, other):
        return self._as_value().__rtruediv__(other)

    def __int__(self):
        c = self.constant()
        if c is not None:
            return c
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant")

    def dimension_as_value(self):
        """The dimension as an array value (an int32 scalar, computed at run time)."""
        return self._as_value()

    def __jax_array__(self):
        return self._as_value()

    def _divmod(self, divisor):
        """Polynomial division: exact quotients simplify (``(2*b) // 2 == b``); otherwise
        the result is a `floordiv`/`mod` factor. A constant divisor keeps an int remainder."""
        scope = self._scope
        if isinstance(divisor, DimExpr):
            scope._check_same_scope(divisor, "for operation divmod")
        else:
            divisor = operator.index(divisor)
        dividend: Any = self
        quotient: Any = 0
        try:
            while isinstance(dividend, DimExpr) and dividend.constant() is None:
                t, c = dividend.leading_term
                if isinstance(divisor, DimExpr):
                    dt, dc = divisor.leading_term
                    qt = t.divide(dt)
                    if qt is None:
                        raise _NotExact
                else:
                    qt, dc = t, divisor
                qc, rc = divmod(c, dc)
                if rc != 0:
                    raise _NotExact
                q = DimExpr._build({qt: qc}, scope)
                quotient = quotient + q
                dividend = dividend - q * divisor
            dividend = int(dividend)
            if isinstance(divisor, DimExpr):
                if dividend != 0:
                    raise _NotExact
                return quotient, 0
            q, r = divmod(dividend, divisor)
            return quotient + q, r
        except _NotExact:
            return (DimExpr.operation(FLOORDIV, self, divisor, scope=scope),
                    DimExpr.operation(MOD, self, divisor, scope=scope))

    # --- max/min -----------------------------------------------------------------------
    def max(self, other):
        lb, ub = _bounds(self - other, _GEQ0_OR_LEQ0)
        if lb >= 0:
            return self
        if ub <= 0:
            return other
        return DimExpr.operation(MAX, self, other, scope=self._scope)

    def rmax(self, other):
        lb, ub = _bounds(self - other, _GEQ0_OR_LEQ0)
        if lb >= 0:
            return self
        if ub <= 0:
            return other
        return DimExpr.operation(MAX, other, self, scope=self._scope)

    def min(self, other):
        lb, ub = _bounds(self - other, _GEQ0_OR_LEQ0)
        if lb >= 0:
            return other
        if ub <= 0:
            return self
        return DimExpr.operation(MIN, self, other, scope=self._scope)

    def rmin(self, other):
        lb, ub = _bounds(self - other, _GEQ0_OR_LEQ0)
        if lb >= 0:
            return other
        if ub <= 0:
            return self
        return DimExpr.operation(MIN, other, self, scope=self._scope)


class _NotExact(Exception):
    pass


def _is_poly_like(x) -> bool:
    return isinstance(x, DimExpr) or _is_int_like(x)


def _ensure_expr(x, what: str, scope: SymbolicScope) -> DimExpr:
    if isinstance(x, DimExpr):
        scope._check_same_scope(x, f"for operation {what}")
        return x
    if _is_int_like(x):
        return DimExpr(((_ONE, operator.index(x)),), scope)
    raise TypeError(f"Symbolic dimension {what} not supported for {x}.")


# --- scopes and constraints -------------------------------------------------------------

def _user_location() -> str:
    """``file:line:column (function)`` of the first frame outside the Olympus packages."""
    f = sys._getframe(1)
    while f is not None and _is_internal(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return "unknown"
    col = 0
    try:
        col = list(f.f_code.co_positions())[f.f_lasti // 2][2] or 0
    except Exception:
        pass
    return f"{f.f_code.co_filename}:{f.f_lineno}:{col} ({f.f_code.co_name})"


def _is_internal(fname: str) -> bool:
    fname = fname.replace("\\", "/")
    return (any(f"/{pkg}/" in fname for pkg in (
        "olympus_ir", "olympus_trace", "olympus_lower", "olympus_runtime"))
        or "/src/olympus/" in fname or "/site-packages/olympus/" in fname)


class SymbolicScope:
    """Where symbolic expressions live, with the constraints on their variables.

    Expressions from different scopes cannot be mixed. Constraints are strings
    ``"e1 >= e2"``, ``"e1 <= e2"`` or ``"e1 == e2"``; an equality is a rewrite rule from its
    left side (a single term times a coefficient) to its right side.
    """

    def __init__(self, constraints_str: Sequence[str] = ()):
        if isinstance(constraints_str, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints_str!r}")
        self._initialized = False
        self._location = _user_location()
        self._explicit_constraints: list[tuple] = []  # (cmp, debug_str, e1, e2, diff)
        self._bounds_cache: dict = {}
        self._decision_state = None
        self._rules: dict = {}  # term -> (expression, coefficient)
        for c in constraints_str:
            self._add_constraint_str(c)
            self._bounds_cache.clear()
        self._initialized = True

    def __str__(self) -> str:
        extras = []
        if self._explicit_constraints:
            extras.append(" with constraints:")
            extras.extend(f"  {c[1]}" for c in self._explicit_constraints)
        return f"{id(self)} created at {self._location}" + "\n".join(extras)

    __repr__ = __str__

    def _add_constraint_str(self, c_str: str) -> None:
        from .shape_poly_parser import parse_dims
        if not isinstance(c_str, str):
            raise ValueError(f"SymbolicScope constraint must be a string: got {c_str!r}")
        for token, cmp, geq in (("==", EQ, True), (">=", GEQ, True), ("<=", GEQ, False)):  # noqa: B007
            pos = c_str.find(token)
            if pos >= 0:
                break
        else:
            raise ValueError(
                "Constraint parsing error: must contain one of '==' or '>=' or '<='")
        left, right = c_str[:pos], c_str[pos + 2:]
        e1, = parse_dims(left, None, repr(left), self)
        e2, = parse_dims(right, None, repr(right), self)
        if not geq:
            e1, e2 = e2, e1
        self._add_constraint(cmp, c_str, e1, e2, e1 - e2)

    def _add_constraint(self, cmp, debug_str, e1, e2, diff) -> None:
        if not isinstance(diff, DimExpr):
            if (cmp == EQ and diff != 0) or (cmp == GEQ and diff < 0):
                raise ValueError(f"Unsatisfiable explicit constraint: {debug_str}")
            return
        if cmp == EQ:
            if not isinstance(e1, DimExpr) or len(e1.terms) != 1:
                raise ValueError("Invalid equality constraint: {e1} == {e2}. "
                                 "The left-hand-side must be of the form "
                                 "`term * coefficient`.")
            (before, before_k), = e1.terms
            after = _ensure_expr(e2, "parse_constraint", self)
            if before in self._rules:
                raise NotImplementedError("Found multiple equality constraints with the "
                                          f"same left-hand-side: {before}")
            self._rules[before] = (after, before_k)
            f = before.factor()
            if (before_k == 1 and not isinstance(e2, DimExpr) and e2 == 0 and f is not None
                    and f.operation == MOD and f.operands[1].constant() is not None):
                # mod(e, k) == 0 also gives k*floordiv(e, k) == e.
                k = f.operands[1].constant()
                lhs = DimExpr._build({_Term(((_Factor(operation=FLOORDIV,
                                                      operands=f.operands), 1),)): k}, self)
                self._add_constraint(EQ, f"{lhs} == {f.operands[0]}", lhs, f.operands[0],
                                     lhs - f.operands[0])
        self._explicit_constraints.append((cmp, debug_str, e1, e2, diff))

    def _rewrite(self, coeffs: dict) -> dict:
        """Applies one equality rewrite rule to a {term: coefficient} sum, as JAX does."""
        for t, c in list(coeffs.items()):
            if t.is_constant:
                continue
            rule = self._rules.get(t)
            if rule is not None and c % rule[1] == 0:
                after, k = rule
                out = dict(coeffs)
                del out[t]
                _add_terms(out, after, c // k, _ONE)
                return {t1: c1 for t1, c1 in out.items() if c1 != 0}
            if len(t.factors) <= 1:
                continue
            for f, fexp in t.factors:
                single = _Term(((f, fexp),))
                rule = self._rules.get(single)
                if rule is not None and c % rule[1] == 0:
                    after, k = rule
                    rest = t.divide(single)
                    out = dict(coeffs)
                    del out[t]
                    _add_terms(out, after, c // k, rest)
                    return {t1: c1 for t1, c1 in out.items() if c1 != 0}
        return coeffs

    def _check_same_scope(self, other: DimExpr, when: str = "", self_descr: str = " ",
                          other_descr: str = "unknown") -> None:
        if other._scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\n"
                f"Expected {self_descr}scope {self}\n"
                f"and found for '{other}' ({other_descr}) scope {other._scope}\n"
                "See https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#user-specified-symbolic-constraints.")


def _add_terms(out: dict, e, k: int, times: _Term) -> None:
    if isinstance(e, DimExpr):
        for t, c in e.terms:
            t2 = t.mul(times)
            out[t2] = out.get(t2, 0) + c * k
    elif e:
        out[times] = out.get(times, 0) + e * k


# --- decisions ----------------------------------------------------------------------------

_GEQ0_OR_LEQ0 = 0   # enough to decide max/min: lb >= 0 or ub <= 0
_GEQ0_OR_LT0 = 1    # enough to decide >=: lb >= 0 or ub < 0
_BEST = 2


def _bounds(e, precision: int = _BEST):
    if not isinstance(e, DimExpr):
        return (int(e), int(e))
    from .shape_poly_decision import bounds
    return bounds(e, precision)


def _geq(e1, e2, describe) -> bool:
    if isinstance(e1, DimExpr):
        scope = e1._scope
        if isinstance(e2, DimExpr):
            scope._check_same_scope(e2, f"when comparing {describe()}")
    elif isinstance(e2, DimExpr):
        scope = e2._scope
    else:
        return int(e1) >= int(e2)
    lb, ub = _bounds(e1 - e2, _GEQ0_OR_LT0)
    if lb >= 0:
        return True
    if ub < 0:
        return False
    where = f"\nUsing symbolic scope {scope}" if scope._explicit_constraints else ""
    raise InconclusiveDimensionOperation(
        f"Symbolic dimension comparison {describe()} is inconclusive.{where}")


def bounds(e) -> tuple[float, float]:
    """The lower and upper bounds of a dimension expression (``±inf`` when unbounded)."""
    return _bounds(e, _BEST)


# --- helpers used by shape rules ------------------------------------------------------------

def is_symbolic_dim(d: Any) -> bool:
    """Whether ``d`` is a symbolic dimension expression."""
    return isinstance(d, DimExpr)


def is_constant_dim(d: Any) -> bool:
    """Whether ``d`` is a static integer dimension."""
    if isinstance(d, int):
        return True
    if isinstance(d, DimExpr) or hasattr(d, "aval"):
        return False
    try:
        operator.index(d)
        return True
    except Exception:
        return False


def to_dim(d: Any):
    """``int(d)``, but a symbolic dimension stays as it is (for shape parameters)."""
    return d if type(d) is DimExpr else int(d)


def is_dim(d: Any) -> bool:
    return isinstance(d, DimExpr) or is_constant_dim(d)


def is_constant_shape(shape) -> bool:
    return all(type(d) is int or is_constant_dim(d) for d in shape)


def definitely_equal(a, b) -> bool:
    """``a == b`` for dimensions (false when it depends on the variables' values)."""
    if isinstance(a, DimExpr) or isinstance(b, DimExpr):
        return a == b
    return a == b


def max_dim(d1, d2):
    """``max(d1, d2)`` for constant or symbolic dimensions, symbolic when undecidable."""
    c1, c2 = is_constant_dim(d1), is_constant_dim(d2)
    if c1 and c2:
        return max(d1, d2)
    return d2.rmax(d1) if c1 else d1.max(d2)


def min_dim(d1, d2):
    """``min(d1, d2)`` for constant or symbolic dimensions, symbolic when undecidable."""
    c1, c2 = is_constant_dim(d1), is_constant_dim(d2)
    if c1 and c2:
        return min(d1, d2)
    return d2.rmin(d1) if c1 else d1.min(d2)


def dim_vars(e) -> set[str]:
    """The dimension variables in an expression (empty for an int)."""
    if not isinstance(e, DimExpr):
        return set()
    out: set[str] = set()
    for t, _ in e.terms:
        out |= t.vars()
    return out


def evaluate_dim(e, env: dict, *, add=operator.add, mul=operator.mul,
                 floordiv=operator.floordiv, mod=operator.mod, maximum=None, minimum=None):
    """The value of ``e`` with variables bound by ``env``; the operations may be given to
    evaluate into something other than ints (e.g. IR values at lowering)."""
    if not isinstance(e, DimExpr):
        return e
    maximum = max_dim if maximum is None else maximum
    minimum = min_dim if minimum is None else minimum
    total = None
    for t, c in e.terms:
        v = None
        for f, k in t.factors:
            fv = _evaluate_factor(f, env, e._scope, add, mul, floordiv, mod, maximum, minimum)
            for _ in range(k):
                v = fv if v is None else mul(v, fv)
        if v is None:
            v = c
        elif c != 1:
            v = mul(v, c)
        total = v if total is None else add(total, v)
    return total


def _evaluate_factor(f: _Factor, env, scope, add, mul, floordiv, mod, maximum, minimum):
    ops = dict(add=add, mul=mul, floordiv=floordiv, mod=mod, maximum=maximum, minimum=minimum)
    if f.var is not None:
        if f.var in env:
            return env[f.var]
        raise UnexpectedDimVar(
            f"Encountered dimension variable '{f.var}' that is not appearing in the shapes "
            "of the function arguments.\nThe following dimension variables are appearing in "
            f"the shapes of the function arguments: {list(env.keys())}.\nPlease see "
            "https://docs.jax.dev/en/latest/export/shape_poly.html"
            "#dimension-variables-must-be-solvable-from-the-input-shapes for more details.")
    a, b = (evaluate_dim(o, env, **ops) for o in f.operands)
    if f.operation == FLOORDIV:
        return floordiv(a, b)
    if f.operation == MOD:
        return mod(a, b)
    if f.operation == MAX:
        return maximum(a, b)
    return minimum(a, b)


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None,
                   like: Sequence[int | None] | None = None) -> tuple:
    """Parses a shape specification such as ``"b, 2*c + 1"`` into dimensions.

    ``None`` stands for ``"..."``; ``_`` and ``...`` take their sizes from ``like``. A new
    scope holds ``constraints`` unless ``scope`` is given (not both).
    """
    from .shape_poly_parser import parse_dims
    spec_repr = repr(shape_spec)
    if shape_spec is None:
        shape_spec = "..."
    elif not isinstance(shape_spec, str):
        raise ValueError("polymorphic shape spec should be None or a string. "
                         f"Found {spec_repr}.")
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    return parse_dims(shape_spec, like, spec_repr, scope)

