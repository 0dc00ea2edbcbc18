"""The interpreter core: traces, tracers, and `bind`.

There is always a *current trace* (thread-local). `bind(prim, *args, **params)` hands the
primitive application to it; that is the single interception point. Each trace knows its
parent (the trace that was current when it started), and when a trace needs to apply
primitives to the values it wraps it makes its parent current and binds again. At the
bottom sits `EvalTrace`, which evaluates with the rule installed by `set_eval_rule`
(the runtime's eager path; this package never imports the runtime).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np

from olympus_ir import core as ir_core
from olympus_ir import dtypes
from olympus_ir.avals import ShapedArray, array_protocol_error, has_array_protocol
from olympus_ir.core import Primitive
from olympus_ir.prims.refs import AbstractRef
from olympus_ir.shape_poly import DimExpr

from .errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

# --- abstract values of concrete things ---------------------------------------------------

#: type -> function returning the ShapedArray of a value of that type (runtime registers Array).
aval_handlers: dict[type, Callable[[Any], ShapedArray]] = {}

_PY_SCALARS = (bool, int, float, complex)


def _python_scalar_aval(x) -> ShapedArray:
    if type(x) is bool:
        return ShapedArray((), dtypes.bool_, False)
    dt = dtypes.python_scalar_dtype(x)
    if type(x) is int:
        info = dtypes.iinfo(dt)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {dt.name}")
    return ShapedArray((), dt, True)


def _numpy_aval(x) -> ShapedArray:
    if x.dtype == dtypes.float0:  # the tangent of an integer value: not a computing dtype
        return ShapedArray(x.shape, dtypes.float0, False)
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), False)


for _t in _PY_SCALARS:
    aval_handlers[_t] = _python_scalar_aval
aval_handlers[np.ndarray] = _numpy_aval
for _t in set(np.sctypeDict.values()):
    if issubclass(_t, np.generic):
        aval_handlers[_t] = _numpy_aval
for _dt in (dtypes.bfloat16, *dtypes.NARROW_DTYPES):  # ml_dtypes' scalar types
    aval_handlers[_dt.type] = _numpy_aval
# A symbolic dimension used as a value is a weakly typed int scalar (JAX's dimension-as-value).
aval_handlers[DimExpr] = lambda d: ShapedArray((), dtypes.default_int(), weak_type=True)


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of a tracer or concrete value; TypeError if `x` is not an array."""
    h = aval_handlers.get(type(x))
    if h is not None:
        return h(x)
    if isinstance(x, Tracer):
        return x.aval
    return _get_aval_slow(x)


def _aval_attr(x) -> ShapedArray:
    return x.aval


def _get_aval_slow(x: Any) -> ShapedArray:
    """Subclasses of known types and objects carrying an `aval`; caches a handler per type."""
    t = type(x)
    handler = None
    if isinstance(x, bool):
        handler = aval_handlers[bool]
    elif isinstance(x, (int, float, complex)):
        handler = aval_handlers[int if isinstance(x, int) else float if isinstance(x, float)
                                else complex]
    elif isinstance(x, (np.ndarray, np.generic)):
        handler = _numpy_aval
    elif isinstance(getattr(x, "aval", None), ShapedArray):
        handler = _aval_attr
    if handler is None:
        if has_array_protocol(x):
            raise array_protocol_error()
        raise TypeError(f"Value {x!r} of type {t} is not a valid OLYMPUS type")
    aval_handlers[t] = handler
    return handler(x)


def is_array_like(x: Any) -> bool:
    try:
        get_aval(x)
        return True
    except TypeError:
        return False


# --- traces ----------------------------------------------------------------------------------


class Trace:
    """An interpreter. Subclasses implement `process_primitive`."""

    parent: Trace | None = None
    name = "trace"

    def __init__(self) -> None:
        self.alive = True

    def process_primitive(self, prim: Primitive, args: tuple, params: dict):
        raise NotImplementedError

    def invalidate(self) -> None:
        self.alive = False

    def __repr__(self) -> str:
        return type(self).__name__


