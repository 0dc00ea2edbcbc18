"""`Compiled.save` / `olympus.stages.load_compiled` / `Compiled.cache_key`.

A loaded Compiled must behave as the original: same outputs, pytree calling convention,
argument errors, donation, weak types, analyses. Files from another environment, damaged
or forged files must fail with a ValueError before jaxlib sees them; the fuzz cases run
in subprocesses with a timeout so that a crash would be caught, not suffered.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus_runtime as rt
from olympus.stages import Compiled, load_compiled
from olympus_runtime import serialized
from olympus_trace import tree_util

Params = collections.namedtuple("Params", "w b")


def model(p, x, *, scale):
    y = jnp.tanh(x @ p.w + p.b) * scale
    return {"y": y, "total": jnp.sum(y)}, 2


def args():
    p = Params(jnp.asarray(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)),
               jnp.asarray(np.array([0.5, -0.5], np.float32)))
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3) / 6)
    return p, x


def assert_same_tree(a, b):
    la, ta = tree_util.tree_flatten(a)
    lb, tb = tree_util.tree_flatten(b)
    assert ta == tb
    for u, v in zip(la, lb, strict=True):
        assert u.dtype == v.dtype and u.weak_type == v.weak_type
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))


def hlo_lines(text):
    """The optimized HLO's lines without source metadata (its stack-frame tables are
    renumbered when the executable is deserialized)."""
    return [re.sub(r", metadata=\{[^}]*\}", "", line) for line in text.splitlines()
            if not re.match(r"\d+ ", line)]


def test_round_trip_in_process(tmp_path):
    p, x = args()
    c = olympus.jit(model).lower(p, x, scale=2.0).compile()
    path = tmp_path / "model.olympus"
    c.save(path)
    before = rt.compile_count()
    loaded = load_compiled(path)
    assert isinstance(loaded, Compiled) and rt.compile_count() == before
    assert_same_tree(loaded(p, x, scale=2.0), c(p, x, scale=2.0))
    out, two = loaded(p, x, scale=3.0)  # scale is a (weak-typed) argument, not static
    want = 1.5 * np.asarray(c(p, x, scale=2.0)[0]["y"])
    np.testing.assert_allclose(np.asarray(out["y"]), want, rtol=1e-6)
    assert two.weak_type and int(two) == 2
    assert loaded.args_info == c.args_info and loaded.out_info == c.out_info
    assert loaded.in_tree == c.in_tree and loaded.out_tree == c.out_tree
    assert loaded.cost_analysis()["flops"] == c.cost_analysis()["flops"]
    assert hlo_lines(loaded.as_text()) == hlo_lines(c.as_text())
    assert loaded.cache_key == c.cache_key and len(c.cache_key) == 64


def test_argument_errors_match_the_original(tmp_path):
    p, x = args()
    c = olympus.jit(model).lower(p, x, scale=2.0).compile()
    c.save(tmp_path / "m")
    loaded = load_compiled(tmp_path / "m")
    bad_calls = [
        lambda f: f(p, x.astype(jnp.int32), scale=2.0),  # wrong dtype
        lambda f: f(p, x[:1], scale=2.0),  # wrong shape
        lambda f: f((p.w, p.b), x, scale=2.0),  # wrong pytree
        lambda f: f(p, x),  # missing keyword
    ]
    for call in bad_calls:
        with pytest.raises(TypeError) as want:
            call(c)
        with pytest.raises(TypeError) as got:
            call(loaded)
        assert str(got.value) == str(want.value)
    with pytest.raises(TypeError, match="Cannot apply OLYMPUS transformations"):
        olympus.jit(lambda x: loaded(p, x, scale=2.0))(x)


def test_donation_and_kept_arguments(tmp_path):
    def step(x, unused):
        return x * 2

    x = jnp.arange(4.0)
    c = olympus.jit(step, donate_argnums=0).lower(x, 1.0).compile()
    c.save(tmp_path / "s")
    loaded = load_compiled(tmp_path / "s")
    assert loaded.args_info[0][0].donated and not loaded.args_info[0][1].donated
    y = jnp.arange(4.0)
    assert loaded(y, 5.0).tolist() == [0, 2, 4, 6]
    assert y.is_deleted()  # donated, as with the original
    with pytest.raises(RuntimeError, match="deleted"):
        loaded(y, 5.0)


def test_hoisted_constants_are_saved(tmp_path):
    table = np.linspace(0, 1, 300_000, dtype=np.float32)  # over the 1 MiB hoisting threshold

    def lookup(x):
        return x + jnp.asarray(table)

    lowered = olympus.jit(lookup).lower(jnp.float32(1))
    assert lowered._lowered.hoisted_consts  # the case under test
    lowered.compile().save(tmp_path / "h")
    out = load_compiled(tmp_path / "h")(jnp.float32(1))
    np.testing.assert_array_equal(np.asarray(out), table + 1)


def test_unsavable_and_unloadable_structures(tmp_path):
    class Local(tuple):
        pass

    tree_util.register_pytree_node(Local, lambda t: (tuple(t), None),
                                   lambda _, c: Local(c))
    c = olympus.jit(lambda t: t[0] + 1).lower(Local((jnp.float32(1),))).compile()
    with pytest.raises(ValueError, match="defined inside a function"):
        c.save(tmp_path / "x")

    def printing(x):
        olympus.debug.print("{}", x)
        return x

    with pytest.raises(ValueError, match="host callbacks"):
        olympus.jit(printing).lower(1.0).compile().save(tmp_path / "y")
    assert not os.path.exists(tmp_path / "x") and not os.path.exists(tmp_path / "y")


def _rewrite(path, edit):
    """Apply `edit(header, sections)` to a saved file, with a valid hash (a forged file)."""
    header, sections = serialized.unpack(path.read_bytes(), "olympus-compiled", "f")
    del header["sections"]
    edit(header, sections)
    path.write_bytes(serialized.pack("olympus-compiled", header, list(sections.items())))


def test_foreign_files_are_refused_naming_the_difference(tmp_path):
    p, x = args()
    olympus.jit(model).lower(p, x, scale=2.0).compile().save(tmp_path / "m")
    good = (tmp_path / "m").read_bytes()
    cases = {
        "jaxlib version '0.4.1'": {"jaxlib_version": "0.4.1"},
        "backend 'cuda'": {"backend": "cuda"},
        "device kind 'TPU v4'": {"device_kind": "TPU v4"},
        "device count 8": {"device_count": 8},
    }
    for message, change in cases.items():
        (tmp_path / "m").write_bytes(good)
        _rewrite(tmp_path / "m",
                 lambda h, s, change=change: h["executable"]["environment"].update(change))
        with pytest.raises(ValueError, match=f"made for another environment: {message}"):
            load_compiled(tmp_path / "m")


# ----------------------------------------------------------------- across processes

_SCRIPT = """
import collections, json, sys
import numpy as np
import olympus, olympus.numpy as jnp, olympus_runtime as rt
from olympus.stages import load_compiled
Params = collections.namedtuple("Params", "w b")
p = Params(jnp.asarray(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)),
           jnp.asarray(np.array([0.5, -0.5], np.float32)))
