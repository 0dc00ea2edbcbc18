"""`olympus.export` with symbolic shapes, end to end: the exported signature and module
(JAX's calling convention for dimension variables), serialization of symbolic dimensions,
and calling the result (shape refinement, the checks and their errors, under jit, vmap
and grad, inside another shape-polymorphic export).

Error messages and module texts marked "recorded" come from reference JAX 0.10.2 run in
its own process (the module texts, with locations stripped, are in
``data/export_poly/expected.json``, written by ``scripts/record_export_poly_blobs.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import export

F32 = np.float32
MODULES = json.loads((Path(__file__).parent / "data" / "export_poly" /
                      "expected.json").read_text())["modules"]
_HELP = ("Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
         "#shape-assertion-errors for more details.")
_MISMATCH = "Input shapes do not match the polymorphic shapes specification. "


def _spec(s, dtype=F32, **kw):
    return olympus.ShapeDtypeStruct(export.symbolic_shape(s, **kw), dtype)


def sin2(x):
    return jnp.sin(x) * 2.0


def strip_locations(text: str) -> str:
    text = re.sub(r" loc\([^()]*(\([^()]*\))?[^()]*\)", "", text)
    return "\n".join(line for line in text.splitlines() if not line.startswith("#loc"))


# -- the exported signature and module --------------------------------------------------

def test_avals_are_symbolic_and_print_as_jax():
    exp = export.export(olympus.jit(sin2))(_spec("b, 4"))
    assert repr(exp.in_avals) == "(ShapedArray(float32[b,4]),)"
    assert repr(exp.out_avals) == "(ShapedArray(float32[b,4]),)"
    assert export.is_symbolic_dim(exp.in_avals[0].shape[0])
    assert exp.uses_global_constants
    exp = export.export(olympus.jit(lambda x: x.reshape(-1)[1:]))(_spec("b, 2*c"))
    assert repr(exp.out_avals) == "(ShapedArray(float32[2*b*c - 1]),)"


def nested_jit(x):
    return olympus.jit(lambda y: jnp.cos(y) + y.shape[0])(x) * 3.0


@pytest.mark.parametrize("name", ["sin", "multi_platform", "two_args", "constraints",
                                  "unused_arg",
                                  "nested_export", "nested_jit", "nested_jit_multi_platform",
                                  "nested_jit_static_multi_platform"])
def test_module_is_jaxs(name):
    """The exported module, locations aside, is the one JAX 0.10.2 writes (recorded):
    ``@main`` takes the arrays (and the platform index), computes each dimension variable
    with ``get_dimension_size``, checks the constraints with ``shape_assertion`` (JAX's
    messages, ``{i}`` standing for its operands), and calls
    ``@_wrapped_jax_export_main`` with the dimension values first; a nested jit is a
    private function taking the platform index and the dimension variables first."""
    f32 = F32
    a, b = export.symbolic_shape("a, b")
    inner = export.export(olympus.jit(sin2))(_spec("b, 4"))
    two = ("cpu", "cuda")
    make = {
        "sin": lambda: export.export(olympus.jit(sin2))(_spec("b, 4")),
        "multi_platform": lambda: export.export(olympus.jit(sin2),
                                                platforms=("cpu", "cuda"))(_spec("b, 4")),
        "two_args": lambda: export.export(olympus.jit(lambda x, y: (x @ y, x.T)))(
            olympus.ShapeDtypeStruct((a, b), f32), olympus.ShapeDtypeStruct((b,), f32)),
        "constraints": lambda: export.export(olympus.jit(lambda x: x.sum()))(
            _spec("b, 4*b, c", constraints=["b >= 16", "c <= b"])),
        "unused_arg": lambda: export.export(olympus.jit(lambda x, y: x))(
            _spec("b"), olympus.ShapeDtypeStruct((3,), f32)),
        "nested_export": lambda: export.export(
            olympus.jit(lambda y: inner.call(y).sum(axis=0)))(_spec("c, 4")),
        "nested_jit": lambda: export.export(olympus.jit(nested_jit))(_spec("b, 4")),
        "nested_jit_multi_platform": lambda: export.export(
            olympus.jit(nested_jit), platforms=two)(_spec("b, 4")),
        "nested_jit_static_multi_platform": lambda: export.export(
            olympus.jit(nested_jit), platforms=two)(olympus.ShapeDtypeStruct((2, 4), f32)),
    }
    text = strip_locations(make[name]().mlir_module())
    assert text == MODULES[name]


def test_nested_jit_takes_the_dimension_variables():
    """A nested jit under symbolic shapes is one private function (not inlined), called
    with the dimension values; it computes with them at every size."""
    exp = export.export(olympus.jit(nested_jit))(_spec("b, 4"))
    text = exp.mlir_module()
    assert text.count("func.func private @\"<lambda>\"(%arg0: tensor<i32> "
                      "{jax.global_constant = \"b\"}") == 1
    for n in (1, 5):
        x = np.linspace(0, 1, 4 * n, dtype=F32).reshape(n, 4)
        np.testing.assert_allclose(exp.call(x), (np.cos(x) + n) * 3, rtol=1e-6)
    lowered = olympus.jit(nested_jit).trace(_spec("b, 4")).lower().as_text()
    assert "call @\"<lambda>\"(%arg0, %arg1)" in lowered


def test_every_argument_is_kept_with_symbolic_shapes():
    """As JAX: the dimension variables are read from all the argument shapes, so no
    argument is dropped (without symbolic shapes an unused one is)."""
    exp = export.export(olympus.jit(lambda x, y: x))(_spec("b"), _spec("3"))
    assert exp.module_kept_var_idx == (0, 1)
    np.testing.assert_array_equal(exp.call(np.arange(4, dtype=F32), np.zeros(3, F32)),
                                  np.arange(4))
    static = export.export(olympus.jit(lambda x, y: x))(_spec("4"), _spec("3"))
    assert static.module_kept_var_idx == (0,) and not static.uses_global_constants


def test_constraints_in_the_module():
    """Every constraint (each variable >= 1, consistency of a repeated or scaled
    dimension, the user's constraints) is a shape assertion in ``@main``."""
    s = export.symbolic_shape("b, 4*b, c", constraints=["b >= 16", "c <= b"])
    text = export.export(olympus.jit(lambda x: x.sum()))(
        olympus.ShapeDtypeStruct(s, F32)).mlir_module()
    msgs = re.findall(r'error_message = "([^"]*)"', text)
    assert [m.split(". ")[1] if m.startswith("Input shapes do not match the polymorphic")
            else m.split(".")[0] for m in msgs] == [
        "Expected value >= 1 for dimension variable 'b'",
        "Found inconsistency between dimension size args[0].shape[1] (= {0}) and the "
        "specification '4*b' (= {1})",
        "Expected value >= 1 for dimension variable 'c'",
        "Input shapes do not match the symbolic shape constraint b >= 16",
        "Input shapes do not match the symbolic shape constraint c <= b"]
    exp = export.export(olympus.jit(lambda x: x.sum()))(olympus.ShapeDtypeStruct(s, F32))
    x = np.ones((16, 64, 3), F32)
    np.testing.assert_allclose(exp.call(x), x.sum())


def test_mixing_symbolic_scopes_is_refused():
    a, = export.symbolic_shape("a")
    b, = export.symbolic_shape("b")
    with pytest.raises(ValueError, match=(
            r"Invalid mixing of symbolic scopes when exporting <lambda>.\n"
            r"Expected current \(from args\[0\]\) scope \d+ created at .*\n"
            r"and found for 'b' \(kwargs\['y'\]\) scope \d+ created at .*\n"
            r"See https://docs.jax.dev/en/latest/export/shape_poly.html"
            r"#user-specified-symbolic-constraints.")):
        export.export(olympus.jit(lambda x, y: x))(
            olympus.ShapeDtypeStruct((a,), F32), y=olympus.ShapeDtypeStruct((b,), F32))


# -- serialization ----------------------------------------------------------------------

def test_round_trip_keeps_symbolic_dims_in_one_scope():
    s = export.symbolic_shape("b, 4", constraints=["b >= 2"])
    exp = export.export(olympus.jit(lambda x: (jnp.sin(x).sum(axis=1), x[:2])))(
        olympus.ShapeDtypeStruct(s, F32))
    blob = exp.serialize(vjp_order=1)
    d = export.deserialize(blob)
    assert [str(a) for a in d.in_avals] == ["float32[b,4]"]
    assert [str(a) for a in d.out_avals] == ["float32[b]", "float32[2,4]"]
    assert d.in_avals[0].shape[0].scope is d.out_avals[0].shape[0].scope
    # As JAX: the constraints are not serialized (the module's assertions keep them).
    assert "b >= 2" not in str(d.in_avals[0].shape[0].scope)
    assert d.uses_global_constants and d.module_kept_var_idx == (0,)
    assert bytes(d.serialize(vjp_order=1)) == bytes(blob)
    assert [str(a) for a in d.vjp().in_avals] == ["float32[b,4]", "float32[b]",
                                                  "float32[2,4]"]
    for n in (2, 5):
        x = np.linspace(-1, 1, 4 * n, dtype=F32).reshape(n, 4)
        r0, r1 = d.call(x)
        np.testing.assert_allclose(r0, np.sin(x).sum(axis=1), rtol=1e-6)
        np.testing.assert_array_equal(r1, x[:2])


def test_deserialized_constraint_is_checked_by_the_module():
    """The constraint is gone from the deserialized avals, so the call reaches the
    module, whose shape assertion fails at refinement (JAX: "Error refining shapes")."""
    exp = export.export(olympus.jit(lambda x: x * 2))(_spec("b", constraints=["b >= 3"]))
    d = export.deserialize(exp.serialize())
    with pytest.raises(ValueError, match=r"^Error refining shapes\.") as info:
        d.call(np.ones(2, F32))
    assert ("Input shapes do not match the symbolic shape constraint b >= 3. Expected "
            "'b - 3' to be greater or equal to 0, but found -1.") in str(info.value)
    np.testing.assert_array_equal(d.call(np.ones(3, F32)), np.full(3, 2, F32))


@pytest.mark.parametrize("dims", [["2*b + 1"], ["max(a, b)", "a", "b"], ["mod(b, 4)", "b"],
                                  ["b^2", "b"], ["floordiv(b, 2)", "b"], ["b - 3", "b"]])
def test_dimension_texts_parse_back(dims):
    """Every form of dimension JAX writes (its own ``str``) reads back to an equal one."""
    scope = export.SymbolicScope()
    shape = export.symbolic_shape(", ".join(dims), scope=scope)
    exp = export.export(olympus.jit(lambda x: x))(olympus.ShapeDtypeStruct((3,), F32))
    import dataclasses

    from olympus_ir.avals import ShapedArray

    fake = dataclasses.replace(exp, in_avals=(ShapedArray(shape, F32),),
                               out_avals=(ShapedArray(shape, F32),))
    d = export.deserialize(fake.serialize())
    assert [str(x) for x in d.in_avals[0].shape] == [str(x) for x in shape]


# -- calling ----------------------------------------------------------------------------

def test_call_at_several_sizes_and_under_jit():
    exp = export.export(olympus.jit(sin2))(_spec("b, 4"))
    for n in (1, 3, 8):
        x = np.linspace(0, 1, 4 * n, dtype=F32).reshape(n, 4)
        np.testing.assert_allclose(exp.call(x), np.sin(x) * 2, rtol=1e-6)
        np.testing.assert_allclose(olympus.jit(exp.call)(x), np.sin(x) * 2, rtol=1e-6)
        np.testing.assert_allclose(olympus.jit(lambda v: exp.call(v + 1) * v)(x),
                                   np.sin(x + 1) * 2 * x, rtol=1e-6)


def test_call_in_a_jit_lowers_with_a_convert_and_refines():
    """Under jit the callee keeps its dynamic types (a ``stablehlo.convert`` to them, and
    back), as JAX lowers it; the module is refined to static shapes before compiling."""
    exp = export.export(olympus.jit(lambda x: x * 2))(_spec("b"))
    text = olympus.jit(exp.call).lower(np.ones(3, F32)).as_text()
    assert "stablehlo.convert %arg0 : (tensor<3xf32>) -> tensor<?xf32>" in text
    assert "-> tensor<3xf32>" in text
    np.testing.assert_array_equal(olympus.jit(exp.call)(np.ones(3, F32)), np.full(3, 2.0))


def _err(fn, *args):
    with pytest.raises(ValueError) as info:
        fn(*args)
    return str(info.value)


def test_call_errors_are_jaxs():
    """Recorded from reference JAX 0.10.2 (eager and under jit alike)."""
    exp = export.export(olympus.jit(sin2))(_spec("b, 4"))
    for call in (exp.call, olympus.jit(exp.call)):
        assert _err(call, np.ones((3, 4, 1), F32)) == (
            "Rank mismatch for args[0]: expected (b, 4) and called with (3, 4, 1)")
        assert _err(call, np.ones((3, 5), F32)) == (
            "Shape mismatch for args[0].shape[1] (expected same constant): expected (b, 4) "
            "and called with (3, 5)")
        assert _err(call, np.ones((3, 4), np.int32)) == (
            "Dtype mismatch for args[0]: expected float32 and called with int32")
        assert _err(call, np.ones((0, 4), F32)) == (
            _MISMATCH + "Expected value >= 1 for dimension variable 'b'. Using the following "
            "polymorphic shapes specifications: args[0].shape = (b, 4). Obtained dimension "
            "variables: 'b' = 0 from specification 'b' for dimension args[0].shape[0] "
            "(= 0), . " + _HELP)


def test_constraint_and_two_values_errors_are_jaxs():
    exp = export.export(olympus.jit(sin2))(_spec("b, 4", constraints=["b >= 16"]))
    assert _err(exp.call, np.ones((3, 4), F32)) == (
        "Input shapes do not match the symbolic shape constraint b >= 16. Expected 'b - 16' "
        "to be greater or equal to 0, but found -13.  Using the following polymorphic "
        "shapes specifications: args[0].shape = (b, 4). Obtained dimension variables: "
        "'b' = 3 from specification 'b' for dimension args[0].shape[0] (= 3), . " + _HELP)
    assert exp.call(np.zeros((16, 4), F32)).shape == (16, 4)
    a, = export.symbolic_shape("a")
    exp = export.export(olympus.jit(lambda x, y: x + y))(
        olympus.ShapeDtypeStruct((a,), F32), olympus.ShapeDtypeStruct((a,), F32))
    assert _err(exp.call, np.ones(3, F32), np.ones(4, F32)) == (
        _MISMATCH + "Found inconsistency between dimension size args[1].shape[0] (= 4) and "
        "the specification 'a' (= 3). Using the following polymorphic shapes "
        "specifications: args[0].shape = (a,),args[1].shape = (a,). Obtained dimension "
        "variables: 'a' = 3 from specification 'a' for dimension args[0].shape[0] (= 3), . "
        + _HELP)
    exp = export.export(olympus.jit(lambda x: x))(_spec("2*b"))
    assert _err(exp.call, np.ones(3, F32)) == (
        _MISMATCH + "Division had remainder 1 when computing the value of 'b'. Using the "
        "following polymorphic shapes specifications: args[0].shape = (2*b,). Obtained "
        "dimension variables: . " + _HELP)


def test_vmap_of_call_is_jaxs_error():
    """JAX 0.10.2 has no batching rule for call_exported (recorded), with or without a
    symbolic leading dimension; a batch is exported as a symbolic dimension instead."""
    for spec in (_spec("b, 4"), olympus.ShapeDtypeStruct((5, 4), F32)):
        exp = export.export(olympus.jit(sin2))(spec)
        with pytest.raises(NotImplementedError,
                           match=re.escape("Batching rule for 'call_exported' not "
                                           "implemented")):
            olympus.vmap(exp.call)(np.ones((3, 5, 4), F32))
    batched = export.export(olympus.jit(olympus.vmap(sin2)))(_spec("b, 5, 4"))
    x = np.ones((3, 5, 4), F32)
    np.testing.assert_allclose(batched.call(x), np.sin(x) * 2, rtol=1e-6)


def test_grad_through_symbolic_vjp():
    exp = export.export(olympus.jit(lambda x: jnp.sin(x).sum(axis=1)))(_spec("b, 4"))
    d1 = export.deserialize(exp.serialize(vjp_order=1))
    d2 = export.deserialize(exp.serialize(vjp_order=2))
    for n in (1, 3):
        x = np.linspace(0, 1, 4 * n, dtype=F32).reshape(n, 4)
        for e in (exp, d1, d2):
            g = olympus.grad(lambda v, e=e: e.call(v).sum())(x)
            np.testing.assert_allclose(g, np.cos(x), rtol=1e-6)
        gg = olympus.grad(lambda v: olympus.grad(lambda y: d2.call(y).sum())(v).sum())(x)
        np.testing.assert_allclose(gg, -np.sin(x), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="No VJP is available"):
        export.deserialize(exp.serialize()).vjp()
    assert [str(a) for a in exp.vjp().in_avals] == ["float32[b,4]", "float32[b]"]


def test_grad_with_integer_inputs_and_outputs():
    """The exported VJP of a symbolic function with integer values: their cotangents are
    float0 in the signature, bool arrays (of the symbolic shape) in the module."""
    b, = export.symbolic_shape("b")
    exp = export.export(olympus.jit(lambda x, k: (x * k.astype(F32), k + 1, jnp.argmax(x))))(
        olympus.ShapeDtypeStruct((b,), F32), olympus.ShapeDtypeStruct((b,), np.int32))
    d = export.deserialize(exp.serialize(vjp_order=1))
    assert [str(a) for a in d.vjp().in_avals] == [
        "float32[b]", "int32[b]", "float32[b]", "float0[b]", "float0[]"]
    assert [str(a) for a in d.vjp().out_avals] == ["float32[b]", "float0[b]"]
    for n in (2, 5):
        x = np.linspace(-1, 1, n, dtype=F32)
        k = np.arange(n, dtype=np.int32) - 1
        g = olympus.grad(lambda v, k=k: d.call(v, k)[0].sum())(x)
        np.testing.assert_array_equal(g, k.astype(F32))


def test_call_inside_another_polymorphic_export():
    inner = export.export(olympus.jit(sin2))(_spec("b, 4"))
    outer = export.export(olympus.jit(lambda y: inner.call(y).sum(axis=0)))(_spec("c, 4"))
    doubled = export.export(olympus.jit(lambda y: inner.call(jnp.concatenate([y, y]))))(
        _spec("c, 4"))
    assert repr(doubled.out_avals) == "(ShapedArray(float32[2*c,4]),)"
    again = export.deserialize(outer.serialize())
    for n in (1, 4):
        x = np.linspace(0, 1, 4 * n, dtype=F32).reshape(n, 4)
        np.testing.assert_allclose(again.call(x), (np.sin(x) * 2).sum(axis=0), rtol=1e-6)
        np.testing.assert_allclose(doubled.call(x), np.sin(np.concatenate([x, x])) * 2,
                                   rtol=1e-6)


def test_nested_call_errors_are_jaxs():
    """Constraints of the inner export are decided for the outer's symbolic shapes at
    tracing (recorded from reference JAX)."""
    inner = export.export(olympus.jit(sin2))(_spec("b, 4"))
    assert _err(lambda: export.export(olympus.jit(inner.call))(_spec("c, d"))) == (
        "Shape mismatch for args[0].shape[1] (expected same constant): expected (b, 4) and "
        "called with (c, d)")
    a2 = export.export(olympus.jit(lambda x, y: x + y))(*[_spec("a")] * 2)
    c, d = export.symbolic_shape("c, d")
    assert _err(lambda: export.export(olympus.jit(a2.call))(
        olympus.ShapeDtypeStruct((c,), F32), olympus.ShapeDtypeStruct((d,), F32))) == (
        _MISMATCH + "Found inconsistency between dimension size args[1].shape[0] (= d) and "
        "the specification 'a' (= c). Using the following polymorphic shapes "
        "specifications: args[0].shape = (a,),args[1].shape = (a,). Obtained dimension "
        "variables: 'a' = c from specification 'a' for dimension args[0].shape[0] (= c), . "
        + _HELP)
    e16 = export.export(olympus.jit(lambda x: x))(_spec("b", constraints=["b >= 16"]))
    c, = export.symbolic_shape("c", constraints=["c >= 3"])
    assert _err(lambda: export.export(olympus.jit(e16.call))(
        olympus.ShapeDtypeStruct((c,), F32))) == (
        "Input shapes do not match the symbolic shape constraint b >= 16. Expected 'b - 16' "
        "to be greater or equal to 0, but found c - 16.  Using the following polymorphic "
        "shapes specifications: args[0].shape = (b,). Obtained dimension variables: "
        "'b' = c from specification 'b' for dimension args[0].shape[0] (= c), . " + _HELP)
