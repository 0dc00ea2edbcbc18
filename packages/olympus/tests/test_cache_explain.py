"""Every retrace explained: ``olympus_explain_cache_misses`` and ``jit(f).cache_info()``
(beyond JAX, which prints a flag-gated hint: here the log names the argument by pytree
path and what changed, or says the function object itself is new)."""

from __future__ import annotations

import functools
import logging

import pytest

import olympus
import olympus.numpy as jnp

LOGGER = "olympus._src.cache_explain"


@pytest.fixture
def explained(caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    with olympus.explain_cache_misses(True):
        yield lambda: [r.getMessage() for r in caplog.records if r.name == LOGGER]


def _f(x, y, n=1):
    return x * y * n


def test_each_kind_of_change_is_named(explained):
    jf = olympus.jit(_f, static_argnames="n")
    jf(jnp.ones(3), 2.0)
    first = explained()[-1]
    assert first.startswith(f"TRACING CACHE MISS at {__file__}:")
    assert "first trace of _f defined at" in first
    cases = [
        ((jnp.ones(4), 2.0), {}, "* argument x: shape changed: now f32[4], before f32[3]"),
        ((jnp.ones(4, jnp.int32), 2.0), {},
         "* argument x: dtype changed: now i32[4], before f32[4]"),
        ((jnp.ones(4, jnp.int32), jnp.float32(2.0)), {},
         "* argument y: weak type changed: now f32[], before f32[]{weak_type=True} (a Python "
         "scalar is weakly typed, an array is not)"),
        ((jnp.ones(4, jnp.int32), jnp.float32(2.0)), {"n": 3},
         "* static argument n changed: now 3, before not given"),
    ]
    for args, kwargs, expected in cases:
        n = len(explained())
        jf(*args, **kwargs)
        (msg,) = explained()[n:]
        assert "none of the" in msg and "signature(s) held matches" in msg
        assert "  " + expected in msg.splitlines(), msg
    n = len(explained())
    jf(jnp.ones(3), 2.0)  # held: no miss, nothing logged
    assert explained()[n:] == []


def test_pytree_paths_and_structure(explained):
    g = olympus.jit(lambda d: d["a"] + 1)
    g({"a": jnp.ones(2)})
    g({"a": jnp.ones(3)})
    assert "  * argument d['a']: shape changed: now f32[3], before f32[2]" in \
        explained()[-1].splitlines()
    h = olympus.jit(lambda x, y: x)
    h(1.0, 2.0)
    h(1.0, (2.0,))
    assert "  * structure of argument y changed: now PyTreeDef((*,)), before PyTreeDef(*)" in \
        explained()[-1].splitlines()


def test_new_function_objects_in_a_loop(explained):
    for _ in range(3):
        olympus.jit(lambda x: x + 1)(1.0)
    msgs = [m for m in explained() if "<lambda>" in m and "test_cache_explain" in m]
    assert "first trace of <lambda>" in msgs[0]
    assert "a new function object: <lambda> defined at" in msgs[1]
    assert "(traced before as 1 other function object(s) with the same code)" in msgs[1]
    assert "(traced before as 2 other function object(s) with the same code)" in msgs[2]
    assert "create it once and reuse it" in msgs[2]
    n = len(explained())
    for _ in range(2):
        olympus.jit(functools.partial(_f, n=2))(1.0, 2.0)
    assert all("a new function object: functools.partial of _f" in m
               for m in explained()[n + 1:])


def test_config_change_is_named(explained):
    jf = olympus.jit(_f)
    jf(jnp.ones(3), 2.0)
    with olympus.debug_nans(True):
        jf(jnp.ones(3), 2.0)
    assert "  * config option olympus_debug_nans changed: now True, before False" in \
        explained()[-1].splitlines()


def test_eager_operations_are_not_reported(explained):
    jnp.ones(7) * 3.0 + jnp.arange(7.0)
    assert not [m for m in explained() if "olympus/_src" in m.splitlines()[1]]


def test_cache_info():
    def k(x, y, n=1):
        return x + y * n

    jk = olympus.jit(k, static_argnames="n")
    info = jk.cache_info()
    assert (info.hits, info.misses, info.currsize, info.signatures) == (0, 0, 0, ())
    jk(jnp.ones(3), 2.0)
    jk(jnp.ones(3), 2.0, n=4)
    info = jk.cache_info()
    assert info.misses == 2 and info.currsize == 2 and info.maxsize > 0
    assert info.signatures == ("k(x: float32[3], y: ~float32[])",
                               "k(x: float32[3], y: ~float32[], n=4)")
    # Repeat calls are hits; the C++ fast path's are counted while explaining.
    with olympus.explain_cache_misses(True):
        before = jk.cache_info().hits
        for _ in range(5):
            jk(jnp.ones(3), 2.0)
        assert jk.cache_info().hits - before == 5
    assert jk.cache_info().misses == 2
    # Another jit of the same function shares the cache (and its counts).
    assert olympus.jit(k, static_argnames="n").cache_info().currsize == 2
    jk.clear_cache()
    assert jk.cache_info().currsize == 0
