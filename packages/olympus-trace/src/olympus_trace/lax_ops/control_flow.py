"""Wrapper of ``call_exported`` (`olympus_ir.prims.control_flow`), the primitive behind
``olympus.export.Exported.call`` (not part of ``jax.lax``). The other control-flow
primitives are bound by `olympus.lax.control_flow`, which traces the user's bodies."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..core import bind

__all__ = ["call_exported"]


def call_exported(*args, exported):
    """Call the serialized module of `exported` on its flat arguments."""
    return bind(P.call_exported_p, *args, exported=exported)