class EvalTrace(Trace):
    """The bottom of the stack: evaluate on concrete values with the installed rule."""

    name = "eval"

    def process_primitive(self, prim, args, params):
        for a in args:
            if isinstance(a, Tracer):
                raise escaped_tracer_error(a)
        if _eval_rule is None:
            raise RuntimeError(
                f"cannot evaluate primitive '{prim.name}' eagerly: no evaluation rule is "
                "installed (import olympus to get eager execution)"
            )
        return _eval_rule(prim, args, params)


_eval_rule: Callable[[Primitive, tuple, dict], Any] | None = None


def set_eval_rule(rule: Callable[[Primitive, tuple, dict], Any] | None) -> None:
    """Install the eager evaluation rule: ``rule(prim, args, params) -> out or [outs]``."""
    global _eval_rule
    _eval_rule = rule


class _TraceContext(threading.local):
    def __init__(self) -> None:
        self.trace: Trace = EvalTrace()


trace_ctx = _TraceContext()


def current_trace() -> Trace:
    """The innermost active trace (the eval trace when nothing is being traced)."""
    return trace_ctx.trace


@contextmanager
def set_current_trace(trace: Trace):
    """A context manager making `trace` the current one within the block."""
    prev = trace_ctx.trace
    trace_ctx.trace = trace
    try:
        yield trace
    finally:
        trace_ctx.trace = prev


def bind(prim: Primitive, *args: Any, **params: Any):
    """Apply `prim` to `args` in the current trace."""
    return trace_ctx.trace.process_primitive(prim, args, params)


def _bind_method(prim: Primitive, *args: Any, **params: Any):
    """`prim.bind(...)` as JAX users write it: `bind`, after checking that every
    argument is an array-like value (JAX's TypeError naming the position)."""
    for i, a in enumerate(args):
        if type(a) not in aval_handlers and not isinstance(a, Tracer):
            try:
                get_aval(a)
            except TypeError:
                raise TypeError(
                    f"Error interpreting argument to {prim} as a OLYMPUS value. The "
                    f"problematic value is of type {type(a)} and was passed to {prim} at "
                    f"position {i}.\n") from None
    return trace_ctx.trace.process_primitive(prim, args, params)


ir_core.set_binder(_bind_method)


# --- tracers ---------------------------------------------------------------------------------


class Tracer:
    """A value being traced. Behaves like an array (methods are installed by ``olympus.numpy``)."""

    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def _is_traced_array(self) -> bool:
        """Asked by ``isinstance(tracer, olympus.Array)`` (jaxlib's array metaclass, once
        the tracer class is registered with it): a traced value is an array."""
        return isinstance(self.aval, ShapedArray)

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return self.aval.ndim

    @property
    def size(self):
        return self.aval.size

    @property
    def weak_type(self):
        return self.aval.weak_type

    def to_concrete_value(self):
        """The concrete value behind this tracer, or None if it is abstract."""
        return None

    def _origin_msg(self) -> str:
        return ""

    def _short_repr(self) -> str:
        return f"traced array with shape {self.aval.str_short(short_dtypes=False)}"

    def __repr__(self) -> str:
        # JAX's short form, what `print(x)` shows inside a transformation; the tracer
        # classes of the transformations override it with JAX's names for theirs.
        return f"{type(self).__name__}<{self.aval}>"

    def __bool__(self):
        _check_bool_conversion(self)
        v = self.to_concrete_value()
        if v is None:
            raise TracerBoolConversionError(self)
        return bool(v)

    def __index__(self):
        if not (self.shape == () and dtypes.is_integer(self.dtype)):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        v = self.to_concrete_value()
        if v is None:
            raise TracerIntegerConversionError(self)
        return int(v)

    def _concrete_scalar(self, fun):
        if self.ndim > 0:
            raise TypeError("Only scalar arrays can be converted to Python scalars; "
                            f"got arr.ndim={self.ndim}")
        v = self.to_concrete_value()
        if v is None:
            name = fun.__name__
            raise ConcretizationTypeError(
                self, f"The problem arose with the `{name}` function. If trying to convert "
                f"the data type of a value, try using `x.astype({name})` or "
                f"`jnp.array(x, {name})` instead.")
        return fun(v)

    def __int__(self):
        return self._concrete_scalar(int)

    def __float__(self):
        return self._concrete_scalar(float)

    def __complex__(self):
        return self._concrete_scalar(complex)

    def __array__(self, dtype=None, copy=None):
        v = self.to_concrete_value()
        if v is None:
            raise TracerArrayConversionError(self)
        return np.asarray(v, dtype=dtype)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        if type(self.aval) is not ShapedArray:
            return (self[i] for i in range(self.shape[0]))
        return self._unstack()

    def _unstack(self):
        """Each row as a unit-stride slice then a squeeze, as JAX iterates a traced array
        (also key arrays, which have no indexing of their own)."""
        from .lax_ops import shape_ops

        rest = tuple(self.shape[1:])
        ones = (1,) * len(self.shape)
        for i in range(self.shape[0]):
            row = shape_ops.slice(self, (i,) + (0,) * len(rest), (i + 1,) + rest, ones)
            yield shape_ops.squeeze(row, (0,))

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def __setitem__(self, idx, value):
        if isinstance(self.aval, AbstractRef):  # ``ref[idx] = value`` on a traced ref
            from .lax_ops.refs import ref_swap

            ref_swap(self, idx, value)
            return
        raise TypeError(
            "OLYMPUS arrays are immutable and do not support in-place item assignment. Instead "
            "of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
            "https://docs.olympus.dev/en/latest/_autosummary/olympus.numpy.ndarray.at.html"
        )

    def __reduce__(self):
        raise ConcretizationTypeError(
            self, "The error occurred in the __reduce__ method, which may indicate an attempt "
            "to serialize/pickle a traced value.")


