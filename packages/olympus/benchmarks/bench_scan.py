"""Cost of a 1,000-step scan RNN (hidden 64): trace, lower, compile and run, for the
forward pass and for its gradient.

Run: python packages/olympus/benchmarks/bench_scan.py [--steps 1000] [--hidden 64]
                                                      [--repeats 5]
(not a test: numbers only). Every repeat uses a fresh function and clears the runtime's
compile cache, so each stage is measured cold; "run" is the median steady-state time of a
call of the compiled function (inputs already on the device). A plain NumPy loop of the
same forward pass is printed for scale.

The model: ``h_t = tanh(W h_{t-1} + U x_t)``, loss ``sum(h_T ** 2) + sum_t sum(h_t)``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import numpy as np

import olympus
import olympus.numpy as jnp
import olympus_runtime as rt
from olympus import lax


def make_loss():
    def loss(W, U, h0, xs):
        def step(h, x):
            h = jnp.tanh(jnp.dot(W, h) + jnp.dot(U, x))
            return h, jnp.sum(h)

        h, ys = lax.scan(step, h0, xs)
        return jnp.sum(h * h) + jnp.sum(ys)

    return loss


def numpy_loss(W, U, h0, xs):
    h, total = h0, 0.0
    for x in xs:
        h = np.tanh(W @ h + U @ x)
        total += h.sum()
    return float((h * h).sum() + total)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _run(compiled, args):
    return olympus.block_until_ready(compiled(*args))


def stage_times(build_fn, args, repeats: int, runs: int) -> dict[str, float]:
    """Median seconds of trace / lower / compile (cold) and of one run (warm)."""
    samples: dict[str, list[float]] = {"trace": [], "lower": [], "compile": [], "run": []}
    for _ in range(repeats):
        jf = olympus.jit(build_fn())
        rt.clear_cache()
        traced, t = timed(functools.partial(jf.trace, *args))
        samples["trace"].append(t)
        lowered, t = timed(traced.lower)
        samples["lower"].append(t)
        compiled, t = timed(lowered.compile)
        samples["compile"].append(t)
        olympus.block_until_ready(compiled(*args))  # warm up
        run = []
        for _ in range(runs):
            _, t = timed(functools.partial(_run, compiled, args))
            run.append(t)
        samples["run"].append(statistics.median(run))
    return {k: statistics.median(v) for k, v in samples.items()}


def report(name: str, times: dict[str, float]) -> None:
    first = times["trace"] + times["lower"] + times["compile"] + times["run"]
    print(f"{name:<9} trace {times['trace'] * 1e3:8.2f} ms | lower {times['lower'] * 1e3:8.2f} ms"
          f" | compile {times['compile'] * 1e3:8.2f} ms | run {times['run'] * 1e3:8.3f} ms"
          f" | first call total {first * 1e3:8.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--inputs", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()

    r = np.random.default_rng(0)
    W = (r.standard_normal((a.hidden, a.hidden)) / np.sqrt(a.hidden)).astype(np.float32)
    U = (r.standard_normal((a.hidden, a.inputs)) / np.sqrt(a.inputs)).astype(np.float32)
    h0 = np.zeros(a.hidden, np.float32)
    xs = r.standard_normal((a.steps, a.inputs)).astype(np.float32)
    args = [olympus.device_put(v) for v in (W, U, h0, xs)]

    print(f"scan RNN: {a.steps} steps, hidden {a.hidden}, inputs {a.inputs}, float32; "
          f"medians of {a.repeats} cold repeats, run = median of {a.runs} warm calls")
    fwd = stage_times(make_loss, args, a.repeats, a.runs)
    report("forward", fwd)
    grad = stage_times(lambda: olympus.grad(make_loss(), argnums=(0, 1)), args, a.repeats,
                       a.runs)
    report("gradient", grad)

    # Sanity: the values agree with NumPy; and NumPy's time for the same forward loop.
    got = float(olympus.jit(make_loss())(*args))
    want, t_np = timed(lambda: numpy_loss(W, U, h0, xs))
    assert abs(got - want) <= 1e-3 * max(1.0, abs(want)), (got, want)
    print(f"numpy forward loop {t_np * 1e3:.2f} ms (value {want:.4f}, olympus {got:.4f}); "
          f"run time per step: forward {fwd['run'] / a.steps * 1e6:.2f} us, "
          f"gradient {grad['run'] / a.steps * 1e6:.2f} us")


if __name__ == "__main__":
    main()
