"""Wrapper of ``sharding_constraint`` (`olympus_ir.prims.sharding`): the sharding is
already resolved (a PartitionSpec is turned into a sharding on the current mesh by the
public ``olympus.lax.with_sharding_constraint``)."""

from __future__ import annotations

from typing import Any

from olympus_ir.prims.sharding import sharding_constraint_p

from ..core import bind

__all__ = ["sharding_constraint"]


def sharding_constraint(x: Any, sharding: Any) -> Any:
    return bind(sharding_constraint_p, x, sharding=sharding)
