"""vmap: the compiled cost of a vmapped matmul against a hand-written batched dot_general
(they should be equal once compiled: vmap folds the batch into dot_general's batch
dimensions), and the trace time of vmap over a 4-layer MLP.

Run: python packages/olympus/benchmarks/bench_vmap.py   (not a test: numbers only)
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax


def median_time(fn, repeat=9, number=20):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def bench_matmul(batch=64, n=128):
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal((batch, n, n)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal((batch, n, n)).astype(np.float32))
    vmapped = olympus.jit(olympus.vmap(jnp.matmul))
    by_hand = olympus.jit(lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))))
    np.testing.assert_allclose(np.asarray(vmapped(a, b)), np.asarray(by_hand(a, b)),
                               rtol=1e-5, atol=1e-4)
    eqns = olympus.make_olympuspr(olympus.vmap(jnp.matmul))(a, b).olympuspr.eqns

    def dots(f):
        return [ln.split("=", 1)[1] for ln in f.lower(a, b).as_text().splitlines()
                if "stablehlo.dot_general" in ln]

    same = dots(vmapped) == dots(by_hand)
    print(f"vmap(matmul) olympuspr: {[e.primitive.name for e in eqns]}; same StableHLO "
          f"dot_general as by hand: {same}")
    # Alternate the two so that load from elsewhere hits both alike.
    tv, th = [], []
    for _ in range(9):
        tv.append(median_time(lambda: vmapped(a, b).block_until_ready(), repeat=1))
        th.append(median_time(lambda: by_hand(a, b).block_until_ready(), repeat=1))
    t_v, t_h = statistics.median(tv), statistics.median(th)
    print(f"[{batch}x{n}x{n}] @ [{batch}x{n}x{n}], compiled: vmap(matmul) {t_v * 1e3:.3f} ms, "
          f"batched dot_general by hand {t_h * 1e3:.3f} ms, ratio {t_v / t_h:.2f}")


def mlp(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def bench_mlp_trace(width=256, batch=32):
    rng = np.random.default_rng(1)
    sizes = [width] * 5
    params = [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
               np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:], strict=True)]
    xs = rng.standard_normal((batch, width)).astype(np.float32)
    per_example = olympus.vmap(mlp, in_axes=(None, 0))
    make = olympus.make_olympuspr(per_example)
    unbatched = olympus.make_olympuspr(mlp)
    n_eqns = len(make(params, xs).olympuspr.eqns)
    t_vmap = median_time(lambda: make(params, xs), repeat=7, number=20)
    t_plain = median_time(lambda: unbatched(params, xs[0]), repeat=7, number=20)
    print(f"trace of vmap over a 4-layer MLP (width {width}): {t_vmap * 1e3:.3f} ms "
          f"({n_eqns} equations); the unbatched MLP traces in {t_plain * 1e3:.3f} ms "
          f"(vmap overhead {t_vmap / t_plain:.2f}x)")
    grads = olympus.make_olympuspr(olympus.vmap(olympus.grad(lambda p, x: mlp(p, x).sum()),
                                                in_axes=(None, 0)))
    t_grad = median_time(lambda: grads(params, xs), repeat=5, number=5)
    print(f"trace of per-example gradients vmap(grad(mlp)): {t_grad * 1e3:.3f} ms")


def main() -> None:
    bench_matmul()
    bench_matmul(batch=512, n=32)
    bench_mlp_trace()


if __name__ == "__main__":
    main()
