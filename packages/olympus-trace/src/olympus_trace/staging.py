"""Staging: the trace that records every primitive application into an olympuspr.

Under an `OlympusprTrace` every `bind` is recorded, even on constants ("omnistaging").
Concrete operands become literals (scalars) or constvars (arrays); tracers of an outer,
still-live trace become constvars whose values are those tracers (so the caller can
inline the result into the outer trace).
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir.avals import ShapedArray
from olympus_ir.core import (
    ClosedOlympuspr,
    DebugInfo,
    Eqn,
    Literal,
    Olympuspr,
    SourceInfo,
    Var,
    abstract_eval,
)
from olympus_ir.core import __file__ as _ir_core_file
from olympus_ir.prims.callbacks import own_effect
from olympus_ir.prims.elementwise import convert_element_type_p
from olympus_ir.prims.shape_ops import broadcast_in_dim_p, dim_as_value_p
from olympus_ir.shape_poly import DimExpr

from . import sharding_types, staged_constants, vma_types
from .core import (
    Trace,
    Tracer,
    escaped_tracer_error,
    get_aval,
    leak_checking,
    set_current_trace,
)


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
# The IR package too: `Primitive.bind` (a user's `prim.bind(...)`) lives there.
_SKIP_DIRS: list[str] = [_THIS_DIR, os.path.dirname(os.path.abspath(_ir_core_file))]


def register_internal_dir(path: str) -> None:
    """Frames from files under `path` are skipped when attributing source lines."""
    _SKIP_DIRS.append(os.path.dirname(path) if path.endswith(".py") else path)


class _NameStack(threading.local):
    def __init__(self) -> None:
        self.names: tuple[str, ...] = ()


#: The ``olympus.named_scope`` names entered on this thread, outermost first.
name_stack = _NameStack()


@contextlib.contextmanager
def named_scope(name: str):
    """Equations traced inside carry `name` in their source info (their StableHLO
    location becomes ``name/primitive``); scopes nest."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    prev = name_stack.names
    name_stack.names = (*prev, name)
    try:
        yield
    finally:
        name_stack.names = prev


#: The XLA metadata ``set_xla_metadata(**kvs)`` blocks set, as sorted ``(key, value)``
#: pairs (empty outside any): every equation traced meanwhile carries it in its source
#: info, and its lowered ops carry it as ``mhlo.frontend_attributes``. Process-wide, as
#: Olympus's other contexts; the olympus layer also puts it in the jit cache key.
xla_metadata: list[tuple] = [()]


def merge_xla_metadata(outer: tuple, inner: tuple) -> tuple:
    """`outer`'s pairs updated by `inner`'s, sorted (a pair whose value is None removes
    its key, as in JAX)."""
    merged = dict(outer)
    merged.update(inner)
    return tuple(sorted((k, v) for k, v in merged.items() if v is not None))


def _with_xla_metadata(src: SourceInfo | None, md: tuple) -> SourceInfo:
    """`src` carrying the active metadata `md` (its own pairs, from the equation it was
    copied from, win); a bare source info when there is no user frame to name."""
    if src is None:
        return SourceInfo("", 0, xla_metadata=md)
    merged = merge_xla_metadata(md, src.xla_metadata)
    if merged == src.xla_metadata:
        return src
    out = src._replace(xla_metadata=merged)
    if isinstance(src, PreciseSourceInfo):
        out.column, out.qualname = src.column, src.qualname
    return out


class PreciseSourceInfo(SourceInfo):
    """A SourceInfo that also knows the column and the qualified function name (recorded
    only while `precise_source_info` is on: finding the column costs a scan of the code's
    positions, too slow for every traced equation)."""

    column: int | None = None
    qualname: str = ""

    def summary(self) -> str:
        """``file:line:column (qualified function)``, as JAX's source summaries."""
        col = "" if self.column is None else f":{self.column}"
        return f"{self.file}:{self.line}{col} ({self.qualname or self.function})"


_precise = [False]


@contextlib.contextmanager
def precise_source_info():
    """Within this context, traced equations record `PreciseSourceInfo`."""
    prev = _precise[0]
    _precise[0] = True
    try:
        yield
    finally:
        _precise[0] = prev


#: The source of the equation being re-bound by `olympuspr_utils.eval_olympuspr` (inlining
#: a traced body): what it binds is attributed to the user's line that equation came from,
#: not to the line that started the inlining.
source_override: list = [None]


def user_source_info() -> SourceInfo | None:
    import sys

    if source_override[0] is not None:
        return source_override[0]
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        if not any(fn.startswith(d) for d in _SKIP_DIRS):
            names = name_stack.names
            scope = "/".join(names) if names else ""
            if _precise[0]:
                return _precise_info(f, scope)
            return SourceInfo(fn, f.f_lineno, f.f_code.co_name, scope)
        f = f.f_back
    return None


