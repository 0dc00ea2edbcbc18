"""`olympus.core`: JAX's public ``jax.core`` names, mapped onto Olympus's IR (olympus_ir)
and tracing layer (olympus_trace).

As in JAX 0.10.2, a dozen names are plain exports (``ShapedArray``, ``Tracer``, ``Trace``,
``eval_olympuspr``, ``ensure_compile_time_eval`` ...) and the others are deprecated:
reading one warns (``DeprecationWarning``, JAX's wording with Olympus's names) and returns
the Olympus object that does the same job. Names JAX removed in 0.10.0 (``get_aval``,
``mapped_aval`` ...) raise AttributeError with JAX's message.
"""

from __future__ import annotations

import abc
import contextlib
import warnings
from collections.abc import Set
from typing import Any

import numpy as np

from olympus_ir import dtypes as _dtypes
from olympus_ir.avals import ShapedArray
from olympus_ir.avals import abstract_token as _abstract_token
from olympus_ir.core import ClosedOlympuspr as _ClosedOlympuspr
from olympus_ir.core import DropVar as _DropVar
from olympus_ir.core import Eqn as _Eqn
from olympus_ir.core import Literal as _Literal
from olympus_ir.core import Olympuspr as _Olympuspr
from olympus_ir.core import Primitive as _Primitive
from olympus_ir.core import Var as _Var
from olympus_ir.pretty import PpContext as _PpContext
from olympus_ir.pretty import PpSettings as _PpSettings
from olympus_ir.prims.callbacks import Effect as _Effect
from olympus_ir.shape_poly import InconclusiveDimensionOperation as _InconclusiveDimensionOperation
from olympus_ir.verify import OlympusprTypeError as _OlympusprTypeError
from olympus_trace import core as _tcore
from olympus_trace.batching import BatchTrace as _BatchTrace
from olympus_trace.core import Trace, Tracer
from olympus_trace.errors import ConcretizationTypeError as _ConcretizationTypeError
from olympus_trace.hitypes import HiType as _HiType
from olympus_trace.hitypes import MutableHiType as _MutableHiType
from olympus_trace.staging import DebugInfo as _DebugInfo
from olympus_trace.staging import OlympusprTrace as _OlympusprTrace

from ._src.introspection import ensure_compile_time_eval

__all__ = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
           "ensure_compile_time_eval", "eval_context", "eval_olympuspr", "max_dim",
           "min_dim"]


class AbstractValue(abc.ABC):  # noqa: B024 - an abstract base with no abstract methods
    """The base of abstract values (types of traced values): ``ShapedArray`` is one."""


AbstractValue.register(ShapedArray)
AbstractValue.register(_HiType)  # user-defined high-level types (experimental.hijax)
AbstractValue.register(_MutableHiType)

Value = Any
Atom = _Var | _Literal
ParamDict = dict[str, Any]


def eval_olympuspr(olympuspr, consts, *args, propagate_source_info: bool = True) -> list:
    """Evaluate `olympuspr` on `args` (its constvars bound to `consts`): each equation is
    bound in the current trace, so this runs eagerly outside a trace and inlines under
    one. Returns the list of outputs."""
    from olympus_trace.olympuspr_utils import eval_olympuspr as _eval

    if isinstance(olympuspr, _ClosedOlympuspr):
        raise TypeError("eval_olympuspr takes an Olympuspr (closed.olympuspr) and its consts, "
                        "not a ClosedOlympuspr")
    return _eval(olympuspr, consts, *args)


eval_context = ensure_compile_time_eval


def _dim(d: Any, what: str) -> int:
    if not _is_constant_dim(d):
        raise TypeError(f"{what}: dimensions must be integers, got {d!r}")
    return int(d)


def max_dim(d1: Any, d2: Any) -> int:
    """The larger of two dimension sizes."""
    return max(_dim(d1, "max_dim"), _dim(d2, "max_dim"))


def min_dim(d1: Any, d2: Any) -> int:
    """The smaller of two dimension sizes."""
    return min(_dim(d1, "min_dim"), _dim(d2, "min_dim"))


# --- the deprecated names: what each does ------------------------------------------------


class CallPrimitive(_Primitive):
    """A primitive whose first operand is a function it calls (``call``)."""

    def __init__(self, name: str):
        super().__init__(name, multiple_results=True)

    def bind(self, fun, *args, **params):
        outs = fun(*args, **params)
        return list(outs) if isinstance(outs, (tuple, list)) else [outs]


call_p = CallPrimitive("call")


