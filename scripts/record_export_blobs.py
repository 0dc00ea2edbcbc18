#!/usr/bin/env python
"""Record serialized exports made by reference JAX 0.10.2 into
``packages/olympus/tests/data/export/`` (``<name>.bin``) with the arguments, JAX's results
and gradients, and JAX's ``Exported`` fields (``expected.json``), so the default test
session checks JAX -> Olympus deserialization without JAX installed.

Run with a python that has jax 0.10.2 and flatbuffers (never one with olympus), e.g. the
virtualenv `nox -s export_interop` builds::

    .nox/_export_interop_jax/bin/python scripts/record_export_blobs.py
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

OUT = Path(__file__).resolve().parent.parent / "packages/olympus/tests/data/export"
Point = collections.namedtuple("Point", ["x", "y"])
export.register_namedtuple_serialization(Point, serialized_name="olympus_tests.Point")


def _tolist(tree):
    return [np.asarray(x).tolist() for x in jax.tree_util.tree_leaves(tree)]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    x4 = np.linspace(-1, 1, 4, dtype=np.float32)
    spd = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]], np.float32)
    cases = {
        # name: (function, args, kwargs, platforms, vjp_order)
        "sin": (jnp.sin, (x4,), {}, None, 1),
        "pytree": (lambda t, *, s: {"b": [t["a"] * s, None], "a": (t["c"][0] + 1.0,)},
                   ({"a": x4, "c": [np.float32(2.5)]},), {"s": np.float32(3)}, None, 0),
        "multi_platform": (lambda x: jnp.cos(x) * 2.0, (x4,), {}, ("cpu", "cuda", "tpu"), 0),
        "unused_int": (lambda x, unused, k: (x * k, k + 1),
                       (x4, np.arange(2, dtype=np.int32), np.int32(3)), {}, None, 1),
        "namedtuple": (lambda p: Point(p.y, p.x * p.y), (Point(x4, x4 + 1.0),), {}, None, 1),
        "cuda_only": (jnp.sin, (x4,), {}, ("cuda",), 0),
        "cholesky": (jnp.linalg.cholesky, (spd,), {}, None, 0),
    }
    expected = {}
    for name, (fun, args, kwargs, platforms, vjp_order) in cases.items():
        exp = export.export(jax.jit(fun), platforms=platforms)(*args, **kwargs)
        blob = bytes(exp.serialize(vjp_order=vjp_order))
        (OUT / f"{name}.bin").write_bytes(blob)
        rec = {
            "args": _tolist((args, kwargs)),
            "arg_dtypes": [str(np.asarray(a).dtype) for a in jax.tree_util.tree_leaves(
                (args, kwargs))],
            "fun_name": exp.fun_name, "in_tree": str(exp.in_tree),
            "out_tree": str(exp.out_tree),
            "in_avals": [str(a) for a in exp.in_avals],
            "out_avals": [str(a) for a in exp.out_avals],
            "platforms": list(exp.platforms), "nr_devices": exp.nr_devices,
            "module_kept_var_idx": list(exp.module_kept_var_idx),
            "uses_global_constants": exp.uses_global_constants,
            "calling_convention_version": exp.calling_convention_version,
            "vjp_order": vjp_order,
        }
        if "cpu" in exp.platforms:
            rec["outputs"] = _tolist(exp.call(*args, **kwargs))
        if vjp_order:
            def loss(a0, exp=exp, args=args, kwargs=kwargs):
                outs = jax.tree_util.tree_leaves(exp.call(a0, *args[1:], **kwargs))
                return sum(o.sum() for o in outs if jnp.issubdtype(o.dtype, jnp.floating))

            rec["grad"] = _tolist(jax.grad(loss)(args[0]))
        expected[name] = rec
        print(name, len(blob), "bytes")
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
