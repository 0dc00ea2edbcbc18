"""One side of the export exchange, run as its own process by `runner`:

    python -m instruments.export_interop.side {jax|olympus} export DIR
    python -m instruments.export_interop.side {jax|olympus} check DIR

``export`` exports every case of `cases`, writes ``DIR/<case>.bin`` (the serialized
Exported, with one order of VJP for the gradient cases) and ``DIR/<case>.npz`` (the
results of calling the Exported, and the gradient). ``check`` deserializes each blob,
calls it on the same arguments (regenerated from the case's seed), and compares results
and gradients with the recorded ones; it also re-serializes the deserialized Exported and
checks the bytes are unchanged. It prints one JSON line per case and a summary line, and
exits 1 if any case failed. Exactly one of jax / olympus is imported in a process.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
import zlib
from pathlib import Path

import numpy as np

from .cases import PAIR_NAME, Pair, cases, flat_float_sum


def _namespace(which: str):
    ns = importlib.import_module(which)
    importlib.import_module(f"{which}.export")
    importlib.import_module(f"{which}.numpy")
    importlib.import_module(f"{which}.lax")
    ns.export.register_namedtuple_serialization(Pair, serialized_name=PAIR_NAME)
    return ns


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def _leaves(ns, tree) -> list[np.ndarray]:
    return [np.asarray(x) for x in ns.tree_util.tree_leaves(tree)]


def _grad(ns, exp, args, kwargs):
    def loss(a0):
        return flat_float_sum(ns, exp.call(a0, *args[1:], **kwargs))

    return ns.grad(loss)(args[0])


def _calls(case, name: str) -> list[tuple[str, tuple, dict]]:
    """(prefix of the recorded arrays, args, kwargs) of each call the exchange compares:
    one, or one per size of a shape-polymorphic case."""
    if case.poly is None:
        return [("", *case.args(_rng(name)))]
    return [(f"n{n}_", *case.args(_rng(f"{name}/{n}"), n)) for n in case.sizes]


def export(ns, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, case in cases().items():
        calls = _calls(case, name)
        args, kwargs = calls[0][1:]
        specs = args
        if case.poly is not None:
            specs = ns.export.symbolic_args_specs(args, list(case.poly),
                                                  constraints=case.constraints)
        exp = ns.export.export(ns.jit(case.fun(ns)), platforms=case.platforms)(*specs, **kwargs)
        (out / f"{name}.bin").write_bytes(bytes(exp.serialize(vjp_order=1 if case.grad else 0)))
        arrays = {}
        for prefix, args, kwargs in calls:
            arrays.update({f"{prefix}out{i}": x
                           for i, x in enumerate(_leaves(ns, exp.call(*args, **kwargs)))})
            if case.grad:
                arrays.update({f"{prefix}grad{i}": g for i, g in
                               enumerate(_leaves(ns, _grad(ns, exp, args, kwargs)))})
        np.savez(out / f"{name}.npz", **arrays)
        print(json.dumps({"case": name, "exported": True,
                          "in_avals": [str(a) for a in exp.in_avals]}), flush=True)


def _compare(got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    if len(got) != len(want):
        raise AssertionError(f"{what}: {len(got)} leaves, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g.dtype != w.dtype or g.shape != w.shape:
            raise AssertionError(f"{what}[{i}]: {g.dtype}{list(g.shape)}, expected "
                                 f"{w.dtype}{list(w.shape)}")
        if np.issubdtype(w.dtype, np.inexact):
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                       rtol=2e-5, atol=2e-6, err_msg=f"{what}[{i}]")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{what}[{i}]")


def check(ns, src: Path) -> int:
    failed = 0
    table = cases()
    blobs = sorted(src.glob("*.bin"))
    for path in blobs:
        name = path.stem
        record = {"case": name}
        try:
            case = table[name]
            blob = path.read_bytes()
            exp = ns.export.deserialize(bytearray(blob))
            recorded = np.load(src / f"{name}.npz")
            for prefix, args, kwargs in _calls(case, name):
                if exp.in_tree != ns.tree_util.tree_structure((args, kwargs)):
                    raise AssertionError(f"in_tree {exp.in_tree} does not match the arguments")
                outs = _leaves(ns, exp.call(*args, **kwargs))
                _compare(outs, [recorded[f"{prefix}out{i}"] for i in range(len(outs))],
                         f"{prefix}outputs")
                if case.grad:
                    grads = _leaves(ns, _grad(ns, exp, args, kwargs))
                    _compare(grads, [recorded[f"{prefix}grad{i}"] for i in range(len(grads))],
                             f"{prefix}grad")
            if case.poly is not None:
                record["in_avals"] = [str(a) for a in exp.in_avals]
            again = bytes(exp.serialize(vjp_order=1 if case.grad else 0))
            record["same_bytes"] = again == blob
            if not record["same_bytes"]:
                raise AssertionError("re-serializing the deserialized Exported changed the "
                                     f"bytes ({len(again)} vs {len(blob)})")
            record["ok"] = True
        except Exception as e:  # report every case, then fail
            failed += 1
            record["ok"] = False
            record["error"] = f"{type(e).__name__}: {e}"
            traceback.print_exc(file=sys.stderr)
        print(json.dumps(record), flush=True)
    print(json.dumps({"summary": True, "checked": len(blobs), "failed": failed}), flush=True)
    return 1 if failed or not blobs else 0


def main(argv: list[str]) -> int:
    which, command, directory = argv
    ns = _namespace(which)
    if command == "export":
        export(ns, Path(directory))
        return 0
    return check(ns, Path(directory))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
