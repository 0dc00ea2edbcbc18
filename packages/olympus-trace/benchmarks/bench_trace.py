"""Tracing cost per equation, and pytree flatten cost for a 100-leaf dict.

Not a test. Needs only olympus-ir and numpy (jaxlib optional: it adds the C++ pytree
backend to the pytree numbers). Run from the repo root:

    PYTHONPATH=packages/olympus-ir/src:packages/olympus-trace/src \\
        python packages/olympus-trace/benchmarks/bench_trace.py [--repeats 7] [--ops 1000]

Tracing: `make_olympuspr` of a function applying N elementwise ops to an f32[8] argument,
in three flavours:

* ``lax``:       ``lax_ops.add/mul/...`` (bind -> staging, no promotion logic);
* ``operators``: ``x * 1.5 + 2.0 ...`` on tracers (NumPy semantics: weak-type promotion,
                 broadcasting checks, then bind);
* ``mixed``:     array-array operators with a weak Python scalar operand that needs a
                 convert_element_type (two equations per op).

Reports the median over repeats of total time / number of recorded equations (µs/eqn),
which includes flattening arguments, `DebugInfo`, and building the ClosedOlympuspr.

Pytrees: median µs per ``tree_flatten`` / ``tree_unflatten`` / round trip of a dict with
100 float leaves, through the public ``olympus_trace.tree_util`` API, for each available
backend.
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit

import numpy as np

from olympus_trace import lax_ops as lax
from olympus_trace import make_olympuspr
from olympus_trace import tree_util as tu


def chain_lax(n: int):
    ops = (lax.add, lax.mul, lax.sub, lax.max)

    def fun(x, y):
        for i in range(n):
            x = ops[i % 4](x, y)
        return x

    return fun


def chain_operators(n: int):
    def fun(x, y):
        for i in range(n):
            k = i % 4
            if k == 0:
                x = x * 1.5
            elif k == 1:
                x = x + y
            elif k == 2:
                x = x - 2.0
            else:
                x = -x
        return x

    return fun


def chain_mixed(n: int):
    def fun(x, y):
        for _ in range(n // 2):
            x = x + y  # f32[8] + weak f32[] argument: convert_element_type + add
        return x

    return fun


def time_trace(fun, args, repeats: int) -> tuple[float, int]:
    """(median µs per recorded equation, number of equations)."""
    closed = make_olympuspr(fun)(*args)  # warm-up (imports, caches)
    neqns = len(closed.eqns)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        make_olympuspr(fun)(*args)
        samples.append((time.perf_counter() - t0) / neqns * 1e6)
    return statistics.median(samples), neqns


def bench_tracing(n: int, repeats: int) -> None:
    x = np.ones(8, np.float32)
    cases = {
        "lax": (chain_lax(n), (x, x)),
        "operators": (chain_operators(n), (x, x)),
        "mixed": (chain_mixed(n), (x, 1.0)),
    }
    print(f"tracing: make_olympuspr of {n} elementwise ops on f32[8], median of {repeats}")
    print(f"{'flavour':<10} {'eqns':>6} {'µs/eqn':>8} {'ms total':>9}")
    for name, (fun, args) in cases.items():
        us, neqns = time_trace(fun, args, repeats)
        print(f"{name:<10} {neqns:>6} {us:>8.2f} {us * neqns / 1e3:>9.2f}")


def bench_pytree(repeats: int) -> None:
    tree = {f"k{i:03d}": float(i) for i in range(100)}
    number = 2000
    print(f"\npytree: 100-leaf dict {{k000: 0.0, ...}}, median of {repeats} x {number} calls")
    print(f"{'backend':<8} {'flatten µs':>11} {'unflatten µs':>13} {'round trip µs':>14}")
    for backend in tu.available_backends():
        with tu._use_backend(backend):
            leaves, treedef = tu.tree_flatten(tree)
            assert tu.tree_unflatten(treedef, leaves) == tree

            def roundtrip():
                lv, td = tu.tree_flatten(tree)
                return tu.tree_unflatten(td, lv)

            res = []
            def unflatten(treedef=treedef, leaves=leaves):
                return tu.tree_unflatten(treedef, leaves)

            for fn in (lambda: tu.tree_flatten(tree), unflatten, roundtrip):
                times = timeit.repeat(fn, number=number, repeat=repeats)
                res.append(statistics.median(times) / number * 1e6)
        print(f"{backend:<8} {res[0]:>11.2f} {res[1]:>13.2f} {res[2]:>14.2f}")
    if "cpp" not in tu.available_backends():
        print("(jaxlib C++ pytree backend unavailable: python backend only)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--ops", type=int, default=1000)
    args = ap.parse_args()
    bench_tracing(args.ops, args.repeats)
    bench_pytree(args.repeats)


if __name__ == "__main__":
    main()
