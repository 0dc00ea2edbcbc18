"""XLA compile time of the lowered MLP training step (``lowered.compile()``), a distinct
program each repeat so no compile cache can serve it, after one warm-up."""

import statistics
import time

from _common import metric, run
from _mlp import fresh_lr, init, make_step

REPEATS = 3


def measure(lib, jnp):
    params, batch = init(jnp)
    lib.jit(make_step(lib, jnp)).trace(params, batch).lower().compile()  # warm-up
    samples = []
    for i in range(REPEATS):
        lowered = lib.jit(make_step(lib, jnp, fresh_lr(i))).trace(params, batch).lower()
        t0 = time.perf_counter()
        lowered.compile()
        samples.append(time.perf_counter() - t0)
    return {"compile_ms": metric(1e3 * statistics.median(samples), "ms")}


if __name__ == "__main__":
    run(measure)
