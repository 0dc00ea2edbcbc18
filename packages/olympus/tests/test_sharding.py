"""Sharding over several devices: the multi-device checks run in their own process.

The CPU client's device count is fixed per process, so `multidevice/check_sharding_8dev.py`
runs under ``OLYMPUS_NUM_CPU_DEVICES=8`` in a child pytest (bounded in time); this test
passes when all of those pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_sharding_on_8_devices():
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="8")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         str(HERE / "multidevice" / "check_sharding_8dev.py")],
        capture_output=True, text=True, env=env, timeout=900, cwd=HERE)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and " failed" not in r.stdout
