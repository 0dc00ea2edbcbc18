"""Eager (un-jitted) ``grad`` of a small MLP loss: 3 dense layers of width 32 with tanh,
squared error, on a batch of 8. Outside ``jit`` both libraries evaluate the primal
computation op by op on concrete values (direct linearization) and then the transposed
linear part, so this measures per-op dispatch plus the linearize and transpose machinery.
Per call, after a warm-up call (which compiles each op once)."""

import numpy as np
from _common import metric, run, seconds_per_call

WIDTH, DEPTH, BATCH = 32, 3, 8


def measure(lib, jnp):
    rng = np.random.default_rng(0)

    def normal(*shape, scale=1.0):
        return jnp.asarray((rng.standard_normal(shape) * scale).astype(np.float32))

    params = [(normal(WIDTH, WIDTH, scale=WIDTH ** -0.5), jnp.zeros((WIDTH,), jnp.float32))
              for _ in range(DEPTH)]
    x, y = normal(BATCH, WIDTH), normal(BATCH, WIDTH)

    def loss(params, x, y):
        for w, b in params[:-1]:
            x = jnp.tanh(jnp.dot(x, w) + b)
        w, b = params[-1]
        return jnp.mean((jnp.dot(x, w) + b - y) ** 2)

    grad = lib.grad(loss)

    def call():
        return grad(params, x, y)

    lib.block_until_ready(call())
    t = seconds_per_call(call, number=5, repeats=9, block=lib.block_until_ready)
    return {"eager_grad_ms": metric(1e3 * t, "ms")}


if __name__ == "__main__":
    run(measure)
