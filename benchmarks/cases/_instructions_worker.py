"""The process that `instructions.py` runs under callgrind: the dispatch.py and eager.py
workloads, each timed loop bracketed by two ``os.getppid()`` calls.

    valgrind --tool=callgrind --dump-before=getppid --callgrind-out-file=DIR/cg.out \\
        python _instructions_worker.py --lib olympus

callgrind writes a dump at every ``getppid`` call, so dump 1 is start-up (import, building
and warming up every workload), dump 2k is workload k's loop (its calls plus a final
block_until_ready), and dump 2k+1 the short gap after it. Prints one JSON line: the
workloads in order, with the number of units (calls, or ops) each loop ran.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

from _common import load

WARMUP = 50
CALLS = 1000  # dispatch-type loops
EAGER_OPS = 200  # ops per eager chain, as in eager.py
EAGER_CHAINS = 5


def workloads(lib, jnp) -> list[tuple[str, object, int]]:
    """(name, fn, units): ``fn()`` runs the loop body once and covers ``units`` units."""
    a = lib.device_put(np.float32(1.0))
    b = lib.device_put(np.float32(2.0))
    add = lib.jit(lambda x, y: x + y)

    tree = {f"x{i:02d}": lib.device_put(np.full((8,), i, np.float32)) for i in range(20)}
    double = lib.jit(lambda d: {k: v * 2.0 for k, v in d.items()})

    xs = [lib.device_put(np.full((8,), i, np.float32)) for i in range(10)]

    def combine(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, *, scale, shift):
        return (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9) * scale + shift

    many = lib.jit(combine)

    x = jnp.asarray(np.linspace(-1, 1, 64, dtype=np.float32))
    ops = [lambda y: y + 1.0, lambda y: y * 0.5, jnp.tanh, lambda y: y - 0.25, jnp.abs]

    def chain():
        y = x
        for i in range(EAGER_OPS):
            y = ops[i % len(ops)](y)
        return y

    return [
        ("scalar_add", lambda: add(a, b), 1),
        ("pytree20", lambda: double(tree), 1),
        ("args10_kwargs", lambda: many(*xs, scale=a, shift=b), 1),
        ("eager_op", chain, EAGER_OPS),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True, choices=["olympus", "jax"])
    args = parser.parse_args()
    lib, jnp = load(args.lib)
    block = lib.block_until_ready

    loads = workloads(lib, jnp)
    plan = []
    for name, fn, units in loads:
        reps = EAGER_CHAINS if units > 1 else CALLS
        for _ in range(WARMUP if units == 1 else 2):
            out = fn()
        block(out)
        plan.append((name, fn, reps, units))

    done = []
    for name, fn, reps, units in plan:
        os.getppid()  # mark: callgrind dumps here
        for _ in range(reps):
            out = fn()
        block(out)
        os.getppid()  # mark
        done.append({"name": name, "units": reps * units})
    print(json.dumps({"lib": args.lib, "workloads": done}), flush=True)


if __name__ == "__main__":
    main()
