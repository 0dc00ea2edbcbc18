"""Traced control-flow bodies are reused: a second `scan`/`cond`/`while_loop`/`fori_loop`/
`map` with the same function and argument types does not trace it again, gives the same
values, and does not keep functions or per-call executables alive."""

import gc
import weakref

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus._src import eager
from olympus.lax import _trace_cache


@pytest.fixture(autouse=True)
def _fresh_cache():
    _trace_cache.clear()
    yield
    _trace_cache.clear()


def _counting(fn):
    """`fn` that counts how often Python runs it (once per trace)."""
    calls = []

    def wrapped(*args):
        calls.append(1)
        return fn(*args)

    return wrapped, calls


def test_scan_body_traced_once_for_same_function_and_types():
    body, calls = _counting(lambda c, x: (c * 0.5 + x, c))
    c0 = jnp.zeros((4,), jnp.float32)
    xs = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    c1, ys1 = lax.scan(body, c0, xs)
    c2, ys2 = lax.scan(body, c0, xs)
    assert len(calls) == 1
    want_c, want_ys = np.zeros(4, np.float32), []
    for x in np.arange(12, dtype=np.float32).reshape(3, 4):
        want_ys.append(want_c)
        want_c = want_c * 0.5 + x
    for c, ys in [(c1, ys1), (c2, ys2)]:
        np.testing.assert_allclose(np.asarray(c), want_c)
        np.testing.assert_allclose(np.asarray(ys), np.stack(want_ys))
    # New argument types: traced again.
    c3, _ = lax.scan(body, jnp.zeros((5,), jnp.float32), jnp.ones((2, 5), jnp.float32))
    assert len(calls) == 2
    np.testing.assert_allclose(np.asarray(c3), np.full(5, 1.5))


def test_cond_while_fori_map_traced_once():
    t, t_calls = _counting(lambda a: a + 1.0)
    f, f_calls = _counting(lambda a: a - 1.0)
    x = jnp.array([1.0, 2.0], jnp.float32)
    outs = [lax.cond(p, t, f, x) for p in (True, False, True)]
    assert (len(t_calls), len(f_calls)) == (1, 1)
    np.testing.assert_array_equal(np.asarray(outs[0]), [2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(outs[1]), [0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(outs[2]), [2.0, 3.0])

    cond_fun, c_calls = _counting(lambda c: c < 10)
    body_fun, b_calls = _counting(lambda c: c * 2 + 1)
    r = [lax.while_loop(cond_fun, body_fun, jnp.int32(v)) for v in (0, 3)]
    assert (len(c_calls), len(b_calls)) == (1, 1)
    assert [int(v) for v in r] == [15, 15]

    fb, fb_calls = _counting(lambda i, c: c + i * i)
    r = [lax.fori_loop(0, n, fb, jnp.int32(0)) for n in (4, 5)]
    assert len(fb_calls) == 1  # the trip count is not part of the body
    assert [int(v) for v in r] == [14, 30]

    mf, m_calls = _counting(lambda v: v * v)
    xs = jnp.arange(3.0, dtype=jnp.float32)
    ys = [lax.map(mf, xs) for _ in range(2)]
    assert len(m_calls) == 1
    for y in ys:
        np.testing.assert_array_equal(np.asarray(y), [0.0, 1.0, 4.0])


def test_different_other_branch_is_a_different_entry():
    t, t_calls = _counting(lambda a: a + 1.0)
    x = jnp.float32(1.0)
    assert float(lax.cond(False, t, lambda a: a * 10.0, x)) == 10.0
    assert float(lax.cond(False, t, lambda a: a * 20.0, x)) == 20.0
    assert len(t_calls) == 2


def test_weak_carry_made_strong_on_a_cache_hit_too():
    def body(c, _):
        return c + jnp.float32(1.0), None

    for _ in range(2):
        out, _ = lax.scan(body, 0.0, None, length=3)
        assert out.dtype == np.float32 and not out.weak_type
        assert float(out) == 3.0


def test_body_closing_over_a_tracer_is_not_reused_across_traces():
    holder = {}

    def body(c, _):
        return c + holder["x"], None

    def f(x):
        holder["x"] = x
        return lax.scan(body, jnp.float32(0.0), None, length=3)[0]

    assert float(olympus.jit(f)(jnp.float32(1.0))) == 3.0
    # A second, distinct trace of the same body: the first trace's tracer must not leak.
    assert float(olympus.jit(lambda x: f(x) + 0.0)(jnp.float32(2.0))) == 6.0
    assert float(olympus.grad(f)(jnp.float32(2.0))) == 3.0


def test_x64_switch_retraces():
    body, calls = _counting(lambda c, _: (c + 1.5, None))
    lax.scan(body, 0.0, None, length=2)
    with olympus.enable_x64():
        out, _ = lax.scan(body, 0.0, None, length=2)
        assert out.dtype == np.float64
    assert len(calls) == 2


def test_cache_does_not_keep_functions_alive():
    def make():
        big = jnp.ones((8,), jnp.float32)

        def body(c, x):
            return c + big * x, None

        def other(a):
            return body(a, 1.0)[0]  # refers to the first branch

        return body, other

    body, other = make()
    lax.scan(body, jnp.zeros((8,), jnp.float32), jnp.ones((2,), jnp.float32))
    lax.cond(True, lambda a: a, other, jnp.zeros((8,), jnp.float32))
    lax.cond(True, other, lambda a: a, jnp.zeros((8,), jnp.float32))
    lax.fori_loop(0, 2, lambda i, c, o=other: o(c), jnp.zeros((8,), jnp.float32))
    refs = [weakref.ref(body), weakref.ref(other)]
    del body, other
    gc.collect()
    assert [r() for r in refs] == [None, None]


def test_entries_per_function_are_bounded():
    def body(c, _):
        return c + 1, None

    for n in range(_trace_cache.ENTRIES_PER_FUNCTION + 4):
        out, _ = lax.scan(body, jnp.zeros((n,), jnp.int32), None, length=2)
        np.testing.assert_array_equal(np.asarray(out), np.full((n,), 2))
    assert len(_trace_cache._entries[body]) == _trace_cache.ENTRIES_PER_FUNCTION


def test_unhashable_callable_still_works():
    class Body:
        __hash__ = None

        def __call__(self, c, x):
            return c + x, None

    out, _ = lax.scan(Body(), jnp.int32(0), jnp.arange(4, dtype=jnp.int32))
    assert int(out) == 6


def test_eager_loops_with_fresh_lambdas_keep_bounded_executables(monkeypatch):
    monkeypatch.setattr(eager, "IDENTITY_KEYED_MAX", 16)
    x = jnp.arange(3.0, dtype=jnp.float32)
    n_plain = len(eager._prim_fns)
    outs = [lax.cond(i % 2 == 0, lambda a: a + 1.0, lambda a: a * 2.0, x) for i in range(40)]
    for i, out in enumerate(outs):
        want = np.arange(3.0) + 1.0 if i % 2 == 0 else np.arange(3.0) * 2.0
        np.testing.assert_array_equal(np.asarray(out), want)
    assert len(eager._prim_fns_by_identity) <= 16
    assert len(eager._prim_fns) - n_plain < 10  # the cond itself is identity-keyed
