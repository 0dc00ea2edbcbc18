"""compile(), Executable.execute, validation, donation, errors, caching."""

from __future__ import annotations

import numpy as np
import pytest
from mlir_helpers import binary_module, parse, unary_module

import olympus_runtime as ort
from olympus_ir import ShapedArray
from olympus_runtime import compiler


def f32(*vals):
    return ort.device_put(np.array(vals, np.float32))


def test_compile_and_execute():
    exe = ort.compile(binary_module("add"))
    (out,) = exe.execute([f32(1, 2, 3), f32(10, 20, 30)])
    assert type(out) is ort.Array and out.aval == ShapedArray((3,), np.float32)
    np.testing.assert_array_equal(np.asarray(out), [11, 22, 33])
    assert out.sharding is ort.sharding_for(ort.default_device()) and out.committed
    assert exe([f32(1, 1, 1), f32(2, 2, 2)])[0].tolist() == [3, 3, 3]  # __call__
    assert exe.in_avals == (ShapedArray((3,), np.float32),) * 2
    assert repr(exe) == "Executable(jit_f: (f32[3], f32[3]) -> (f32[3]) on cpu:0)"


def test_out_avals_carry_weak_type():
    weak = ShapedArray((), np.float32, weak_type=True)
    exe = ort.compile(binary_module("multiply", shape=()), in_avals=[weak, weak], out_avals=[weak])
    out = exe.execute([ort.device_put(2.0), ort.device_put(4.0)])[0]
    assert repr(out) == "Array(8., dtype=float32, weak_type=True)"


def test_analysis_and_text():
    exe = ort.compile(parse("""
    module @jit_mm {
      func.func public @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
        %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
        return %0 : tensor<8x4xf32>
      }
    }"""))
    assert exe.cost_analysis()["flops"] == 2 * 8 * 16 * 4
    mem = exe.memory_analysis()
    assert mem.argument_size_in_bytes == (8 * 16 + 16 * 4) * 4
    assert mem.output_size_in_bytes == 8 * 4 * 4
    text = exe.as_text()
    assert text.startswith("HloModule jit_mm") and "dot(" in text
    a = np.arange(128, dtype=np.float32).reshape(8, 16)
    b = np.ones((16, 4), np.float32)
    out = exe.execute([ort.device_put(a), ort.device_put(b)])[0]
    np.testing.assert_allclose(np.asarray(out), a @ b)


def test_cache_compiles_once():
    text_module = lambda: binary_module("subtract", shape=(5,), name="jit_cache")
    before = ort.compile_count()
    e1 = ort.compile(text_module())
    assert ort.compile_count() == before + 1
    e2 = ort.compile(text_module())  # a different ir.Module object with equal bytecode
    assert e2 is e1 and ort.compile_count() == before + 1
    # Same program, other output avals: a new Executable sharing the loaded executable.
    avals = [ShapedArray((5,), np.float32, weak_type=True)]
    e3 = ort.compile(text_module(), out_avals=avals)
    assert e3 is not e1 and e3.loaded is e1.loaded and ort.compile_count() == before + 1
    # Options and devices are part of the key.
    e4 = ort.compile(text_module(), options={"xla_cpu_enable_fast_math": False})
    assert e4.loaded is not e1.loaded and ort.compile_count() == before + 2
    e5 = ort.compile(text_module(), devices=[ort.devices()[1]])
    assert e5.devices == (ort.devices()[1],) and ort.compile_count() == before + 3
    assert compiler.fingerprint(text_module()) == e1.fingerprint


def test_compile_for_another_device():
    d1 = ort.devices()[1]
    exe = ort.compile(binary_module("add"), devices=[d1])
    x = ort.device_put(np.ones(3, np.float32), d1)
    out = exe.execute([x, x])[0]
    assert out.device is d1 and out.tolist() == [2, 2, 2]
    with pytest.raises(ValueError, match=r"argument 1 is on cpu:0, but the executable runs on cpu:1"):
        exe.execute([x, f32(1, 2, 3)])