def call(fun, *args, **params):
    """Call `fun` on `args` (the results as a list)."""
    return call_p.bind(fun, *args, **params)


Effect = _Effect
Effects = Set[_Effect]
no_effects: frozenset = frozenset()
OutputType = tuple[AbstractValue, ...]


def check_olympuspr(olympuspr) -> None:
    """Type-check `olympuspr`: OlympusprTypeError if it is malformed."""
    from olympus_ir.verify import check_olympuspr as _check

    _check(olympuspr)


def concrete_or_error(force, val, context: str = ""):
    """`val`'s concrete value (passed through `force`, e.g. ``int``, when given), or a
    ConcretizationTypeError naming `context` when it is an abstract tracer."""
    return _tcore.concrete_or_error(force, val, context)


def concretization_function_error(fun, suggest_astype: bool = False):
    """A function of one argument that raises ConcretizationTypeError for it (JAX's
    ``float(tracer)`` error, named after `fun`)."""
    fname = getattr(fun, "__name__", fun)
    fname_context = f"The problem arose with the `{fname}` function. "
    if suggest_astype:
        fname_context += ("If trying to convert the data type of a value, try using "
                          f"`x.astype({fun.__name__})` or `olympus.numpy.array(x, "
                          f"{fun.__name__})` instead.")

    def error(self, arg):
        raise _ConcretizationTypeError(arg, fname_context)
    return error


def find_top_trace(args) -> Trace:
    """The trace new operations on `args` run in (the current one)."""
    del args
    return _tcore.current_trace()


def gensym(suffix: str = ""):
    """A function making fresh variables of a given abstract value."""
    def fresh(aval):
        return _Var(aval, suffix)
    return fresh


def get_opaque_trace_state(convention=None):
    """An object standing for the current trace state (hashable, comparable by identity
    of the trace)."""
    del convention
    return _OpaqueTraceState(_tcore.current_trace())


class _OpaqueTraceState:
    __slots__ = ("_trace",)

    def __init__(self, trace):
        self._trace = trace

    def __eq__(self, other):
        return isinstance(other, _OpaqueTraceState) and other._trace is self._trace

    def __hash__(self):
        return id(self._trace)


def is_concrete(x: Any) -> bool:
    """Whether `x`'s value is known (not an abstract tracer)."""
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def _is_constant_dim(d: Any) -> bool:
    """Whether `d` is a known (integer) dimension size."""
    try:
        import operator

        operator.index(d)
        return True
    except TypeError:
        return False


def is_constant_shape(s) -> bool:
    return all(_is_constant_dim(d) for d in s)


def olympusprs_in_params(params: dict):
    """Yield the olympusprs among an equation's params (also inside tuples/lists)."""
    for v in params.values():
        for c in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(c, _ClosedOlympuspr):
                yield c.olympuspr
            elif isinstance(c, _Olympuspr):
                yield c


literalable_types: set = {bool, int, float, complex, np.ndarray, np.bool_, *(
    dt.type for dt in _dtypes.SUPPORTED_DTYPES)}


def new_olympuspr_eqn(invars, outvars, primitive, params, effects=None, source_info=None,
                      ctx=None):
    """A new equation ``outvars = primitive[params] invars``."""
    del effects, ctx
    return _Eqn(primitive, invars, outvars, dict(params), source_info)


no_axis_name = object()


def _traces():
    t = _tcore.current_trace()
    while t is not None:
        yield t
        t = getattr(t, "parent", None)


def unsafe_get_axis_names() -> list:
    """The names of the vmap axes in scope, innermost first."""
    return [t.axis_data.name for t in _traces()
            if isinstance(t, _BatchTrace) and t.axis_data.name is not None]


def nonempty_axis_env() -> bool:
    return bool(unsafe_get_axis_names())


def unsafe_am_i_under_a_jit() -> bool:
    """Whether the current trace stages a program (jit, make_olympuspr ...)."""
    return isinstance(_tcore.current_trace(), _OlympusprTrace)


def unsafe_am_i_under_a_vmap() -> bool:
    """Whether the current trace is vmap's."""
    return isinstance(_tcore.current_trace(), _BatchTrace)


def primal_dtype_to_tangent_dtype(primal_dtype):
    """The tangent dtype of a primal dtype: itself for floats, float0 otherwise."""
    from olympus_trace.ad import tangent_dtype

    return tangent_dtype(primal_dtype)


def valid_olympustype(x: Any) -> bool:
    """Whether `x` is a value Olympus can trace (an array, a scalar ...)."""
    try:
        _tcore.get_aval(x)
    except TypeError:
        return False
    return True


