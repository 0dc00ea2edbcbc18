"""Wrapper of the threefry2x32 hash (`olympus_ir.prims.random`), the building block of
`olympus.random`'s default PRNG (not part of ``jax.lax``)."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..core import bind

__all__ = ["threefry2x32"]


def threefry2x32(k1, k2, x1, x2):
    """The two uint32 output words of threefry-2x32 with key (k1, k2) on counts (x1, x2)."""
    return bind(P.threefry2x32_p, k1, k2, x1, x2)
