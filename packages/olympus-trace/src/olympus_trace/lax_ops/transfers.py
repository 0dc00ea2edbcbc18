"""Wrapper of ``device_put`` (`olympus_ir.prims.transfers`): the targets are already
resolved (devices, shardings or `MemorySpace` values) by the public ``olympus.device_put``
or by a checkpoint policy that offloads residuals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from olympus_ir.prims.transfers import ArrayCopySemantics, device_put_p

from ..core import bind

__all__ = ["device_put"]


def device_put(xs: Sequence[Any], devices: Sequence[Any], srcs: Sequence[Any] | None = None,
               copy_semantics: Sequence[ArrayCopySemantics] | None = None) -> list[Any]:
    """Each of `xs` placed on the matching entry of `devices` (one result per operand)."""
    n = len(xs)
    srcs = (None,) * n if srcs is None else tuple(srcs)
    if copy_semantics is None:
        copy_semantics = (ArrayCopySemantics.REUSE_INPUT,) * n
    return bind(device_put_p, *xs, devices=tuple(devices), srcs=srcs,
                copy_semantics=tuple(copy_semantics))
