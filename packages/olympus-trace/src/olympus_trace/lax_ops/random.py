"""Wrappers of the random-bit primitives (`olympus_ir.prims.random`): XLA's
``rng_bit_generator`` (``jax.lax``'s) and the threefry2x32 hash, the building block of
`olympus.random`'s default PRNG (not part of ``jax.lax``)."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import canonicalize_shape
from olympus_ir.prims.random import RandomAlgorithm

from ..core import bind

__all__ = ["RandomAlgorithm", "rng_bit_generator", "threefry2x32"]

_BIT_DTYPES = {np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """``(new_key, bits)``: uniformly random bits of `shape` and the unsigned `dtype` from
    XLA's generator with state `key` (u32[4]), and the state to use next."""
    shape = canonicalize_shape(shape, "rng_bit_generator shape")
    dt = dtypes.canonicalize_dtype(dtype)
    if dt not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype)}")
    return tuple(bind(P.rng_bit_generator_p, key, shape=shape, dtype=dt,
                      algorithm=RandomAlgorithm(algorithm)))


def threefry2x32(k1, k2, x1, x2):
    """The two uint32 output words of threefry-2x32 with key (k1, k2) on counts (x1, x2)."""
    return bind(P.threefry2x32_p, k1, k2, x1, x2)
