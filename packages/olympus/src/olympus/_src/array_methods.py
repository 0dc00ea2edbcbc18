"""Give the runtime's Array the same array methods and operators that tracers have, and
teach the tracing layer the Array's abstract value (its C++ `aval` attribute)."""

from __future__ import annotations

import operator

import olympus_runtime as rt
from olympus_trace import core as trace_core
from olympus_trace.array_methods import ARRAY_METHODS


def install() -> None:
    from . import eager_ops

    rt.register_array_methods({**ARRAY_METHODS, **eager_ops.install(ARRAY_METHODS)})
    trace_core.aval_handlers[rt.Array] = operator.attrgetter("aval")
