"""Devices, the client, config states and plugin discovery."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run_python
from jaxlib import _jax

import olympus_runtime as ort
from olympus_ir import dtypes
from olympus_runtime import backend, config


def test_device_listing():
    devs = ort.devices()
    assert [d.id for d in devs] == [0, 1]
    assert all(d.platform == "cpu" for d in devs)
    assert ort.device_count() == 2
    assert ort.local_devices() == devs
    assert ort.local_device_count() == 2
    assert ort.default_backend() == "cpu"
    assert ort.default_device() is devs[0]
    assert repr(ort.default_device()) == "CpuDevice(id=0)"
    assert ort.process_index() == 0
    assert ort.devices("cpu") == devs


def test_client_is_created_once():
    assert ort.get_client() is ort.get_client()
    assert ort.get_client().platform == "cpu"


def test_unknown_backend():
    with pytest.raises(RuntimeError, match="Unknown backend 'gpu'"):
        ort.devices("gpu")


def test_num_cpu_devices_cannot_change_after_client():
    ort.get_client()
    config.set_num_cpu_devices(2)  # same value: fine
    with pytest.raises(RuntimeError, match="olympus_num_cpu_devices cannot be changed"):
        config.set_num_cpu_devices(3)
    with pytest.raises(ValueError, match="positive integer"):
        config.set_num_cpu_devices(0)


def test_num_cpu_devices_in_subprocess():
    r = run_python("""
        import json, numpy as np, olympus_runtime as ort
        ort.config.update("olympus_num_cpu_devices", 4)
        devs = ort.devices()
        # Put a value on every device and read it back.
        vals = [float(np.asarray(ort.device_put(np.float32(d.id * 10), d))) for d in devs]
        on = [ort.device_put(1.0, d).device.id for d in devs]
        print(json.dumps({"ids": [d.id for d in devs], "vals": vals, "on": on,
                          "count": ort.device_count()}))
    """)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == {"ids": [0, 1, 2, 3], "vals": [0.0, 10.0, 20.0, 30.0], "on": [0, 1, 2, 3],
                   "count": 4}


def test_num_cpu_devices_from_environment():
    r = run_python(
        "import olympus_runtime as ort; print(ort.device_count())",
        env={"OLYMPUS_NUM_CPU_DEVICES": "3"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3"


def test_num_cpu_devices_from_xla_flags():
    """JAX's CPU client honours ``--xla_force_host_platform_device_count`` in XLA_FLAGS
    when the device count is not configured (docs/notebooks/shard_map.md sets it this way;
    reference JAX 0.10.2 then reports 8 devices); OLYMPUS_NUM_CPU_DEVICES still wins."""
    flags = "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=5"
    r = run_python("import olympus_runtime as ort; print(ort.device_count())",
                   env={"XLA_FLAGS": flags})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "5"
    r = run_python("import olympus_runtime as ort; print(ort.device_count())",
                   env={"XLA_FLAGS": flags, "OLYMPUS_NUM_CPU_DEVICES": "2"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "2"


def test_client_creation_does_not_log_info():
    r = run_python("import olympus_runtime as ort; ort.devices()")
    assert r.returncode == 0, r.stderr
    assert "pjrt_client.cc" not in r.stderr


def test_x64_states_stay_in_sync():
    old = ort.x64_enabled()
    try:
        ort.set_x64(True)
        assert dtypes.is_x64_enabled() and config.enable_x64_state.value is True
        assert config.read("olympus_enable_x64") is True
        config.update("olympus_enable_x64", False)
        assert not dtypes.is_x64_enabled() and config.enable_x64_state.value is False
    finally:
        ort.set_x64(old)


def test_config_states_are_registered_with_jaxlib():
    # batched_device_put without enable_x64 reads the registered state; unset it raises.
    aval = ort.device_put(1.0).aval
    arr = _jax.batched_device_put(
        aval, ort.sharding_for(ort.default_device()), [np.float32(2.0)],
        [ort.default_device()], True, False,
        _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL,
    )
    assert float(arr) == 2.0
    assert config.disable_jit_state.value is False
    assert config.post_hook_state.value is None
    config.set_disable_jit(True)
    try:
        assert config.jit_disabled()
    finally:
        config.set_disable_jit(False)


def test_unknown_config_option():
    with pytest.raises(AttributeError, match="Unrecognized config option: olympus_nope"):
        config.update("olympus_nope", 1)


def test_discover_plugins_none(monkeypatch):
    monkeypatch.delenv("PJRT_NAMES_AND_LIBRARY_PATHS", raising=False)
    found = ort.discover_plugins()
    assert isinstance(found, list)
    assert all(isinstance(p, ort.PluginInfo) for p in found)


def test_discover_plugins_finds_without_importing(tmp_path):
    # A namespace-package plugin whose __init__ would fail if imported, plus an entry point.
    pkg = tmp_path / "olympus_plugins" / "fakegpu"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('plugin was imported')\n")
    (pkg / "pjrt_plugin_fake.so").write_bytes(b"")
    dist = tmp_path / "fake_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[jax_plugins]\nfake_ep = olympus_plugins.fakegpu\n"
    )
    r = run_python(
        f"""
        import sys, json
        sys.path.insert(0, {str(tmp_path)!r})
        import olympus_runtime as ort
        found = ort.discover_plugins()
        assert 'olympus_plugins.fakegpu' not in sys.modules
        print(json.dumps([[p.name, p.source, p.module, [x.rsplit('/', 1)[-1] for x in p.library_paths]]
                          for p in found]))
        """,
        env={"PJRT_NAMES_AND_LIBRARY_PATHS": "envplug:/opt/pjrt_env.so"},
    )
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout.strip().splitlines()[-1])
    assert ["fake_ep", "entry_point:jax_plugins", "olympus_plugins.fakegpu",
            ["pjrt_plugin_fake.so"]] in found
    assert ["fakegpu", "namespace:olympus_plugins", "olympus_plugins.fakegpu",
            ["pjrt_plugin_fake.so"]] in found
    assert ["envplug", "env:PJRT_NAMES_AND_LIBRARY_PATHS", None, ["pjrt_env.so"]] in found


def test_make_plugin_client_reports_missing_library(tmp_path):
    with pytest.raises(ort.XlaRuntimeError, match="Failed to open"):
        backend.make_plugin_client("olympus_test_missing", str(tmp_path / "nope.so"))


def test_local_devices_of_a_process_index_as_jax():
    """JAX's signature `local_devices(process_index=None, backend=None, host_id=None)`:
    the first positional argument is a process index (its multi-process page calls
    ``local_devices(process_index=1)``). Errors and the `host_id` warning as JAX 0.10.2
    words them (recorded from reference JAX, one process)."""
    import warnings

    from olympus_runtime import backend

    assert backend.local_devices(0) == backend.local_devices()
    assert backend.local_devices(backend="cpu") == backend.local_devices()
    for bad in (1, -1, True):
        with pytest.raises(ValueError, match=f"^Unknown process_index {bad}$"):
            backend.local_devices(bad)
    with pytest.raises(TypeError, match="'<=' not supported"):
        backend.local_devices("a")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert backend.local_devices(host_id=0) == backend.local_devices()
    assert "renamed from `host_id` to `process_index`" in str(w[0].message)
