"""Cold start: time to the first result of the MLP training step in a new process.

Three ways, each in fresh processes (median of RUNS):

* ``scratch``: trace, lower and compile (no persistent cache);
* ``warm_cache``: the same with the persistent compilation cache already filled by an
  earlier process (``<lib>_compilation_cache_dir``, minimum compile time 0);
* ``load_compiled`` (Olympus only): ``olympus.stages.load_compiled`` of a file an earlier
  process wrote with ``Compiled.save``; no tracing, lowering or compiling. JAX has no
  equivalent, so its row holds JAX's warm-cache time: the comparison asked for is against
  JAX's own persistent cache.

``*_process_ms`` is the child's wall time (interpreter start, import, data, first result).
Inside the child, from after the inputs exist: ``*_ready_ms`` to a ready ``Compiled``
(``jit(step).lower(...).compile()``, or ``load_compiled``), the part a cache or a saved
executable can shorten, and ``*_first_result_ms`` to the first result (the first run of
any XLA CPU executable, compiled or loaded, costs ~150 ms more than later runs).
``load_compiled_speedup_x`` is scratch's ready time over load_compiled's.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _common import metric, note, run

RUNS = 3
TIMEOUT = 900
HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = """
import sys, time
sys.path.insert(0, {here!r})
import importlib
lib_name, mode, path = sys.argv[1:4]
lib = importlib.import_module(lib_name)
jnp = importlib.import_module(lib_name + ".numpy")
from _mlp import init, make_step
if mode in ("fill", "warm_cache"):
    lib.config.update(lib_name + "_compilation_cache_dir", path)
    lib.config.update(lib_name + "_persistent_cache_min_compile_time_secs", 0)
params, batch = init(jnp)
lib.block_until_ready(params)
t0 = time.perf_counter()
if mode == "load_compiled":
    from olympus.stages import load_compiled
    compiled = load_compiled(path)
else:
    compiled = lib.jit(make_step(lib, jnp)).lower(params, batch).compile()
    if mode == "save":
        compiled.save(path)
t1 = time.perf_counter()
lib.block_until_ready(compiled(params, batch))
print(t1 - t0, time.perf_counter() - t0)
"""


def child(lib_name: str, mode: str, path: str) -> tuple[float, float, float]:
    """(wall seconds of the process, in-process seconds to a ready Compiled and to the
    first result)."""
    code = CHILD.format(here=HERE)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code, lib_name, mode, path],
                       capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{mode} child failed: {r.stderr[-1500:]}")
    ready, first = map(float, r.stdout.strip().splitlines()[-1].split())
    return wall, ready, first


def median_of(lib_name: str, mode: str, path: str) -> tuple[float, ...]:
    samples = [child(lib_name, mode, path) for _ in range(RUNS)]
    return tuple(statistics.median(s[i] for s in samples) for i in range(3))


def measure(lib_name, _jnp):
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        child(lib_name, "scratch", "")  # warm the OS file cache and bytecode caches
        results = {"scratch": median_of(lib_name, "scratch", "")}
        child(lib_name, "fill", cache)
        results["warm_cache"] = median_of(lib_name, "warm_cache", cache)
        if lib_name == "olympus":
            saved = os.path.join(tmp, "step.olympus")
            child(lib_name, "save", saved)
            results["load_compiled"] = median_of(lib_name, "load_compiled", saved)
        else:
            results["load_compiled"] = results["warm_cache"]
            note("load_compiled: JAX has none; this row is JAX's warm persistent cache")
    metrics = {}
    for mode, (wall, ready, first) in results.items():
        metrics[f"{mode}_process_ms"] = metric(1e3 * wall, "ms")
        metrics[f"{mode}_ready_ms"] = metric(1e3 * ready, "ms", geomean=False)
        metrics[f"{mode}_first_result_ms"] = metric(1e3 * first, "ms", geomean=False)
    metrics["load_compiled_speedup_x"] = metric(  # a ready Compiled: loaded vs compiled
        results["scratch"][1] / results["load_compiled"][1], "x", better="higher")
    note(json.dumps({k: [round(1e3 * v, 1) for v in vals] for k, vals in results.items()}))
    return metrics


if __name__ == "__main__":
    run(measure, needs_lib=False)
