#!/usr/bin/env python
"""Record shape-polymorphic exports serialized by reference JAX 0.10.2 into
``packages/olympus/tests/data/export_poly/`` (``<name>.bin``) with, per case, the
symbolic avals JAX prints, the results and gradients of calls at two sizes, and the
errors JAX raises for bad calls (``expected.json``), so the default test session checks
JAX -> Olympus symbolic exports without JAX installed.

Run with a python that has jax 0.10.2 and flatbuffers (never one with olympus), e.g. the
virtualenv `nox -s export_interop` builds::

    .nox/_export_interop_jax/bin/python scripts/record_export_poly_blobs.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

OUT = Path(__file__).resolve().parent.parent / "packages/olympus/tests/data/export_poly"


def _tolist(tree):
    return [np.asarray(x).tolist() for x in jax.tree_util.tree_leaves(tree)]


def _f32(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    cases = {
        # name: (function, shapes_specs, constraints, args of each size, bad calls, vjp)
        "poly_sin": (lambda x: jnp.sin(x) * 2.0, ["b, 4"], (),
                     {n: (_f32(n, n, 4),) for n in (2, 5)},
                     {"zero_batch": (np.zeros((0, 4), np.float32),),
                      "wrong_constant": (np.zeros((3, 5), np.float32),),
                      "wrong_rank": (np.zeros((3,), np.float32),)}, 1),
        "poly_constraint": (lambda x: x[:2] + x[-2:], ["b, 3"], ("b >= 2",),
                            {n: (_f32(n, n, 3),) for n in (2, 6)},
                            {"constraint": (np.zeros((1, 3), np.float32),)}, 0),
        "poly_two_args": (lambda x, y: (x @ y, x.T * 2.0), ["a, b", "b"], (),
                          {n: (_f32(n, n, n + 1), _f32(n + 10, n + 1)) for n in (1, 3)},
                          {"inconsistent": (np.zeros((2, 3), np.float32),
                                            np.zeros((4,), np.float32))}, 1),
    }
    expected = {}
    for name, (fun, specs, constraints, calls, bad, vjp_order) in cases.items():
        first = next(iter(calls.values()))
        arg_specs = export.symbolic_args_specs(first, specs, constraints=constraints)
        exp = export.export(jax.jit(fun))(*arg_specs)
        blob = bytes(exp.serialize(vjp_order=vjp_order))
        (OUT / f"{name}.bin").write_bytes(blob)
        loaded = export.deserialize(bytearray(blob))
        rec = {
            "fun_name": exp.fun_name,
            "in_avals": [str(a) for a in loaded.in_avals],
            "out_avals": [str(a) for a in loaded.out_avals],
            "in_avals_repr": repr(loaded.in_avals),
            "module_kept_var_idx": list(loaded.module_kept_var_idx),
            "uses_global_constants": loaded.uses_global_constants,
            "vjp_order": vjp_order, "calls": {}, "errors": {},
        }
        for n, args in calls.items():
            call = {"args": _tolist(args), "outputs": _tolist(loaded.call(*args))}
            if vjp_order:
                def loss(a0, args=args, loaded=loaded):
                    outs = jax.tree_util.tree_leaves(loaded.call(a0, *args[1:]))
                    return sum(o.sum() for o in outs)

                call["grad"] = _tolist(jax.grad(loss)(args[0]))
            rec["calls"][str(n)] = call
        for what, args in bad.items():
            try:
                loaded.call(*args)
            except Exception as e:  # noqa: BLE001 - the recorded outcome
                rec["errors"][what] = {"shapes": [list(a.shape) for a in args],
                                       "type": type(e).__name__, "message": str(e)}
            else:
                raise AssertionError(f"{name}: {what} did not fail")
        expected[name] = rec
        print(name, len(blob), "bytes")
    expected["modules"] = _modules()
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


def strip_locations(text: str) -> str:
    """Module text without its location attributes and ``#loc`` lines (the test strips
    Olympus's text the same way)."""
    text = re.sub(r" loc\([^()]*(\([^()]*\))?[^()]*\)", "", text)
    return "\n".join(line for line in text.splitlines() if not line.startswith("#loc"))


def _modules() -> dict:
    """JAX's ``mlir_module()`` text, locations stripped, of a few symbolic exports: the
    calling convention (dimension arguments, shape assertions, platform index) and, for
    nested calls, the symbol names."""
    f32 = np.float32

    def spec(s, **kw):
        return jax.ShapeDtypeStruct(export.symbolic_shape(s, **kw), f32)

    def sin2(x):
        return jnp.sin(x) * 2.0

    a, b = export.symbolic_shape("a, b")
    inner = export.export(jax.jit(sin2))(spec("b, 4"))

    def nested_jit(x):
        return jax.jit(lambda y: jnp.cos(y) + y.shape[0])(x) * 3.0

    exps = {
        "sin": export.export(jax.jit(sin2))(spec("b, 4")),
        "multi_platform": export.export(jax.jit(sin2), platforms=("cpu", "cuda"))(
            spec("b, 4")),
        "two_args": export.export(jax.jit(lambda x, y: (x @ y, x.T)))(
            jax.ShapeDtypeStruct((a, b), f32), jax.ShapeDtypeStruct((b,), f32)),
        "constraints": export.export(jax.jit(lambda x: x.sum()))(
            spec("b, 4*b, c", constraints=["b >= 16", "c <= b"])),
        "unused_arg": export.export(jax.jit(lambda x, y: x))(
            spec("b"), jax.ShapeDtypeStruct((3,), f32)),
        "nested_export": export.export(jax.jit(lambda y: inner.call(y).sum(axis=0)))(
            spec("c, 4")),
        "nested_jit": export.export(jax.jit(nested_jit))(spec("b, 4")),
        "nested_jit_multi_platform": export.export(
            jax.jit(nested_jit), platforms=("cpu", "cuda"))(spec("b, 4")),
        "nested_jit_static_multi_platform": export.export(
            jax.jit(nested_jit), platforms=("cpu", "cuda"))(
                jax.ShapeDtypeStruct((2, 4), f32)),
    }
    return {k: strip_locations(e.mlir_module()) for k, e in exps.items()}


if __name__ == "__main__":
    main()
