"""Wrappers of the host-callback primitives (`olympus_ir.prims.callbacks`): the ones
behind `olympus.debug.callback` / `olympus.debug.print`, `olympus.pure_callback` and
`olympus.experimental.io_callback` (not part of ``jax.lax``)."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..core import bind

__all__ = ["debug_callback", "pure_callback", "io_callback"]


def debug_callback(*args, callback, effect):
    """Call `callback` with the values of `args` when the program runs (no results)."""
    return bind(P.debug_callback_p, *args, callback=callback, effect=effect)


def pure_callback(*args, callback, result_avals, vmap_method=None, sharding=None):
    """``callback(*values) -> flat outputs`` of `result_avals`, with no side effect."""
    return bind(P.pure_callback_p, *args, callback=callback, result_avals=result_avals,
                vmap_method=vmap_method, sharding=sharding)


def io_callback(*args, callback, result_avals, ordered=False, sharding=None):
    """``callback(*values) -> flat outputs`` of `result_avals`, as a side effect (kept,
    and in program order)."""
    return bind(P.io_callback_p, *args, callback=callback, result_avals=result_avals,
                ordered=bool(ordered), sharding=sharding)
