"""Solving dimension variables from the shapes of actual arguments.

Each symbolic dimension of an argument is an equation ``expr == size`` where the size is
a synthetic variable named after the dimension (``args[0].shape[1]``). Equations that are
linear in one unsolved variable (``k*v + known == size``) give ``v = (size - known) // k``,
and solving repeats until every variable is known; the rest become constraints (a size
consistent with its specification, the remainder of the division 0, each variable >= 1,
the scope's explicit constraints). The solution and constraints are expressions over the
synthetic variables, so they can be evaluated on concrete shapes (a `ValueError` with
JAX's message before running) or on IR values (shape assertions in a module).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from .shape_poly import (
    EQ,
    GEQ,
    DimExpr,
    InconclusiveDimensionOperation,
    UnexpectedDimVar,
    dim_vars,
    evaluate_dim,
    is_symbolic_dim,
)

__all__ = ["ShapeConstraint", "DimSolution", "solve_dim_vars", "dim_values_for_shapes",
           "call_dim_values", "call_out_shapes"]

_HELP = (". Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
         "#shape-assertion-errors for more details.")
_MISMATCH = "Input shapes do not match the polymorphic shapes specification. "


class ShapeConstraint:
    """``left == right`` or ``left >= right`` over synthetic variables, with the pieces
    of its error message (strings and expressions whose values are shown)."""

    __slots__ = ("cmp", "left", "right", "pieces")

    def __init__(self, cmp, left, right, pieces):
        self.cmp, self.left, self.right, self.pieces = cmp, left, right, list(pieces)

    def holds(self, env: dict) -> bool:
        left, right = evaluate_dim(self.left, env), evaluate_dim(self.right, env)
        return left == right if self.cmp == EQ else left >= right

    def message_and_inputs(self, evaluate) -> tuple[str, list]:
        """The message with ``{i}`` placeholders and the values they stand for (repeated
        expressions share a placeholder; at most 32 inputs, as JAX's checker allows)."""
        specs: dict = {}
        inputs: list = []
        out: list[str] = []
        for p in self.pieces:
            if isinstance(p, str):
                out.append(p)
                continue
            key = (type(p), p)
            if key in specs:
                out.append(specs[key])
                continue
            if len(inputs) >= 32:
                out.append("N/A")
                continue
            specs[key] = "{" + str(len(inputs)) + "}"
            out.append(specs[key])
            inputs.append(evaluate(p))
        return "".join(out), inputs

    def error(self, env: dict) -> ValueError:
        msg, inputs = self.message_and_inputs(lambda e: evaluate_dim(e, env))
        return ValueError(msg.format(*inputs))


class DimSolution:
    """The dimension variables as expressions over the synthetic variables, the
    constraints, and the synthetic variables as ``(name, arg_index, dim_index)``."""

    def __init__(self, solution: dict, constraints: list, synthetic: list):
        self.solution = solution
        self.constraints = constraints
        self.synthetic = synthetic


def solve_dim_vars(avals: Sequence, arg_names: Sequence[str] | None = None) -> DimSolution:
    """Solves the dimension variables of `avals` (anything with ``.shape``) in terms of the
    actual sizes; `arg_names` describe each argument (default ``args[i]``). Raises
    ValueError (JAX's wording) when a variable cannot be solved."""
    names = list(arg_names) if arg_names is not None else [f"args[{i}]"
                                                             for i in range(len(avals))]
    eqns = []
    synthetic = []
    specs = []
    for i, aval in enumerate(avals):
        if not any(is_symbolic_dim(d) for d in aval.shape):
            continue
        specs.append(f"{names[i]}.shape = {tuple(aval.shape)}")
        for j, d in enumerate(aval.shape):
            if is_symbolic_dim(d):
                name = f"{names[i]}.shape[{j}]"
                synthetic.append((name, i, j))
                eqns.append((d, name))
    specs_msg = " Using the following polymorphic shapes specifications: " + ",".join(specs) + "."
    env: dict = {}
    obtained: list = [" Obtained dimension variables: "]
    constraints: list[ShapeConstraint] = []
    scope = eqns[0][0].scope if eqns else None

    def process(expr: DimExpr, dim_name: str) -> bool:
        size = DimExpr.var(dim_name, scope)
        rest = size
        var, var_k = None, None
        for t, k in expr.terms:
            try:
                tv = evaluate_dim(DimExpr._build({t: 1}, scope), env) if not t.is_constant else 1
            except UnexpectedDimVar:
                f = t.factor()
                if f is not None and f.var is not None and var is None:
                    var, var_k = f.var, k
                    continue
                return False
            rest = rest - tv * k
        if var is None:
            expected = evaluate_dim(expr, env)
            constraints.append(ShapeConstraint(EQ, size, expected, [
                f"{_MISMATCH}Found inconsistency between dimension size {dim_name} (= ", size,
                f") and the specification '{expr}' (= ", expected, ")." + specs_msg,
                *obtained, _HELP]))
            return True
        if var_k == 1:
            value = rest
        else:
            value, remainder = divmod(rest, var_k)
            constraints.append(ShapeConstraint(EQ, remainder, 0, [
                f"{_MISMATCH}Division had remainder ", remainder,
                f" when computing the value of '{var}'." + specs_msg, *obtained, _HELP]))
        env[var] = value
        obtained.extend([f"'{var}' = ", value,
                         f" from specification '{expr}' for dimension {dim_name} (= ", size,
                         "), "])
        constraints.append(ShapeConstraint(GEQ, value, 1, [
            f"{_MISMATCH}Expected value >= 1 for dimension variable '{var}'." + specs_msg,
            *obtained, _HELP]))
        return True

    while eqns:
        before = len(eqns)
        eqns = [e for e in eqns if not process(*e)]
        if len(eqns) >= before:
            unsolved = set()
            for e, _ in eqns:
                unsolved |= dim_vars(e)
            unsolved -= set(env)
            raise ValueError(
                f"Cannot solve for values of dimension variables {unsolved}. We can only "
                "solve linear uni-variate constraints." + specs_msg
                + " Unprocessed specifications: "
                + ", ".join(f"'{e}' for dimension size {n}" for e, n in eqns)
                + ". Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#dimension-variables-must-be-solvable-from-the-input-shapes for more "
                "details.")
    if env and scope is not None:
        for cmp, debug_str, _e1, _e2, diff in scope._explicit_constraints:
            value = evaluate_dim(diff, env)
            what = "greater or equal" if cmp == GEQ else "equal"
            constraints.append(ShapeConstraint(cmp, value, 0, [
                f"Input shapes do not match the symbolic shape constraint {debug_str}. "
                f"Expected '{diff}' to be {what} to 0, but found ", value,
                ". " + specs_msg, *obtained, _HELP]))
    return DimSolution(env, constraints, synthetic)


def dim_values_for_shapes(avals: Sequence, shapes: Sequence[Sequence[int]],
                          arg_names: Sequence[str] | None = None) -> dict[str, int]:
    """The values of the dimension variables for arguments of concrete `shapes`, after
    checking every constraint (ValueError with JAX's message on the first that fails)."""
    sol = solve_dim_vars(avals, arg_names)
    synth = {name: int(shapes[i][j]) for name, i, j in sol.synthetic}
    for c in sol.constraints:
        if not c.holds(synth):
            raise c.error(synth)
    return {v: int(evaluate_dim(e, synth)) for v, e in sol.solution.items()}


@functools.lru_cache(256)
def _solve_cached(shapes: tuple, arg_names: tuple) -> DimSolution:
    class _A:  # what solve_dim_vars reads of an aval
        __slots__ = ("shape",)

        def __init__(self, shape):
            self.shape = shape

    return solve_dim_vars([_A(s) for s in shapes], arg_names)


def call_dim_values(exported_shapes: Sequence[tuple], shapes: Sequence[tuple],
                    arg_names: Sequence[str]) -> dict:
    """The values of the dimension variables of a function exported with symbolic
    `exported_shapes` when called with arguments of `shapes` (integers, or symbolic
    dimensions when the call is itself traced with symbolic shapes), after checking every
    constraint statically, as JAX's call of an exported function does: a constraint that
    fails, or that cannot be decided for symbolic sizes, raises ValueError with its
    message."""
    sol = _solve_cached(tuple(tuple(s) for s in exported_shapes), tuple(arg_names))
    synth = {name: shapes[i][j] for name, i, j in sol.synthetic}
    try:
        for c in sol.constraints:
            left, right = evaluate_dim(c.left, synth), evaluate_dim(c.right, synth)
            try:
                ok = left == right if c.cmp == EQ else left >= right
            except InconclusiveDimensionOperation as e:
                raise c.error(synth) from e
            if not ok:
                raise c.error(synth)
        return {v: evaluate_dim(e, synth) for v, e in sol.solution.items()}
    except ZeroDivisionError:
        raise ValueError(
            f"Cannot solve the dimension variables of the shapes "
            f"{[tuple(s) for s in exported_shapes]} for arguments of shapes "
            f"{[tuple(s) for s in shapes]}: division by zero") from None


def call_out_shapes(exported_shapes: Sequence[tuple], shapes: Sequence[tuple],
                    arg_names: Sequence[str], out_shapes: Sequence[tuple]) -> list[tuple]:
    """`out_shapes` (of a function exported with symbolic `exported_shapes`) evaluated for
    a call with arguments of `shapes` (see `call_dim_values`). A dimension that cannot be
    evaluated (e.g. ``mod(b, 0)`` in a deserialized, untrusted signature) raises
    ValueError."""
    env = call_dim_values(exported_shapes, shapes, arg_names)
    try:
        return [tuple(evaluate_dim(d, env) for d in s) for s in out_shapes]
    except ZeroDivisionError:
        raise ValueError(
            f"Cannot evaluate the result shapes {[tuple(s) for s in out_shapes]} for "
            f"dimension variables {env}: division by zero") from None