def _precise_info(frame, scope: str = "") -> PreciseSourceInfo:
    code = frame.f_code
    info = PreciseSourceInfo(code.co_filename, frame.f_lineno, code.co_name, scope)
    positions = getattr(code, "co_positions", None)
    if positions is not None and frame.f_lasti >= 0:
        for i, pos in enumerate(positions()):
            if i == frame.f_lasti // 2:
                info.column = pos[2]
                break
    info.qualname = getattr(code, "co_qualname", code.co_name)
    return info


def _summarize(src: SourceInfo | None) -> str:
    """``file:line (function)``, as JAX's source_info_util.summarize."""
    if src is None:
        return "unknown"
    return f"{src.file}:{src.line} ({src.function})"


class OlympusprTracer(Tracer):
    """The tracer `make_olympuspr`-style staging gives each value: an abstract value and the
    olympuspr variable that will hold it."""

    # The variable is `_var`: a public `var` attribute would hide the `x.var()` array method.
    __slots__ = ("_aval", "_var")
    # The class name JAX's messages give a staging tracer (e.g. an escaped tracer's).
    error_type_name = "DynamicOlympusprTracer"

    def __init__(self, trace: OlympusprTrace, aval: ShapedArray, var: Var):
        self._trace = trace
        self._aval = aval
        self._var = var

    @property
    def aval(self):
        return self._aval

    def _origin_msg(self) -> str:
        return self._trace.origin_msg(self._var)

    def __repr__(self) -> str:
        return f"JitTracer({self.aval})"  # JAX's name for the tracer of a staged trace


def _convert_is_noop(in_aval, out_aval, params) -> bool:
    return (in_aval.dtype == out_aval.dtype and in_aval.weak_type == out_aval.weak_type
            and not dtypes.issubdtype(in_aval.dtype, dtypes.extended)
            and params.get("sharding") is None)


def _broadcast_is_noop(in_aval, out_aval, params) -> bool:
    return (type(in_aval) is ShapedArray and in_aval.shape == tuple(params["shape"])
            and params.get("sharding") is None)


