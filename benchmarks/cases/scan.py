"""A 1,000-step ``lax.scan`` over a small carry: first call (trace + compile + run) and
steady-state run time. Skipped where the library has no ``lax.scan``."""

import time

import numpy as np

from _common import Skip, metric, run, seconds_per_call

LENGTH = 1000


def measure(lib, jnp):
    lax = lib.lax
    if not hasattr(lax, "scan"):
        raise Skip(f"{lib.__name__}.lax.scan does not exist")

    def body(c, _):
        return jnp.tanh(c) * 0.5 + 0.1, None

    f = lib.jit(lambda c: lax.scan(body, c, None, length=LENGTH)[0])
    c0 = lib.device_put(np.zeros((256,), np.float32))
    t0 = time.perf_counter()
    lib.block_until_ready(f(c0))
    first = time.perf_counter() - t0
    t = seconds_per_call(lambda: f(c0), number=5, repeats=7, block=lib.block_until_ready)
    return {
        "scan_first_call_ms": metric(1e3 * first, "ms"),
        "scan_run_ms": metric(1e3 * t, "ms"),
    }


if __name__ == "__main__":
    run(measure)
