"""Exports serialized by reference JAX 0.10.2, deserialized and called by Olympus without
JAX installed.

The blobs, their arguments, JAX's results, gradients and ``Exported`` fields were recorded
by ``scripts/record_export_blobs.py`` running reference JAX in its own virtualenv
(``data/export/expected.json``); the shape-polymorphic ones (``data/export_poly``, with
the errors JAX raised for bad calls) by ``scripts/record_export_poly_blobs.py``. The full two-way exchange is `nox -s export_interop`.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import numpy as np
import pytest

import olympus
from olympus import export

DATA = Path(__file__).parent / "data" / "export"
EXPECTED = json.loads((DATA / "expected.json").read_text())
Point = collections.namedtuple("Point", ["x", "y"])


def _register_point():
    from olympus.export._exported import deserialization_registry

    if "olympus_tests.Point" not in deserialization_registry:
        export.register_namedtuple_serialization(Point, serialized_name="olympus_tests.Point")


def _args(name):
    """The recorded (args, kwargs) rebuilt in the exported structure."""
    rec = EXPECTED[name]
    leaves = [np.asarray(v, dtype=d) for v, d in zip(rec["args"], rec["arg_dtypes"])]
    exp = _load(name)
    return olympus.tree_util.tree_unflatten(exp.in_tree, leaves)


def _load(name):
    _register_point()
    return export.deserialize(bytearray((DATA / f"{name}.bin").read_bytes()))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fields_match_jax(name):
    rec = EXPECTED[name]
    exp = _load(name)
    assert exp.fun_name == rec["fun_name"]
    assert [str(a) for a in exp.in_avals] == rec["in_avals"]
    assert [str(a) for a in exp.out_avals] == rec["out_avals"]
    assert list(exp.platforms) == rec["platforms"]
    assert exp.nr_devices == rec["nr_devices"]
    assert list(exp.module_kept_var_idx) == rec["module_kept_var_idx"]
    assert exp.uses_global_constants == rec["uses_global_constants"]
    assert exp.calling_convention_version == rec["calling_convention_version"]
    assert exp.has_vjp() == bool(rec["vjp_order"])
    assert exp.in_shardings_hlo == (None,) * len(exp.in_avals)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_reserialization_gives_jax_bytes(name):
    blob = (DATA / f"{name}.bin").read_bytes()
    assert bytes(_load(name).serialize(vjp_order=EXPECTED[name]["vjp_order"])) == blob


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if "outputs" in EXPECTED[n]))
def test_call_gives_jax_results(name):
    rec = EXPECTED[name]
    args, kwargs = _args(name)
    out = _load(name).call(*args, **kwargs)
    leaves = olympus.tree_util.tree_leaves(out)
    assert len(leaves) == len(rec["outputs"])
    for got, want in zip(leaves, rec["outputs"]):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if "grad" in EXPECTED[n]))
def test_grad_through_jax_serialized_vjp(name):
    rec = EXPECTED[name]
    exp = _load(name)
    args, kwargs = _args(name)

    def loss(a0):
        outs = olympus.tree_util.tree_leaves(exp.call(a0, *args[1:], **kwargs))
        return sum(o.sum() for o in outs if np.issubdtype(o.dtype, np.floating))

    grads = olympus.tree_util.tree_leaves(olympus.grad(loss)(args[0]))
    for got, want in zip(grads, rec["grad"]):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-7)


def test_tree_of_pytree_blob():
    exp = _load("pytree")
    assert str(exp.in_tree) == EXPECTED["pytree"]["in_tree"]
    assert str(exp.out_tree) == EXPECTED["pytree"]["out_tree"]


def test_jax_module_is_inlined_under_jit_and_in_an_olympus_export():
    exp = _load("sin")
    x = np.asarray(EXPECTED["sin"]["args"][0], np.float32)
    np.testing.assert_allclose(olympus.jit(lambda v: exp.call(v) * 2)(x),
                               2 * np.asarray(EXPECTED["sin"]["outputs"][0]), rtol=2e-6)
    outer = export.export(olympus.jit(lambda v: exp.call(v) + 1))(x)
    again = export.deserialize(outer.serialize())
    np.testing.assert_allclose(again.call(x), np.asarray(EXPECTED["sin"]["outputs"][0]) + 1,
                               rtol=2e-6)


def test_cuda_only_blob_refuses_cpu():
    exp = _load("cuda_only")
    with pytest.raises(ValueError, match=re.escape(
            "Function 'sin' was exported for platforms '('cuda',)' but it is used on "
            "'('cpu',)'.")):
        exp.call(np.zeros(4, np.float32))


def test_mlir_module_of_a_jax_blob():
    text = _load("multi_platform").mlir_module()
    assert "jax.uses_shape_polymorphism = true" in text
    assert 'jax.global_constant = "_platform_index"' in text


# -- shape-polymorphic exports made by JAX (data/export_poly, recorded by
#    scripts/record_export_poly_blobs.py) -------------------------------------------------

POLY = Path(__file__).parent / "data" / "export_poly"
POLY_EXPECTED = {k: v for k, v in json.loads((POLY / "expected.json").read_text()).items()
                 if k != "modules"}


def _load_poly(name):
    return export.deserialize(bytearray((POLY / f"{name}.bin").read_bytes()))


@pytest.mark.parametrize("name", sorted(POLY_EXPECTED))
def test_symbolic_blob_fields_and_bytes(name):
    rec = POLY_EXPECTED[name]
    exp = _load_poly(name)
    assert exp.fun_name == rec["fun_name"]
    assert [str(a) for a in exp.in_avals] == rec["in_avals"]
    assert [str(a) for a in exp.out_avals] == rec["out_avals"]
    assert repr(exp.in_avals) == rec["in_avals_repr"]
    assert list(exp.module_kept_var_idx) == rec["module_kept_var_idx"]
    assert exp.uses_global_constants == rec["uses_global_constants"]
    blob = (POLY / f"{name}.bin").read_bytes()
    assert bytes(exp.serialize(vjp_order=rec["vjp_order"])) == blob


@pytest.mark.parametrize("name", sorted(POLY_EXPECTED))
def test_symbolic_blob_calls_at_two_sizes(name):
    rec = POLY_EXPECTED[name]
    exp = _load_poly(name)
    assert len(rec["calls"]) == 2
    for call in rec["calls"].values():
        args = [np.asarray(a, np.float32) for a in call["args"]]
        outs = olympus.tree_util.tree_leaves(exp.call(*args))
        assert len(outs) == len(call["outputs"])
        for got, want in zip(outs, call["outputs"]):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want, np.float32),
                                       rtol=2e-6, atol=1e-6)
        if "grad" in call:
            def loss(a0, args=args):
                return sum(o.sum() for o in olympus.tree_util.tree_leaves(
                    exp.call(a0, *args[1:])))

            np.testing.assert_allclose(np.asarray(olympus.grad(loss)(args[0])),
                                       np.asarray(call["grad"][0], np.float32),
                                       rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(POLY_EXPECTED))
def test_symbolic_blob_bad_calls_fail_as_in_jax(name):
    """The error JAX raised for each bad call; for a constraint, checked by the module at
    refinement, JAX's message is only "Error refining shapes. ..." (Olympus's adds what
    refinement reported: the failed assertion, or the op that could not be refined)."""
    rec = POLY_EXPECTED[name]
    exp = _load_poly(name)
    for what, err in rec["errors"].items():
        args = [np.zeros(s, np.float32) for s in err["shapes"]]
        with pytest.raises(ValueError) as info:
            exp.call(*args)
        assert type(info.value).__name__ == err["type"]
        if err["message"].startswith("Error refining shapes."):
            assert str(info.value).startswith("Error refining shapes."), what
        else:
            assert str(info.value) == err["message"], what


def test_symbolic_jax_blob_called_inside_an_olympus_polymorphic_export():
    inner = _load_poly("poly_sin")
    outer = export.export(olympus.jit(lambda x: inner.call(x).sum(axis=1)))(
        olympus.ShapeDtypeStruct(export.symbolic_shape("n, 4"), np.float32))
    again = export.deserialize(outer.serialize())
    for call in POLY_EXPECTED["poly_sin"]["calls"].values():
        x = np.asarray(call["args"][0], np.float32)
        np.testing.assert_allclose(again.call(x),
                                   np.asarray(call["outputs"][0], np.float32).sum(axis=1),
                                   rtol=2e-6, atol=1e-6)