def test_in_avals_are_checked_against_the_module():
    with pytest.raises(ValueError, match=r"in_avals\[1\] is i32\[3\] but the module's main function has type tensor<3xf32>"):
        ort.compile(binary_module("add"), in_avals=[ShapedArray((3,), np.float32),
                                                   ShapedArray((3,), np.int32)])
    with pytest.raises(ValueError, match=r"out_avals\[0\] is f32\[4\]"):
        ort.compile(binary_module("add"), out_avals=[ShapedArray((4,), np.float32)])
    with pytest.raises(ValueError, match="1 in_avals were given but the module's main function has 2"):
        ort.compile(binary_module("add"), in_avals=[ShapedArray((3,), np.float32)])
    with pytest.raises(ValueError, match="in_avals and out_avals are required for MLIR text"):
        ort.compile("module {}")
    with pytest.raises(TypeError, match="expected a jaxlib.mlir.ir.Module or MLIR text, got bytes"):
        ort.compile(b"module {}")
    with pytest.raises(ValueError, match="num_partitions=3 but there are only 2 devices"):
        ort.compile(binary_module("add"), num_partitions=3)
    with pytest.raises(ValueError, match="1 devices given for num_partitions=2"):
        ort.compile(binary_module("add"), num_partitions=2, devices=ort.devices()[:1])


def test_argument_validation():
    exe = ort.compile(binary_module("add"))
    good = f32(1, 2, 3)
    # Same byte size, wrong dtype: jaxlib would silently reinterpret the bits.
    i32 = ort.device_put(np.array([1, 2, 3], np.int32))
    # One wording for every type check (the stages API's): all mismatches, by argument.
    differ = ("Argument types differ from the types for which this computation was compiled. "
              "The mismatches are:\n")
    with pytest.raises(TypeError) as info:
        exe.execute([good, i32])
    assert str(info.value) == differ + (
        "Argument 'args[1]' compiled with float32[3] and called with int32[3]")
    with pytest.raises(TypeError) as info:
        exe.execute([f32(1, 2, 3, 4), i32])
    assert str(info.value) == differ + (
        "Argument 'args[0]' compiled with float32[3] and called with float32[4]\n"
        "Argument 'args[1]' compiled with float32[3] and called with int32[3]")
    with pytest.raises(TypeError, match="Compiled function expected 2 arguments, got 1"):
        exe.execute([good])
    with pytest.raises(TypeError, match=r"Argument 'args\[1\]' of type ndarray is not an "
                                        r"olympus Array \(the computation was compiled for "
                                        r"float32\[3\]\)"):
        exe.execute([good, np.ones(3, np.float32)])
    gone = f32(1, 2, 3)
    gone.delete()
    with pytest.raises(RuntimeError, match=r"argument 0 \(f32\[3\]\) has been deleted"):
        exe.execute([gone, good])


def test_donation_with_aliasing_output():
    exe = ort.compile(unary_module("negate", arg_attr="tf.aliasing_output = 0 : i32", name="jit_neg"))
    assert exe.donated_args == (0,)
    assert "input_output_alias" in exe.as_text()
    x = f32(1, 2, 3)
    out = exe.execute([x])[0]
    assert x.is_deleted() and out.tolist() == [-1, -2, -3]
    with pytest.raises(RuntimeError, match="has been deleted: it was deleted with .delete\\(\\) or donated"):
        exe.execute([x])
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        repr(x)  # as JAX 0.10.2: a deleted array has no repr


def test_donated_args_parameter():
    exe = ort.compile(unary_module("exponential", name="jit_exp"), donated_args=[0])
    assert exe.donated_args == (0,) and "input_output_alias" in exe.as_text()
    x = f32(0, 1, 2)
    out = exe.execute([x])[0]
    assert x.is_deleted()
    np.testing.assert_allclose(np.asarray(out), np.exp([0, 1, 2]), rtol=1e-6)
    with pytest.raises(ValueError, match="donated_args has 3, but there are 1 arguments"):
        ort.compile(unary_module("exponential", name="jit_exp"), donated_args=[3])