def _check_bool_conversion(x) -> None:
    if x.size == 0:
        raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > 0` "
                         "to check that an array is not empty.")
    if x.size > 1:
        raise ValueError("The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")


def _creation_block(t: Tracer) -> str:
    """JAX's account of where a leaked staged value was made (the line of its equation)."""
    find = getattr(t._trace, "creation_source", None)
    var = getattr(t, "_var", None)
    src = find(var) if find is not None and var is not None else None
    if src is None:
        return ""
    col = getattr(src, "column", None)
    loc = f"{src.file}:{src.line}" + ("" if col is None else f":{col}")
    sep = "-" * 30
    return (f"\n{sep}\nThe leaked intermediate value was created on line {loc} "
            f"({src.function}). \n{sep}\nWhen the value was created, the final 5 stack "
            f"frames (most recent last) excluding OLYMPUS-internal frames were:\n{sep}\n"
            f"{loc} ({src.function})\n{sep}\n")


def escaped_tracer_error(t: Tracer) -> UnexpectedTracerError:
    trace = t._trace
    where = getattr(trace, "debug_info", None)
    origin = f"\nThe function being traced when the value leaked was {where}." if where else ""
    origin += _creation_block(t)
    kind = getattr(t, "error_type_name", type(t).__name__)
    return UnexpectedTracerError(
        "Encountered an unexpected tracer. A function transformed by OLYMPUS had a side "
        "effect, allowing for a reference to an intermediate value with type "
        f"{t.aval.str_short(short_dtypes=False)} wrapped in a {kind} to escape "
        "the scope of the transformation.\nOLYMPUS transformations require that functions "
        "explicitly return their outputs, and disallow saving intermediate values to global "
        f"state.{origin}\n"
        "To catch the leak earlier, try setting the environment variable "
        "OLYMPUS_CHECK_TRACER_LEAKS or using the `olympus.checking_leaks` context manager."
    )


def concrete_or_error(force: Callable | None, x: Any, context: str = ""):
    """`x` as a concrete value (via `force`, e.g. int), or ConcretizationTypeError."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        if v is None:
            raise ConcretizationTypeError(x, context)
        x = v
    return x if force is None else force(x)


class _LeakChecking(threading.local):
    def __init__(self) -> None:
        self.enabled = os.environ.get("OLYMPUS_CHECK_TRACER_LEAKS", "") not in ("", "0")


leak_checking = _LeakChecking()


@contextmanager
def check_tracer_leaks(enabled: bool = True):
    """Within this context, a staging trace that ends while one of its tracers is still
    referenced (e.g. stored in a global) raises UnexpectedTracerError right away."""
    prev = leak_checking.enabled
    leak_checking.enabled = enabled
    try:
        yield
    finally:
        leak_checking.enabled = prev
