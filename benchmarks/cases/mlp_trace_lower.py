"""Trace + lower (no compile) of the MLP training step: ``jit(step).trace(params, batch).lower()``,
a fresh step function (and program) each repeat, after one warm-up."""

import statistics
import time

from _common import metric, run
from _mlp import fresh_lr, init, make_step

REPEATS = 7


def measure(lib, jnp):
    params, batch = init(jnp)
    lib.jit(make_step(lib, jnp)).trace(params, batch).lower()  # warm-up
    trace, lower = [], []
    for i in range(REPEATS):
        jitted = lib.jit(make_step(lib, jnp, fresh_lr(i)))
        t0 = time.perf_counter()
        traced = jitted.trace(params, batch)
        t1 = time.perf_counter()
        traced.lower()
        t2 = time.perf_counter()
        trace.append(t1 - t0)
        lower.append(t2 - t1)
    total = [a + b for a, b in zip(trace, lower, strict=True)]
    return {
        "trace_lower_ms": metric(1e3 * statistics.median(total), "ms"),
        "trace_ms": metric(1e3 * statistics.median(trace), "ms", geomean=False),
        "lower_ms": metric(1e3 * statistics.median(lower), "ms", geomean=False),
    }


if __name__ == "__main__":
    run(measure)
