"""EagerCache, execute_single, and concurrency."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from mlir_helpers import binary_module, unary_module

import olympus_runtime as ort
from olympus_ir import ShapedArray


def build_unary(op, shape, name):
    return lambda: (unary_module(op, shape=shape, name=name),
                    [ShapedArray(shape, np.float32)])


def test_compiles_once_per_key():
    cache = ort.EagerCache()
    calls = []

    def build():
        calls.append(1)
        return build_unary("negate", (4,), "eager_neg")()

    key = ("neg", (), (ShapedArray((4,), np.float32),))
    e1 = cache.get(key, build)
    e2 = cache.get(key, build)
    assert e1 is e2 and len(calls) == 1 and cache.compile_count == 1
    assert key in cache and len(cache) == 1
    x = ort.device_put(np.arange(4, dtype=np.float32))
    out = ort.execute_single(e1, [x])
    assert out.tolist() == [0, -1, -2, -3]
    # A different key builds again; the device is part of the key.
    cache.get(("abs",), build_unary("abs", (4,), "eager_abs"))
    e3 = cache.get(key, build, device=ort.devices()[1])
    assert cache.compile_count == 3 and len(calls) == 2
    assert e3.devices == (ort.devices()[1],)
    cache.clear()
    assert len(cache) == 0
    cache.get(key, build)
    assert cache.compile_count == 4


def test_build_may_return_in_avals_and_errors_propagate():
    cache = ort.EagerCache(committed=False)
    weak = ShapedArray((), np.float32, weak_type=True)
    exe = cache.get("mul", lambda: (binary_module("multiply", shape=(), name="eager_mul"),
                                    [weak, weak], [weak]))
    out = ort.execute_single(exe, [ort.device_put(3.0), ort.device_put(2.0)])
    assert repr(out) == "Array(6., dtype=float32, weak_type=True)" and not out.committed

    attempts = []

    def broken():
        attempts.append(1)
        raise RuntimeError("lowering failed")

    for _ in range(2):  # a failed build is not cached: the next get tries again
        with pytest.raises(RuntimeError, match="lowering failed"):
            cache.get("broken", broken)
    assert len(attempts) == 2 and "broken" not in cache
    with pytest.raises(ValueError, match="build\\(\\) must return"):
        cache.get("bad", lambda: (1,))


def test_concurrent_gets_compile_once():
    cache = ort.EagerCache()
    builds = []
    start = threading.Barrier(8)

    def build():
        builds.append(threading.get_ident())
        return (unary_module("sine", shape=(16,), name="eager_sin_conc"),
                [ShapedArray((16,), np.float32)])

    x_host = np.linspace(0, 3, 16, dtype=np.float32)

    def worker(i):
        start.wait()
        exe = cache.get("sin", build)
        x = ort.device_put(x_host + i)
        return np.asarray(ort.execute_single(exe, [x]))

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(worker, range(8)))
    assert len(builds) == 1 and cache.compile_count == 1
    for i, r in enumerate(results):
        np.testing.assert_allclose(r, np.sin(x_host + i), rtol=1e-5, atol=1e-6)


def test_threads_compiling_and_executing():
    """8 threads: each compiles 4 programs (half shared) and runs them many times."""
    ops = {"add": np.add, "multiply": np.multiply, "subtract": np.subtract,
           "maximum": np.maximum}
    start = threading.Barrier(8)
    before = ort.compile_count()

    def worker(t):
        start.wait()
        rng = np.random.default_rng(t)
        checked = 0
        for op, ref in ops.items():
            # Threads 0-3 and 4-7 share module texts pairwise with equal names.
            name = f"thr_{op}_{t % 4}"
            exe = ort.compile(binary_module(op, shape=(32,), name=name))
            for _ in range(25):
                a = rng.standard_normal(32).astype(np.float32)
                b = rng.standard_normal(32).astype(np.float32)
                out = exe.execute([ort.device_put(a), ort.device_put(b)])[0]
                np.testing.assert_array_equal(np.asarray(out), ref(a, b))
                checked += 1
        return checked

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(worker, range(8))) == 8 * 4 * 25
    # 4 ops x 4 distinct names, each compiled exactly once despite 2 threads asking.
    assert ort.compile_count() - before == 16
