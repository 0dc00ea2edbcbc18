"""Library functions that JAX jits: a ``jit`` equation when called under a trace.

JAX 0.10.2 decorates many of its ``jnp``, ``nn`` and ``random`` functions (or their private
helpers, e.g. ``_where``) with ``jit``, so a traced program shows them as ``jit[name=...]``
equations. `jitted` gives an Olympus function the same shape: under a trace (and jit not
disabled) a call goes through ``olympus.jit`` of the function, named as JAX names it (its
``__name__``, or `name`); outside a trace it takes the eager rule (`eager.function`), so
eager calls keep their speed and their argument checks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from olympus_trace.core import EvalTrace, trace_ctx

from . import eager
from .config import config

__all__ = ["jitted"]

_flags = config._values


def jitted(*, static_argnames: tuple[str, ...] = (), name: str | None = None
           ) -> Callable[[Callable], Callable]:
    """Decorator: `fn` as JAX's jitted library function of the same (or the given) name.
    The parameters named in `static_argnames` are static (hashable) in both paths."""

    def decorate(fn: Callable) -> Callable:
        eager_call = eager.function(static_argnames=static_argnames)(fn)
        traced = None

        @functools.wraps(fn)
        def call(*args, **kwargs):
            nonlocal traced
            if type(trace_ctx.trace) is EvalTrace or _flags["olympus_disable_jit"]:
                return eager_call(*args, **kwargs)
            if traced is None:
                from .jit import jit

                target = fn
                if name is not None:
                    @functools.wraps(fn)
                    def target(*a, **k):
                        return fn(*a, **k)

                    target.__name__ = target.__qualname__ = name
                traced = jit(target, static_argnames=static_argnames or None)
            return traced(*args, **kwargs)

        return call

    return decorate
