"""Fixtures for the olympus-lower tests.

The CPU client, the sharding subclass and the compile/execute helpers live in
`_lower_util` (so tests can import them); this file exposes them as fixtures and
provides `x64`, which turns on 64-bit types for one test and restores the old setting.
"""

from __future__ import annotations

import sys

import pytest
from _lower_util import _Cpu, execute, run

from olympus_ir import dtypes


@pytest.fixture(scope="session")
def cpu():
    """The shared PJRT CPU client wrapper (``.client``, ``.device``, ``.sharding``)."""
    return _Cpu.get()


@pytest.fixture
def x64():
    """Enable x64 in olympus_ir for the duration of a test (and pass enable_x64=True
    to device puts through `execute`)."""
    old = dtypes.is_x64_enabled()
    dtypes.config.set_x64(True)
    try:
        yield True
    finally:
        dtypes.config.set_x64(old)


@pytest.fixture
def run_fn(cpu):
    return run


@pytest.fixture
def execute_fn(cpu):
    return execute


@pytest.fixture(scope="session")
def lapack_targets():
    """Register jaxlib's LAPACK kernels with XLA once per process (what
    `olympus_runtime.custom_calls.register_lapack_targets` does; not importable here)."""
    rt = sys.modules.get("olympus_runtime.custom_calls")
    if rt is not None and getattr(rt, "_registered", False):
        return
    import jaxlib.lapack as lapack
    import jaxlib.xla_client as xc

    for name, fn, api in lapack.registrations()["cpu"]:
        xc.register_custom_call_target(name, fn, platform="cpu", api_version=api)
    lapack._lapack.initialize()
