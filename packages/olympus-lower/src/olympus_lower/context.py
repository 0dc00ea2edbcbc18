"""The MLIR context every lowering builds into.

A context is built the way jaxlib expects (see ``shared/JAXLIB.md`` §1): a dialect
registry filled by ``_jax_mlir_ext.register_dialects``, every available dialect
loaded, a thread pool attached, and the sdy/mhlo/chlo/stablehlo dialects registered.
Building one costs a few milliseconds, so one context is built per thread and reused:
MLIR contexts are not thread-safe, so contexts are never shared between threads.

The dialects are registered through the native ``_mlir_libs`` modules, not the Python
``jaxlib.mlir.dialects`` ones: those also build a Python class per op (about 30 ms for
mhlo, chlo and sdy together), and Olympus builds no mhlo or sdy op; CHLO's op classes are
imported by the first rule that emits one.
"""

from __future__ import annotations

import threading
import weakref

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _chlo, _jax_mlir_ext, _mlirHlo, _sdy, _stablehlo

__all__ = ["make_context", "get_context"]


_thread_pools: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def make_context() -> ir.Context:
    """Build a fresh MLIR context with the StableHLO-family dialects loaded."""
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context.__new__(ir.Context)
    # Skip the Python-level ir.Context.__init__ (it would load its own registry).
    super(ir.Context, ctx).__init__()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    # The context does not own its thread pool: keep the pool alive as long as the
    # context (a collected pool crashes the next multi-threaded pass, e.g. in compile).
    pool = ir.ThreadPool()
    ctx.set_thread_pool(pool)
    _thread_pools[ctx] = pool
    _sdy.register_dialect(ctx)
    _mlirHlo.register_mhlo_dialect(ctx)
    _chlo.register_dialect(ctx)
    _stablehlo.register_dialect(ctx)
    return ctx


#: How many lowerings share one context. An MLIR context keeps every attribute and type
#: ever built in it (each distinct constant, name and source location) until it dies, so
#: a long-running program that keeps lowering new programs would grow without bound; a
#: context is replaced after this many uses (about 4 ms, once per 256 lowerings). Modules
#: built in the old one keep it alive for as long as they live.
CONTEXT_USES = 256


class _PerThread(threading.local):
    context: ir.Context | None = None
    uses = 0


_per_thread = _PerThread()


def get_context() -> ir.Context:
    """This thread's MLIR context, built on first use and reused for `CONTEXT_USES`
    calls."""
    state = _per_thread
    ctx = state.context
    if ctx is None or state.uses >= CONTEXT_USES:
        ctx = state.context = make_context()
        state.uses = 0
    state.uses += 1
    return ctx
