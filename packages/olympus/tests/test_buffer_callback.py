"""`olympus.experimental.buffer_callback`: JAX's test cases (tests/buffer_callback_test.py at
jax-v0.10.2, rewritten), the printed olympuspr and StableHLO, and the errors. Expected
texts and messages were recorded by running reference JAX 0.10.2 in its own process."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.experimental import buffer_callback as bc

ALL_DTYPES = [np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32",
    "complex64")] + [np.dtype(jnp.bfloat16)]


def _data(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape) * 5
    if dtype == np.bool_:
        return x > 0
    if np.issubdtype(dtype, np.complexfloating):
        return (x + 1j * rng.normal(size=shape)).astype(dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        x = np.abs(x)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_numpy_views(dtype):
    seen = {}
    data = _data(dtype)

    def callback(ctx, out, arg):
        seen["stage"] = ctx.stage
        try:
            seen["no stream"] = ctx.stream
        except Exception as e:  # CPU has no GPU stream
            seen["stream"] = str(e)
        seen["meta"] = (arg.shape, arg.dtype, out.shape, out.dtype, arg.ndim)
        seen["writeable"] = (arg.writeable, out.writeable)
        x = np.asarray(arg)
        seen["x"] = x.copy()
        y = np.asarray(out)
        y[...] = x

    fun = bc.buffer_callback(callback, olympus.ShapeDtypeStruct(data.shape, data.dtype))
    np.testing.assert_array_equal(np.asarray(fun(data)), data)
    assert seen["stage"] == bc.ExecutionStage.EXECUTE
    assert "XLA FFI GPU context is not available" in seen["stream"]
    assert seen["meta"] == ((3, 4), dtype, (3, 4), dtype, 2)
    assert seen["writeable"] == (False, True)
    np.testing.assert_array_equal(seen["x"], data)


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != jnp.bfloat16], ids=str)
def test_dlpack_views(dtype):
    data = _data(dtype)
    seen = {}

    def callback(ctx, out, arg):
        seen["x"] = np.from_dlpack(arg).copy()
        y = np.from_dlpack(out)
        seen["y"] = (y.shape, y.dtype)

    fun = bc.buffer_callback(callback, olympus.ShapeDtypeStruct(data.shape, data.dtype))
    olympus.block_until_ready(fun(data))
    np.testing.assert_array_equal(seen["x"], data)
    assert seen["y"] == (data.shape, data.dtype)


@pytest.mark.parametrize("vmap_method",
                         ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all"])
def test_vmap_methods(vmap_method):
    calls = []

    def callback(ctx, out, *args):
        x, y, z = np.asarray(args[0]), np.asarray(args[1]), np.asarray(out)
        calls.append(x.shape)
        z[...] = x
        z[...] += y

    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    y = rng.normal(size=(3, 4)).astype(np.float32)
    fun = bc.buffer_callback(callback, olympus.ShapeDtypeStruct((4,), np.float32),
                             vmap_method=vmap_method)
    np.testing.assert_allclose(np.asarray(olympus.vmap(fun)(x, y)), x + y, rtol=1e-6)
    one_call = vmap_method in ("expand_dims", "broadcast_all")
    assert calls == ([(3, 4)] if one_call else [(4,)] * 3)


def test_vmap_expand_dims_unbatched_operand_gets_a_unit_axis():
    shapes = []

    def callback(ctx, out, x, y):
        shapes.append((x.shape, y.shape))
        np.asarray(out)[...] = np.asarray(x) + np.asarray(y)

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones(3, np.float32)
    fun = bc.buffer_callback(callback, olympus.ShapeDtypeStruct((3,), np.float32),
                             vmap_method="expand_dims")
    out = olympus.vmap(fun, in_axes=(0, None))(x, y)
    np.testing.assert_array_equal(np.asarray(out), x + y)
    assert shapes == [((2, 3), (1, 3))]


def test_input_output_aliases_share_memory():
    same = []

    def callback(ctx, out, arg):
        same.append(np.asarray(arg).ctypes.data == np.asarray(out).ctypes.data)

    data = np.ones((3, 4), np.float32)
    fun = bc.buffer_callback(callback, olympus.ShapeDtypeStruct(data.shape, data.dtype),
                             input_output_aliases={0: 0})
    olympus.block_until_ready(olympus.jit(fun)(data))
    assert same == [True]


def test_multi_mesh_inputs():
    def no_op(*args, **kwargs):
        pass

    @olympus.jit
    def f(x, y):
        z = x * y
        call = bc.buffer_callback(no_op, olympus.ShapeDtypeStruct(x.shape, x.dtype),
                                  command_buffer_compatible=True)
        return call((z,))

    devices = np.array(olympus.devices()[:1]).reshape(1, 1)
    mesh1 = olympus.sharding.Mesh(devices, ("a", "b"))  # Auto axes, as JAX's test meshes
    mesh2 = olympus.sharding.Mesh(devices, ("x", "y"))
    P = olympus.sharding.PartitionSpec
    x = olympus.device_put(jnp.ones((32, 32)),
                           olympus.sharding.NamedSharding(mesh1, P("a", "b")))
    y = olympus.device_put(jnp.ones((32, 32)),
                           olympus.sharding.NamedSharding(mesh2, P("x", "y")))
    assert f(x, y).shape == (32, 32)


def test_side_effect_runs_an_unused_call():
    called = []

    def callback(*_):
        called.append(True)

    fun = bc.buffer_callback(callback, olympus.ShapeDtypeStruct((), np.float32),
                             has_side_effect=True)
    olympus.block_until_ready(fun())
    assert called == [True]

    called.clear()

    @olympus.jit
    def g(x):
        fun()  # result unused: kept only because of the effect
        return x + 1

    assert float(g(1.0)) == 2.0
    assert called == [True]


def test_pytrees_and_keyword_arguments():
    seen = {}

    def callback(ctx, out, a, *, scale):
        seen["types"] = (type(out), type(a), sorted(a))
        np.asarray(out[0])[...] = np.asarray(a["p"]) * np.asarray(scale)
        np.asarray(out[1]["q"])[...] = 7

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    fun = bc.buffer_callback(callback, (olympus.ShapeDtypeStruct(x.shape, x.dtype),
                                        {"q": olympus.ShapeDtypeStruct((), np.int32)}))
    first, rest = fun({"p": x}, scale=np.float32(2))
    np.testing.assert_array_equal(np.asarray(first), 2 * x)
    assert int(rest["q"]) == 7
    assert seen["types"] == (tuple, dict, ["p"])


def test_olympuspr_and_stablehlo_print_as_jax():
    def cb(ctx, out, x):
        np.asarray(out)[...] = np.asarray(x) + 1

    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    f = bc.buffer_callback(cb, olympus.ShapeDtypeStruct(x.shape, x.dtype),
                           has_side_effect=True, input_output_aliases={0: 0})
    text = str(olympus.make_olympuspr(f)(x))
    params = text[text.index("buffer_callback["):]
    expected = """buffer_callback[
      callback=<function test_olympuspr_and_stablehlo_print_as_jax.<locals>.cb at 0x"""
    assert params.startswith(expected)
    assert """
      command_buffer_compatible=False
      has_side_effect=True
      in_tree=PyTreeDef(((*,), {}))
      input_output_aliases=((0, 0),)
      out_tree=PyTreeDef(*)
      result_avals=(ShapedArray(float32[2,3]),)
      vmap_method=None
    ] a
  in (b,) }""" in params
    hlo = olympus.jit(f).lower(x).as_text()
    assert ("stablehlo.custom_call @xla_buffer_python_cpu_callback(%arg0) {backend_config = "
            "\"\", has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, "
            "operand_layouts = [dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = "
            "[#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, "
            "operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]}"
            " : (tensor<2x3xf32>) -> tensor<2x3xf32>") in hlo
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(x) + 1)


def test_errors():
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    like = olympus.ShapeDtypeStruct(x.shape, x.dtype)

    def returns(ctx, out, x):
        return 1

    with pytest.raises(Exception, match="Error when calling buffer callback") as info:
        bc.buffer_callback(returns, like)(x)
    assert isinstance(info.value.__cause__, ValueError)
    assert str(info.value.__cause__) == "buffer_callback callback must not return any values."

    def raises(ctx, out, x):
        raise KeyError("boom")

    with pytest.raises(Exception, match="KeyError") as info:
        olympus.jit(bc.buffer_callback(raises, like))(x)
    assert isinstance(info.value.__cause__, KeyError)

    def ok(ctx, out, x):
        pass

    with pytest.raises(ValueError, match=r"^input_output_aliases contains the mapping '1:0' "
                       r"with input index 1 outside the range \[0, 1\)\.$"):
        bc.buffer_callback(ok, like, input_output_aliases={1: 0})(x)
    with pytest.raises(ValueError, match=r"^input_output_aliases contains the mapping '0:1' "
                       r"with output index 1 outside the range \[0, 1\)\.$"):
        bc.buffer_callback(ok, like, input_output_aliases={0: 1})(x)
    with pytest.raises(ValueError, match=r"^input_output_aliases contains the mapping '0:0' "
                       r"referring to an input with abstract value float32\[2,3\] and an "
                       r"output with a different abstract value float32\[3\]\.$"):
        bc.buffer_callback(ok, olympus.ShapeDtypeStruct((3,), np.float32),
                           input_output_aliases={0: 0})(x)
    f = bc.buffer_callback(ok, like)
    with pytest.raises(ValueError, match=r"^Buffer callbacks do not support JVP\. Please use "
                       r"`olympus\.custom_jvp` to use callbacks while taking gradients\.$"):
        olympus.grad(lambda x: f(x).sum())(x)
    with pytest.raises(NotImplementedError, match=r"^vmap is only supported for the "
                       r"buffer_callback primitive when vmap_method is one of 'sequential', "
                       r"'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
                       r"'legacy_vectorized'\. Got vmap_method=None\.$"):
        olympus.vmap(f)(x)


def test_classes_are_jaxlibs_under_this_module():
    assert bc.Buffer.__module__ == "olympus.experimental.buffer_callback"
    assert bc.ExecutionContext.__name__ == "ExecutionContext"
    assert [m for m in bc.ExecutionStage.__members__] == [
        "INSTANTIATE", "PREPARE", "INITIALIZE", "EXECUTE"]
