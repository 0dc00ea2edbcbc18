"""jit speed-up of selu over op-by-op execution, and steady-state jit dispatch time.

Run: python packages/olympus/benchmarks/bench_jit.py   (not a test: numbers only)
"""

from __future__ import annotations

import statistics
import time

import olympus
import olympus.numpy as jnp


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def best_of(fn, repeat=7, number=10):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times), statistics.median(times)


def main() -> None:
    x = jnp.arange(1_000_000)
    selu(x).block_until_ready()  # compile every eager op once
    selu_jit = olympus.jit(selu)
    selu_jit(x).block_until_ready()
    eager_best, eager_med = best_of(lambda: selu(x).block_until_ready())
    jit_best, jit_med = best_of(lambda: selu_jit(x).block_until_ready())
    print(f"selu on 1,000,000 elements: op-by-op {eager_med * 1e3:.3f} ms, "
          f"jit {jit_med * 1e3:.3f} ms, speed-up {eager_med / jit_med:.1f}x (medians)")

    add = olympus.jit(lambda a, b: a + b)
    a, b = jnp.float32(1.0), jnp.float32(2.0)
    add(a, b).block_until_ready()
    n = 20000
    samples = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n):
            add(a, b)
        samples.append((time.perf_counter() - t0) / n * 1e6)
    print(f"steady-state jit dispatch, f32 scalar add: {statistics.median(samples):.2f} us/call "
          f"(median of 7 x {n})")


if __name__ == "__main__":
    main()
