"""Shared test setup: two virtual CPU devices, and the MLIR helpers on sys.path."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import olympus_runtime  # noqa: E402

# Must happen before anything creates the client; two devices let tests move data.
olympus_runtime.config.set_num_cpu_devices(2)


@pytest.fixture
def x64():
    """Turn x64 on for one test and restore the previous setting afterwards."""
    old = olympus_runtime.x64_enabled()
    olympus_runtime.set_x64(True)
    try:
        yield
    finally:
        olympus_runtime.set_x64(old)


def run_python(code: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (the tests' sys.path included)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), *sys.path[1:], full_env.get("PYTHONPATH", "")]
    )
    full_env.pop("OLYMPUS_NUM_CPU_DEVICES", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=full_env, timeout=timeout,
    )
