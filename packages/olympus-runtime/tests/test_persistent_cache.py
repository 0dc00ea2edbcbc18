"""The persistent compilation cache: keys, entries, misses on damage, eviction, processes.

Cross-process cases run in fresh interpreters (`run_python`, or `_run_all` to run many
at once, each with a timeout): a crash there is a failed test, not a crashed suite.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import HERE

import olympus_runtime as ort
from olympus_ir import ShapedArray
from olympus_runtime import persistent_cache as pc
from olympus_runtime import serialized

AVAL = ShapedArray((3,), np.float32)


def module_text(k: float = 1.0) -> str:
    return f"""module @cached {{
  func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {{
    %c = stablehlo.constant dense<{k:.1f}> : tensor<3xf32>
    %0 = stablehlo.add %a, %c : tensor<3xf32>
    return %0 : tensor<3xf32>
  }}
}}"""


@pytest.fixture
def cache_dir(tmp_path):
    """A fresh cache directory with no minimum compile time; settings restored after."""
    saved = dict(pc._options)
    path = tmp_path / "cache"
    pc.set_option("compilation_cache_dir", str(path))
    pc.set_option("persistent_cache_min_compile_time_secs", 0)
    ort.clear_cache()
    try:
        yield path
    finally:
        for k, v in saved.items():
            pc.set_option(k, v)
        ort.clear_cache()


def run(text: str, x=(1.0, 2.0, 3.0)) -> list:
    exe = ort.compile(text, in_avals=[AVAL], out_avals=[AVAL])
    return exe([ort.device_put(np.array(x, np.float32))])[0].tolist()


def entries(path) -> list:
    return sorted(p for p in os.listdir(path) if p.endswith(pc.ENTRY_SUFFIX))


def test_store_then_hit_without_compiling(cache_dir):
    before = ort.compile_count()
    assert run(module_text(1)) == [2, 3, 4]
    assert ort.compile_count() == before + 1
    assert len(entries(cache_dir)) == 1
    assert stat.S_IMODE(os.stat(cache_dir).st_mode) == 0o700
    ort.clear_cache()  # forget the in-memory executable: the next one comes from disk
    hits = pc.stats["hits"]
    assert run(module_text(1)) == [2, 3, 4]
    assert ort.compile_count() == before + 1 and pc.stats["hits"] == hits + 1
    exe = ort.compile(module_text(1), in_avals=[AVAL], out_avals=[AVAL])
    assert exe.cache_key == entries(cache_dir)[0].removesuffix(pc.ENTRY_SUFFIX)


def test_key_depends_on_program_options_and_devices(cache_dir):
    def key(text, **kw):
        return ort.compile(text, in_avals=[AVAL], out_avals=[AVAL], **kw).cache_key

    k = key(module_text(1))
    assert len(k) == 64 and k == key(module_text(1))
    assert k != key(module_text(2))
    assert k != key(module_text(1), options={"xla_cpu_enable_fast_math": True})
    assert k != key(module_text(1), devices=[ort.devices()[1]])
    env = serialized.environment(ort.devices()[:1])
    assert pc.cache_key("f", [1], env) != pc.cache_key("f", [1], {**env, "jaxlib_version": "0"})


def test_thresholds_and_switches(cache_dir):
    pc.set_option("persistent_cache_min_compile_time_secs", 1000.0)
    run(module_text(3))
    assert entries(cache_dir) == []  # compiled too fast to be worth a file
    pc.set_option("persistent_cache_min_compile_time_secs", 0)
    pc.set_option("persistent_cache_min_entry_size_bytes", 1 << 40)
    ort.clear_cache()
    run(module_text(3))
    assert entries(cache_dir) == []  # too small
    pc.set_option("persistent_cache_min_entry_size_bytes", 0)
    pc.set_option("enable_compilation_cache", False)
    ort.clear_cache()
    run(module_text(3))
    assert entries(cache_dir) == []
    pc.set_option("enable_compilation_cache", True)
    pc.set_option("compilation_cache_max_size", 0)  # JAX: 0 turns caching off
    ort.clear_cache()
    run(module_text(3))
    assert entries(cache_dir) == []
    with pytest.raises(TypeError, match="olympus_persistent_cache_min_compile_time_secs"):
        pc.set_option("persistent_cache_min_compile_time_secs", "1")
    with pytest.raises(TypeError, match="must be a path"):
        pc.set_option("compilation_cache_dir", 3)
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        pc.set_option("no_such_option", 1)


def test_lru_eviction_keeps_recently_used(cache_dir):
    run(module_text(1))
    (first,) = entries(cache_dir)
    size = os.path.getsize(cache_dir / first)
    os.utime(cache_dir / first, ns=(1, 1))  # long ago ...
    ort.clear_cache()
    run(module_text(1))  # ... but a hit refreshes it
    run(module_text(2))
    second = [e for e in entries(cache_dir) if e != first][0]
    os.utime(cache_dir / second, ns=(1, 1))  # now the second is the least recently used
    pc.set_option("compilation_cache_max_size", 2 * size + size // 2)
    run(module_text(4))  # the third entry pushes the total over the cap
    left = entries(cache_dir)
    assert first in left and second not in left and len(left) == 2


def test_damaged_entry_is_a_miss_with_a_warning(cache_dir):
    run(module_text(5))
    (name,) = entries(cache_dir)
    path = cache_dir / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    ort.clear_cache()
    before = ort.compile_count()
    with pytest.warns(UserWarning, match="Error reading persistent compilation cache entry "
                      "for 'main': SerializedFormatError: .*truncated"):
        assert run(module_text(5)) == [6, 7, 8]
    assert ort.compile_count() == before + 1
    serialized.unpack(path.read_bytes(), "cache-entry", "rewritten entry")  # whole again


def test_unusable_directory_warns_and_compiles(tmp_path, cache_dir):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    pc.set_option("compilation_cache_dir", str(blocker / "sub"))
    with pytest.warns(UserWarning, match="Cannot use persistent compilation cache directory"):
        assert run(module_text(6)) == [7, 8, 9]


def test_container_checks():
    good = serialized.pack("cache-entry", {"a": 1}, [("executable", b"xyz")])
    header, sections = serialized.unpack(good, "cache-entry", "entry")
    assert header["a"] == 1 and sections == {"executable": b"xyz"}
    bad = {
        "truncated": good[:-1],
        "trailing bytes": good + b"\0",
        "bad magic": b"X" + good[1:],
        "not a 'cache-entry'": serialized.pack("olympus-compiled", {}, []),
        "format version 2": good[:24] + (2).to_bytes(4, "big") + good[28:],
        "sha256 does not match": good[:-1] + b"Z",
        "shorter than": b"",
    }
    for message, data in bad.items():
        with pytest.raises(serialized.SerializedFormatError, match=message):
            serialized.unpack(data, "cache-entry", "entry")
    env = {"jaxlib_version": "0.10.2", "backend": "cpu", "platform_version": "cpu",
           "device_kind": "cpu", "device_count": 1}
    with pytest.raises(serialized.SerializedFormatError,
                       match=r"backend 'tpu' \(this process has 'cpu'\); device count 8"):
        serialized.check_environment({**env, "backend": "tpu", "device_count": 8}, env, "x")


# ----------------------------------------------------------------- across processes

_CHILD = """
import sys, warnings, json
import numpy as np
import olympus_runtime as ort
from olympus_ir import ShapedArray
from olympus_runtime import persistent_cache as pc
pc.set_option("compilation_cache_dir", sys.argv[1])
pc.set_option("persistent_cache_min_compile_time_secs", 0)
aval = ShapedArray((3,), np.float32)
results = []
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    for k in map(float, sys.argv[2].split(",")):
        text = {module!r}.replace("KCONST", f"{{k:.1f}}")
        exe = ort.compile(text, in_avals=[aval], out_avals=[aval])
        results.append(exe([ort.device_put(np.array([1, 2, 3], np.float32))])[0].tolist())
