"""Wrappers of the random-bit primitives (`olympus_ir.prims.random`): XLA's
``rng_bit_generator`` (``jax.lax``'s) and the threefry2x32 hash, the building block of
`olympus.random`'s default PRNG (not part of ``jax.lax``)."""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P
from olympus_ir.avals import canonicalize_shape
from olympus_ir.prims.random import RandomAlgorithm

from ..core import bind

__all__ = ["RandomAlgorithm", "rng_bit_generator", "threefry2x32", "rng_uniform",
           "random_seed", "random_wrap", "random_unwrap", "random_split", "random_fold_in",
           "random_bits", "random_clone", "random_gamma", "consume", "assert_consumed_value"]


def threefry2x32(k1, k2, x1, x2):
    """The two uint32 output words of threefry-2x32 with key (k1, k2) on counts (x1, x2)."""
    return bind(P.threefry2x32_p, k1, k2, x1, x2)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=None, *, out_sharding=None):
    """(new key, random bits of `shape` and unsigned `dtype`) from the u32[4] `key`, by
    XLA's stateless bit generator (`algorithm` a `RandomAlgorithm`; default RNG_DEFAULT)."""
    from olympus_ir import dtypes

    if algorithm is None:
        algorithm = P.RandomAlgorithm.RNG_DEFAULT
    if np.dtype(dtype) not in (np.uint8, np.uint16, np.uint32, np.uint64):
        raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype)}")  # JAX's
    return bind(P.rng_bit_generator_p, key, shape=canonicalize_shape(shape),
                dtype=dtypes.dtype(dtype), algorithm=algorithm, out_sharding=out_sharding)


def rng_uniform(a, b, shape):
    """Values drawn uniformly from ``[a, b)`` (scalars of one dtype) by XLA's stateful
    generator, of shape `shape`. Experimental, as in JAX: not reproducible across
    backends or compilations, and neither differentiable nor batchable; prefer
    `olympus.random`."""
    return bind(P.rng_uniform_p, a, b, shape=tuple(int(d) for d in shape))


# --- typed keys (JAX's ``jax._src.prng`` operations; `olympus.random` calls them) -----------


def random_seed(seeds, *, impl):
    """Keys of implementation `impl` from integer seeds (one key per seed)."""
    return bind(P.random_seed_p, seeds, impl=impl)


def random_wrap(base, *, impl):
    """Keys of implementation `impl` over ``uint32[..., *impl.key_shape]`` data."""
    return bind(P.random_wrap_p, base, impl=impl)


def random_unwrap(keys):
    """The ``uint32`` data of key arrays."""
    return bind(P.random_unwrap_p, keys)


def random_split(keys, shape):
    """Each key split into keys of `shape` (result shape ``keys.shape + shape``)."""
    return bind(P.random_split_p, keys, shape=canonicalize_shape(shape))


def random_fold_in(keys, msgs):
    """Keys derived from `keys` and ``uint32`` messages."""
    return bind(P.random_fold_in_p, keys, msgs)


def random_bits(keys, bit_width, shape):
    """Random bits of `bit_width` and `shape` from each key (``keys.shape + shape``)."""
    return bind(P.random_bits_p, keys, bit_width=bit_width, shape=canonicalize_shape(shape))


def random_clone(keys):
    """A copy of key arrays."""
    return bind(P.random_clone_p, keys)


def random_gamma(keys, a, *, log_space):
    """Gamma(a, 1) samples (their logs when `log_space`), one per element of `a`, from keys
    whose shape is a prefix of ``a.shape`` (JAX's ``random_gamma_p``)."""
    return bind(P.random_gamma_p, keys, a, log_space=log_space)


def consume(keys):
    """`keys`, marked consumed for the key-reuse checker (`olympus_trace.key_reuse`)."""
    return bind(P.consume_p, keys)


def assert_consumed_value(keys, value):
    """`keys`, with the key-reuse checker asserting their consumed mask is `value` (a
    `olympus_trace.key_reuse.ConsumedMask`) at this point of the program."""
    return bind(P.assert_consumed_value_p, keys, value=value)
