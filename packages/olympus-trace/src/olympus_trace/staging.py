"""Staging: the trace that records every primitive application into an olympuspr.

Under an `OlympusprTrace` every `bind` is recorded, even on constants ("omnistaging").
Concrete operands become literals (scalars) or constvars (arrays); tracers of an outer,
still-live trace become constvars whose values are those tracers (so the caller can
inline the result into the outer trace).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from olympus_ir.avals import ShapedArray
from olympus_ir.core import (
    ClosedOlympuspr,
    Eqn,
    Literal,
    Olympuspr,
    SourceInfo,
    Var,
    abstract_eval,
)

from .core import Trace, Tracer, escaped_tracer_error, get_aval, set_current_trace


class DebugInfo(NamedTuple):
    """What a traced function was: for error messages and argument names."""

    traced_for: str
    func_src_info: str
    arg_names: tuple[str, ...]
    result_paths: tuple[str, ...] | None = None

    def __str__(self) -> str:
        return f"{self.func_src_info} traced for {self.traced_for}"


def fun_source_info(fun: Callable) -> str:
    f = inspect.unwrap(fun) if callable(fun) else fun
    while hasattr(f, "func") and not hasattr(f, "__code__"):  # functools.partial
        f = f.func
    name = getattr(f, "__name__", type(f).__name__)
    code = getattr(f, "__code__", None)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


_THIS_DIR = os.path.dirname(__file__)
_SKIP_DIRS: list[str] = [_THIS_DIR]


def register_internal_dir(path: str) -> None:
    """Frames from files under `path` are skipped when attributing source lines."""
    _SKIP_DIRS.append(os.path.dirname(path) if path.endswith(".py") else path)


def user_source_info() -> SourceInfo | None:
    import sys

    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not any(fn.startswith(d) for d in _SKIP_DIRS):
            return SourceInfo(fn, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return None


class OlympusprTracer(Tracer):
    __slots__ = ("_aval", "var")

    def __init__(self, trace: OlympusprTrace, aval: ShapedArray, var: Var):
        self._trace = trace
        self._aval = aval
        self.var = var

    @property
    def aval(self):
        return self._aval

    def _origin_msg(self) -> str:
        return self._trace.origin_msg(self.var)


class OlympusprTrace(Trace):
    """Records equations. Call `to_olympuspr(outs)` at the end."""

    name = "staging"

    def __init__(self, parent: Trace, debug_info: DebugInfo | None = None):
        super().__init__()
        self.parent = parent
        self.debug_info = debug_info
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: dict[int, tuple[Var, Any]] = {}  # id(value) -> (var, value)
        self.record_source = True

    def new_arg(self, aval: ShapedArray) -> OlympusprTracer:
        v = Var(aval)
        self.invars.append(v)
        return OlympusprTracer(self, aval, v)

    def _const_var(self, x: Any, aval: ShapedArray) -> Var:
        entry = self.constvars.get(id(x))
        if entry is None:
            entry = self.constvars[id(x)] = (Var(aval), x)
        return entry[0]

    def to_atom(self, x: Any):
        if isinstance(x, OlympusprTracer) and x._trace is self:
            return x.var
        if isinstance(x, Tracer):
            if not x._trace.alive:
                raise escaped_tracer_error(x)
            return self._const_var(x, x.aval)
        aval = get_aval(x)
        if isinstance(x, np.ndarray) and x.dtype != aval.dtype:
            x = x.astype(aval.dtype)  # canonicalize (e.g. float64 -> float32 without x64)
        if aval.shape == () and isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
            return Literal(x, aval)
        return self._const_var(x, aval)

    def process_primitive(self, prim, args, params):
        atoms = [self.to_atom(a) for a in args]
        out_aval = abstract_eval(prim, *(a.aval for a in atoms), **params)
        src = user_source_info() if self.record_source else None
        if prim.multiple_results:
            outvars = [Var(a) for a in out_aval]
            self.eqns.append(Eqn(prim, atoms, outvars, params, src))
            return [OlympusprTracer(self, v.aval, v) for v in outvars]
        v = Var(out_aval)
        self.eqns.append(Eqn(prim, atoms, [v], params, src))
        return OlympusprTracer(self, out_aval, v)

    def origin_msg(self, var: Var) -> str:
        """Which function arguments `var` depends on, in JAX's words."""
        di = self.debug_info
        if di is None:
            return ""
        deps = {id(var)}
        for e in reversed(self.eqns):
            if any(id(o) in deps for o in e.outvars):
                deps.update(id(i) for i in e.invars if isinstance(i, Var))
        names = [
            n for v, n in zip(self.invars, di.arg_names) if id(v) in deps
        ]
        if not names:
            return (f"The error occurred while tracing the function {di.func_src_info} for "
                    f"{di.traced_for}.")
        if len(names) == 1:
            dep = f"the value of the argument {names[0]}"
        else:
            dep = "the values of the arguments " + ", ".join(names[:-1]) + f" and {names[-1]}"
        return (
            f"The error occurred while tracing the function {di.func_src_info} for "
            f"{di.traced_for}. This concrete value was not available in Python because it "
            f"depends on {dep}."
        )

    def to_olympuspr(self, outs: Sequence[Any]) -> tuple[ClosedOlympuspr, list[Any]]:
        """Finish: returns the closed olympuspr; consts include outer-trace tracers."""
        outvars = [self.to_atom(o) for o in outs]
        constvars = [v for v, _ in self.constvars.values()]
        consts = [c for _, c in self.constvars.values()]
        j = Olympuspr(constvars, self.invars, outvars, self.eqns, debug_info=self.debug_info)
        return ClosedOlympuspr(j, consts), consts


def trace_to_olympuspr(
    fun: Callable, in_avals: Sequence[ShapedArray], debug_info: DebugInfo | None = None,
    parent: Trace | None = None,
) -> tuple[ClosedOlympuspr, list]:
    """Trace flat `fun(*tracers) -> list of outputs` at `in_avals`.

    Returns (closed_olympuspr, out_list_raw). Tracers of outer traces captured by `fun`
    are among the consts.
    """
    from .core import current_trace

    trace = OlympusprTrace(parent or current_trace(), debug_info)
    args = [trace.new_arg(a) for a in in_avals]
    try:
        with set_current_trace(trace):
            outs = fun(*args)
        closed, _ = trace.to_olympuspr(outs)
    finally:
        trace.invalidate()
    return closed, outs
