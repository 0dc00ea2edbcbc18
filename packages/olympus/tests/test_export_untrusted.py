"""Serialized exports across processes, and malformed ones.

* Round trip: one fresh process exports and serializes, another deserializes and calls.
* Fuzz: serialized exports mutated (truncated, bytes flipped in the flatbuffer and in the
  StableHLO payload, a wrong serialization or calling-convention version, a wrong
  platform, a bad dtype code, a bad offset), each case in its own process with a
  timeout. Every case must end in the process's normal exit: a clean Python exception
  (the expected one, for the targeted cases) or, for random flips that land in bytes
  that do not matter (names, locations), a successful call. A crash or a hang fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from olympus.export._flatbuffer_reader import root_table

TIMEOUT = 120

EXPORT_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import olympus, olympus.numpy as jnp
    from olympus import export
    f = olympus.jit(lambda x, y: (jnp.sin(x) * y, {"a": x + 1}))
    exp = export.export(f)(olympus.ShapeDtypeStruct((3,), np.float32), np.float32(2))
    open(sys.argv[1], "wb").write(exp.serialize(vjp_order=1))
""")

CALL_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import olympus
    from olympus import export
    blob = open(sys.argv[1], "rb").read()
    cases = json.loads(sys.argv[2])
    x = np.array([0.5, 1.0, 2.0], np.float32)
    results = []
    for case in cases:
        b = bytearray(blob)
        if "truncate" in case:
            b = b[:case["truncate"]]
        for pos, val in case.get("set", []):
            b[pos] = val
        try:
            exp = export.deserialize(b)
            out = np.asarray(exp.call(x, np.float32(2))[0]).tolist()
            g = None
            if not case:  # the unmutated blob: also its gradient (the serialized VJP)
                g = olympus.grad(lambda v: exp.call(v, np.float32(2))[0].sum())(x)
                g = np.asarray(g).tolist()
            results.append(["ok", [out, g]])
        except Exception as e:
            results.append([type(e).__name__, str(e)[:300]])
    print(json.dumps(results))
""")


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, errors="replace", timeout=TIMEOUT, env=env)


@pytest.fixture(scope="module")
def blob_path(tmp_path_factory):
    """Exported and serialized in a fresh process."""
    path = tmp_path_factory.mktemp("export") / "f.bin"
    proc = _run(EXPORT_SCRIPT, str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return path


def _call(blob_path, cases):
    proc = _run(CALL_SCRIPT, str(blob_path), json.dumps(cases))
    assert proc.returncode == 0, f"process died ({proc.returncode}): {proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_round_trip_across_processes(blob_path):
    [(status, (out, grad))] = _call(blob_path, [{}])
    assert status == "ok"
    x = np.array([0.5, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(out, np.sin(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(grad, np.cos(x) * 2, rtol=1e-6)


def _field_pos(blob: bytes, slot: int, size: int) -> int:
    t = root_table(blob, "Exported")
    pos = t._field(slot, size)
    assert pos is not None
    return pos


def _replace_strings(blob: bytes, old: bytes, new: bytes) -> list:
    """Byte edits replacing every occurrence of `old` (the primal's and its VJP's)."""
    assert len(old) == len(new)
    edits, i = [], blob.find(old)
    while i >= 0:
        edits += [[i + k, new[k]] for k in range(len(new))]
        i = blob.find(old, i + 1)
    assert edits
    return edits


def test_targeted_mutations(blob_path):
    blob = blob_path.read_bytes()
    version = _field_pos(blob, 0, 2)
    ccv = _field_pos(blob, 14, 2)
    root = int.from_bytes(blob[:4], "little")
    module = blob.index(b"ML\xefR")
    cases = {
        "truncated to 6 bytes": ({"truncate": 6}, "FlatbufferError"),
        "truncated in half": ({"truncate": len(blob) // 2}, "FlatbufferError"),
        "serialization version 99": ({"set": [[version, 99], [version + 1, 0]]},
                                     "ValueError"),
        "calling convention 42": ({"set": [[ccv, 42], [ccv + 1, 0]]}, "ValueError"),
        "platform tpu": ({"set": _replace_strings(blob, b"\x03\x00\x00\x00cpu",
                                                 b"\x03\x00\x00\x00tpu")}, "ValueError"),
        "root offset past the end": ({"set": [[0, 0xff], [1, 0xff], [2, 0], [3, 0]]},
                                     "FlatbufferError"),
        "vtable offset garbage": ({"set": [[root, 0x7f], [root + 1, 0x7f]]},
                                  "FlatbufferError"),
        "StableHLO magic broken": ({"set": [[module + 1, 0]]}, "ValueError"),
    }
    results = _call(blob_path, [c for c, _ in cases.values()])
    for (name, (_, want)), (status, detail) in zip(cases.items(), results):
        assert status == want, f"{name}: {status}: {detail}"
    assert "Function '<lambda>' was exported for platforms '('tpu',)'" in results[4][1]
    assert "serialization version 99" in results[2][1]
    assert "calling convention version 42" in results[3][1]


@pytest.mark.parametrize("seed", range(2))
def test_random_mutations_never_crash(blob_path, seed):
    """Random truncations and byte flips, anywhere or in the StableHLO payload: each ends
    in a Python exception or a call (flips in names and locations change nothing)."""
    blob = blob_path.read_bytes()
    rng = np.random.default_rng(seed)
    module = blob.index(b"ML\xefR")
    cases = []
    for _ in range(30):
        kind = rng.integers(3)
        if kind == 0:
            cases.append({"truncate": int(rng.integers(len(blob)))})
        elif kind == 1:
            cases.append({"set": [[int(rng.integers(len(blob))), int(rng.integers(256))]
                                  for _ in range(int(rng.integers(1, 6)))]})
        else:
            cases.append({"set": [[module + int(rng.integers(300)), int(rng.integers(256))]]})
    results = _call(blob_path, cases)
    assert len(results) == len(cases)
    statuses = {status for status, _ in results}
    assert statuses <= {"ok", "FlatbufferError", "ValueError", "NotImplementedError",
                        "TypeError"}, statuses


def test_shared_subtrees_are_bounded():
    """Offsets can make a small buffer describe a huge tree (every level's children all
    pointing at one table: 2**40 nodes in a few hundred bytes). Reading fails on the
    visit budget instead of running forever."""
    import itertools

    import flatbuffers

    from olympus.export import _serialization

    b = flatbuffers.Builder(0)
    b.StartObject(5)
    node = b.EndObject()  # a leaf
    for _ in range(40):
        b.StartVector(4, 2, 4)
        b.PrependUOffsetTRelative(node)
        b.PrependUOffsetTRelative(node)
        children = b.EndVector()
        b.StartObject(5)
        b.PrependInt8Slot(0, 2, 0)  # tuple
        b.PrependUOffsetTRelativeSlot(1, children, 0)
        node = b.EndObject()
    b.Finish(node)
    buf = bytes(b.Output())
    assert len(buf) < 1000
    with pytest.raises(ValueError, match="too many nested tables"):
        _serialization._read_treedef(root_table(buf, "PyTreeDef"), itertools.repeat(0.0))


# -- symbolic dimensions: mutated dimension texts ----------------------------------------

SYMBOLIC_SCRIPT = textwrap.dedent("""
    import dataclasses, json, sys, types
    import numpy as np
    import olympus, olympus.numpy as jnp
    from olympus import export
    exp = export.export(olympus.jit(lambda x: jnp.sin(x) * 2))(
        olympus.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32))
    f32 = np.dtype(np.float32)
    results = []
    for where, text in json.loads(sys.argv[1]):
        aval = types.SimpleNamespace(shape=(text, 4), dtype=f32, weak_type=False)
        fake = dataclasses.replace(exp, **{where: (aval,)})
        outs = []
        try:
            d = export.deserialize(fake.serialize())
            for n in (3, 6):
                x = np.linspace(-1, 1, 4 * n, dtype=np.float32).reshape(n, 4)
                try:
                    y = np.asarray(d.call(x))
                    outs.append(["ok", bool(y.shape == x.shape and
                                            np.allclose(y, np.sin(x) * 2, rtol=1e-6))])
                except Exception as e:
                    outs.append([type(e).__name__, str(e)[:200]])
        except Exception as e:
            outs.append([type(e).__name__, str(e)[:200]])
        results.append(outs)
    print(json.dumps(results))
