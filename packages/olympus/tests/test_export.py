"""olympus.export: `export`, the `Exported` fields, the module's conventions, serialization
round trips, and `Exported.call` eagerly, under jit, grad (through the exported VJP),
vmap (JAX's error), inside another export, and with several platforms.

Expected error messages, reprs and module text were recorded by running reference JAX
0.10.2 in its own process (``jax.export`` with the same functions); values are checked
against NumPy or by hand. JAX's own serialized bytes are tested in
`test_export_jax_blobs.py`, the documentation examples in `test_export_docs.py`, and
malformed bytes and the cross-process round trip in `test_export_untrusted.py`.
"""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import export

F32 = np.float32


def _exp2():
    """``x * y`` on f32[2, 3] (JAX's recorded messages below use this function)."""
    spec = olympus.ShapeDtypeStruct((2, 3), F32)
    return export.export(olympus.jit(lambda x, y: x * y))(spec, spec)


# -- export and the Exported fields -----------------------------------------------------

def test_fields_of_a_simple_export():
    f = olympus.jit(lambda x, y: (jnp.sin(x) * y, {"a": x + 1}))
    exp = export.export(f)(olympus.ShapeDtypeStruct((3,), F32), F32(2))
    assert exp.fun_name == "<lambda>"
    assert str(exp.in_tree) == "PyTreeDef(((*, *), {}))"
    assert str(exp.out_tree) == "PyTreeDef((*, {'a': *}))"
    assert [str(a) for a in exp.in_avals] == ["float32[3]", "float32[]"]
    assert [str(a) for a in exp.out_avals] == ["float32[3]", "float32[3]"]
    assert exp.in_shardings_hlo == (None, None) and exp.out_shardings_hlo == (None, None)
    assert exp.nr_devices == 1
    assert exp.platforms == ("cpu",)
    assert exp.ordered_effects == () and exp.unordered_effects == ()
    assert exp.disabled_safety_checks == ()
    assert exp.calling_convention_version == 10
    assert exp.module_kept_var_idx == (0, 1)
    assert exp.uses_global_constants is False
    assert exp.mlir_module_serialized.startswith(b"ML\xefR\rStableHLO_v")
    assert str(exp) == "Exported(fun_name=<lambda>, ...)"  # JAX's __str__
    assert repr(exp).startswith("Exported(fun_name='<lambda>', in_tree=PyTreeDef(")


def test_module_follows_jax_export_conventions():
    """Recorded from JAX: ``jax.uses_shape_polymorphism``, ``jax.result_info`` with the
    result paths, argument names as locations."""
    f = olympus.jit(lambda x, y: (jnp.sin(x) * y, {"a": x + 1}))
    text = export.export(f)(olympus.ShapeDtypeStruct((3,), F32), F32(2)).mlir_module()
    assert ("module @jit__lambda attributes {jax.uses_shape_polymorphism = false, "
            "mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}") in text
    assert ('func.func public @main(%arg0: tensor<3xf32> loc("x"), %arg1: tensor<f32> '
            'loc("y")) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> '
            "{jax.result_info = \"result[1]['a']\"})") in text
    assert "olympus.result_info" not in text


def test_mlir_module_unserialized_is_an_ir_module():
    exp = _exp2()
    mod = exp.mlir_module(serialized=False)
    assert "stablehlo.multiply" in str(mod)


def test_unused_arguments_are_dropped():
    spec = olympus.ShapeDtypeStruct((3,), F32)
    exp = export.export(olympus.jit(lambda x, y: x * 2))(spec, spec)
    assert exp.module_kept_var_idx == (0,)
    assert len(exp.in_avals) == 2
    assert "%arg1" not in exp.mlir_module()
    x = np.arange(3, dtype=F32)
    np.testing.assert_array_equal(exp.call(x, x + 7), 2 * x)


def test_weak_typed_scalar_spec():
    exp = export.export(olympus.jit(lambda x: x + 1))(1.0)
    assert repr(exp.in_avals) == "(ShapedArray(float32[], weak_type=True),)"
    assert exp.out_avals[0].weak_type is True


