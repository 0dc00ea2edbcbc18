"""The olympuspr type checker.

`check_olympuspr` walks an (open or closed) olympuspr and raises `OlympusprTypeError` at the
first thing that is not well formed:

* a variable used before it is defined, or defined twice (dropped ``_`` outputs excepted);
* an operand that is not a `Var` or `Literal`, a result that is not a `Var`;
* a literal that is not a scalar, or whose value's dtype is not its aval's dtype;
* an equation whose result avals (shape, dtype, weak_type) differ from what the primitive's
  shape rule (`abstract_eval`) computes from its operand avals and params;
* a closed olympuspr whose consts disagree with its constvars' avals (shape or dtype);
* any of the above inside a sub-olympuspr held in an equation's params (an `Olympuspr`, a
  `ClosedOlympuspr`, or a tuple/list of them); each sub-olympuspr has its own scope.

The message names the equation (pretty-printed, with the names the whole olympuspr would
print with) and says what was expected and what was found.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .avals import ShapedArray
from .core import ClosedOlympuspr, DropVar, Eqn, Literal, Olympuspr, Var, abstract_eval
from .pretty import PpContext, name_vars, pp_eqn

__all__ = ["OlympusprTypeError", "check_olympuspr"]


class OlympusprTypeError(TypeError):
    """An olympuspr is not well typed or not well formed."""


def _type_str(aval: Any) -> str:
    if isinstance(aval, ShapedArray):
        weak = " (weak_type=True)" if aval.weak_type else " (weak_type=False)"
        return aval.str_short() + weak
    return repr(aval)


def _sub_olympusprs(params: dict[str, Any]):
    """(label, olympuspr-or-closed) for every sub-olympuspr held in `params`."""
    for k in sorted(params):
        v = params[k]
        if isinstance(v, (Olympuspr, ClosedOlympuspr)):
            yield k, v
        elif isinstance(v, (tuple, list)):
            for i, x in enumerate(v):
                if isinstance(x, (Olympuspr, ClosedOlympuspr)):
                    yield f"{k}[{i}]", x


class _Checker:
    def __init__(self, top: Olympuspr | ClosedOlympuspr):
        # Name variables the way the whole olympuspr prints, so messages match `print(j)`.
        try:
            self.names = name_vars(top, drop_unread=False)
        except Exception:  # an ill-formed olympuspr may not print; fall back to fresh names
            self.names = PpContext()

    # --- reporting ------------------------------------------------------------------------

    def _where(self, path: list[str]) -> str:
        return " in " + " > ".join(path) if path else ""

    def _eqn_text(self, eqn: Eqn) -> str:
        try:
            return pp_eqn(eqn, self.names)
        except Exception as e:  # pragma: no cover (printing an ill-formed eqn)
            return f"<{eqn.primitive!r} equation that does not print: {e}>"

    def fail_eqn(self, path: list[str], i: int, eqn: Eqn, n: int, msg: str):
        raise OlympusprTypeError(
            f"olympuspr type error{self._where(path)} at equation {i} of {n} "
            f"({getattr(eqn.primitive, 'name', eqn.primitive)}):\n"
            f"    {self._eqn_text(eqn)}\n{msg}"
        )

    def fail(self, path: list[str], msg: str):
        raise OlympusprTypeError(f"olympuspr type error{self._where(path)}: {msg}")

    def vname(self, v: Any) -> str:
        try:
            return self.names(v)
        except Exception:  # pragma: no cover
            return repr(v)

    # --- checks ---------------------------------------------------------------------------

    def check_literal(self, lit: Literal) -> str | None:
        aval = lit.aval
        if not isinstance(aval, ShapedArray):
            return f"literal has aval {aval!r}, expected a ShapedArray"
        val = np.asarray(lit.val)
        if aval.shape != () or val.shape != ():
            return (
                f"literal {self.vname(lit)} is not a scalar: expected shape (), found aval "
                f"shape {aval.shape} and value shape {val.shape}"
            )
        if val.dtype != aval.dtype:
            return (
                f"literal {self.vname(lit)} has a value of dtype {val.dtype.name} but its aval "
                f"says {aval.dtype.name}: expected {aval.dtype.name}, found {val.dtype.name}"
            )
        return None

    def check_consts(self, closed: ClosedOlympuspr, path: list[str]):
        j = closed.olympuspr
        if len(closed.consts) != len(j.constvars):
            self.fail(
                path,
                f"closed olympuspr has {len(closed.consts)} consts for {len(j.constvars)} "
                "constvars",
            )
        for k, (v, c) in enumerate(zip(j.constvars, closed.consts, strict=True)):
            if not isinstance(v, Var):
                continue  # reported by check_body
            if hasattr(c, "shape") and hasattr(c, "dtype"):
                shape, dt = tuple(c.shape), np.dtype(c.dtype)
            else:
                arr = np.asarray(c)
                shape, dt = arr.shape, arr.dtype
            if shape != v.aval.shape or dt != v.aval.dtype:
                self.fail(
                    path,
                    f"const {k} does not match its constvar {self.vname(v)}: expected "
                    f"shape {v.aval.shape} and dtype {v.aval.dtype.name}, found shape "
                    f"{shape} and dtype {dt.name}",
                )

    def check(self, j: Olympuspr | ClosedOlympuspr, path: list[str]):
        if isinstance(j, ClosedOlympuspr):
            self.check_consts(j, path)
            j = j.olympuspr
        if not isinstance(j, Olympuspr):
            self.fail(path, f"expected an Olympuspr or ClosedOlympuspr, found {type(j).__name__}")
        defined: set[int] = set()
        keep: list[Var] = []  # keep vars alive so their ids stay unique

        def bind(v: Any, what: str, on_error):
            if not isinstance(v, Var):
                on_error(
                    f"{what} must be a Var, found {type(v).__name__} {self.vname(v)}"
                )
            if not isinstance(v.aval, ShapedArray):
                on_error(f"{what} {self.vname(v)} has aval {v.aval!r}, expected a ShapedArray")
            if isinstance(v, DropVar):
                return
            if id(v) in defined:
                on_error(f"{what} {self.vname(v)} is defined twice")
            defined.add(id(v))
            keep.append(v)

        def use(x: Any, what: str, on_error):
            if isinstance(x, Literal):
                err = self.check_literal(x)
                if err:
                    on_error(f"{what}: {err}")
            elif isinstance(x, DropVar):
                on_error(f"{what} is a dropped variable _, which cannot be read")
            elif isinstance(x, Var):
                if id(x) not in defined:
                    on_error(f"{what} {self.vname(x)} is used before it is defined")
            else:
                on_error(f"{what} must be a Var or Literal, found {type(x).__name__} {x!r}")

        def top_error(msg):
            self.fail(path, msg)

        for k, v in enumerate(j.constvars):
            bind(v, f"constvar {k}", top_error)
        for k, v in enumerate(j.invars):
            bind(v, f"invar {k}", top_error)

        n = len(j.eqns)
        for i, eqn in enumerate(j.eqns):

            def eqn_error(msg, i=i, eqn=eqn):
                self.fail_eqn(path, i, eqn, n, msg)

            if not isinstance(eqn, Eqn):
                self.fail(path, f"equation {i} of {n} is a {type(eqn).__name__}, not an Eqn")
            for k, x in enumerate(eqn.invars):
                use(x, f"operand {k}", eqn_error)
            for label, sub in _sub_olympusprs(eqn.params):
                self.check(sub, [*path, f"equation {i} ({eqn.primitive.name}) param {label}"])
            in_avals = [x.aval for x in eqn.invars]
            try:
                out = abstract_eval(eqn.primitive, *in_avals, **eqn.params)
            except Exception as e:
                ins = ", ".join(a.str_short() for a in in_avals)
                eqn_error(
                    f"the shape rule of {eqn.primitive.name} rejects operands ({ins}) with "
                    f"these params: {type(e).__name__}: {e}"
                )
            expected = list(out) if eqn.primitive.multiple_results else [out]
            if len(expected) != len(eqn.outvars):
                eqn_error(
                    f"expected {len(expected)} results, found {len(eqn.outvars)} outvars"
                )
            for k, (v, want) in enumerate(zip(eqn.outvars, expected, strict=True)):
                if not isinstance(v, Var):
                    eqn_error(f"result {k} must be a Var, found {type(v).__name__} {v!r}")
                got = v.aval
                if not (
                    isinstance(got, ShapedArray)
                    and got.shape == want.shape
                    and got.dtype == want.dtype
                    and got.weak_type == want.weak_type
                ):
                    eqn_error(
                        f"result {k} ({self.vname(v)}) has the wrong type: expected "
                        f"{_type_str(want)}, found {_type_str(got)}"
                    )
            for k, v in enumerate(eqn.outvars):
                bind(v, f"result {k}", eqn_error)

        for k, x in enumerate(j.outvars):
            use(x, f"output {k}", top_error)


def check_olympuspr(olympuspr: Olympuspr | ClosedOlympuspr) -> None:
    """Raise `OlympusprTypeError` if `olympuspr` (open or closed) is not well typed."""
    _Checker(olympuspr).check(olympuspr, [])