# Primitives whose equation JAX does not stage when it would return its operand unchanged
# (its staging "forwarding rules"): a convert to the operand's own dtype and weak type, a
# broadcast to the operand's own shape. Rules that bind these directly (transposes, JVPs)
# then print as JAX's do.
_FORWARDS = {convert_element_type_p: _convert_is_noop, broadcast_in_dim_p: _broadcast_is_noop}


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
        self.tracer_refs: list | None = [] if leak_checking.enabled else None
        self.types: dict | None = None  # Var -> sharding type, when typed (sharding_types)

    def new_arg(self, aval: ShapedArray) -> OlympusprTracer:
        v = Var(aval)
        self.invars.append(v)
        return self._new_tracer(aval, v)

    def _new_tracer(self, aval: ShapedArray, var: Var) -> OlympusprTracer:
        t = OlympusprTracer(self, aval, var)
        if self.tracer_refs is not None:
            self.tracer_refs.append(weakref.ref(t))
        return t

    def _const_var(self, x: Any, aval: ShapedArray) -> Var:
        entry = self.constvars.get(id(x))
        if entry is None:
            entry = self.constvars[id(x)] = (Var(aval), x)
            if sharding_types.hooks.arg_type is not None:
                sharding_types.type_constant(self, entry[0], x)
        return entry[0]

    def to_atom(self, x: Any):
        if isinstance(x, OlympusprTracer) and x._trace is self:
            return x._var
        if isinstance(x, Tracer):
            if not x._trace.alive:
                raise escaped_tracer_error(x)
            return self._const_var(x, x.aval)
        aval = get_aval(x)
        if type(x) is DimExpr:  # a symbolic dimension used as a value
            return self.process_primitive(dim_as_value_p, (), {"dim": x})._var
        if isinstance(x, np.ndarray) and x.dtype != aval.dtype:
            x = x.astype(aval.dtype)  # canonicalize (e.g. float64 -> float32 without x64)
        if aval.shape == () and isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
            return Literal(x, aval)
        return self._const_var(x, aval)

    def stage_value(self, x: Any) -> OlympusprTracer:
        """`x` as a value of this trace without an equation (`lax.stage`): its own tracers
        as they are, anything else as a literal or constant."""
        if isinstance(x, OlympusprTracer) and x._trace is self:
            return x
        atom = self.to_atom(x)
        return self._new_tracer(atom.aval, atom)

    def process_primitive(self, prim, args, params):
        atoms = [self.to_atom(a) for a in args]
        out_aval = abstract_eval(prim, *(a.aval for a in atoms), **params)
        forwards = _FORWARDS.get(prim)
        if forwards is not None and forwards(atoms[0].aval, out_aval, params):
            return self.stage_value(args[0])  # as JAX: no equation for a no-op
        if prim is convert_element_type_p and type(atoms[0]) is Literal:
            folded = staged_constants.fold_convert(self, atoms[0], params, out_aval)
            if folded is not None:  # JAX folds the conversion of a scalar literal
                return folded
        md = xla_metadata[0]
        src = user_source_info() if self.record_source or md else None
        if md:
            src = _with_xla_metadata(src, md)
        if prim.multiple_results:
            outvars = [Var(a) for a in out_aval]
            if self.types is not None:
                sharding_types.record(self, prim, atoms, outvars, params)
            self.eqns.append(Eqn(prim, atoms, outvars, params, src))
            return [self._new_tracer(v.aval, v) for v in outvars]
        v = Var(out_aval)
        if self.types is not None:
            sharding_types.record(self, prim, atoms, [v], params)
        self.eqns.append(Eqn(prim, atoms, [v], params, src))
        return self._new_tracer(out_aval, v)

    def creation_source(self, var: Var):
        """The source info of the equation that made `var` (None for inputs/constants)."""
        for e in reversed(self.eqns):
            if any(o is var for o in e.outvars):
                return e.source_info
        return None

    def origin_msg(self, var: Var) -> str:
        """Which function arguments `var` depends on, in JAX's words: empty, or a newline
        followed by the function being traced and the arguments (or, for values computed
        from constants only, the operations) the value came from."""
        di = self.debug_info
        if di is None:
            return ""
        active = {id(var)}
        cone = []
        for e in reversed(self.eqns):
            if any(id(o) in active for o in e.outvars):
                cone.append(e)
                active.update(id(i) for i in e.invars if isinstance(i, Var))
        names = [n for v, n in zip(self.invars, di.arg_names) if id(v) in active]
        origin = (f"The error occurred while tracing the function {di.func_src_info} for "
                  f"{di.traced_for}. ")
        if names:
            if len(names) == 1:
                args = f"the argument {names[0]}"
            elif len(names) == 2:
                args = f"the arguments {names[0]} and {names[1]}"
            else:
                args = f"the arguments {', '.join(names[:-1])}, and {names[-1]}"
            origin += ("This concrete value was not available in Python because it depends on "
                       f"the value{'s' if len(names) > 1 else ''} of {args}.")
        else:
            invar_ids = {id(v) for v in self.invars}
            progenitors = [e for e in reversed(cone)
                           if not any(id(i) in invar_ids for i in e.invars)
                           and not any(isinstance(i, Var) and any(i is o for c in cone
                                                                   for o in c.outvars)
                                       for i in e.invars)]
            if progenitors:
                lines = [f"  operation {e!r}\n    from line {_summarize(e.source_info)}"
                         for e in progenitors[:5]]
                origin += ("This value became a tracer due to OLYMPUS operations on these "
                           "lines:\n\n" + "\n\n".join(lines))
                if len(progenitors) > 5:
                    origin += "\n\n(Additional originating lines are not shown.)"
        return "\n" + origin

    def to_olympuspr(self, outs: Sequence[Any]) -> tuple[ClosedOlympuspr, list[Any]]:
        """Finish: returns the closed olympuspr; consts include outer-trace tracers."""
        outvars = [self.to_atom(o) for o in outs]
        constvars = [v for v, _ in self.constvars.values()]
        consts = [c for _, c in self.constvars.values()]
        types = {v: ty.spec for v, ty in self.types.items()} if self.types else None
        j = Olympuspr(constvars, self.invars, outvars, self.eqns, _effects(self.eqns),
                      debug_info=self.debug_info, sharding_types=types,
                      vma_types=vma_types.trace_vma(self))
        return ClosedOlympuspr(j, consts), consts


def _effects(eqns: Sequence[Eqn]) -> frozenset:
    """The effects an olympuspr records: each equation's own effect (host callbacks, see
    `own_effect`) and the effects of the sub-olympusprs equations hold (cond branches,
    loop bodies)."""
    effects: set = set()
    for e in eqns:
        own = own_effect(e)
        if own is not None:
            effects.add(own)
        for v in e.params.values():
            if isinstance(v, (ClosedOlympuspr, Olympuspr)):
                effects |= v.effects
            elif isinstance(v, tuple) and v and isinstance(v[0], (ClosedOlympuspr, Olympuspr)):
                for x in v:
                    if x is not None:  # custom_linear_solve may lack a transpose solve
                        effects |= x.effects
    return frozenset(effects)


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
    if trace.tracer_refs is not None:
        del args, outs
        check_no_leaks(trace)
    return closed, None


def check_no_leaks(trace: OlympusprTrace) -> None:
    """Raise JAX's leak report (a plain Exception) if a tracer of the finished `trace` is
    still alive."""
    gc.collect()
    leaked = [t for t in (r() for r in trace.tracer_refs) if t is not None]
    if leaked:
        from .leak_report import leaked_tracer_error

        raise leaked_tracer_error("DynamicOlympusprTrace", leaked)
