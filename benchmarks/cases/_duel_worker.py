"""One side of the `dispatch_duel` case: builds dispatch.py's three workloads for `--lib`,
warms them up, then answers ``<workload> <calls>`` lines on stdin with the seconds those
calls took (``ready`` first, once set up). Not a case itself (the name starts with _)."""

import importlib
import sys
import time

import numpy as np


def main() -> None:
    lib = importlib.import_module(sys.argv[sys.argv.index("--lib") + 1])
    block = lib.block_until_ready
    a = lib.device_put(np.float32(1.0))
    b = lib.device_put(np.float32(2.0))
    tree = {f"x{i:02d}": lib.device_put(np.full((8,), i, np.float32)) for i in range(20)}
    xs = [lib.device_put(np.full((8,), i, np.float32)) for i in range(10)]

    def combine(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, *, scale, shift):
        return (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9) * scale + shift

    add, double, many = (lib.jit(lambda x, y: x + y),
                         lib.jit(lambda d: {k: v * 2.0 for k, v in d.items()}),
                         lib.jit(combine))
    calls = {"scalar_add": lambda: add(a, b), "pytree20": lambda: double(tree),
             "args10_kwargs": lambda: many(*xs, scale=a, shift=b)}
    for fn in calls.values():
        for _ in range(200):
            out = fn()
        block(out)
    print("ready", flush=True)
    for line in sys.stdin:
        name, n = line.split()
        fn = calls[name]
        t0 = time.perf_counter()
        for _ in range(int(n)):
            out = fn()
        block(out)
        print(time.perf_counter() - t0, flush=True)


if __name__ == "__main__":
    main()
