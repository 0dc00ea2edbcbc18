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

from _common import load
from _workloads import EAGER_OPS, dispatch_calls, eager_chain

WARMUP = 50
CALLS = 1000  # dispatch-type loops
EAGER_CHAINS = 5


def workloads(lib, jnp) -> list[tuple[str, object, int]]:
    """(name, fn, units): ``fn()`` runs the loop body once and covers ``units`` units."""
    chain, _ = eager_chain(jnp)
    return [*((name, call, 1) for name, call in dispatch_calls(lib).items()),
            ("eager_op", chain, EAGER_OPS)]


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