def test_donated_argument_passed_twice():
    exe = ort.compile(binary_module("add", arg_attrs=("jax.buffer_donor = true", ""), name="jit_d2"))
    x = f32(1, 2, 3)
    with pytest.raises(ValueError, match="the same Array is passed as arguments 0 and 1"):
        exe.execute([x, x])
    assert not x.is_deleted()
    out = exe.execute([x, f32(1, 1, 1)])[0]
    assert x.is_deleted() and out.tolist() == [2, 3, 4]


def test_runtime_error_from_raw_executable():
    exe = ort.compile(binary_module("add"))
    with pytest.raises(ort.XlaRuntimeError, match="Execution supplied 1 arguments but compiled program expected 2"):
        exe.loaded.execute_sharded([f32(1, 2, 3)])
    assert issubclass(ort.XlaRuntimeError, RuntimeError)


CALLBACK_MODULE = """
module @jit_cb {
  func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%a) {api_version = 1 : i32, backend_config = "", has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}} : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}"""


def test_host_callback_and_runtime_error():
    seen = []

    def callback(x):
        seen.append(np.array(x))
        if x[0] < 0:
            raise ValueError("negative input to the callback")
        return (np.asarray(x * 2, np.float32),)

    exe = ort.compile(parse(CALLBACK_MODULE), host_callbacks=[callback])
    out = exe.execute([f32(1, 2, 3)])[0]
    assert out.tolist() == [2, 4, 6] and seen[0].tolist() == [1, 2, 3]
    # An error raised while the program runs surfaces as a Python exception.
    with pytest.raises(ort.XlaRuntimeError, match="negative input to the callback"):
        exe.execute([f32(-1, 0, 0)]).__getitem__(0).block_until_ready()


def test_executable_cache_holds_unused_executables_weakly_beyond_the_recent_ones():
    import gc
    import weakref

    exes = []
    for k in range(compiler.KEEP_RECENT + 8):  # distinct programs: x * k
        module = parse(f"""
        func.func public @main(%x: tensor<f32>) -> tensor<f32> {{
          %c = stablehlo.constant dense<{k}.0> : tensor<f32>
          %y = stablehlo.multiply %x, %c : tensor<f32>
          return %y : tensor<f32>
        }}""")
        exes.append(weakref.ref(ort.compile(module)))
    gc.collect()
    alive = [r() is not None for r in exes]
    # Nobody else holds them: only the most recent KEEP_RECENT stay.
    assert alive[-compiler.KEEP_RECENT:] == [True] * compiler.KEEP_RECENT
    assert alive[:8] == [False] * 8


def test_once_map_weak_values_and_recent_strong_refs():
    import gc

    from olympus_runtime._once import OnceMap

    class V:
        pass

    m = OnceMap(weak=True, keep=1)
    a = m.get_or_create("a", V)
    m.get_or_create("b", V)  # "a" is no longer among the recent ones...
    assert "a" in m  # ...but still used by us, so still there
    del a
    gc.collect()
    assert "a" not in m and m.get("b") is not None  # "b" is held as the recent one
    assert m.get_or_create("a", V) is not None  # built again on demand


def test_compile_mlir_text_without_a_context():
    """MLIR text compiles as it is (the runtime builds no MLIR context), cached by content."""
    text = """
    func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = stablehlo.add %x, %x : tensor<3xf32>
      return %y : tensor<3xf32>
    }"""
    aval = ShapedArray((3,), np.float32)
    exe = ort.compile(text, in_avals=[aval], out_avals=[aval])
    assert ort.compile(text, in_avals=[aval], out_avals=[aval]) is exe
    out = exe.execute([ort.device_put(np.array([1, 2, 3], np.float32))])[0]
    np.testing.assert_array_equal(np.asarray(out), [2, 4, 6])