def test_export_requires_a_jitted_function():
    with pytest.raises(ValueError, match=r"^Function to be exported must be the result of "
                                         r"`jit` but is: <function"):
        export.export(lambda x: x)
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(jnp.sin)


def test_default_platform_and_calling_convention_range():
    assert export.default_export_platform() == "cpu"
    assert (export.minimum_supported_calling_convention_version,
            export.maximum_supported_calling_convention_version) == (9, 10)


def test_disabled_safety_check():
    p = export.DisabledSafetyCheck.platform()
    c = export.DisabledSafetyCheck.custom_call("foo")
    assert str(p) == "platform" and repr(c) == "custom_call:foo"
    assert c.is_custom_call() == "foo" and p.is_custom_call() is None
    assert p == export.DisabledSafetyCheck.platform() and hash(c) == hash(
        export.DisabledSafetyCheck.custom_call("foo"))
    assert p != c


def test_disabled_checks_must_be_safety_checks():
    """JAX fails the same way (an AttributeError while checking the module)."""
    with pytest.raises(AttributeError, match="'str' object has no attribute 'is_custom_call'"):
        export.export(olympus.jit(lambda x: x), disabled_checks=["x"])(np.zeros(3, F32))


def test_host_callbacks_cannot_be_exported():
    def f(x):
        olympus.debug.print("{}", x)
        return x

    with pytest.raises(NotImplementedError,
                       match="^serialization of host_callbacks is not yet implemented$"):
        export.export(olympus.jit(f))(np.zeros(3, F32))


def test_custom_call_check_allows_listed_targets():
    """Cholesky lowers to LAPACK's ``lapack_spotrf_ffi``, a target JAX guarantees stable."""
    a = np.array([[4, 1], [1, 3]], F32)
    exp = export.export(olympus.jit(jnp.linalg.cholesky))(a)
    assert "lapack_spotrf_ffi" in exp.mlir_module()
    np.testing.assert_allclose(exp.call(a), np.linalg.cholesky(a), rtol=1e-6)


def test_custom_call_check_rejects_unlisted_targets():
    from olympus.export import _module

    text = ('func.func @main(%a: tensor<f32>) -> tensor<f32> {\n'
            '  %0 = stablehlo.custom_call @my_new_prim(%a) : (tensor<f32>) -> tensor<f32>\n'
            '  return %0 : tensor<f32>\n}')
    from jaxlib.mlir import ir

    from olympus_lower.context import get_context

    with get_context():
        mod = ir.Module.parse(text)
        with pytest.raises(ValueError, match="^Cannot serialize code with custom calls whose "
                                             "targets have no compatibility guarantees"):
            _module._check_module(mod, "f", ("cpu",), ())
        _module._check_module(mod, "f", ("cpu",),
                              (export.DisabledSafetyCheck.custom_call("my_new_prim"),))


# -- calling ---------------------------------------------------------------------------

def test_call_eager_jit_and_nested():
    exp = _exp2()
    x = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_array_equal(exp.call(x, x), x * x)
    np.testing.assert_array_equal(olympus.jit(exp.call)(x, x + 1), x * (x + 1))
    np.testing.assert_array_equal(olympus.jit(lambda a: exp.call(a, a) * 3)(x), 3 * x * x)


def test_call_is_one_primitive_under_a_trace():
    """JAX's jaxpr: a custom_vjp_call whose body is one call_exported equation printed
    with the Exported's short form."""
    exp = _exp2()
    text = str(olympus.make_olympuspr(exp.call)(np.zeros((2, 3), F32), np.zeros((2, 3), F32)))
    assert "custom_vjp_call[" in text
    assert "call_exported[exported=Exported(fun_name=<lambda>, ...)]" in text


def test_call_inside_another_export():
    """JAX inlines the callee as ``func.func private @"call_exported_<lambda>"``."""
    exp = _exp2()
    outer = export.export(olympus.jit(lambda x: exp.call(x, x) + 1))(
        olympus.ShapeDtypeStruct((2, 3), F32))
    text = outer.mlir_module()
    assert 'func.func private @"call_exported_<lambda>"' in text
    assert 'call @"call_exported_<lambda>"(%arg0, %arg0)' in text
    x = np.ones((2, 3), F32)
    np.testing.assert_array_equal(outer.call(x), x * x + 1)
    again = export.deserialize(outer.serialize())
    np.testing.assert_array_equal(again.call(2 * x), 4 * x * x + 1)


