"""Memory: jitted functions, their traces and executables are freed when the user's
function is gone; every cache behind `jit` and the compiler is bounded.

The RSS checks run in a fresh subprocess (the test process has compiled thousands of
programs by then, and its allocator state would hide or fake growth)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
import weakref

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus._src import jit as jit_mod


def _collected(ref) -> bool:
    gc.collect()
    return ref() is None


def test_a_fresh_jitted_lambda_and_its_jit_object_are_freed():
    x = jnp.ones((3,))
    f = lambda x: x * 2 + 7  # noqa: E731
    ref = weakref.ref(f)
    jitted = olympus.jit(f)
    jref = weakref.ref(jitted)
    np.testing.assert_array_equal(jitted(x), [9.0, 9.0, 9.0])
    del f, jitted
    assert _collected(ref) and _collected(jref)


def test_a_jitted_closure_over_a_big_array_releases_the_array():
    big = np.arange(1 << 16, dtype=np.float32)
    ref = weakref.ref(big)

    def make(b):
        return olympus.jit(lambda x: x + b.sum())

    g = make(big)
    del big
    assert float(g(jnp.float32(1.0))) == float(np.arange(1 << 16, dtype=np.float32).sum() + 1)
    del g
    assert _collected(ref)


def test_signature_cache_is_bounded_oldest_first(monkeypatch):
    monkeypatch.setattr(jit_mod, "CACHE_CAPACITY", 4)
    f = olympus.jit(lambda x: x + 1)
    calls = f._olympus_jit._calls
    for n in range(1, 8):
        np.testing.assert_array_equal(f(jnp.zeros((n,))), np.ones(n))
    assert len(calls) <= 4
    shapes = sorted(next(a for a in key if hasattr(a, "shape")).shape for key in calls)
    assert shapes[-1] == (7,)  # the newest are kept
    # A forgotten signature is traced again, with the right value.
    with_counts = dict(jit_mod.counters)
    f.clear_cache()
    np.testing.assert_array_equal(f(jnp.zeros((1,))), [1.0])
    assert jit_mod.counters["trace"] == with_counts["trace"] + 1


def test_non_weakrefable_callables_get_their_own_cache():
    class Slotted:
        __slots__ = ("k",)

        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return x * self.k

    a, b = Slotted(2.0), Slotted(3.0)
    np.testing.assert_array_equal(olympus.jit(a)(jnp.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(olympus.jit(b)(jnp.ones(2)), [3.0, 3.0])
    # The cache lives with the jit object, not in a module-level table keyed by id().
    assert not hasattr(jit_mod, "_cache_by_id")


_SOAK = textwrap.dedent("""
    import gc, json, os, sys, weakref
    import olympus, olympus.numpy as jnp

    import ctypes
    try:  # give freed heap pages back first: what stays is retained, not fragmentation
        _trim = ctypes.CDLL("libc.so.6").malloc_trim
    except OSError:
        _trim = lambda pad: 0  # noqa: E731

    def rss():
        _trim(0)
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    x = jnp.ones((3,))
    refs = []

    def run(start, n):
        for i in range(start, start + n):
            c = float(i)
            f = lambda x: x * 2 + c  # a distinct program each time
            refs.append(weakref.ref(f))
            assert float(olympus.jit(f)(x)[0]) == 2 + c

    run(0, 300)  # warm up: allocator pools, the recent-executables cache, one context
    gc.collect()
    before = rss()
    run(300, 2000)
    gc.collect()
    print(json.dumps({"growth_mb": rss() - before,
                      "alive": sum(r() is not None for r in refs)}))
""")


def test_two_thousand_fresh_jitted_lambdas_grow_rss_by_less_than_10_mb():
    out = subprocess.run([sys.executable, "-c", _SOAK], capture_output=True, text=True,
                         timeout=300, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["alive"] == 0, result
    assert result["growth_mb"] < 10, result
