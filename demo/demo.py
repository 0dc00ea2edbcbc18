"""A tour of Olympus: the stages API, then jit against op-by-op execution.

Run with `nox -s demo` (or `python demo/demo.py` with the five packages installed).
"""

import time

import olympus
import olympus.numpy as jnp


def f(x, y):
    return 2 * x + y


traced = olympus.jit(f).trace(3, 4)
print(traced.olympuspr)
lowered = traced.lower()
print(lowered.as_text())
compiled = lowered.compile()
print("flops:", compiled.cost_analysis()["flops"])
print(compiled(3, 4))


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


x = jnp.arange(1_000_000, dtype=jnp.float32) / 1e6
print(olympus.jit(selu)(x)[:3])


def best_time_us(fn, repeats=5):
    """Best wall time of `fn()` over `repeats` runs, in microseconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn().block_until_ready()
        best = min(best, time.perf_counter() - start)
    return best * 1e6


selu_jit = olympus.jit(selu)
selu_jit(x).block_until_ready()  # compile outside the timed runs
op_by_op = best_time_us(lambda: selu(x))
jitted = best_time_us(lambda: selu_jit(x))
print(f"selu op-by-op: {op_by_op:10.1f} us")
print(f"selu jit:      {jitted:10.1f} us  ({op_by_op / jitted:.1f}x faster)")


# Transformations compose: per-example gradients of a tiny linear model.
def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


w = jnp.ones(3)
xs = jnp.arange(12.0).reshape(4, 3) / 10
ys = jnp.arange(4.0)
print("grad:", olympus.grad(loss)(w, xs, ys))
per_example = olympus.vmap(olympus.grad(loss), in_axes=(None, 0, 0))
print("per-example grads:\n", olympus.jit(per_example)(w, xs[:, None], ys[:, None]))
print("scan sum:", olympus.lax.scan(lambda c, x: (c + x, c), 0.0, ys)[0])
