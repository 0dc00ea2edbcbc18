"""The key-reuse checker on concrete keys (``olympus_debug_key_reuse`` outside a trace: key
arrays remember their consumption) and the option itself; the static analysis is tested in
test_key_reuse.py.

The cases follow JAX 0.10.2's ``tests/key_reuse_test.py``; each expected outcome and message
was recorded by running the same program with reference JAX 0.10.2 in its own process
(``benchmarks/.venv-jax``), names changed jax -> olympus.
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.errors import KeyReuseError
from olympus.experimental.key_reuse import _core

check = _core.check_key_reuse

PJIT = "In jit, argument 0 is already consumed."
JIT_MSG = "Previously-consumed key passed to jit-compiled function at index 0"
EAGER_BITS = "Previously-consumed key passed to random_bits at index 0"
TRACED_BITS = "In random_bits, argument 0 is already consumed."


@pytest.fixture
def reuse_on():
    with olympus.debug_key_reuse(True):
        yield


# --- eager checking (JAX's KeyReuseEagerTest) --------------------------------------------------


def test_docstring_example(reuse_on):
    key = olympus.random.key(0)
    olympus.random.normal(key)
    with pytest.raises(KeyReuseError) as info:
        olympus.random.normal(key)
    assert str(info.value) == (
        "Previously-consumed key passed to jit-compiled function at index 0\n"
        "See https://docs.olympus.dev/en/latest/errors.html#olympus.errors.KeyReuseError")


def test_clone_eager():
    def run():
        key = olympus.random.key(0)
        key2 = olympus.random.clone(key)
        assert key is not key2
        _ = olympus.random.uniform(key)
        return key, key2
    with olympus.debug_key_reuse(False):  # first without: the jit cache must not leak
        run()
    with olympus.debug_key_reuse(True):
        key, key2 = run()
    assert key._consumed
    assert not key2._consumed


def test_simple_reuse_nojit(reuse_on):
    key = olympus.random.key(0)
    with olympus.disable_jit():
        _ = olympus.random.bits(key)
        with pytest.raises(KeyReuseError, match=EAGER_BITS):
            _ = olympus.random.bits(key)


def test_simple_reuse_eager(reuse_on):
    key = olympus.random.key(0)
    olympus.random.bits(key)
    with pytest.raises(KeyReuseError, match=EAGER_BITS):
        olympus.random.bits(key)
    key = olympus.random.key(1)
    olympus.random.uniform(key)
    with pytest.raises(KeyReuseError, match="Previously-consumed key passed to random_split "
                       "at index 0"):
        olympus.random.split(key)


def test_simple_key_reuse_jit(reuse_on):
    key = olympus.random.key(0)
    _ = olympus.jit(olympus.random.bits)(key)
    with pytest.raises(KeyReuseError, match=JIT_MSG):
        _ = olympus.jit(olympus.random.bits)(key)


def test_closed_over_key_reuse_jit(reuse_on):
    key = olympus.random.key(0)

    @olympus.jit
    def f():
        return olympus.random.uniform(key)
    _ = f()
    with pytest.raises(KeyReuseError, match=JIT_MSG):
        _ = f()


def test_closed_over_key_counts_after_the_arguments(reuse_on):
    key = olympus.random.key(0)
    f = olympus.jit(lambda x: x + olympus.random.uniform(key))
    f(1.0)
    with pytest.raises(KeyReuseError, match="Previously-consumed key passed to jit-compiled "
                       "function at index 1"):
        f(1.0)


def test_index_is_the_flat_argument(reuse_on):
    key = olympus.random.key(0)
    olympus.random.bits(key)
    with pytest.raises(KeyReuseError, match="jit-compiled function at index 1"):
        olympus.jit(lambda d: olympus.random.bits(d["b"]))({"a": 1.0, "b": key})
    olympus.jit(lambda x, k: x)(1.0, key)  # not consumed by the callee: allowed


def test_key_reuse_within_jit(reuse_on):
    @olympus.jit
    def f():
        key = olympus.random.key(0)
        return olympus.random.bits(key) + olympus.random.bits(key)
    with pytest.raises(KeyReuseError, match=TRACED_BITS):
        f()


def test_vmap_zero_sized_axis(reuse_on):
    def f(key):
        a, b = olympus.random.split(key)
        return olympus.random.bits(a) + olympus.random.bits(b)
    keys = olympus.random.split(olympus.random.key(0), 0)
    assert keys.shape == (0,)
    olympus.vmap(f)(keys)  # does not raise


def test_eager_bookkeeping_matches_jax(reuse_on):
    """The consumed states JAX 0.10.2 reports for the same eager steps."""
    key = olympus.random.key(0)
    olympus.random.fold_in(key, 1)
    assert not key._consumed  # fold_in does not consume
    olympus.random.bits(key)
    olympus.random.fold_in(key, 2)  # nor need an unconsumed key

    keys = olympus.random.split(olympus.random.key(0))
    k0 = keys[0]
    assert np.array_equal(keys._consumed, [True, False]) and not k0._consumed
    olympus.random.bits(k0)
    assert k0._consumed
    with pytest.raises(KeyReuseError, match="Previously-consumed key passed to slice at index 0"):
        keys[0]

    k1, k2 = olympus.random.split(olympus.random.key(0))
    olympus.random.bits(k1)
    olympus.random.bits(k2)

    key = olympus.random.key(0)
    data = olympus.random.key_data(key)
    assert not key._consumed
    k2 = olympus.random.wrap_key_data(data)
    olympus.random.bits(key)
    olympus.random.bits(k2)  # a new key over the same data: JAX does not track it

    key = olympus.random.key(0)
    fwd = olympus.jit(lambda k: k)(key)
    assert not fwd._consumed
    olympus.random.bits(key)
    assert key._consumed and not fwd._consumed
    assert not olympus.jit(olympus.random.split)(olympus.random.key(0))._consumed

    key = olympus.random.key(0)
    olympus.random.bits(key)
    assert key.reshape((1,))._consumed

    raw = olympus.random.PRNGKey(0)  # raw keys are not tracked
    olympus.random.bits(raw)
    olympus.random.bits(raw)


def test_eager_transformations(reuse_on):
    keys = olympus.random.split(olympus.random.key(0), 3)
    olympus.vmap(olympus.random.bits)(keys)
    assert keys._consumed
    with pytest.raises(KeyReuseError, match=EAGER_BITS):
        olympus.vmap(olympus.random.bits)(keys)
    with pytest.raises(KeyReuseError, match=EAGER_BITS):
        olympus.vmap(lambda k: olympus.random.bits(k) + olympus.random.bits(k))(
            olympus.random.split(olympus.random.key(1), 3))

    key = olympus.random.key(0)
    olympus.grad(lambda x, k: x * olympus.random.normal(k))(1.0, key)
    assert key._consumed
    with pytest.raises(KeyReuseError, match=JIT_MSG):
        olympus.grad(lambda x, k: x * olympus.random.normal(k))(1.0, key)
    key = olympus.random.key(0)
    with pytest.raises(KeyReuseError, match=JIT_MSG):
        olympus.grad(lambda x: x * olympus.random.normal(key) + olympus.random.normal(key))(1.0)


def test_eager_control_flow(reuse_on):
    key = olympus.random.key(0)
    olympus.lax.cond(True, olympus.random.uniform, lambda k: 1.0, key)
    assert key._consumed  # one branch consumes it
    with pytest.raises(KeyReuseError, match=EAGER_BITS):
        olympus.random.bits(key)
    with pytest.raises(KeyReuseError, match="scan body function leads to key reuse"):
        olympus.lax.scan(lambda k, _: (k, olympus.random.bits(k)), olympus.random.key(0), None,
                         length=3)
    with pytest.raises(KeyReuseError, match="while_loop body function leads to key reuse"):
        olympus.lax.while_loop(
            lambda c: c[1] < 3,
            lambda c: (c[0], c[1] + olympus.random.randint(c[0], (), 1, 3)),
            (olympus.random.key(0), 0))


def test_traced_checks_under_transformations(reuse_on):
    """Recorded from JAX: make_olympuspr, eval_shape, .trace and .lower check when tracing;
    vmap, grad and cond inside jit too."""
    key = olympus.random.key(0)
    bad = lambda k: olympus.random.bits(k) + olympus.random.bits(k)  # noqa: E731
    for run in (lambda: olympus.make_olympuspr(bad)(key), lambda: olympus.eval_shape(bad, key),
                lambda: olympus.jit(bad).lower(key), lambda: olympus.jit(bad).trace(key),
                lambda: olympus.jit(olympus.vmap(bad))(olympus.random.split(key, 2))):
        with pytest.raises(KeyReuseError, match=TRACED_BITS):
            run()
    with pytest.raises(KeyReuseError, match=PJIT):
        olympus.jit(olympus.grad(lambda x, k: x * olympus.random.uniform(k)
                                 + olympus.random.uniform(k)))(1.0, olympus.random.key(1))
    with pytest.raises(KeyReuseError, match=PJIT):
        olympus.jit(lambda p, k: olympus.lax.cond(p, olympus.random.uniform, lambda k: 1.0, k)
                    + olympus.random.uniform(k))(True, olympus.random.key(2))
    with pytest.raises(KeyReuseError, match=PJIT):
        olympus.jit(lambda k: olympus.lax.fori_loop(
            0, 3, lambda i, c: (olympus.random.split(c[0])[0],
                                c[1] + olympus.random.uniform(c[0])), (k, 0.0)))(
            olympus.random.key(3))


def test_values_unchanged_with_the_check_on():
    def program(key):
        k1, k2 = olympus.random.split(key)
        a = olympus.random.normal(k1, (3,))
        b = olympus.jit(lambda k: olympus.random.uniform(olympus.random.fold_in(k, 7), (2,)))(k2)
        c = olympus.lax.scan(lambda k, _: tuple(olympus.random.split(k)), k2, None, length=2)
        return a, b, olympus.random.key_data(c[1])
    off = program(olympus.random.key(42))
    with olympus.debug_key_reuse(True):
        on = program(olympus.random.key(42))
    for x, y in zip(off, on, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_key_reuse_flag():
    @olympus.jit
    def f_bad(key):
        return olympus.random.bits(key) + olympus.random.bits(key)

    @olympus.jit
    def f_good(key):
        return olympus.random.bits(key)

    key = olympus.random.key(0)
    with olympus.debug_key_reuse(False):
        f_good(key)
        f_bad(key)  # no failure
    f_bad.clear_cache()
    f_good.clear_cache()
    with olympus.debug_key_reuse(True):
        f_good(key)
        with pytest.raises(KeyReuseError, match="In random_bits"):
            f_bad(key)


def test_error_cause_points_at_the_first_use(reuse_on):
    """As JAX: the eager error's cause says where the key was first used, with that
    traceback (the user's frames)."""
    key = olympus.random.key(0)

    def first_use(k):
        return olympus.random.normal(k)
    first_use(key)
    with pytest.raises(KeyReuseError) as info:
        olympus.random.normal(key)
    cause = info.value.__cause__
    assert isinstance(cause, KeyReuseError)
    assert str(cause).startswith("PRNG key first used at the above location was subsequently "
                                 "reused at the following location:")
    names = []
    tb = cause.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert names[-1] == "first_use"


def test_shard_map_body_is_checked(reuse_on):
    from olympus.sharding import Mesh
    from olympus.sharding import PartitionSpec as P

    mesh = Mesh(np.array(olympus.devices()[:1]), ("x",))
    bad = olympus.shard_map(lambda k: olympus.random.bits(k) + olympus.random.bits(k),
                            mesh=mesh, in_specs=P(), out_specs=P())
    with pytest.raises(KeyReuseError, match=TRACED_BITS):
        olympus.jit(bad)(olympus.random.key(0))
    key = olympus.random.key(0)
    olympus.jit(olympus.shard_map(olympus.random.bits, mesh=mesh, in_specs=P(),
                                  out_specs=P()))(key)
    assert key._consumed


def test_eager_indexing_and_copies(reuse_on):
    """Consumed states recorded from JAX 0.10.2 for the same eager steps."""
    key = olympus.random.key(0)
    olympus.random.bits(key)
    assert key.copy()._consumed and jnp.array(key)._consumed and jnp.copy(key)._consumed
    assert key[None]._consumed  # a broadcast forwards the state
    assert not olympus.random.key(1)[None]._consumed
    assert olympus.jit(olympus.random.key_data)(key).shape == (2,)  # unwrap does not consume
    assert bool(key == key)  # comparing does not consume

    keys = olympus.random.split(olympus.random.key(0), 3)
    assert not keys[jnp.array([0, 1])]._consumed  # a gather forwards
    assert not np.any(keys._consumed)
    keys[-1]
    np.testing.assert_array_equal(keys._consumed, [False, False, True])
    keys = olympus.random.split(olympus.random.key(0), 4)
    part = keys[1:3]
    np.testing.assert_array_equal(keys._consumed, [False, True, True, False])
    assert not part._consumed
    grid = olympus.random.split(olympus.random.key(0), (2, 2))
    grid[0]
    with pytest.raises(KeyReuseError, match="Previously-consumed key passed to slice at index 0"):
        grid[:, 0]
    pair = olympus.random.split(olympus.random.key(0), 2)
    a, b = pair  # unpacking is not slicing
    assert not np.any(pair._consumed) and not a._consumed
    a, b = pair

    key = olympus.random.key(0)
    olympus.random.randint(key, (), 0, 3)
    with pytest.raises(KeyReuseError, match=JIT_MSG):
        olympus.random.randint(key, (), 0, 3)
    key = olympus.random.key(0)
    olympus.random.permutation(key, 3)
    with pytest.raises(KeyReuseError, match=JIT_MSG):
        olympus.random.choice(key, 3)


def test_vmapped_loop_with_a_batched_predicate_carrying_a_key(reuse_on):
    """Recorded from JAX: vmap of poisson over its rate (a while loop whose predicate is
    batched, carrying a key) is not reuse; the values are those without the check."""
    key = olympus.random.key(0)
    lam = jnp.asarray([1.0, 20.0])
    sample = olympus.jit(olympus.vmap(lambda rate: olympus.random.poisson(key, rate, (5,))))
    got = sample(lam)
    _core.check_key_reuse(olympus.vmap(lambda rate: olympus.random.poisson(key, rate, (5,))),
                          lam)
    with olympus.debug_key_reuse(False):
        expected = olympus.jit(olympus.vmap(
            lambda rate: olympus.random.poisson(olympus.random.key(0), rate, (5,))))(lam)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
