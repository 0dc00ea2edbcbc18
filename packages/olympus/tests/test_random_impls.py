"""The PRNG implementations of `olympus.random`: threefry2x32, rbg and unsafe_rbg.

Every expected value here (key data, random bits, split and folded keys, uniform and
normal samples, reprs, error messages) was recorded from reference JAX 0.10.2
(``jax.random`` with the same seeds, on CPU, in its own process). The integer streams
are compared exactly; float samples with a tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import random

IMPLS = ["threefry2x32", "rbg", "unsafe_rbg"]

# impl -> (key data of key(0), bits(key, (4,)), split data, fold_in(key, 3) data,
#          uniform(key, (3,)), normal(key, (3,)), PRNGKey(1))
RECORDED = {
    "threefry2x32": (
        [0, 0], [4070199207, 4202968722, 1427181096, 2012915765],
        [[1797259609, 2579123966], [928981903, 3453687069]], [2467461003, 3840466878],
        [0.947667, 0.9785799, 0.33229148], [1.6226422, 2.0252647, -0.43359444], [0, 1]),
    "rbg": (
        [0, 0, 0, 0], [1713891541, 3781805453, 3159862348, 2600524760],
        [[1797259609, 2579123966, 1797259609, 2579123966],
         [928981903, 3453687069, 928981903, 3453687069]],
        [2467461003, 3840466878, 2467461003, 3840466878],
        [0.39904642, 0.8805201, 0.73571277], [-0.25581604, 1.177591, 0.6301837],
        [0, 1, 0, 1]),
    "unsafe_rbg": (
        [0, 0, 0, 0], [1713891541, 3781805453, 3159862348, 2600524760],
        [[1713891541, 3781805453, 3159862348, 2600524760],
         [3614953066, 3503513258, 724076422, 3372229774]],
        [56543296, 1826787333, 2453521982, 2503663989],
        [0.39904642, 0.8805201, 0.73571277], [-0.25581604, 1.177591, 0.6301837],
        [0, 1, 0, 1]),
}
TAGS = {"threefry2x32": "fry", "rbg": "rbg", "unsafe_rbg": "urbg"}


@pytest.mark.parametrize("impl", IMPLS)
def test_streams_equal_jax(impl):
    data, bits, split, fold, unif, normal, pk = RECORDED[impl]
    k = random.key(0, impl=impl)
    np.testing.assert_array_equal(random.key_data(k), data)
    np.testing.assert_array_equal(random.bits(k, (4,)), bits)
    np.testing.assert_array_equal(random.key_data(random.split(k)), split)
    np.testing.assert_array_equal(random.key_data(random.fold_in(k, 3)), fold)
    np.testing.assert_allclose(random.uniform(k, (3,)), unif, rtol=1e-6)
    np.testing.assert_allclose(random.normal(k, (3,)), normal, rtol=1e-5)
    np.testing.assert_array_equal(random.PRNGKey(1, impl=impl), pk)
    assert random.key_impl(k) == impl
    assert str(k.dtype) == repr(k.dtype) == f"key<{TAGS[impl]}>"
    assert repr(k) == (f"Array((), dtype=key<{TAGS[impl]}>) overlaying:\n"
                       f"{np.asarray(data)}")


# impl -> (randint(key(42), (4,), 0, 100), bits uint8 (3,), bits uint16 (2,),
#          split(key, (2, 3)) data [1, 2], vmap(split)(split(key, 3)) data [2],
#          vmap(bits)(split(key, 3)), fold_in(key, 7) under jit)
RECORDED_42 = {
    "rbg": ([1, 20, 35, 41], [210, 89, 227], [14546, 58969],
            [2765691542, 824333390, 2765691542, 824333390],
            [[1605747716, 4117073388, 1605747716, 4117073388],
             [2853785955, 313133857, 2853785955, 313133857]],
            [1826589366, 4083436224, 2060148117],
            [2547012911, 1371500959, 2547012911, 1371500959]),
    "unsafe_rbg": ([39, 91, 59, 37], [210, 89, 227], [14546, 58969],
                   [3463793296, 2759598209, 3565056766, 1896687008],
                   [[4066083316, 2187443372, 3157823897, 1049270657],
                    [1953972449, 3537826881, 1485281218, 3457524178]],
                   [2621076060, 1110882205, 1431065575],
                   [2104303640, 250182049, 1106406590, 1983638428]),
}


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_rbg_under_jit_and_vmap(impl):
    ints, b8, b16, split23, vsplit, vbits, jfold = RECORDED_42[impl]
    k = random.key(42, impl=impl)
    np.testing.assert_array_equal(random.randint(k, (4,), 0, 100), ints)
    np.testing.assert_array_equal(random.bits(k, (3,), jnp.uint8), b8)
    np.testing.assert_array_equal(random.bits(k, (2,), jnp.uint16), b16)
    keys = random.split(k, (2, 3))
    assert keys.shape == (2, 3) and random.key_data(keys).shape == (2, 3, 4)
    np.testing.assert_array_equal(random.key_data(keys)[1, 2], split23)
    np.testing.assert_array_equal(
        random.key_data(olympus.vmap(random.split)(random.split(k, 3)))[2], vsplit)
    np.testing.assert_array_equal(olympus.vmap(random.bits)(random.split(k, 3)), vbits)
    np.testing.assert_allclose(olympus.jit(lambda k: random.uniform(k, (2,)))(k),
                               [0.6102176, 0.69660795], rtol=1e-6)
    got = olympus.jit(lambda k: random.fold_in(k, 7))(k)
    assert got.dtype == k.dtype
    np.testing.assert_array_equal(random.key_data(got), jfold)


def test_default_prng_impl():
    assert olympus.config.olympus_default_prng_impl == "threefry2x32"
    with olympus.default_prng_impl("rbg"):
        assert str(random.key(0).dtype) == "key<rbg>"
        np.testing.assert_array_equal(random.PRNGKey(0), [0, 0, 0, 0])
        np.testing.assert_allclose(random.uniform(random.PRNGKey(0)), 0.39904642, rtol=1e-6)
        assert random.key_impl(random.PRNGKey(0)) == "rbg"
    assert str(random.key(0).dtype) == "key<fry>"
    with pytest.raises(ValueError, match=r"new enum value must be in \['threefry2x32', "
                                         r"'rbg', 'unsafe_rbg'\], got bad"):
        olympus.config.update("olympus_default_prng_impl", "bad")


def test_impl_errors_and_wrapping():
    with pytest.raises(ValueError, match='unrecognized PRNG implementation "bad". Did you '
                                         'mean one of: "threefry2x32", "rbg", "unsafe_rbg"'):
        random.key(0, impl="bad")
    k = random.wrap_key_data(np.arange(8, dtype=np.uint32).reshape(2, 4), impl="unsafe_rbg")
    assert k.shape == (2,) and str(k.dtype) == "key<urbg>"
    assert random.key_dtype("rbg") == random.key(0, impl="rbg").dtype
    with pytest.raises(TypeError, match=r"shape \(\.\.\., 4\)"):
        random.wrap_key_data(np.zeros((2,), np.uint32), impl="rbg")
    with pytest.raises(TypeError, match="cannot be converted to a NumPy array"):
        np.asarray(random.key(0, impl="rbg"))


def test_typed_keys_through_scan_and_grad():
    def body(k, _):
        k, sub = random.split(k)
        return k, random.uniform(sub)

    for impl in IMPLS:
        k = random.key(3, impl=impl)
        _, xs = olympus.lax.scan(body, k, None, length=3)
        want, kk = [], k
        for _ in range(3):
            kk, sub = random.split(kk)
            want.append(float(random.uniform(sub)))
        np.testing.assert_allclose(xs, want, rtol=1e-6)

    def f(x, k):
        return (x * random.normal(k, (3,))).sum()

    k = random.key(1, impl="rbg")
    np.testing.assert_allclose(olympus.grad(f)(2.0, k), random.normal(k, (3,)).sum(),
                               rtol=1e-5)
    # The cotangent of a key is float0 zeros of the keys' shape (JAX: shape (), float0).
    gx, gk = olympus.grad(lambda x, k: x * random.uniform(k), argnums=(0, 1),
                          allow_int=True)(1., random.key(0))
    np.testing.assert_allclose(gx, 0.947667, rtol=1e-6)
    assert gk.shape == () and gk.dtype == olympus.dtypes.float0
