"""Pytree flatten/unflatten cost: jaxlib C++ backend vs pure-Python backend.

Not a test.  Run from the repo root:

    PYTHONPATH=packages/olympus-ir/src:packages/olympus-trace/src \
        python packages/olympus-trace/benchmarks/bench_pytree.py [--repeats 15]

Prints median microseconds per operation for each tree and backend, measured
through the public ``olympus_trace.tree_util`` API (``tree_flatten`` and
``tree_unflatten``) so dispatch overhead is included.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import timeit

from olympus_trace import tree_util as tu

Point = collections.namedtuple("Point", "x y")


def make_trees() -> dict[str, object]:
    return {
        "2-leaf tuple (1., 2.)": (1.0, 2.0),
        "100-leaf dict {k: float}": {f"k{i:03d}": float(i) for i in range(100)},
        "nested (24 leaves)": {
            "params": [{"w": 1.0, "b": 2.0} for _ in range(6)],
            "opt": (
                Point(1.0, 2.0),
                [3.0, 4.0],
                None,
                {"lr": 0.1, "step": 1, "m": [5.0, 6.0, 7.0, 8.0]},
            ),
            "extra": (0.0,) * 2,
        },
    }


def time_us(fn, number: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean time per call (µs) of ``number`` calls."""
    times = timeit.repeat(fn, number=number, repeat=repeats)
    return statistics.median(times) / number * 1e6


def bench(tree, backend: str, repeats: int) -> tuple[float, float]:
    with tu._use_backend(backend):
        flatten, unflatten = tu.tree_flatten, tu.tree_unflatten
        leaves, treedef = flatten(tree)
        assert unflatten(treedef, leaves) == tree
        n_leaves = max(len(leaves), 1)
        number = max(200, 200_000 // n_leaves)
        t_flat = time_us(lambda: flatten(tree), number, repeats)
        t_unflat = time_us(lambda: unflatten(treedef, leaves), number, repeats)
    return t_flat, t_unflat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()

    backends = tu.available_backends()
    print(f"active backend: {tu.BACKEND}; measuring: {', '.join(backends)}")
    if "cpp" not in backends:
        print("(jaxlib C++ pytree unavailable: python backend only)")
    header = f"{'tree':<26} {'backend':<7} {'flatten µs':>11} {'unflatten µs':>13} {'total µs':>9}"
    print(header)
    print("-" * len(header))
    for name, tree in make_trees().items():
        results = {b: bench(tree, b, args.repeats) for b in backends}
        for b, (f, u) in results.items():
            print(f"{name:<26} {b:<7} {f:>11.2f} {u:>13.2f} {f + u:>9.2f}")
        if "cpp" in results:
            (cf, cu), (pf, pu) = results["cpp"], results["python"]
            print(
                f"{'':<26} {'speedup':<7} {pf / cf:>10.1f}x {pu / cu:>12.1f}x {(pf + pu) / (cf + cu):>8.1f}x"
            )


if __name__ == "__main__":
    main()
