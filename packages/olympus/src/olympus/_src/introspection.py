"""Looking at programs without running them, and naming their parts: `eval_shape`,
`typeof`, `named_scope`, `named_call`, `ensure_compile_time_eval`,
`print_environment_info`."""

from __future__ import annotations

import contextlib
import functools
import platform
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from olympus_ir.avals import ShapedArray
from olympus_trace import core as trace_core
from olympus_trace.core import EvalTrace, Tracer, set_current_trace
from olympus_trace.staging import named_scope

__all__ = ["eval_shape", "typeof", "named_scope", "named_call", "ensure_compile_time_eval",
           "print_environment_info"]


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes (a pytree of ``ShapeDtypeStruct``) `fun` returns for these
    arguments, found by tracing it: nothing is compiled or run. Arguments may be arrays
    or anything with ``shape`` and ``dtype`` (a ``ShapeDtypeStruct``)."""
    from .jit import jit

    return jit(fun).eval_shape(*args, **kwargs)


def typeof(x: Any) -> ShapedArray:
    """The abstract value of `x` (an array, a tracer or a scalar): printed ``float32[3]``,
    ``~float32[]`` when weakly typed."""
    if isinstance(x, Tracer):
        return x.aval
    try:
        return trace_core.get_aval(x)
    except TypeError:
        t = type(x)
        shown = f"'{t}'" if isinstance(x, (list, tuple, dict)) else str(t)
        raise TypeError(f"Argument '{x}' of type {shown} is not a valid OLYMPUS type") from None


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun` with its equations traced under the scope `name` (default: its
    ``__name__``), as `named_scope` does for a block."""
    if not callable(fun):
        raise TypeError(f"named_call expects a callable, got {fun!r}")
    scope = name if name is not None else getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)

    return named


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside the block, operations on concrete values run at once, even while a `jit`
    is tracing: their results are concrete arrays (constants of the traced program)
    rather than tracers. An operation on a tracer inside the block is an error, as in
    JAX (its value is not known at trace time)."""
    with set_current_trace(EvalTrace()):
        yield


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or return) the versions of Olympus, jaxlib, NumPy and Python, and the
    devices; attach it to bug reports."""
    import jaxlib

    import olympus_runtime as rt

    from ..__about__ import __version__

    devices = rt.devices()
    info = "\n".join([
        f"olympus:    {__version__}",
        f"jaxlib:     {jaxlib.__version__}",
        f"numpy:      {np.__version__}",
        f"python:     {sys.version}",
        f"device info: {devices[0].platform}-{len(devices)}, {len(rt.local_devices())} "
        "local devices",
        "process_count: 1",
        f"platform: {platform.uname()}",
    ])
    if return_string:
        return info
    print(info)
    return None
