"""The eager fast lane: Array operators (and olympus.numpy ufuncs) on concrete arrays run as
one jitted function of the whole NumPy-semantics operation, as JAX's ``jnp`` functions do.

Outside any trace, ``x + 1.0`` would otherwise walk the NumPy-semantics layer in Python
(promotion, broadcasting, weak types), then `bind`, then the per-primitive eval rule. Here the
operation is jitted once: jaxlib's C++ fast path keys the call on the operand signature
(dtype, shape, weak type, Python-scalar kind) and runs the cached executable, so promotion
and broadcasting happen once per signature, at trace time.

The lane applies only when the current trace is the eval trace and every operand is a
non-bool `Array` or a Python scalar that converts exactly to the other operand's dtype.
Bool arrays stay op by op: XLA folds ``convert(bool) * c`` into a select, so compiled
``False / 0.0`` gives 0.0 where NumPy (and the op-by-op path) give nan. Anything else (tracers, lists, NumPy arrays, huge ints) takes the
ordinary path, with unchanged results and error messages. ``**`` is left out: a concrete
integer exponent selects exact repeated multiplication, which a traced exponent would lose.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import olympus_runtime as rt
from olympus_ir.dtypes import config as _dtype_config
from olympus_trace.core import EvalTrace, trace_ctx

from .config import config

__all__ = ["operand_ok", "device_scalar", "lane_applies", "jit_lane", "fast_lane", "install",
           "lane_function", "lane_jits"]

_Array = rt.Array
_check_not_deleted = check_not_deleted = rt.check_not_deleted
_flags = config._values
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1

#: Every jitted function the lane made (for compile counts and cache clearing).
lane_jits: list = []


def operand_ok(x: Any, array_kind: str = "") -> bool:
    """Whether `x` may be a lane operand beside an array of dtype kind `array_kind`.

    A Python int must convert to the other operand's dtype exactly, as the ordinary path
    checks its value (``uint8_array + 300`` raises OverflowError there): ints in 0..127 fit
    every dtype, negative ones down to -128 every signed one, and float or complex arrays
    take any int32.
    """
    t = type(x)
    if t is _Array:
        return x.dtype.kind != "b"
    if t is float or t is bool or t is complex:
        return True
    if t is not int:
        return False
    if 0 <= x <= 127:
        return True
    if array_kind in ("f", "c", "V"):  # "V": bfloat16 and the other ml_dtypes floats
        return _INT32_MIN <= x <= _INT32_MAX
    return array_kind == "i" and -128 <= x < 0


#: (type, value, x64) -> the weakly typed device scalar of a Python scalar operand.
_scalars: dict = {}
_SCALARS_MAX = 256


def device_scalar(v: Any) -> Any:
    """The Python scalar `v` as a weakly typed device Array, cached, or `v` itself.

    A Python scalar argument costs the C++ path a host-to-device transfer on every call; a
    weakly typed Array of the same value traces to the same abstract value, so the jitted
    function and its result are unchanged, and the transfer is paid once per value. Zeros
    (0.0 and -0.0 compare equal), NaNs (never equal to themselves) and multi-device
    processes (where placement would matter) pass `v` through unchanged. The cache holds at
    most 256 values and starts over when full.
    """
    key = (type(v), v, _dtype_config.enable_x64)
    a = _scalars.get(key)
    if a is not None:
        return a
    if v == 0 or v != v or rt.device_count() != 1:
        return v
    if len(_scalars) >= _SCALARS_MAX:
        _scalars.clear()
    a = _scalars[key] = rt.device_put(v)
    return a


def lane_applies(args: tuple, scalars: bool = True) -> bool:
    """Whether a call on `args` may take the lane: eval trace, jit enabled, and every
    operand an Array (or, if `scalars`, an exactly convertible Python scalar)."""
    if type(trace_ctx.trace) is not EvalTrace or _flags["olympus_disable_jit"]:
        return False
    if scalars:
        return all(operand_ok(a) for a in args)
    return all(type(a) is _Array and a.dtype.kind != "b" for a in args)


def jit_lane(fn: Callable, name: str, static_argnames: tuple[str, ...] | None = None
             ) -> Callable:
    """`fn` jitted for the lane (and remembered in `lane_jits`). With `static_argnames`
    (possibly empty), `fn` itself is jitted, keyword arguments and all; without, a
    positional-only wrapper named `name` is."""
    from .jit import jit

    if static_argnames is not None:
        jitted = jit(fn, static_argnames=static_argnames)
        lane_jits.append(jitted)
        return jitted

    def body(*args):
        return fn(*args)

    body.__name__ = body.__qualname__ = name
    jitted = jit(body)
    lane_jits.append(jitted)
    return jitted


def fast_lane(slow: Callable, name: str) -> tuple[Callable, Callable]:
    """`slow(a)` and `slow(a, b)`, run through one jitted function when the lane applies."""
    jitted = jit_lane(slow, name)

    # PJRT refuses a deleted (donated) buffer with a ValueError; it is checked for only
    # then, to turn it into the runtime's RuntimeError without a cost on every call.
    def unary(self):
        if (type(trace_ctx.trace) is EvalTrace and not _flags["olympus_disable_jit"]
                and self.dtype.kind != "b"):
            try:
                return jitted(self)
            except ValueError:
                _check_not_deleted(self)
                raise
        return slow(self)

    def binary(self, other):
        t = type(other)
        if t is _Array:
            ok = other.dtype.kind != "b" and self.dtype.kind != "b"
        elif t is float or t is complex or t is bool:
            ok = self.dtype.kind != "b"
        elif t is int:
            kind = self.dtype.kind
            ok = kind != "b" and operand_ok(other, kind)
        else:
            ok = False
        if ok and type(trace_ctx.trace) is EvalTrace and not _flags["olympus_disable_jit"]:
            try:
                return jitted(self, other if t is _Array else device_scalar(other))
            except ValueError:
                _check_not_deleted(self, other)
                raise
        return slow(self, other)

    unary.__name__ = binary.__name__ = name
    return unary, binary


#: The Array operators that take the lane (all but ``**``; see the module docstring).
_BINARY = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
           "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
           "__rmod__", "__matmul__", "__rmatmul__", "__and__", "__rand__", "__or__", "__ror__",
           "__xor__", "__rxor__", "__lshift__", "__rlshift__", "__rshift__", "__rrshift__",
           "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__")
_UNARY = ("__neg__", "__pos__", "__abs__", "__invert__")


def install(methods: dict[str, Any]) -> dict[str, Any]:
    """The Array versions of `methods`' operators, each taking the fast lane."""
    out = {}
    for name in _BINARY:
        out[name] = fast_lane(methods[name], name)[1]
    for name in _UNARY:
        out[name] = fast_lane(methods[name], name)[0]
    return out


