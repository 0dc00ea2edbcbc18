"""`nox -s export_interop`: exchange serialized exports between reference JAX 0.10.2 and
Olympus, both ways, through files.

1. JAX (its own virtualenv, ``jax==0.10.2`` + ``flatbuffers``) exports every case of
   `cases` and records its results; 2. Olympus deserializes, calls and compares;
3. Olympus exports and records; 4. JAX deserializes, calls and compares. Each step is a
separate process (`side`), so jax and olympus are never imported together. Both checks
also re-serialize what they read and require the same bytes.

    python -m instruments.export_interop.runner [--jax-venv DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JAX_VERSION = "0.10.2"
REQUIREMENTS = [f"jax=={JAX_VERSION}", f"jaxlib=={JAX_VERSION}", "flatbuffers"]
DEFAULT_VENV = ROOT / ".nox" / "_export_interop_jax"
STEP_TIMEOUT = 900
_CHECK = ("import jax, flatbuffers; "
          f"assert jax.__version__ == {JAX_VERSION!r}, jax.__version__")


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def ensure_jax(venv: Path) -> str:
    """The python of a virtualenv with reference JAX and flatbuffers (created if needed)."""
    py = _python(venv)
    if py.exists() and subprocess.run([str(py), "-c", _CHECK],
                                      capture_output=True).returncode == 0:
        return str(py)
    print(f"[export_interop] creating the reference JAX virtualenv in {venv}", flush=True)
    base = getattr(sys, "_base_executable", sys.executable)
    if shutil.which("uv"):
        subprocess.run(["uv", "venv", "-q", "--python", base, str(venv)], check=True)
        subprocess.run(["uv", "pip", "install", "-q", "--python", str(py), *REQUIREMENTS],
                       check=True)
    else:
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", *REQUIREMENTS], check=True)
    subprocess.run([str(py), "-c", _CHECK], check=True)
    return str(py)


def _step(python: str, side: str, command: str, directory: Path) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run(
        [python, "-m", "instruments.export_interop.side", side, command, str(directory)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT)
    records = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            records.append(json.loads(line))
            print(f"  [{side} {command}] {line}", flush=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-6000:])
    if proc.returncode not in (0, 1) or (command == "export" and proc.returncode):
        raise RuntimeError(f"{side} {command} failed with exit code {proc.returncode}")
    return records


def _summary(records: list[dict]) -> tuple[int, int]:
    cases = [r for r in records if "case" in r]
    return sum(bool(r.get("ok")) for r in cases), len(cases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jax-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the exchanged files here (default: a temporary dir)")
    args = parser.parse_args(argv)
    jax_python = ensure_jax(args.jax_venv)
    with tempfile.TemporaryDirectory(prefix="export-interop-") as tmp:
        work = args.keep or Path(tmp)
        print("JAX exports, Olympus calls:", flush=True)
        _step(jax_python, "jax", "export", work / "from_jax")
        ok1, n1 = _summary(_step(sys.executable, "olympus", "check", work / "from_jax"))
        print("Olympus exports, JAX calls:", flush=True)
        _step(sys.executable, "olympus", "export", work / "from_olympus")
        ok2, n2 = _summary(_step(jax_python, "jax", "check", work / "from_olympus"))
    print(f"export interop: JAX -> Olympus {ok1}/{n1} functions, "
          f"Olympus -> JAX {ok2}/{n2} functions", flush=True)
    return 0 if ok1 == n1 and ok2 == n2 and n1 and n2 else 1


if __name__ == "__main__":
    sys.exit(main())
