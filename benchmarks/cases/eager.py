"""Eager op-by-op execution: 200 elementwise ops on a small array, after a warm-up pass."""

import numpy as np

from _common import metric, run, seconds_per_call

N_OPS = 200


def measure(lib, jnp):
    x = jnp.asarray(np.linspace(-1, 1, 64, dtype=np.float32))
    ops = [lambda y: y + 1.0, lambda y: y * 0.5, jnp.tanh, lambda y: y - 0.25, jnp.abs]

    def chain():
        y = x
        for i in range(N_OPS):
            y = ops[i % len(ops)](y)
        return y

    lib.block_until_ready(chain())  # compiles each op once
    t = seconds_per_call(chain, number=1, repeats=9, block=lib.block_until_ready)
    return {"eager_op_us": metric(1e6 * t / N_OPS, "us")}


if __name__ == "__main__":
    run(measure)
