"""A jitted elementwise function over 10M float32 elements, as GB/s of bytes read + written,
against numpy copying the same bytes (``host.copy()``, which, like the jitted function,
writes a freshly allocated output)."""

import numpy as np

from _common import metric, run, seconds_per_call

N = 10_000_000


def measure(lib, jnp):
    host = np.linspace(-1, 1, N, dtype=np.float32)
    x = lib.device_put(host)
    f = lib.jit(lambda v: jnp.where(v > 0, v * 2.0, v * 0.5) + 1.0)
    lib.block_until_ready(f(x))
    t = seconds_per_call(lambda: f(x), number=5, repeats=7, block=lib.block_until_ready)

    t_np = seconds_per_call(host.copy, number=5, repeats=7)
    moved = 2 * host.nbytes  # one read and one write of every element
    gbps = moved / t / 1e9
    np_gbps = moved / t_np / 1e9
    return {
        "elementwise_ms": metric(1e3 * t, "ms"),
        "elementwise_gbps": metric(gbps, "GB/s", better="higher"),
        "numpy_copy_gbps": metric(np_gbps, "GB/s", better="higher"),
        "fraction_of_numpy_copy": metric(gbps / np_gbps, "x", better="higher"),
    }


if __name__ == "__main__":
    run(measure)
