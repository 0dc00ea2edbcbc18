"""CPU instructions per call (thousands), counted by valgrind's callgrind: the dispatch.py
workloads (scalar f32 add, dict of 20 arrays, 10 positional + 2 keyword arguments) and
eager.py's op chain (per op). Deterministic, unlike the wall-clock rows, so run.py runs
this case in the first round only. All threads are counted, including the runtime's.

The work happens in `_instructions_worker.py`, run under callgrind with a dump at every
``os.getppid()``; see there for which dump holds which loop.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import Skip, metric, run

RUN_ONCE = True  # read by run.py: the counts do not change between rounds
TIMEOUT = 900  # read by run.py: seconds for this case (callgrind runs ~50x slower)

WORKER = Path(__file__).resolve().parent / "_instructions_worker.py"
MAX_GAP = 100_000  # instructions between two loops' marks; more means a stray getppid call


def _instructions(dump: Path) -> int:
    text = dump.read_text()
    m = re.search(r"^summary:\s*(\d+)", text, re.M) or re.search(r"^totals:\s*(\d+)", text,
                                                                  re.M)
    if not m:
        raise RuntimeError(f"no summary/totals line in {dump.name}")
    return int(m.group(1))


def measure(lib, jnp):
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise Skip("valgrind not found")
    with tempfile.TemporaryDirectory(prefix="olympus-bench-cg-") as tmp:
        out = Path(tmp) / "cg.out"
        cmd = [valgrind, "--tool=callgrind", "--dump-before=getppid",
               f"--callgrind-out-file={out}", sys.executable, str(WORKER), "--lib", lib]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              cwd=WORKER.parent, timeout=TIMEOUT - 60)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"callgrind run failed (exit {proc.returncode}): {tail}")
        loads = json.loads(lines[-1])["workloads"]
        # Dump 1: start-up; dump 2k: loop k; dump 2k+1: the gap after it; the rest of the
        # run goes to cg.out itself. Any other getppid caller would add dumps.
        dumps = list(Path(tmp).glob("cg.out.*"))
        if len(dumps) != 2 * len(loads):
            raise RuntimeError(f"{len(dumps)} callgrind dumps for {len(loads)} loops (expected "
                               f"{2 * len(loads)}): something else called getppid")
        counts = {}
        for k, w in enumerate(loads, start=1):
            loop = _instructions(Path(f"{out}.{2 * k}"))
            gap_file = Path(f"{out}.{2 * k + 1}")
            if k < len(loads) and _instructions(gap_file) > MAX_GAP:
                raise RuntimeError(f"dump {gap_file.name} is {_instructions(gap_file)} "
                                   "instructions, not a gap between marks: something else "
                                   "called getppid")
            counts[w["name"]] = (loop, w["units"])
    return {f"{name}_kinstr": metric(loop / units / 1e3, "k instr", geomean=False)
            for name, (loop, units) in counts.items()}


if __name__ == "__main__":
    run(measure, needs_lib=False)