pytype_aval_mappings = _tcore.aval_handlers
aval_mapping_handlers: dict = {}
custom_typechecks: dict = {}
trace_ctx = _tcore.trace_ctx


_DEPRECATED = {
    "CallPrimitive": ("olympus.extend.core.CallPrimitive", CallPrimitive),
    "DebugInfo": ("olympus.extend.core.DebugInfo", _DebugInfo),
    "DropVar": ("olympus.extend.core.DropVar", _DropVar),
    "Effect": ("olympus.extend.core.Effect", Effect),
    "Effects": ("olympus.extend.core.Effects", Effects),
    "OlympusprTypeError": ("olympus.errors.OlympusprTypeError", _OlympusprTypeError),
    "check_olympuspr": ("olympus.extend.core.check_olympuspr", check_olympuspr),
    "concrete_or_error": ("olympus.extend.core.concrete_or_error", concrete_or_error),
    "find_top_trace": ("olympus.extend.core.find_top_trace", find_top_trace),
    "gensym": ("olympus.extend.core.gensym", gensym),
    "get_opaque_trace_state": ("olympus.extend.core.get_opaque_trace_state",
                               get_opaque_trace_state),
    "olympusprs_in_params": ("olympus.extend.core.olympusprs_in_params",
                             olympusprs_in_params),
    "new_olympuspr_eqn": ("olympus.extend.core.new_olympuspr_eqn", new_olympuspr_eqn),
    "no_effects": ("olympus.extend.core.no_effects", no_effects),
    "nonempty_axis_env_DO_NOT_USE": (None, nonempty_axis_env),
    "primal_dtype_to_tangent_dtype": ("olympus.extend.core.primal_dtype_to_tangent_dtype",
                                      primal_dtype_to_tangent_dtype),
    "unsafe_am_i_under_a_jit_DO_NOT_USE": (None, unsafe_am_i_under_a_jit),
    "unsafe_am_i_under_a_vmap_DO_NOT_USE": (None, unsafe_am_i_under_a_vmap),
    "unsafe_get_axis_names_DO_NOT_USE": (None, unsafe_get_axis_names),
    "valid_olympustype": ("olympus.extend.core.valid_olympustype", valid_olympustype),
    "OlympusprPpContext": (None, _PpContext),
    "OlympusprPpSettings": (None, _PpSettings),
    "OutputType": (None, OutputType),
    "aval_mapping_handlers": (None, aval_mapping_handlers),
    "call": (None, call),
    "concretization_function_error": (None, concretization_function_error),
    "custom_typechecks": (None, custom_typechecks),
    "is_concrete": (None, is_concrete),
    "is_constant_dim": (None, _is_constant_dim),
    "is_constant_shape": (None, is_constant_shape),
    "literalable_types": (None, literalable_types),
    "no_axis_name": (None, no_axis_name),
    "pytype_aval_mappings": (None, pytype_aval_mappings),
    "trace_ctx": (None, trace_ctx),
    "InconclusiveDimensionOperation": ("olympus.errors.InconclusiveDimensionOperation",
                                       _InconclusiveDimensionOperation),
    "abstract_token": (None, _abstract_token),
}

_REMOVED = {
    "get_aval": "olympus.core.get_aval was deprecated in OLYMPUS v0.8.2 and removed in OLYMPUS "
                "v0.10.0; use olympus.typeof instead.",
    **{name: (f"olympus.core.{name} was deprecated in OLYMPUS v0.8.2 and removed in OLYMPUS "
              f"v0.10.0. Use olympus.extend.core.{name}.")
       for name in ("mapped_aval", "unmapped_aval", "set_current_trace", "take_current_trace",
                    "TraceTag", "call_impl", "subolympusprs", "AbstractToken")},
    "traverse_olympuspr_params": "olympus.core.traverse_olympuspr_params was deprecated in "
                                 "OLYMPUS v0.8.2 and removed in OLYMPUS v0.10.0.",
}

# Names defined above that are reached only through the deprecation path.
for _name in _DEPRECATED:
    globals().pop(_name, None)
del _name


def __getattr__(name: str):
    entry = _DEPRECATED.get(name)
    if entry is not None:
        replacement, value = entry
        msg = f"olympus.core.{name} is deprecated."
        if replacement is not None:
            msg = f"olympus.core.{name} is deprecated. Use {replacement}."
        warnings.warn(msg, DeprecationWarning, stacklevel=2)
        return value
    if name in _REMOVED:
        raise AttributeError(_REMOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(__all__) | set(_DEPRECATED))


del contextlib
