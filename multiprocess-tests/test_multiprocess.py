"""A sharded training step over 2 OS processes x 2 CPU devices (loopback, a free port,
every process killed on timeout) gives the single-process losses and parameters."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WORKER = str(HERE / "train_worker.py")
TIMEOUT = 240


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = dict(os.environ)
    env.pop("OLYMPUS_NUM_CPU_DEVICES", None)
    return env


def _run_all(cmds: list[list[str]]) -> None:
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=_env()) for c in cmds]
    deadline = time.monotonic() + TIMEOUT
    try:
        outputs = []
        for p in procs:
            left = max(deadline - time.monotonic(), 1)
            out, _ = p.communicate(timeout=left)
            outputs.append(out)
    finally:
        for p in procs:  # whatever happened, nothing we started outlives the test
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, out in zip(procs, outputs, strict=True):
        assert p.returncode == 0, out[-4000:]


def test_two_processes_train_like_one(tmp_path):
    single = tmp_path / "single.json"
    multi = tmp_path / "multi.json"
    _run_all([[sys.executable, WORKER, str(single), "single"]])
    address = f"127.0.0.1:{_free_port()}"
    _run_all([[sys.executable, WORKER, str(multi), address, "2", str(pid)] for pid in (0, 1)])
    want = json.loads(single.read_text())
    got = json.loads(multi.read_text())
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    assert want["losses"][2] < want["losses"][0]  # it trains
    for k in want["params"]:
        np.testing.assert_allclose(got["params"][k], want["params"][k], rtol=1e-5, atol=1e-6)
