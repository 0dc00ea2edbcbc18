"""The persistent compilation cache through the public API: ``olympus.config`` options,
the ``OLYMPUS_COMPILATION_CACHE_DIR`` environment variable, and
``olympus.experimental.compilation_cache.compilation_cache.set_cache_dir``/``reset_cache``.
(The cache's own behaviour is tested in olympus-runtime's test_persistent_cache.py.)"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus_runtime as rt
from olympus.experimental.compilation_cache import compilation_cache as cc
from olympus_runtime import persistent_cache

OPTIONS = {
    "olympus_compilation_cache_dir": None,
    "olympus_enable_compilation_cache": True,
    "olympus_persistent_cache_min_compile_time_secs": 1.0,
    "olympus_persistent_cache_min_entry_size_bytes": 0,
    "olympus_compilation_cache_max_size": -1,
}


@pytest.fixture
def restore_options():
    saved = {k: olympus.config.read(k) for k in OPTIONS}
    try:
        yield
    finally:
        for k, v in saved.items():
            olympus.config.update(k, v)
        cc.reset_cache()


def test_defaults_are_jaxs():
    """JAX 0.10.2's defaults (jax/_src/config.py): no directory, 1 s, 0 bytes, no cap."""
    if os.environ.get("OLYMPUS_COMPILATION_CACHE_DIR"):
        pytest.skip("the environment sets a cache directory")
    for name, value in OPTIONS.items():
        assert olympus.config.read(name) == value


def test_config_reaches_the_cache(tmp_path, restore_options):
    path = tmp_path / "a" / "cache"
    olympus.config.update("olympus_compilation_cache_dir", str(path))
    olympus.config.update("olympus_persistent_cache_min_compile_time_secs", 0)
    assert olympus.config.olympus_persistent_cache_min_compile_time_secs == 0.0
    assert persistent_cache.get_option("compilation_cache_dir") == str(path)

    def f(x):
        return jnp.cos(x) * 3.25  # a program no other test compiles

    assert np.allclose(olympus.jit(f)(jnp.arange(3.0)), np.cos(np.arange(3.0)) * 3.25)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700 and os.listdir(path)
    with pytest.raises(TypeError, match="olympus_compilation_cache_max_size must be an int"):
        olympus.config.update("olympus_compilation_cache_max_size", 1.5)


def test_set_cache_dir_and_reset_cache(tmp_path, restore_options):
    cc.set_cache_dir(tmp_path / "c")
    assert olympus.config.olympus_compilation_cache_dir == str(tmp_path / "c")
    cc.reset_cache()  # settings stay; the directory is made again on next use
    assert olympus.config.olympus_compilation_cache_dir == str(tmp_path / "c")
    olympus.config.update("olympus_persistent_cache_min_compile_time_secs", 0)
    rt.clear_cache()
    olympus.jit(lambda x: x * 7.5 + 1)(jnp.float32(2))
    assert os.listdir(tmp_path / "c")


_CHILD = """
import json
import olympus, olympus.numpy as jnp, olympus_runtime as rt
from olympus_runtime import persistent_cache
def step(w, x):
    return olympus.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
w, x = jnp.ones((8, 8)) / 8, jnp.ones((4, 8))
before = rt.compile_count()
g = olympus.jit(step)(w, x)
print(json.dumps({"g": g.tolist(), "compiles": rt.compile_count() - before,
                  "hits": persistent_cache.stats["hits"]}))
"""


def test_environment_variable_across_processes(tmp_path):
    env = dict(os.environ, OLYMPUS_COMPILATION_CACHE_DIR=str(tmp_path / "env"),
               OLYMPUS_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(_CHILD)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        outs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert outs[0]["compiles"] == 1 and outs[1]["compiles"] == 0 and outs[1]["hits"] >= 1
    assert outs[0]["g"] == outs[1]["g"]


_CALLBACK_CHILD = """
import json, sys
import numpy as np
import olympus, olympus.numpy as jnp, olympus_runtime as rt
from olympus_runtime import persistent_cache
olympus.config.update("olympus_compilation_cache_dir", sys.argv[1])
olympus.config.update("olympus_persistent_cache_min_compile_time_secs", 0)
seen = []
def f(x):
    olympus.debug.callback(lambda v: seen.append(np.asarray(v).tolist()), x)
    return x * 10 + 1
x = jnp.arange(3.0)
before = rt.compile_count()
y = olympus.jit(f)(x)
print(json.dumps({"y": y.tolist(), "seen": seen, "compiles": rt.compile_count() - before,
                  "hits": persistent_cache.stats["hits"]}))
"""


def test_cached_executable_gets_its_host_callbacks_again(tmp_path):
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(_CALLBACK_CHILD),
                            str(tmp_path / "cb")], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]  # a callback missing on load would crash
        outs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert outs[0]["compiles"] == 1 and outs[1]["compiles"] == 0 and outs[1]["hits"] >= 1
    for out in outs:
        assert out["y"] == [1.0, 11.0, 21.0] and out["seen"] == [[0.0, 1.0, 2.0]]
