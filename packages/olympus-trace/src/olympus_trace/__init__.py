"""olympus-trace: tracing Python functions into olympusprs.

The trace stack and `bind`, tracers that behave like arrays, `make_olympuspr`, pytrees,
tracing errors, and olympuspr transformations (partial evaluation, DCE, inlining; later
autodiff and batching). Depends on olympus-ir and numpy only.
"""

from . import errors, lax_ops, promotion, tree_util
from .__about__ import __version__
from .core import (
    EvalTrace,
    Trace,
    Tracer,
    bind,
    check_tracer_leaks,
    current_trace,
    get_aval,
    set_current_trace,
    set_eval_rule,
)
from .make_olympuspr import make_olympuspr, trace_fun
from .staging import DebugInfo, OlympusprTrace, OlympusprTracer, trace_to_olympuspr

__all__ = [
    "__version__", "errors", "lax_ops", "promotion", "tree_util",
    "EvalTrace", "Trace", "Tracer", "bind", "check_tracer_leaks", "current_trace", "get_aval",
    "set_current_trace", "set_eval_rule", "make_olympuspr", "trace_fun", "DebugInfo",
    "OlympusprTrace", "OlympusprTracer", "trace_to_olympuspr",
]