print(json.dumps({{"results": results, "compiles": ort.compile_count(), "stats": pc.stats,
                  "warnings": [str(x.message) for x in w]}}))
""".format(module=module_text(0).replace("0.0", "KCONST"))


def _start(cache: str, ks: str) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *sys.path[1:], env.get("PYTHONPATH", "")])
    env.pop("OLYMPUS_NUM_CPU_DEVICES", None)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(_CHILD), cache, ks],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _run_all(jobs: list[tuple[str, str]], timeout: float = 120) -> list[dict]:
    """Run the children at once; each must exit cleanly in time (a crash fails here)."""
    import json

    procs = [_start(c, k) for c, k in jobs]
    out = []
    try:
        for p in procs:
            stdout, stderr = p.communicate(timeout=timeout)
            assert p.returncode == 0, f"child died with {p.returncode}: {stderr[-2000:]}"
            out.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return out


def test_fill_in_one_process_hit_in_another(tmp_path):
    cache = str(tmp_path / "c")
    (first,) = _run_all([(cache, "1,2")])
    assert first["results"] == [[2, 3, 4], [3, 4, 5]] and first["compiles"] == 2
    (second,) = _run_all([(cache, "1,2")])
    assert second["results"] == first["results"]
    assert second["compiles"] == 0 and second["stats"]["hits"] == 2


def test_concurrent_writers_corrupt_nothing(tmp_path):
    cache = str(tmp_path / "c")
    ks = ",".join(str(k) for k in range(1, 9))
    outs = _run_all([(cache, ks), (cache, ks)])  # both fill the same 8 keys at once
    want = [[1 + k, 2 + k, 3 + k] for k in range(1, 9)]
    assert all(o["results"] == want and not o["warnings"] for o in outs)
    assert not [f for f in os.listdir(cache) if f.startswith(".tmp-")]
    (after,) = _run_all([(cache, ks)])
    assert after["results"] == want and after["compiles"] == 0 and not after["warnings"]


def test_fuzzed_entries_are_misses_never_crashes(tmp_path):
    seed = tmp_path / "seed"
    _run_all([(str(seed), "7")])
    (name,) = entries(seed)
    good = (seed / name).read_bytes()
    header, sections = serialized.unpack(good, "cache-entry", "seed")
    del header["sections"]

    def repack(**env_changes):
        h = {**header, "environment": {**header["environment"], **env_changes}}
        return serialized.pack("cache-entry", h, list(sections.items()))

    rng = np.random.default_rng(0)
    flipped = bytearray(good)
    for i in rng.integers(0, len(good), 8):
        flipped[i] ^= 0xFF
    cases = {
        "empty": b"",
        "truncated prefix": good[:30],
        "truncated payload": good[: len(good) - 100],
        "flipped bytes": bytes(flipped),
        "wrong version": good[:24] + (99).to_bytes(4, "big") + good[28:],
        "wrong platform": repack(backend="tpu"),
        "wrong device count": repack(device_count=4),
        "wrong jaxlib": repack(jaxlib_version="0.0.1"),
        "garbage executable": serialized.pack(
            "cache-entry", header, [("executable", b"\x08\x01garbage" * 50)]),
    }
    jobs = []
    for label, data in cases.items():
        d = tmp_path / label.replace(" ", "_")
        d.mkdir(mode=0o700)
        (d / name).write_bytes(data)
        jobs.append((str(d), "7"))
    outs = _run_all(jobs)
    for label, out in zip(cases, outs, strict=True):
        assert out["results"] == [[8, 9, 10]], label
        assert out["compiles"] == 1 and out["stats"]["errors"] == 1, label
        assert out["stats"]["hits"] == 0, label
        assert any("Error reading persistent compilation cache entry" in w
                   for w in out["warnings"]), label
