"""The olympuspr pretty-printer, in JAX's jaxpr format.

    { lambda ; a:i32[] b:i32[]. let
        c:i32[] = mul 2:i32[] a
        d:i32[] = add c b
      in (d,) }

Variables are named a, b, ..., z, ba, bb, ... in order of first appearance; literals
carry their type; params print as ``name=value`` in sorted order; sub-olympusprs held in
params are printed nested and indented.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import ClosedOlympuspr, DropVar, Eqn, Literal, Olympuspr, Var, format_literal


def encode_name(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba, 27 -> bb (base 26 with a as zero)."""
    s = ""
    while True:
        n, r = divmod(n, 26)
        s = chr(ord("a") + r) + s
        if n == 0:
            return s


class Names:
    """Assigns printed names to variables in order of first appearance."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, v: Any) -> str:
        if isinstance(v, Literal):
            return repr(v)
        if isinstance(v, DropVar):
            return "_"
        key = id(v)
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = encode_name(len(self.names)) + getattr(v, "suffix", "")
        return name

    def binder(self, v: Var) -> str:
        if isinstance(v, DropVar):
            return f"_:{v.aval.str_short()}"
        return f"{self(v)}:{v.aval.str_short()}"


def _pp_param_value(v: Any, names: Names, indent: int) -> str:
    if isinstance(v, (Olympuspr, ClosedOlympuspr)):
        j = v.olympuspr if isinstance(v, ClosedOlympuspr) else v
        return _pp(j, names, indent)
    if isinstance(v, (tuple, list)) and v and all(
        isinstance(x, (Olympuspr, ClosedOlympuspr)) for x in v
    ):
        pad = " " * (indent + 2)
        inner = "\n".join(pad + _pp_param_value(x, names, indent + 2) for x in v)
        return "(\n" + inner + "\n" + " " * indent + ")"
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if isinstance(v, np.ndarray):
        return format_literal(v)
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return str(v)


def _has_sub_olympuspr(v: Any) -> bool:
    if isinstance(v, (Olympuspr, ClosedOlympuspr)):
        return True
    return isinstance(v, (tuple, list)) and any(
        isinstance(x, (Olympuspr, ClosedOlympuspr)) for x in v
    )


def _pp_params(params: dict[str, Any], names: Names, indent: int) -> str:
    if not params:
        return ""
    items = sorted(params.items())
    if any(_has_sub_olympuspr(v) for _, v in items):
        pad = " " * (indent + 2)
        body = "\n".join(
            f"{pad}{k}={_pp_param_value(v, names, indent + 2)}" for k, v in items
        )
        return "[\n" + body + "\n" + " " * indent + "]"
    return "[" + " ".join(f"{k}={_pp_param_value(v, names, indent)}" for k, v in items) + "]"


def pp_eqn(eqn: Eqn, names: Names | None = None, indent: int = 0) -> str:
    names = names or Names()
    # Operands are named before results so that names follow the order of appearance.
    ins = " ".join(names(v) for v in eqn.invars)
    outs = " ".join(names.binder(v) for v in eqn.outvars)
    params = _pp_params(eqn.params, names, indent)
    rhs = f"{eqn.primitive.name}{params}" + (f" {ins}" if ins else "")
    return f"{outs} = {rhs}" if outs else rhs  # JAX: no "=" without results


def _pp(j: Olympuspr, names: Names, indent: int) -> str:
    consts = " ".join(names.binder(v) for v in j.constvars)
    ins = " ".join(names.binder(v) for v in j.invars)
    head = "{ lambda " + (consts + "; " if consts else "; ") + ins + ". let"
    pad = " " * (indent + 4)
    lines = [pad + pp_eqn(e, names, indent + 4) for e in j.eqns]
    outs = ", ".join(names(v) for v in j.outvars)  # JAX: in (a, b) }
    outs = f"({outs},)" if len(j.outvars) == 1 else f"({outs})"
    tail = " " * (indent + 2) + f"in {outs} }}"
    if not lines:
        return head + "  " + f"in {outs} }}"
    return "\n".join([head, *lines, tail])


def pp_olympuspr(j: Olympuspr | ClosedOlympuspr) -> str:
    if isinstance(j, ClosedOlympuspr):
        j = j.olympuspr
    return _pp(j, Names(), 0)
