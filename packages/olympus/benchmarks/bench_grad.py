"""Autodiff benchmark: trace+lower time of grad of a 4-layer tanh MLP loss, and the run time
of the compiled gradient step against the same backward pass written by hand in numpy.

Run: python packages/olympus/benchmarks/bench_grad.py   (not a test: numbers only)
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import olympus
import olympus.numpy as jnp

WIDTH, DEPTH, BATCH = 512, 4, 256


def loss(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = jnp.tanh(h @ W + b)
    W, b = params[-1]
    r = h @ W + b - y
    return 0.5 * jnp.sum(r * r) / x.shape[0]


def numpy_grad(params, x, y):
    hs = [x]
    for W, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ W + b))
    W, b = params[-1]
    d = (hs[-1] @ W + b - y) / x.shape[0]
    grads = [(hs[-1].T @ d, d.sum(0))]
    d = d @ W.T
    for (W, _b), h_in, h_out in zip(params[-2::-1], hs[-2::-1], hs[:0:-1]):
        d = d * (1 - h_out * h_out)
        grads.append((h_in.T @ d, d.sum(0)))
        d = d @ W.T
    return grads[::-1]


def median_time(fn, repeat=7, number=5):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number)
    return statistics.median(out)


def main() -> None:
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(WIDTH, WIDTH)).astype(np.float32) / np.sqrt(WIDTH),
               np.zeros(WIDTH, np.float32)) for _ in range(DEPTH)]
    x = rng.normal(size=(BATCH, WIDTH)).astype(np.float32)
    y = rng.normal(size=(BATCH, WIDTH)).astype(np.float32)

    traces = []
    for _ in range(5):
        fresh = lambda p, x, y: olympus.grad(loss)(p, x, y)  # noqa: E731 (new function)
        t0 = time.perf_counter()
        olympus.jit(fresh).trace(params, x, y).lower()
        traces.append(time.perf_counter() - t0)
    print(f"trace+lower of grad(4-layer MLP): {statistics.median(traces) * 1e3:.1f} ms")

    step = olympus.jit(olympus.grad(loss))
    dparams = olympus.device_put(params)
    dx, dy = olympus.device_put(x), olympus.device_put(y)
    g = step(dparams, dx, dy)
    ref = numpy_grad(params, x, y)
    err = max(float(np.abs(np.asarray(a) - b).max()) for ga, gb in zip(g, ref)
              for a, b in zip(ga, gb))
    t_ol = median_time(lambda: olympus.block_until_ready(step(dparams, dx, dy)))
    t_np = median_time(lambda: numpy_grad(params, x, y))
    print(f"compiled gradient step (batch {BATCH}): olympus {t_ol * 1e3:.2f} ms, numpy by hand "
          f"{t_np * 1e3:.2f} ms (max abs difference {err:.2e})")


if __name__ == "__main__":
    main()
