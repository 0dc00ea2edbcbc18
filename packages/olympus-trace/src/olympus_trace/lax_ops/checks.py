"""Wrapper of ``check`` (`olympus_ir.prims.checks`), the primitive behind
``olympus.experimental.checkify.check`` (not part of ``jax.lax``)."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..core import bind

__all__ = ["check"]


def check(*leaves, err_tree, debug=False):
    """Raise the error ``unflatten(err_tree, leaves)`` holds, where it is discharged."""
    return bind(P.check_p, *leaves, err_tree=err_tree, debug=bool(debug))
