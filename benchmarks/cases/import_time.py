"""Wall time of ``python -c "import <lib>"`` in a fresh interpreter (after one unmeasured run)."""

import statistics
import subprocess
import sys
import time

from _common import metric, run

RUNS = 5


def measure(lib_name, _jnp):
    cmd = [sys.executable, "-c", f"import {lib_name}"]
    subprocess.run(cmd, check=True)  # warm the OS file cache and the bytecode cache
    samples = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        samples.append(time.perf_counter() - t0)
    # The bare interpreter start-up, for reference (not in the geomean).
    base = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append(time.perf_counter() - t0)
    return {
        "import_ms": metric(statistics.median(samples) * 1e3, "ms"),
        "python_startup_ms": metric(statistics.median(base) * 1e3, "ms", geomean=False),
    }


if __name__ == "__main__":
    run(measure, needs_lib=False)
