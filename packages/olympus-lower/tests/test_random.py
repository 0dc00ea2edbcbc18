"""rng_bit_generator and threefry2x32 (Random123 known-answer vectors)."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, compile_module, execute, run

from olympus_ir import ShapedArray
from olympus_ir import primitives as P
from olympus_ir.prims.random import RandomAlgorithm
from olympus_lower import lower_olympuspr

U32 = np.dtype(np.uint32)


def threefry_ref(k0, k1, x0, x1):
    """Threefry-2x32, 20 rounds, in numpy uint32 arithmetic."""
    k0, k1, x0, x1 = (np.asarray(v, np.uint32) for v in (k0, k1, x0, x1))
    rot = [(13, 15, 26, 6), (17, 29, 16, 24)]
    ks = [k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA)]
    with np.errstate(over="ignore"):
        x0, x1 = x0 + ks[0], x1 + ks[1]
        for i in range(5):
            for r in rot[i % 2]:
                x0 = x0 + x1
                x1 = ((x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))) ^ x0
            x0 = x0 + ks[(i + 1) % 3]
            x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


KAT = [  # (key0, key1, ctr0, ctr1) -> (out0, out1), from Random123
    ((0, 0, 0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF,) * 4, (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344, 0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def test_threefry_known_answers():
    b = Builder()
    vs = [b.arg((3,), U32) for _ in range(4)]
    outs = b.eqn(P.threefry2x32_p, *vs)
    lowered, (y0, y1) = run(b.build(outs), *[np.array([k[0][i] for k in KAT], U32)
                                             for i in range(4)])
    np.testing.assert_array_equal(y0, [k[1][0] for k in KAT])
    np.testing.assert_array_equal(y1, [k[1][1] for k in KAT])
    text = lowered.as_text()
    assert "stablehlo.shift_right_logical" in text and "stablehlo.xor" in text
    assert "tensor<3xui32>" in text
    # Rolled: one while loop of four rounds, not twenty unrolled rounds.
    assert text.count("stablehlo.while") == 1
    assert text.count("stablehlo.xor") < 10


def test_threefry_scalar_keys_match_numpy():
    rng = np.random.default_rng(5)
    x0 = rng.integers(0, 2**32, (4, 6), dtype=np.uint64).astype(U32)
    x1 = rng.integers(0, 2**32, (4, 6), dtype=np.uint64).astype(U32)
    k0, k1 = np.uint32(0xDEADBEEF), np.uint32(42)
    b = Builder()
    vk0, vk1 = b.arg((), U32), b.arg((), U32)
    vx0, vx1 = b.arg(x0.shape, U32), b.arg(x1.shape, U32)
    outs = b.eqn(P.threefry2x32_p, vk0, vk1, vx0, vx1)
    _, (y0, y1) = run(b.build(outs), k0, k1, x0, x1)
    r0, r1 = threefry_ref(k0, k1, x0, x1)
    np.testing.assert_array_equal(y0, r0)
    np.testing.assert_array_equal(y1, r1)


@pytest.mark.parametrize("algorithm", list(RandomAlgorithm), ids=lambda a: a.name)
def test_rng_bit_generator(algorithm):
    key = np.array([1, 2, 3, 4], U32)
    b = Builder()
    vk = b.arg((4,), U32)
    outs = []
    for dt, shape in ((np.uint32, (1000,)), (np.uint8, (4, 8)), (np.uint16, (3,)),
                      (np.uint32, ())):
        outs += b.eqn(P.rng_bit_generator_p, vk, shape=shape, dtype=np.dtype(dt),
                      algorithm=algorithm)
    lowered = lower_olympuspr(b.build(outs), name="rbg")
    text = lowered.as_text()
    name = {"RNG_DEFAULT": "DEFAULT", "RNG_THREE_FRY": "THREE_FRY",
            "RNG_PHILOX": "PHILOX"}[algorithm.name]
    assert "stablehlo.rng_bit_generator %" in text and f"algorithm = {name}" in text
    assert "(tensor<2xui64>) -> (tensor<2xui64>, tensor<1000xui32>)" in text
    exe = compile_module(lowered)
    r1 = execute(lowered, key, exe=exe)
    r2 = execute(lowered, key, exe=exe)
    for a, c in zip(r1, r2, strict=True):  # deterministic
        np.testing.assert_array_equal(a, c)
    new_key, bits = r1[0], r1[1]
    assert new_key.dtype == U32 and new_key.shape == (4,)
    assert not np.array_equal(new_key, key)
    assert bits.dtype == U32 and bits.shape == (1000,)
    u = (bits >> 9 | 0x3F800000).view(np.float32) - 1.0
    assert 0.45 < u.mean() < 0.55 and len(np.unique(bits)) > 990
    assert r1[3].dtype == np.uint8 and r1[3].shape == (4, 8)
    assert r1[5].dtype == np.uint16 and r1[5].shape == (3,)
    assert r1[7].shape == ()
    other = execute(lowered, np.array([1, 2, 3, 5], U32), exe=exe)
    assert not np.array_equal(other[1], bits)


def test_rng_bit_generator_u64(x64):
    b = Builder()
    vk = b.arg((4,), U32)
    outs = b.eqn(P.rng_bit_generator_p, vk, shape=(5,), dtype=np.dtype(np.uint64),
                 algorithm=RandomAlgorithm.RNG_THREE_FRY)
    lowered, (k, bits) = run(b.build(outs), np.array([0, 0, 0, 7], U32), x64=True)
    assert "tensor<5xui64>" in lowered.as_text()
    assert bits.dtype == np.uint64 and len(np.unique(bits)) == 5
    assert (bits > 2**32).any()


class _Fry:  # stands in for olympus.random's threefry2x32 implementation
    name, tag, key_shape = "threefry2x32", "fry", (2,)


def test_key_programs_must_be_rewritten_to_key_data():
    """A program holding typed keys is lowered as its key data (olympus rewrites it first,
    as JAX lowers keys through their physical type); the rules refuse it otherwise."""
    from olympus_ir import dtypes

    b = Builder()
    data = b.arg(ShapedArray((2,), np.dtype(np.uint32)))
    key = b.eqn(P.random_wrap_p, data, impl=_Fry())
    assert key.aval.dtype == dtypes.KeyDType(_Fry())
    keys = b.eqn(P.random_split_p, key, shape=(2,))
    out = b.eqn(P.random_unwrap_p, keys)
    with pytest.raises(NotImplementedError, match="'random_wrap' reached lowering: programs "
                                                  "holding typed PRNG keys must be rewritten"):
        lower_olympuspr(b.build([out]), name="f")
    for name in ("random_seed", "random_split", "random_fold_in", "random_bits",
                 "random_clone", "random_unwrap", "random_gamma", "consume",
                 "assert_consumed_value"):
        assert P.primitive_by_name(name) in P.KEY_PRIMITIVES
    # The key-reuse markers too (they run compiled in olympus's test_key_reuse.py).
    for prim, params in ((P.consume_p, {}), (P.assert_consumed_value_p, {"value": True})):
        b = Builder()
        data = b.arg(ShapedArray((2,), np.dtype(np.uint32)))
        marked = b.eqn(prim, b.eqn(P.random_wrap_p, data, impl=_Fry()), **params)
        with pytest.raises(NotImplementedError, match="'random_wrap' reached lowering"):
            lower_olympuspr(b.build([b.eqn(P.random_unwrap_p, marked)]), name="f")
