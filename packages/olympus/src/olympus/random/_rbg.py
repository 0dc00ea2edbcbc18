"""The ``rbg`` and ``unsafe_rbg`` PRNG implementations: random bits from XLA's
``rng_bit_generator`` (u32[4] keys), as JAX 0.10.2 defines them.

``rbg`` seeds, splits and folds each half of its key with threefry (so `split` and
`fold_in` are threefry's, applied to both halves); ``unsafe_rbg`` splits by drawing
``rng_bit_generator`` words (every tenth row of a (10 n, 4) draw) and folds by xoring the
last row of a draw seeded by the data. XLA does not promise that ``rng_bit_generator``'s
bits stay the same across backends or versions; on CPU with jaxlib 0.10.2 they equal
JAX's.
"""

from __future__ import annotations

import math

from olympus_trace import lax_ops as lax

from . import _prng
from ._prng import _U32, UINT_DTYPES, PRNGImpl, register_prng


def _rbg_seed(seed):
    half = _prng._seed_impl(seed)
    return lax.concatenate([half, half], 0)


def _halves(key):
    return lax.slice(key, (0,), (2,)), lax.slice(key, (2,), (4,))


def _rbg_split(key, shape):
    a, b = (_prng._threefry_split(h, shape) for h in _halves(key))
    return lax.concatenate([a, b], len(shape))


def _rbg_fold_in(key, data):
    a, b = (_prng._threefry_fold_in(h, data) for h in _halves(key))
    return lax.concatenate([a, b], 0)


def _rbg_random_bits(key, bit_width, shape):
    if bit_width not in UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    _, bits = lax.rng_bit_generator(key, shape, dtype=UINT_DTYPES[bit_width])
    return bits


def _unsafe_rbg_split(key, shape):
    num = math.prod(shape)
    _, keys = lax.rng_bit_generator(key, (10 * num, 4), dtype=_U32)
    every_tenth = lax.slice(keys, (0, 0), (10 * num, 4), (10, 1))
    return lax.reshape(every_tenth, (*shape, 4))


def _unsafe_rbg_fold_in(key, data):
    _, bits = lax.rng_bit_generator(_rbg_seed(data), (10, 4), dtype=_U32)
    last = lax.reshape(lax.slice(bits, (9, 0), (10, 4)), (4,))
    return lax.bitwise_xor(key, last)


register_prng(PRNGImpl(key_shape=(4,), seed=_rbg_seed, split=_rbg_split,
                       random_bits=_rbg_random_bits, fold_in=_rbg_fold_in, name="rbg",
                       tag="rbg"))
register_prng(PRNGImpl(key_shape=(4,), seed=_rbg_seed, split=_unsafe_rbg_split,
                       random_bits=_rbg_random_bits, fold_in=_unsafe_rbg_fold_in,
                       name="unsafe_rbg", tag="urbg"))