x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3) / 6)
def model(p, x, *, scale):
    y = jnp.tanh(x @ p.w + p.b) * scale
    return {"y": y, "total": jnp.sum(y)}, 2
before = rt.compile_count()
if sys.argv[1] == "save":
    c = olympus.jit(model).lower(p, x, scale=2.0).compile()
    c.save(sys.argv[2])
    out = c(p, x, scale=2.0)
else:
    try:
        c = load_compiled(sys.argv[2])
    except ValueError as e:
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
        raise SystemExit(0)
    out = c(p, x, scale=2.0)
print(json.dumps({"y": np.asarray(out[0]["y"]).tolist(), "total": float(out[0]["total"]),
                  "two": int(out[1]), "compiles": rt.compile_count() - before}))
"""


def _run_all(jobs, timeout=120):
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_SCRIPT), *job],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for job in jobs]
    outs = []
    try:
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, f"child died with {proc.returncode}: {stderr[-2000:]}"
            outs.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return outs


def test_save_in_one_process_load_in_another(tmp_path):
    path = str(tmp_path / "m")
    (saved,) = _run_all([("save", path)])
    (loaded,) = _run_all([("load", path)])
    assert saved["compiles"] >= 1 and loaded["compiles"] == 0
    assert loaded["y"] == saved["y"] and loaded["total"] == saved["total"]
    assert loaded["two"] == 2


def test_fuzzed_files_raise_cleanly(tmp_path):
    path = tmp_path / "m"
    _run_all([("save", str(path))])
    good = path.read_bytes()
    rng = np.random.default_rng(1)
    flipped = bytearray(good)
    for i in rng.integers(0, len(good), 8):
        flipped[i] ^= 0x5A

    def forged(edit):
        (tmp_path / "f").write_bytes(good)
        _rewrite(tmp_path / "f", edit)
        return (tmp_path / "f").read_bytes()

    cases = {
        "empty": (b"", "truncated"),
        "truncated": (good[: len(good) // 3], "truncated"),
        "flipped": (bytes(flipped), "damaged|truncated|magic|version|holds"),
        "version": (good[:24] + (7).to_bytes(4, "big") + good[28:], "format version 7"),
        "kind": (serialized.pack("cache-entry", {}, []), "holds a 'cache-entry'"),
        "platform": (forged(lambda h, s: h["executable"]["environment"].update(
            backend="tpu")), "backend 'tpu'"),
        "device count": (forged(lambda h, s: h["executable"]["environment"].update(
            device_count=2)), "device count 2"),
        "garbage executable": (forged(lambda h, s: s.update(executable=b"\x12\x03abc" * 40)),
                               "jaxlib cannot load the executable"),
        "wrong types": (forged(lambda h, s: h["call"]["in_avals"][0].__setitem__(0, [9, 9])),
                        "do not match the executable"),
        "unknown node": (forged(lambda h, s: h["call"]["in_tree"][1][0][1][0].__setitem__(
            1, "no_such_module:Thing")), "node type no_such_module:Thing"),
        "call version": (forged(lambda h, s: h["call"].update(version=5)),
                         "calling-convention version 5"),
    }
    jobs = []
    for name, (data, _) in cases.items():
        f = tmp_path / name.replace(" ", "_")
        f.write_bytes(data)
        jobs.append(("load", str(f)))
    for (name, (_, message)), out in zip(cases.items(), _run_all(jobs), strict=True):
        assert out.get("error") in ("ValueError", "SerializedFormatError"), (name, out)
        assert re.search(message, out["message"]), (name, out["message"])