def test_two_calls_of_the_same_export_get_distinct_symbols():
    exp = _exp2()
    f = olympus.jit(lambda x: exp.call(x, x) + exp.call(x, 2 * x))
    text = f.lower(np.ones((2, 3), F32)).as_text()
    assert len(re.findall(r"func\.func private @\"call_exported_<lambda>[^\"]*\"", text)) == 2
    x = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_array_equal(f(x), 3 * x * x)


def test_call_argument_errors():
    """Messages recorded from JAX 0.10.2."""
    exp = _exp2()
    z = np.zeros((2, 3), F32)
    with pytest.raises(ValueError, match=re.escape(
            "Shape mismatch for args[0].shape[1] (expected same constant): expected (2, 3) "
            "and called with (2, 4)")):
        exp.call(np.zeros((2, 4), F32), z)
    with pytest.raises(ValueError, match=re.escape(
            "Rank mismatch for args[0]: expected (2, 3) and called with (2,)")):
        exp.call(np.zeros((2,), F32), z)
    with pytest.raises(ValueError, match=re.escape(
            "Dtype mismatch for args[0]: expected float32 and called with int32")):
        exp.call(np.zeros((2, 3), np.int32), z)


def test_call_structure_errors():
    """Messages recorded from JAX 0.10.2 (one line per difference, blank-line separated)."""
    exp = _exp2()
    z = np.zeros((2, 3), F32)
    head = ("The invocation args and kwargs must have the same pytree structure as when "
            "the function '<lambda>' was exported, but they have the following structural "
            "differences:\n")
    length = ("   - args is a tuple of length 1 in the invocation and a tuple of length 2 "
              "when exported, so the lengths do not match.\n")
    with pytest.raises(ValueError) as e:
        exp.call(z)
    assert str(e.value) == head + length
    with pytest.raises(ValueError) as e:
        exp.call(z, y=z)
    assert str(e.value) == head + length + "\n" + (
        "   - kwargs is a <class 'dict'> with 1 child in the invocation and a <class 'dict'> "
        "with 0 child when exported, so the numbers of children do not match, with the "
        "symmetric difference of key sets: {'y'}.\n")


def test_call_kwargs_and_pytrees():
    def f(t, *, s):
        return {"b": [t["a"] * s, None], "a": (t["c"][0] + 1.0,)}

    x = np.linspace(-1, 1, 4, dtype=F32)
    args = ({"a": x, "c": [F32(2.5)]},)
    exp = export.export(olympus.jit(f))(*args, s=F32(3))
    out = export.deserialize(exp.serialize()).call(*args, s=F32(3))
    assert set(out) == {"a", "b"} and out["b"][1] is None
    np.testing.assert_allclose(out["b"][0], 3 * x)
    np.testing.assert_allclose(out["a"][0], 3.5)


def test_vmap_of_call_is_jax_error():
    exp = _exp2()
    z = np.zeros((4, 2, 3), F32)
    with pytest.raises(NotImplementedError,
                       match="^Batching rule for 'call_exported' not implemented$"):
        olympus.vmap(exp.call)(z, z)


