"""The key-reuse checker (`olympus.experimental.key_reuse`, ``olympus_debug_key_reuse``).

The cases follow JAX 0.10.2's ``tests/key_reuse_test.py``; each expected outcome and message
was recorded by running the same program with reference JAX 0.10.2 in its own process
(``benchmarks/.venv-jax``), names changed jax -> olympus.
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.errors import KeyReuseError
from olympus.experimental.key_reuse import _core
from olympus.experimental.key_reuse._core import (
    Forward,
    KeyReuseSignature,
    Sink,
    Source,
    assert_consumed,
    assert_unconsumed,
    consume,
    consume_p,
)
from olympus_ir.prims import random as random_prims

check = _core.check_key_reuse
key0 = olympus.eval_shape(olympus.random.key, 0)
key1D = olympus.eval_shape(lambda k: k[None], key0)

RANDOM_BITS = "In random_bits, argument [0-9]+ is already consumed"
RANDOM_SPLIT = "In random_split, argument [0-9]+ is already consumed"
GENERIC = "argument [0-9]+ is already consumed"
PJIT = "In jit, argument 0 is already consumed."


# --- the analysis, one primitive at a time ---------------------------------------------------


def test_assertions():
    key = olympus.random.key(0)
    check(assert_unconsumed, key)
    with pytest.raises(AssertionError, match="Expected key to be consumed"):
        check(assert_consumed, key)


def test_unknown():
    """A primitive without a key-reuse rule (here a user's) consumes its keys."""
    from olympus.extend import core

    unknown_p = core.Primitive("unknown")
    unknown_p.def_abstract_eval(lambda x: x)
    unknown_p.def_impl(lambda x: x)

    def f(key):
        assert_unconsumed(key)
        key2 = unknown_p.bind(key)
        assert_consumed(key)
        assert_consumed(key2)
    check(f, olympus.random.key(0))


def test_device_put_multiple():
    def f(key1, key2):
        key1_d, key2_d = olympus.device_put((key1, key2))
        assert_unconsumed(key1_d)
        consume(key1)
        assert_consumed(key1_d)
        assert_unconsumed(key2_d)
        consume(key2)
        assert_consumed(key2_d)
    check(f, olympus.random.key(0), olympus.random.key(1))


def test_consume():
    def f(key):
        assert_unconsumed(key)
        key2 = consume(key)
        assert_consumed(key)
        assert_consumed(key2)
    check(f, olympus.random.key(0))


def test_random_clone():
    def f(key):
        assert_unconsumed(key)
        consume(key)
        assert_consumed(key)
        key2 = olympus.random.clone(key)
        assert_unconsumed(key2)
    check(f, olympus.random.key(0))


def test_seed():
    def f():
        key = olympus.random.key(0)
        assert_unconsumed(key)
    check(f)


def test_split():
    def f(key):
        assert_unconsumed(key)
        key2 = olympus.random.split(key)
        assert_unconsumed(key2)
        assert_consumed(key)
    check(f, olympus.random.key(0))


def test_fold_in():
    def f(key):
        assert_unconsumed(key)
        key2 = olympus.random.fold_in(key, 2)
        assert_unconsumed(key)
        assert_unconsumed(key2)
    check(f, olympus.random.key(0))


def test_bits():
    def f(key):
        assert_unconsumed(key)
        bits = olympus.random.bits(key, (), "uint32")
        assert_consumed(key)
        return bits
    check(f, olympus.random.key(0))


def test_wrap():
    def f(key_data):
        key = olympus.random.wrap_key_data(key_data)
        assert_unconsumed(key)
    check(f, olympus.random.PRNGKey(0))


def test_unwrap():
    def f(key):
        assert_unconsumed(key)
        olympus.random.key_data(key)
        assert_unconsumed(key)
    check(f, olympus.random.key(0))


def test_gamma():
    def f(key):
        assert_unconsumed(key)
        values = olympus.random.gamma(key, 1.0)
        assert_consumed(key)
        return values
    check(f, olympus.random.key(0))


def test_broadcast_in_dim():
    def f(key):
        assert_unconsumed(key)
        key2 = key[None]
        assert_unconsumed(key)
        assert_unconsumed(key2)
        consume(key)
        assert_consumed(key)
        assert_consumed(key2)
    check(f, olympus.random.key(0))


def test_copy():
    def f(key):
        key2 = jnp.array(key, copy=True)
        assert_unconsumed(key2)
        consume(key)
        assert_consumed(key)
        assert_consumed(key2)
    check(f, olympus.random.key(0))


def test_device_put():
    def f(key):
        key_d = olympus.device_put(key)
        assert_unconsumed(key_d)
        consume(key)
        assert_consumed(key_d)
    check(f, olympus.random.key(0))


def test_squeeze():
    def f(key):
        key2 = olympus.lax.squeeze(key, (0,))
        assert_unconsumed(key)
        assert_unconsumed(key2)
        consume(key)
        assert_consumed(key2)
    check(f, olympus.random.key(0)[None])


def test_reshape():
    def f(key):
        key2 = key.reshape(1, *key.shape)
        assert_unconsumed(key2)
        consume(key)
        assert_consumed(key)
        assert_consumed(key2)
    check(f, olympus.random.key(0))


def test_concatenate():
    def f(key1, key2):
        keys = olympus.lax.concatenate([key1, key2], dimension=0)
        assert_consumed(key1)
        assert_consumed(key2)
        assert_unconsumed(keys)
    check(f, olympus.random.split(olympus.random.key(0)),
          olympus.random.split(olympus.random.key(1)))


def test_slice():
    def f(keys):
        assert_unconsumed(keys)
        assert_unconsumed(keys[0])
        assert_consumed(keys, np.array([True, False]))
        assert_unconsumed(keys[1])
        assert_consumed(keys, np.array([True, True]))
    check(f, olympus.random.split(olympus.random.key(0)))


@pytest.mark.parametrize("op", [operator.eq, operator.ne])
def test_equality_checks(op):
    def f(key1, key2):
        result = op(key1, key2)
        assert_unconsumed(key1)
        assert_unconsumed(key2)
        return result
    check(f, olympus.random.key(0), olympus.random.key(1))


def test_jit_can_consume_input():
    def f(key):
        ans = olympus.jit(olympus.random.bits)(key)
        assert_consumed(key)
        return ans
    check(f, olympus.random.key(0))


def test_jit_can_return_consumed_output():
    def f():
        def g():
            key = olympus.random.key(0)
            bits = olympus.random.bits(key)
            assert_consumed(key)
            return bits, key
        _, key = olympus.jit(g)()
        assert_consumed(key)
    check(f)


def test_jit_duplicate_inputs():
    def f(key):
        def g(key1, key2):
            assert_unconsumed(key1)
            assert_unconsumed(key2)
            return olympus.random.bits(key1)
        _ = olympus.jit(g)(key, key)
        assert_consumed(key)
    check(f, olympus.random.key(0))


def test_jit_propagates_consumption_bit():
    def f(key):
        key2 = olympus.jit(lambda: key)()
        assert_unconsumed(key2)
        consume(key)
        assert_consumed(key)
        assert_consumed(key2)
    check(f, olympus.random.key(0))


def test_jit_duplicate_outputs():
    def f(key):
        key1, key2 = olympus.jit(lambda k: (k, k))(key)
        assert_unconsumed(key1)
        assert_unconsumed(key2)
        other = olympus.random.bits(key1)
        assert_consumed(key)
        assert_consumed(key1)
        assert_consumed(key2)
        return key1, key2, other
    check(f, olympus.random.key(0))


@pytest.mark.parametrize("branches,consumed", [
    ((olympus.random.uniform, olympus.random.normal), True),
    ((olympus.random.uniform, lambda k: 1.0), True),
    ((lambda k: 0.0, lambda k: 1.0), False),
])
def test_cond_consumption(branches, consumed):
    @olympus.jit
    def f(flag, key):
        assert_unconsumed(key)
        ans = olympus.lax.cond(flag, *branches, key)
        (assert_consumed if consumed else assert_unconsumed)(key)
        return ans
    check(f, True, olympus.random.key(0))


def test_simple_vmap():
    @olympus.jit
    def f(seed):
        key = olympus.random.key(seed)
        assert_unconsumed(key)
        result = olympus.random.uniform(key)
        assert_consumed(key)
        return result
    check(f, 0)
    check(olympus.vmap(f), jnp.arange(4))


# JAX's table of primitives with static signatures: each program's signature is the
# primitive's (recorded from JAX's own test).
STATIC = [
    (consume_p, consume, key0),
    (random_prims.random_clone_p, olympus.random.clone, key0),
    (random_prims.random_bits_p, olympus.random.bits, key0),
    (random_prims.random_seed_p, olympus.random.key, 0),
    (random_prims.random_split_p, olympus.random.split, key0),
    (random_prims.random_wrap_p, olympus.random.wrap_key_data, np.uint32([0, 0])),
    (olympus.random.random_gamma_p, olympus.random.gamma, key0, 1.0),
    (olympus.lax.broadcast_in_dim_p, lambda key: key[None], key0),
    (olympus.lax.copy_p, jnp.array, key0),
    (olympus.lax.convert_element_type_p, lambda key: jnp.array(key, dtype=key.dtype), key0),
    (olympus.lax.reshape_p, lambda key: key.reshape((1,)), key0),
    (olympus.lax.squeeze_p, jnp.squeeze, key1D),
    (olympus.lax.dynamic_slice_p, partial(olympus.lax.dynamic_slice, slice_sizes=(1,)), key1D,
     (0,)),
    (olympus.lax.dynamic_update_slice_p, olympus.lax.dynamic_update_slice, key1D, key1D, (0,)),
]


@pytest.mark.parametrize("case", STATIC, ids=lambda c: str(c[0]))
def test_function_type_signature(case):
    prim, func, *args = case
    expected = _core.key_reuse_signatures[prim]
    assert _core.function_type_signature(func, *args) == expected
    assert _core.olympuspr_type_signature(olympus.make_olympuspr(func)(*args)) == expected


def test_signatures_recorded_from_jax():
    """Whole-function signatures JAX 0.10.2 gives."""
    key = olympus.random.key(0)
    sig = _core.function_type_signature
    assert repr(sig(lambda k: k[0], olympus.random.split(key))) == \
        "KeyReuseSignature(Sink(0, [ True False]), Source(0))"
    assert repr(sig(olympus.random.split, key)) == "KeyReuseSignature(Sink(0), Source(0))"
    assert repr(sig(lambda k, d: (olympus.random.fold_in(k, d), olympus.random.key_data(k)),
                    key, 1)) == "KeyReuseSignature(Source(0),)"
    assert repr(sig(lambda k, x: (k, x), key, 1)) == "KeyReuseSignature(Forward(0, 0),)"
    assert repr(sig(olympus.checkpoint(lambda k: olympus.random.bits(k)), key)) == \
        "KeyReuseSignature(Sink(0),)"
    assert repr(sig(olympus.grad(olympus.checkpoint(
        lambda x, k: x * olympus.random.uniform(k))), 1.0, key)) == \
        "KeyReuseSignature(Sink(1),)"


def test_custom_derivatives_consume_their_keys():
    """JAX has no rule for custom_jvp_call / custom_vjp_call: they consume every key."""
    key = olympus.random.key(0)

    @olympus.custom_jvp
    def cj(k, x):
        return x
    cj.defjvp(lambda p, t: (p[1], t[1]))
    assert _core.function_type_signature(lambda k: cj(k, 1.0), key) == \
        KeyReuseSignature(Sink(0))
    with pytest.raises(KeyReuseError, match=PJIT):
        check(lambda k: cj(k, 1.0) + olympus.random.uniform(k), key)

    @olympus.custom_vjp
    def cv(k, x):
        return x * olympus.random.uniform(k)
    cv.defvjp(lambda k, x: (cv(k, x), None), lambda r, g: (None, g))
    assert _core.function_type_signature(lambda k: cv(k, 1.0), key) == \
        KeyReuseSignature(Sink(0))


# --- whole programs ----------------------------------------------------------------------------


def test_reuse():
    def f():
        key = olympus.random.key(0)
        return olympus.random.uniform(key) + olympus.random.uniform(key)
    with pytest.raises(KeyReuseError, match=PJIT):
        check(f)


def test_reuse_after_split():
    def f_good():
        key1, key2 = olympus.random.split(olympus.random.key(0))
        return olympus.random.uniform(key1) + olympus.random.uniform(key2)
    check(f_good)

    def f_bad():
        key = olympus.random.key(0)
        other = olympus.random.split(key)
        return olympus.random.uniform(key), other
    with pytest.raises(KeyReuseError, match=PJIT):
        check(f_bad)

    def f_bad_2():
        key = olympus.random.key(0)
        other1 = olympus.random.split(key)
        key1, other2 = olympus.random.split(key)
        return olympus.random.uniform(key1), other1, other2
    with pytest.raises(KeyReuseError, match=RANDOM_SPLIT):
        check(f_bad_2)


def test_repeated_fold_ins():
    def f():
        key = olympus.random.key(0)
        return [olympus.random.uniform(olympus.random.fold_in(key, i)) for i in range(10)]
    check(f)

    def g():
        key = olympus.random.key(0)
        _ = olympus.random.fold_in(key, 1)
        return olympus.random.uniform(key)
    check(g)


def test_reuse_after_broadcast():
    def f():
        key = olympus.random.key(0)
        key2 = key[None]
        return olympus.random.bits(key) + olympus.vmap(olympus.random.bits)(key2)
    with pytest.raises(KeyReuseError, match=RANDOM_BITS):
        check(f)


def test_reuse_after_reshape():
    def f():
        key = olympus.random.key(0)
        key2 = key.reshape((1,))
        return olympus.random.bits(key) + olympus.random.bits(key2.squeeze())
    with pytest.raises(KeyReuseError, match=RANDOM_BITS):
        check(f)


def test_reuse_after_squeeze():
    def f():
        key = olympus.random.split(olympus.random.key(0), 1)
        key2 = olympus.lax.squeeze(key, (0,))
        return olympus.random.bits(key.squeeze()) + olympus.random.bits(key2)
    with pytest.raises(KeyReuseError, match=GENERIC):
        check(f)


def test_reuse_after_cond():
    key = olympus.random.key(0)

    def f_good(key, condition):
        return olympus.lax.cond(condition, olympus.random.uniform, olympus.random.normal, key)
    check(f_good, key, True)
    check(f_good, key, False)

    def f_bad(key, condition):
        r1 = olympus.lax.cond(condition, olympus.random.uniform, olympus.random.normal, key)
        return r1 + olympus.random.uniform(key)
    with pytest.raises(KeyReuseError, match=PJIT):
        check(f_bad, key, True)

    def f_bad_2(key, condition):
        r1 = olympus.lax.cond(condition, olympus.random.uniform, lambda key: 1.0, key)
        return r1 + olympus.random.uniform(key)
    with pytest.raises(KeyReuseError, match=PJIT):
        check(f_bad_2, key, True)


def test_simple_scan():
    def f_good(key):
        def body(key, _):
            key, subkey = olympus.random.split(key)
            return key, olympus.random.bits(subkey)
        return olympus.lax.scan(body, key, xs=jnp.arange(10))
    check(f_good, olympus.random.key(0))


def test_scan_sink_on_consts():
    def f(key):
        return olympus.lax.scan(lambda c, _: (c, olympus.random.uniform(key)), None,
                                xs=jnp.arange(10))
    with pytest.raises(KeyReuseError, match="scan body function leads to key reuse when "
                       "repeatedly executed, because key constants are repeatedly consumed"):
        check(f, olympus.random.key(0))


def test_scan_reuse_in_body():
    def f_bad(key):
        return olympus.lax.scan(lambda k, _: (k, olympus.random.bits(k)), key,
                                xs=jnp.arange(10))
    with pytest.raises(KeyReuseError, match="scan body function leads to key reuse"):
        check(f_bad, olympus.random.key(0))


def test_scan_good_over_keys():
    def f(key):
        return olympus.lax.map(olympus.random.bits, olympus.random.split(key, 5))
    check(f, olympus.random.key(0))


def test_scan_consume_one():
    def f(*keys):
        return olympus.lax.scan(lambda ks, x: (tuple(olympus.random.split(ks[0])), x), keys,
                                xs=jnp.arange(10))
    check(f, olympus.random.key(0), olympus.random.key(1))


def test_vmap():
    @olympus.vmap
    def f_good(seed):
        return olympus.random.bits(olympus.random.key(seed))
    check(f_good, jnp.arange(4))

    @olympus.vmap
    def f_bad(seed):
        key = olympus.random.key(0)
        return olympus.random.bits(key) + olympus.random.bits(key)
    with pytest.raises(KeyReuseError, match=RANDOM_BITS):
        check(f_bad, jnp.arange(4))


def test_while_simple():
    def f(seed):
        def body(carry):
            key, subkey = olympus.random.split(carry[0])
            return key, carry[1] + olympus.random.uniform(subkey)
        return olympus.lax.while_loop(lambda c: c[1] < 10, body,
                                      (olympus.random.key(seed), 0.0))
    check(f, 0)


def test_while_bad_cond():
    def f(seed):
        key = olympus.random.key(seed)
        return olympus.lax.while_loop(lambda c: c[0] < olympus.random.uniform(c[1]),
                                      lambda c: (c[0] + 1, c[1]), (0, key))
    with pytest.raises(KeyReuseError, match="while_loop cond"):
        check(f, 0)


def test_while_bad_body():
    def f(seed):
        key = olympus.random.key(seed)
        return olympus.lax.while_loop(
            lambda c: c[1] < 5,
            lambda c: (c[0], c[1] + olympus.random.randint(c[0], (), 1, 3)), (key, 0))
    with pytest.raises(KeyReuseError, match="while_loop body function leads to key reuse"):
        check(f, 0)


def test_while_sink_on_body_consts():
    def f(seed):
        key = olympus.random.key(seed)
        return olympus.lax.while_loop(lambda i: i < 5,
                                      lambda i: i + olympus.random.randint(key, (), 1, 3), 0)
    with pytest.raises(KeyReuseError, match="while_loop body function leads to key reuse"):
        check(f, 0)


def test_while_sink_on_cond_consts():
    def f(seed):
        key = olympus.random.key(seed)
        return olympus.lax.while_loop(lambda i: i < olympus.random.uniform(key),
                                      lambda i: i + 1, 0)
    with pytest.raises(KeyReuseError, match="while_loop cond function leads to key reuse"):
        check(f, 0)


def test_while_cond_and_body_share_a_key():
    """Recorded from JAX: a carried key consumed by both the cond and the body."""
    def f(k):
        return olympus.lax.while_loop(
            lambda c: olympus.random.uniform(c[0]) < 0.5,
            lambda c: (olympus.random.split(c[0])[0], c[1]), (k, 0))
    with pytest.raises(KeyReuseError, match="while_loop cond and body functions both use "
                       "the same key"):
        check(f, olympus.random.key(0))


def test_pjit_consumed_input():
    @olympus.jit
    def g(key, x):  # does not consume key
        return x

    def f(seed):
        key = olympus.random.key(seed)
        return g(key, olympus.random.bits(key))
    check(f, 0)


def test_remat():
    @olympus.checkpoint
    def f_bad(x, key):
        return x * olympus.random.bits(key) + olympus.random.bits(key)

    @olympus.checkpoint
    def f_good(x, key):
        return x * olympus.random.bits(key)

    x, key = jnp.float32(1.0), olympus.random.key(0)
    with olympus.numpy_dtype_promotion("standard"):
        with pytest.raises(KeyReuseError, match=RANDOM_BITS):
            check(f_bad, x, key)
        with pytest.raises(KeyReuseError, match=RANDOM_BITS):
            check(olympus.value_and_grad(f_bad), x, key)
        check(f_good, x, key)
        check(olympus.grad(f_good), x, key)


# --- the signature objects (JAX's KeyReuseImplementationTest) ----------------------------------


def _equivalent(a, b):
    return a == b and hash(a) == hash(b)


def test_source_sink_immutability():
    mask = np.array([True, False])
    sink, source = Sink(0, mask), Source(0, mask)
    assert not sink.mask.flags.writeable and not source.mask.flags.writeable
    assert mask.flags.writeable
    for obj in (sink, source):
        with pytest.raises(ValueError):
            obj.idx = 1
        with pytest.raises(ValueError):
            obj.mask = True


def test_source_sink_forward_equivalence_semantics():
    t, f, m = np.array([True, True]), np.array([False, False]), np.array([True, False])
    for cls in (Source, Sink):
        assert _equivalent(cls(0), cls(0, True))
        assert _equivalent(cls(0, True), cls(0, t))
        assert _equivalent(cls(0, False), cls(0, f))
        assert _equivalent(cls(0, m), cls(0, m))
        assert not _equivalent(cls(0), cls(1))
        assert not _equivalent(cls(0), cls(0, False))
        assert not _equivalent(cls(0), cls(0, m))
    assert not _equivalent(Source(0), Sink(0))
    assert _equivalent(Forward(0, 1), Forward(0, 1))
    assert not _equivalent(Forward(0, 1), Forward(1, 0))


def test_signature_equality_semantics():
    assert _equivalent(KeyReuseSignature(Sink(0), Source(1), Forward(1, 0)),
                       KeyReuseSignature(Forward(1, 0), Source(1), Sink(0)))
    assert _equivalent(KeyReuseSignature(), KeyReuseSignature())
    assert not _equivalent(KeyReuseSignature(Source(0)), KeyReuseSignature(Sink(0)))


def test_reprs():
    assert repr(Sink(0)) == "Sink(0)"
    assert repr(Source(0)) == "Source(0)"
    assert repr(Forward(0, 1)) == "Forward(0, 1)"
    assert repr(KeyReuseSignature(Sink(1), Source(0))) == "KeyReuseSignature(Sink(1), Source(0))"
    assert repr(KeyReuseSignature(Sink(1), Sink(0))) == "KeyReuseSignature(Sink(0), Sink(1))"
    assert repr(Sink(0, np.array([True, False]))) == "Sink(0, [ True False])"


def test_markers_are_identities_under_jit_vmap_and_grad():
    """consume / assert_consumed_value leave the keys' data as it is: eagerly, compiled,
    batched (the batching rule keeps the batch axis) and differentiated (no tangent)."""
    keys = olympus.random.split(olympus.random.key(3), 4)
    data = np.asarray(olympus.random.key_data(keys))
    for f in (consume, olympus.jit(consume), olympus.vmap(consume),
              olympus.jit(olympus.vmap(consume))):
        np.testing.assert_array_equal(np.asarray(olympus.random.key_data(f(keys))), data)

    def marked(k):
        assert_unconsumed(k)
        return k
    out = olympus.jit(olympus.vmap(marked))(keys)
    np.testing.assert_array_equal(np.asarray(olympus.random.key_data(out)), data)

    def draw(x, k):
        assert_unconsumed(k)
        return x * olympus.random.uniform(consume(k))
    key = olympus.random.key(5)
    expected = np.asarray(olympus.random.uniform(key))
    np.testing.assert_allclose(np.asarray(olympus.grad(draw)(2.0, key)), expected, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(olympus.vmap(olympus.grad(draw), (None, 0))(2.0, keys)),
        np.asarray(olympus.vmap(olympus.random.uniform)(keys)), rtol=1e-6)
