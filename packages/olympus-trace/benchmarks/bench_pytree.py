"""Pytree flatten/unflatten cost: jaxlib C++ backend vs pure-Python backend.

Not a test.  Run from the repo root:

    PYTHONPATH=packages/olympus-ir/src:packages/olympus-trace/src \
        python packages/olympus-trace/benchmarks/bench_pytree.py [--repeats 15]

Prints median microseconds per call for each tree and backend:

* ``flatten``: ``registry.flatten(tree)``;
* ``unflatten``: ``treedef.unflatten(leaves)`` with a reused treedef (the jit
  output case; the Python backend compiles reused treedefs);
* ``flat+unflat``: flatten, then unflatten the fresh treedef (what ``tree_map``
  does).
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


def _ops(tree, backend: str) -> dict[str, object]:
    """Zero-argument callables for each measured operation on ``backend``."""
    reg = tu._BACKENDS[backend].registry
    leaves, treedef = reg.flatten(tree)
    assert treedef.unflatten(leaves) == tree

    def roundtrip():  # what tree_map does: flatten, then unflatten the fresh treedef
        lv, td = reg.flatten(tree)
        return td.unflatten(lv)

    return {
        "flatten": lambda: reg.flatten(tree),
        "unflatten": lambda: treedef.unflatten(leaves),  # reused treedef (e.g. jit outputs)
        "roundtrip": roundtrip,
    }


def bench(tree, backends: tuple[str, ...], repeats: int) -> dict[str, dict[str, float]]:
    """Median µs per call for each backend and operation.

    Backends and operations are interleaved within every repeat so that load
    changes on a busy machine hit all of them alike.
    """
    n_leaves = max(len(tu._BACKENDS[backends[0]].registry.flatten(tree)[0]), 1)
    number = max(200, 100_000 // n_leaves)
    ops = {b: _ops(tree, b) for b in backends}
    samples: dict[str, dict[str, list[float]]] = {b: {op: [] for op in ops[b]} for b in backends}
    for _ in range(repeats):
        for b in backends:
            for op, fn in ops[b].items():
                samples[b][op].append(timeit.timeit(fn, number=number) / number * 1e6)
    return {b: {op: statistics.median(v) for op, v in d.items()} for b, d in samples.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=21)
    args = ap.parse_args()

    backends = tu.available_backends()
    print(
        f"active backend: {tu.BACKEND}; measuring: {', '.join(backends)}; "
        f"median of {args.repeats} interleaved repeats, µs per call"
    )
    if "cpp" not in backends:
        print("(jaxlib C++ pytree unavailable: python backend only)")
    header = f"{'tree':<26} {'backend':<8} {'flatten':>9} {'unflatten':>10} {'flat+unflat':>12}"
    print(header)
    print("-" * len(header))
    for name, tree in make_trees().items():
        res = bench(tree, backends, args.repeats)
        for b in backends:
            r = res[b]
            print(
                f"{name:<26} {b:<8} {r['flatten']:>9.2f} {r['unflatten']:>10.2f} {r['roundtrip']:>12.2f}"
            )
        if "cpp" in res:
            c, p = res["cpp"], res["python"]
            print(
                f"{'':<26} {'py/cpp':<8} {p['flatten'] / c['flatten']:>8.1f}x "
                f"{p['unflatten'] / c['unflatten']:>9.1f}x {p['roundtrip'] / c['roundtrip']:>11.1f}x"
            )


if __name__ == "__main__":
    main()
