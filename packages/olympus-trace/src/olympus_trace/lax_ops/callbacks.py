"""Wrapper of `debug_callback` (`olympus_ir.prims.callbacks`), the primitive behind
`olympus.debug.callback` and `olympus.debug.print` (not part of ``jax.lax``)."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..core import bind

__all__ = ["debug_callback"]


def debug_callback(*args, callback, effect):
    """Call `callback` with the values of `args` when the program runs (no results)."""
    return bind(P.debug_callback_p, *args, callback=callback, effect=effect)
