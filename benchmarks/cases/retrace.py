"""Retracing: one jitted function called on 50 distinct shapes, each call a new trace + lower +
compile + run; median ms per new shape (and the mean), after a warm-up on another shape."""

import statistics
import time

import numpy as np

from _common import metric, run

SHAPES = 50


def measure(lib, jnp):
    f = lib.jit(lambda x: jnp.sum(jnp.tanh(x) * 2.0 + x))
    lib.block_until_ready(f(np.ones((3,), np.float32)))  # warm-up
    samples = []
    for n in range(SHAPES):
        x = np.ones((8 + n,), np.float32)
        t0 = time.perf_counter()
        lib.block_until_ready(f(x))
        samples.append(time.perf_counter() - t0)
    return {
        "retrace_ms": metric(1e3 * statistics.median(samples), "ms"),
        "retrace_mean_ms": metric(1e3 * statistics.mean(samples), "ms", geomean=False),
    }


if __name__ == "__main__":
    run(measure)