# --- whole functions ------------------------------------------------------------------------


def _lane_operand(x: Any) -> bool:
    t = type(x)
    if t is _Array or x is None or t is float or t is bool or t is complex:
        return True
    return t is int and _INT32_MIN <= x <= _INT32_MAX


def lane_function(*, static_argnames: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Decorator: a NumPy-semantics function that, called outside any trace on concrete
    operands, runs as one jitted function (one compiled executable per operand signature
    and static values) instead of one dispatch per primitive, as JAX jits its ``jnp``
    reductions and ``nn`` functions.

    The parameters named in `static_argnames` are static (they must be hashable, e.g. an
    axis tuple); every other parameter is an operand and must be an `Array` (any dtype), a
    Python scalar (an int within int32) or None. Anything else (a list axis, NumPy arrays,
    tracers, ``disable_jit``) runs the function as it is, with its own results and errors.
    Only functions whose work does not depend on operand values may be decorated.
    """
    static = frozenset(static_argnames)

    def decorate(fn: Callable) -> Callable:
        names = list(inspect.signature(fn).parameters)
        static_pos = frozenset(i for i, n in enumerate(names) if n in static)
        jitted = None

        @functools.wraps(fn)
        def call(*args, **kwargs):
            nonlocal jitted
            if type(trace_ctx.trace) is not EvalTrace or _flags["olympus_disable_jit"]:
                return fn(*args, **kwargs)
            try:
                for i, a in enumerate(args):
                    if i in static_pos:
                        hash(a)
                    elif not _lane_operand(a):
                        return fn(*args, **kwargs)
                for k, a in kwargs.items():
                    if k in static:
                        hash(a)
                    elif not _lane_operand(a):
                        return fn(*args, **kwargs)
            except TypeError:  # an unhashable static value: the function decides
                return fn(*args, **kwargs)
            if jitted is None:
                jitted = jit_lane(fn, fn.__name__, static_argnames=tuple(static))
            try:
                return jitted(*args, **kwargs)
            except ValueError:
                _check_not_deleted(*args, *kwargs.values())
                raise

        return call

    return decorate
