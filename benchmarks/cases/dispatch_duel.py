"""Steady-state jit dispatch, olympus against jax in one duel: both libraries run live in
two worker processes (`_duel_worker.py`) that take turns on short batches of the
`dispatch` workloads, so the two sides of each ratio are measured milliseconds apart
and the host's minute-scale speed drift cancels out. Reports, per workload, the median
over batch pairs of olympus time / jax time (lower is better for olympus).

It runs from the olympus side only (the jax run is reported as skipped); run.py passes
the reference interpreter in OLYMPUS_BENCH_JAX_PYTHON.
"""

import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import Skip, metric, run

WORKER = Path(__file__).resolve().parent / "_duel_worker.py"
PAIRS = 41
CALLS = {"scalar_add": 1000, "pytree20": 200, "args10_kwargs": 500}


def _start(python: str, lib: str) -> subprocess.Popen:
    proc = subprocess.Popen([python, str(WORKER), "--lib", lib], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.kill()
        raise RuntimeError(f"{lib} duel worker did not start (said {line!r})")
    return proc


def _time(proc: subprocess.Popen, name: str, n: int) -> float:
    proc.stdin.write(f"{name} {n}\n")
    return float(proc.stdout.readline())


def measure(lib, jnp):
    if lib != "olympus":
        raise Skip("the duel runs both libraries from the olympus side")
    jax_python = os.environ.get("OLYMPUS_BENCH_JAX_PYTHON")
    if not jax_python:
        raise Skip("OLYMPUS_BENCH_JAX_PYTHON is not set (run.py sets it)")
    procs = {"olympus": _start(sys.executable, "olympus"), "jax": _start(jax_python, "jax")}
    try:
        out = {}
        for name, n in CALLS.items():
            ratios = []
            for i in range(PAIRS):
                order = ("olympus", "jax") if i % 2 == 0 else ("jax", "olympus")
                t = {side: _time(procs[side], name, n) for side in order}
                ratios.append(t["olympus"] / t["jax"])
            out[f"{name}_ratio"] = metric(statistics.median(ratios), "olympus/jax",
                                          geomean=False)
        return out
    finally:
        for p in procs.values():
            p.stdin.close()
            p.wait(timeout=60)


if __name__ == "__main__":
    run(measure, needs_lib=False)