""")

_CLEAN = {"ValueError", "TypeError", "NotImplementedError", "InconclusiveDimensionOperation",
          "UnexpectedDimVar", "FlatbufferError"}


def _mutated_dims(rng, n: int) -> list[str]:
    base = ["b", "2*b", "b + 15", "mod(b, 3)", "max(b, 4)", "floordiv(b, 2)", "b^2",
            "b - 1", "3*b*c"]
    alphabet = list("bc0123456789+-*^(),_. ") + ["mod", "max", "min", "floordiv", "..."]
    fixed = ["", "   ", "-1", "9" * 30, "b^99999", "2^4000", "b,b", "...", "_", "é", "\x00b",
             "(" * 300 + "b" + ")" * 300, "max(" * 100 + "b" + ", 1)" * 100,
             "mod(b, 0)", "floordiv(b, 0)", "b - 2^62", "0*b", "b^0", "2^62*b"]
    out = list(fixed)
    while len(out) < n:
        s = list(base[int(rng.integers(len(base)))])
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(len(s) + 1))
            op = int(rng.integers(3))
            tok = alphabet[int(rng.integers(len(alphabet)))]
            if op == 0 and s:
                del s[min(i, len(s) - 1)]
            elif op == 1:
                s.insert(i, tok)
            elif s:
                s[min(i, len(s) - 1)] = tok
        out.append("".join(s))
    return out


@pytest.mark.parametrize("seed", range(2))
def test_mutated_symbolic_dimensions_fail_cleanly(seed):
    """Serialized exports whose dimension texts (of the argument or of the result) are
    mutated: each deserializes and computes the right values, or ends in a Python
    exception of the expected kinds (never a crash, a hang, another exception type or a
    wrong answer)."""
    rng = np.random.default_rng(100 + seed)
    texts = _mutated_dims(rng, 60)
    cases = [["in_avals" if i % 2 == 0 else "out_avals", t] for i, t in enumerate(texts)]
    proc = _run(SYMBOLIC_SCRIPT, json.dumps(cases))
    assert proc.returncode == 0, f"process died ({proc.returncode}): {proc.stderr[-3000:]}"
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(results) == len(cases)
    for (where, text), outs in zip(cases, results):
        for status, detail in outs:
            if status == "ok":
                assert detail is True, f"{where} {text!r}: a wrong answer"
            else:
                assert status in _CLEAN, f"{where} {text!r}: {status}: {detail}"
    # The unmutated text and plain variants call; the nonsense is refused.
    assert any(s == "ok" for outs in results for s, _ in outs)
    assert any(s != "ok" for outs in results for s, _ in outs)