def test_grad_through_the_exported_vjp():
    exp = export.export(olympus.jit(lambda x, y: jnp.sin(x) * y))(
        olympus.ShapeDtypeStruct((3,), F32), olympus.ShapeDtypeStruct((3,), F32))
    x = np.array([0.1, 0.5, 2.0], F32)
    y = np.array([1.0, -2.0, 3.0], F32)
    gx, gy = olympus.grad(lambda a, b: exp.call(a, b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.cos(x) * y, rtol=1e-6)
    np.testing.assert_allclose(gy, np.sin(x), rtol=1e-6)
    assert exp.has_vjp()
    vjp = exp.vjp()
    assert vjp.fun_name == "fun_vjp_jax"
    assert [str(a) for a in vjp.in_avals] == ["float32[3]"] * 3
    assert str(vjp.out_tree) == "PyTreeDef((*, *))"


def test_vjp_with_integer_arguments_and_results():
    """JAX's VJP signature: float0 cotangents of the integer values (recorded:
    in_avals (f32[3], i32[], f32[3], float0[]), out_avals (f32[3], float0[]))."""
    exp = export.export(olympus.jit(lambda x, i: (x * i, i + 1)))(
        np.zeros(3, F32), np.int32(2))
    vjp = exp.vjp()
    assert [str(a) for a in vjp.in_avals] == ["float32[3]", "int32[]", "float32[3]",
                                              "float0[]"]
    assert [str(a) for a in vjp.out_avals] == ["float32[3]", "float0[]"]
    assert "tensor<i1> {jax.result_info = \"result[1]\"}" in vjp.mlir_module()
    g = olympus.grad(lambda x: exp.call(x, np.int32(3))[0].sum())(np.ones(3, F32))
    np.testing.assert_array_equal(g, [3, 3, 3])
    again = export.deserialize(exp.serialize(vjp_order=1))
    assert [str(a) for a in again.vjp().in_avals] == [str(a) for a in vjp.in_avals]
    g = olympus.grad(lambda x: again.call(x, np.int32(5))[0].sum())(np.ones(3, F32))
    np.testing.assert_array_equal(g, [5, 5, 5])


def test_no_vjp_after_deserializing_without_one():
    d = export.deserialize(_exp2().serialize())
    assert not d.has_vjp()
    with pytest.raises(ValueError, match="^No VJP is available$"):
        d.vjp()
    with pytest.raises(ValueError, match="^serialization of an Exported that does not have "
                                         "vjps of high-enough order$"):
        d.serialize(vjp_order=1)
    with pytest.raises(ValueError, match="^No VJP is available$"):
        olympus.grad(lambda x: d.call(x, x).sum())(np.ones((2, 3), F32))


def test_second_order_grad_through_serialized_vjps():
    blob = export.export(olympus.jit(lambda x: 7 * x * x * x))(1.0).serialize(vjp_order=2)
    f = export.deserialize(blob).call
    np.testing.assert_allclose(olympus.grad(f)(F32(0.1)), 0.21, rtol=1e-6)
    np.testing.assert_allclose(olympus.grad(olympus.grad(f))(F32(0.1)), 4.2, rtol=1e-6)
    with pytest.raises(ValueError, match="^No VJP is available$"):
        olympus.grad(olympus.grad(olympus.grad(f)))(F32(0.1))


# -- platforms -------------------------------------------------------------------------

def test_multi_platform_module_takes_the_platform_index():
    """Recorded from JAX: a leading ``tensor<i32> {jax.global_constant =
    "_platform_index"}`` argument and ``jax.uses_shape_polymorphism = true``."""
    exp = export.export(olympus.jit(jnp.sin), platforms=("cpu", "cuda", "tpu"))(
        np.zeros(3, F32))
    assert exp.platforms == ("cpu", "cuda", "tpu")
    assert exp.uses_global_constants is True
    text = exp.mlir_module()
    assert "jax.uses_shape_polymorphism = true" in text
    assert ('@main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"} '
            "loc(unknown), %arg1: tensor<3xf32>") in text
    x = np.array([0.5, 1.0, 2.0], F32)
    np.testing.assert_allclose(exp.call(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(export.deserialize(exp.serialize()).call(x), np.sin(x),
                               rtol=1e-6)


def test_multi_platform_inside_multi_platform_selects_by_case():
    inner = export.export(olympus.jit(jnp.sin), platforms=("cpu", "cuda", "tpu"))(
        np.zeros(3, F32))
    outer = export.export(olympus.jit(lambda x: inner.call(x) * 2), platforms=("tpu", "cpu"))(
        np.zeros(3, F32))
    text = outer.mlir_module()
    assert '"stablehlo.case"(%arg0)' in text
    x = np.array([0.5, 1.0, 2.0], F32)
    np.testing.assert_allclose(outer.call(x), 2 * np.sin(x), rtol=1e-6)


def test_wrong_platform_and_the_disabled_check():
    """Message recorded from JAX 0.10.2."""
    x = np.ones(3, F32)
    exp = export.export(olympus.jit(jnp.sin), platforms=("cuda",))(x)
    with pytest.raises(ValueError, match=re.escape(
            "Function 'sin' was exported for platforms '('cuda',)' but it is used on "
            "'('cpu',)'.")):
        exp.call(x)
    ok = export.export(olympus.jit(jnp.sin), platforms=("cuda",),
                       disabled_checks=[export.DisabledSafetyCheck.platform()])(x)
    np.testing.assert_allclose(ok.call(x), np.sin(x), rtol=1e-6)
    again = export.deserialize(ok.serialize())
    assert again.disabled_safety_checks == (export.DisabledSafetyCheck.platform(),)
    np.testing.assert_allclose(again.call(x), np.sin(x), rtol=1e-6)


def test_cpu_only_kernels_are_not_exported_for_other_platforms():
    a = np.eye(2, dtype=F32)
    with pytest.raises(NotImplementedError, match="CPU-only kernels"):
        export.export(olympus.jit(jnp.linalg.cholesky), platforms=("cpu", "cuda"))(a)


# -- serialization round trips ---------------------------------------------------------

def test_round_trip_preserves_fields_and_bytes():
    exp = _exp2()
    blob = exp.serialize()
    assert isinstance(blob, bytearray)
    d = export.deserialize(blob)
    for name in ("fun_name", "in_tree", "out_tree", "nr_devices", "platforms",
                 "calling_convention_version", "module_kept_var_idx",
                 "uses_global_constants", "mlir_module_serialized", "in_shardings_hlo",
                 "out_shardings_hlo"):
        assert getattr(d, name) == getattr(exp, name), name
    assert [(a.shape, a.dtype) for a in d.in_avals] == [(a.shape, a.dtype)
                                                       for a in exp.in_avals]
    assert d.serialize() == blob
    assert export.deserialize(bytes(blob)).serialize() == blob
    assert export.deserialize(memoryview(bytes(blob))).fun_name == "<lambda>"


def test_serialize_vjp_order_must_be_non_negative():
    with pytest.raises(ValueError, match="vjp_order"):
        _exp2().serialize(vjp_order=-1)


def test_deserialize_needs_bytes():
    with pytest.raises(TypeError, match="bytes or a bytearray, got str"):
        export.deserialize("abc")


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16,
                                   "bfloat16", np.complex64])
def test_dtypes_round_trip(dtype):
    import ml_dtypes

    dtype = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    exp = export.export(olympus.jit(lambda x: x))(olympus.ShapeDtypeStruct((2,), dtype))
    d = export.deserialize(exp.serialize())
    assert d.in_avals[0].dtype == olympus.dtypes.canonicalize_dtype(dtype)


# -- pytree serialization registry -----------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])
Unregistered = collections.namedtuple("Unregistered", ["a", "b"])
export.register_namedtuple_serialization(Point, serialized_name="olympus_tests.Point")


def test_namedtuple_serialization():
    p = Point(np.ones(2, F32), np.arange(2, dtype=F32))
    exp = export.export(olympus.jit(lambda p: Point(p.y, p.x + p.y)))(p)
    d = export.deserialize(exp.serialize())
    assert d.in_tree == exp.in_tree and d.out_tree == exp.out_tree
    out = d.call(p)
    assert isinstance(out, Point)
    np.testing.assert_array_equal(out.y, [1, 2])


def test_unregistered_namedtuple_cannot_be_serialized():
    """Message recorded from JAX 0.10.2 (with olympus's module name)."""
    exp = export.export(olympus.jit(lambda r: r.a))(Unregistered(F32(1), F32(2)))
    with pytest.raises(ValueError, match=re.escape(
            "Cannot serialize PyTreeDef containing an unregistered type `<class "
            "'test_export.Unregistered'>`. Use `export.register_pytree_node_serialization` "
            "or `export.register_namedtuple_serialization`.")):
        exp.serialize()


def test_registration_errors():
    """Messages recorded from JAX 0.10.2."""
    with pytest.raises(ValueError, match="^Use `olympus.export.register_pytree_node_"
                                         "serialization` for types other than"):
        export.register_namedtuple_serialization(dict, serialized_name="x")
    with pytest.raises(ValueError, match=re.escape(
            "Duplicate serialization registration for type `<class 'test_export.Point'>`. "
            "Previous registration was with serialized_name `olympus_tests.Point`.")):
        export.register_namedtuple_serialization(Point, serialized_name="other")
    Q = collections.namedtuple("Q", "a b")
    with pytest.raises(ValueError, match=re.escape(
            "Duplicate serialization registration for serialized_name "
            "`olympus_tests.Point`. Previous registration was for type `<class "
            "'test_export.Point'>`.")):
        export.register_namedtuple_serialization(Q, serialized_name="olympus_tests.Point")

    class C:
        pass

    with pytest.raises(ValueError, match="^If `from_children` is not present, you must "
                                         "call first"):
        export.register_pytree_node_serialization(
            C, serialized_name="C", serialize_auxdata=lambda a: b"",
            deserialize_auxdata=lambda b: None)


class Box:
    """A custom pytree node with string auxdata."""

    def __init__(self, value, label):
        self.value, self.label = value, label


olympus.tree_util.register_pytree_node(
    Box, lambda b: ((b.value,), b.label), lambda label, ch: Box(ch[0], label))
export.register_pytree_node_serialization(
    Box, serialized_name="olympus_tests.Box",
    serialize_auxdata=lambda label: label.encode(),
    deserialize_auxdata=lambda data: data.decode())


def test_custom_node_serialization_uses_the_registered_unflatten():
    exp = export.export(olympus.jit(lambda b: Box(b.value * 2, b.label + "!")))(
        Box(np.ones(2, F32), "hi"))
    d = export.deserialize(exp.serialize())
    assert d.in_tree == exp.in_tree and d.out_tree == exp.out_tree
    out = d.call(Box(np.arange(2, dtype=F32), "hi"))
    assert isinstance(out, Box) and out.label == "hi!"
    np.testing.assert_array_equal(out.value, [0, 2])


def test_ordereddict_is_registered_by_default():
    od = collections.OrderedDict([("b", np.ones(2, F32)), ("a", np.zeros(2, F32))])
    exp = export.export(olympus.jit(lambda d: d["a"] + d["b"]))(od)
    d = export.deserialize(exp.serialize())
    assert d.in_tree == exp.in_tree
    np.testing.assert_array_equal(d.call(od), [1, 1])


def test_dict_keys_must_be_strings():
    exp = export.export(olympus.jit(lambda d: d[1]))({1: np.ones(2, F32)})
    with pytest.raises(TypeError, match="^Serialization is supported only for dictionaries "
                                        "with string keys. Found key 1 of type"):
        exp.serialize()


def test_shardings_of_a_single_device_export():
    exp = _exp2()
    assert exp.in_shardings_jax(None) == (None, None)
    assert exp.out_shardings_jax(None) == (None,)


def test_export_with_a_one_device_mesh_sharding():
    """On one device a mesh sharding places nothing: the export is a single-device one
    (exports sharded over several devices are not supported yet)."""
    import olympus.sharding as shd

    mesh = olympus.make_mesh((1,), ("a",))
    f = olympus.jit(lambda x: x * 2, in_shardings=shd.NamedSharding(mesh, shd.PartitionSpec("a")))
    exp = export.export(f)(np.zeros(4, F32))
    assert exp.nr_devices == 1
    np.testing.assert_array_equal(exp.call(np.arange(4, dtype=F32)), [0, 2, 4, 6])


def test_call_of_an_export_for_more_devices_is_refused():
    """JAX's message, when the export was made for 4 devices and the call has 1."""
    import dataclasses

    exp = dataclasses.replace(_exp2(), nr_devices=4)
    z = np.zeros((2, 3), F32)
    with pytest.raises(ValueError, match=re.escape(
            "Function <lambda> was exported for 4 devices and is called in a context with 1 "
            "devices, which is not allowed.")):
        exp.call(z, z)
