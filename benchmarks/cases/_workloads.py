"""The workloads shared by several cases, built for one library: the `dispatch` calls
(timed by dispatch.py, dispatch_duel.py's workers and the instructions case) and the
`eager` op chain (eager.py and the instructions case)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

EAGER_OPS = 200  # elementwise ops per eager chain


def dispatch_calls(lib) -> dict[str, Callable[[], object]]:
    """name -> a zero-argument call of a jitted function on arrays already on device: a
    scalar f32 add, a dict of 20 arrays in and out, 10 positional + 2 keyword arguments."""
    a = lib.device_put(np.float32(1.0))
    b = lib.device_put(np.float32(2.0))
    add = lib.jit(lambda x, y: x + y)

    tree = {f"x{i:02d}": lib.device_put(np.full((8,), i, np.float32)) for i in range(20)}
    double = lib.jit(lambda d: {k: v * 2.0 for k, v in d.items()})

    xs = [lib.device_put(np.full((8,), i, np.float32)) for i in range(10)]

    def combine(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, *, scale, shift):
        return (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9) * scale + shift

    many = lib.jit(combine)
    return {"scalar_add": lambda: add(a, b), "pytree20": lambda: double(tree),
            "args10_kwargs": lambda: many(*xs, scale=a, shift=b)}


def eager_chain(jnp) -> tuple[Callable[[], object], object]:
    """(chain, x): ``chain()`` applies `EAGER_OPS` elementwise ops, one at a time, to the
    64-element float32 array `x`."""
    x = jnp.asarray(np.linspace(-1, 1, 64, dtype=np.float32))
    ops = [lambda y: y + 1.0, lambda y: y * 0.5, jnp.tanh, lambda y: y - 0.25, jnp.abs]

    def chain():
        y = x
        for i in range(EAGER_OPS):
            y = ops[i % len(ops)](y)
        return y

    return chain, x
