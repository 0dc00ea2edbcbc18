"""The ahead-of-time stages: `jit(f).trace(...)` -> Traced -> Lowered -> Compiled.

Texts (olympuspr, StableHLO) are compared exactly for small functions; analyses are checked
against hand-computed numbers; calling a Compiled with the wrong types, or under a
transformation, must raise the documented TypeErrors.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus._src import jit as jit_mod
from olympus.stages import ArgInfo, Compiled, Lowered, OutInfo, Traced


def f(x, y):
    return 2 * x + y


I32 = olympus.ShapeDtypeStruct((), jnp.dtype("int32"))

F_JAXPR = (
    "{ lambda ; a:i32[] b:i32[]. let\n"
    "    c:i32[] = mul 2:i32[] a\n"
    "    d:i32[] = add c b\n"
    "  in (d,) }"
)

F_MODULE = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<i32>) -> (tensor<i32> {olympus.result_info = "result"}) {
    %c = stablehlo.constant dense<2> : tensor<i32>
    %0 = stablehlo.multiply %c, %arg0 : tensor<i32>
    %1 = stablehlo.add %0, %arg1 : tensor<i32>
    return %1 : tensor<i32>
  }
}
"""  # noqa: E501

F_STATIC_MODULE = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32>) -> (tensor<i32> {olympus.result_info = "result"}) {
    %c = stablehlo.constant dense<14> : tensor<i32>
    %0 = stablehlo.add %c, %arg0 : tensor<i32>
    return %0 : tensor<i32>
  }
}
"""


def _strip(text: str) -> str:
    return text.rstrip("\n")


# --- Traced -------------------------------------------------------------------------------------


def test_trace_returns_traced_with_exact_olympuspr():
    traced = olympus.jit(f).trace(3, 4)
    assert isinstance(traced, Traced)
    assert str(traced.olympuspr) == F_JAXPR
    assert traced.fun_name == "f"


def test_traced_olympuspr_of_a_float_function():
    def g(x):
        return jnp.sin(x) * 2.0

    traced = olympus.jit(g).trace(jnp.zeros(3))
    assert str(traced.olympuspr) == (
        "{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }"
    )


def test_traced_args_info_and_out_info():
    def h(p, x):
        return {"out": p["w"] @ x, "n": jnp.sum(x)}

    traced = olympus.jit(h).trace({"w": jnp.zeros((2, 3))}, jnp.zeros(3, jnp.float32))
    args, kwargs = traced.args_info
    assert kwargs == {}
    assert isinstance(args[0]["w"], ArgInfo)
    assert args[0]["w"].shape == (2, 3) and args[0]["w"].dtype == np.float32
    assert args[1].shape == (3,) and not args[1].weak_type and not args[1].donated
    out = traced.out_info
    assert set(out) == {"out", "n"}
    assert isinstance(out["out"], OutInfo)
    assert (out["out"].shape, out["out"].dtype) == ((2,), np.float32)
    assert (out["n"].shape, out["n"].dtype) == ((), np.float32)
    assert str(traced.in_tree) == "PyTreeDef((({'w': *}, *), {}))"
    assert str(traced.out_tree) == "PyTreeDef({'n': *, 'out': *})"


def test_args_info_records_weak_types():
    (a, b), _ = olympus.jit(f).trace(3, np.int32(4)).args_info
    assert (a.shape, a.dtype, a.weak_type) == ((), np.int32, True)
    assert (b.shape, b.dtype, b.weak_type) == ((), np.int32, False)
    out = olympus.jit(f).trace(3, 4).out_info
    assert out.weak_type is True


def test_traced_object_is_callable_like_jaxs():
    """Issue 17: a Traced evaluates its olympuspr on the dynamic arguments, op by op (JAX's
    Traced.__call__; values and weak types recorded from reference JAX 0.10.2)."""
    t = olympus.jit(lambda x, y: x * y).trace(1.0, 2.0)
    out = t(1.0, 2.0)
    assert float(out) == 2.0 and out.dtype == np.float32 and out.weak_type
    out = olympus.jit(lambda x: x * 2).trace(1.0)(jnp.float32(3.0))
    assert float(out) == 6.0 and not out.weak_type
    assert float(olympus.grad(t)(1.0, 2.0)) == 2.0
    assert float(olympus.jit(t)(3.0, 2.0)) == 6.0
    s = olympus.jit(lambda x, k: x * k, static_argnums=1).trace(1.0, 3)
    assert float(s(2.0)) == 6.0  # the static argument was fixed at trace time
    with pytest.raises(TypeError, match="takes arguments of structure"):
        t(1.0)


def test_trace_accepts_shape_dtype_structs_and_duck_typed_objects():
    traced = olympus.jit(f).trace(I32, I32)
    assert str(traced.olympuspr) == (
        "{ lambda ; a:i32[] b:i32[]. let\n"
        "    c:i32[] = mul 2:i32[] a\n"
        "    d:i32[] = add c b\n"
        "  in (d,) }"
    )

    class Spec:
        shape = (2, 3)
        dtype = np.dtype("int16")

    traced = olympus.jit(lambda x: x.max(axis=1)).trace(Spec())
    assert str(traced.olympuspr) == (
        "{ lambda ; a:i16[2,3]. let b:i16[2] = reduce_max[axes=(1,)] a in (b,) }")
    out = traced.lower().compile()(np.array([[1, 3, 2], [-1, -5, -2]], np.int16))
    assert out.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(out), [3, -1])


def test_shape_dtype_struct_arguments_give_strong_types():
    out = olympus.jit(f).trace(I32, I32).lower().compile()(3, 4)
    assert repr(out) == "Array(10, dtype=int32)"
    weak = olympus.ShapeDtypeStruct((), jnp.int32, weak_type=True)
    out = olympus.jit(f).trace(weak, weak).lower().compile()(3, 4)
    assert repr(out) == "Array(10, dtype=int32, weak_type=True)"


# --- Lowered ------------------------------------------------------------------------------------


def test_lowered_as_text_is_exact():
    lowered = olympus.jit(f).trace(3, 4).lower()
    assert isinstance(lowered, Lowered)
    assert _strip(lowered.as_text()) == _strip(F_MODULE)


def test_lower_shortcut_equals_trace_then_lower():
    assert olympus.jit(f).lower(3, 4).as_text() == olympus.jit(f).trace(3, 4).lower().as_text()
    assert isinstance(olympus.jit(f).lower(3, 4), Lowered)


def test_lowered_as_text_of_a_float_function():
    def g(x):
        return jnp.sin(x) * 2.0

    text = olympus.jit(g).lower(jnp.zeros(3)).as_text()
    assert _strip(text) == _strip("""\
module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {olympus.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<3xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<3xf32>
    return %2 : tensor<3xf32>
  }
}
""")  # noqa: E501


def test_lowered_result_names_follow_output_pytree_paths():
    def h(x):
        return {"b": x * 2, "a": (x, x + 1)}

    text = olympus.jit(h).lower(jnp.zeros(2)).as_text()
    names = re.findall(r'olympus.result_info = "([^"]*)"', text)
    assert names == ["result['a'][0]", "result['a'][1]", "result['b']"]


def test_lowered_marks_donated_arguments():
    # A donated input whose type matches an output is aliased to it ...
    text = olympus.jit(lambda x, y: x + y, donate_argnums=1).lower(
        jnp.zeros(2), jnp.zeros(2)).as_text()
    assert "%arg0: tensor<2xf32>, %arg1: tensor<2xf32> {tf.aliasing_output = 0 : i32}" in text
    # ... otherwise, on one device, it is not marked and JAX's warning says so (the text
    # and the warning as reference JAX 0.10.2 gives them).
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: "
                                         r"float32\[2,3\]\.\nSee an explanation at "
                                         r"https://docs.jax.dev/en/latest/faq.html"
                                         r"#buffer-donation\."):
        text = olympus.jit(lambda x, y: x.sum(0) + y, donate_argnums=0).lower(
            jnp.zeros((2, 3)), jnp.zeros(3)).as_text()
    assert "%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>)" in text


def test_static_argument_is_folded_into_lowered_text():
    lowered_with_x = olympus.jit(f, static_argnums=0).trace(7, 8).lower()
    assert _strip(lowered_with_x.as_text()) == _strip(F_STATIC_MODULE)
    assert repr(lowered_with_x.compile()(5)) == "Array(19, dtype=int32, weak_type=True)"
    (only,), _ = lowered_with_x.args_info
    assert only.shape == () and only.weak_type
    assert str(lowered_with_x.in_tree) == "PyTreeDef(((*,), {}))"


def test_as_text_with_debug_info_has_locations_from_this_file():
    lowered = olympus.jit(f).trace(3, 4).lower()
    text = lowered.as_text(debug_info=True)
    assert "loc(" in text
    assert Path(__file__).name in text
    assert 'loc("x")' in text and 'loc("y")' in text  # argument names
    assert Path(__file__).name not in lowered.as_text()


def test_as_text_and_compiler_ir_reject_unknown_dialects():
    lowered = olympus.jit(f).lower(3, 4)
    assert lowered.as_text("stablehlo") == lowered.as_text()
    with pytest.raises(ValueError, match="dialect"):
        lowered.as_text("no-such-dialect")
    with pytest.raises(ValueError, match="dialect"):
        lowered.compiler_ir("no-such-dialect")


def test_compiler_ir_is_an_mlir_module_with_the_same_program():
    lowered = olympus.jit(f).lower(3, 4)
    module = lowered.compiler_ir()
    assert type(module).__name__ == "Module"
    text = str(module)
    assert "stablehlo.multiply" in text and "stablehlo.add" in text
    assert "func.func public @main(%arg0: tensor<i32>, %arg1: tensor<i32>)" in text
    assert lowered.compiler_ir("stablehlo") is not None


def test_lowered_in_tree_out_tree_and_cost_analysis():
    lowered = olympus.jit(lambda x, y: (x + y, x * y)).lower(jnp.zeros(4), y=jnp.zeros(4))
    assert str(lowered.in_tree) == "PyTreeDef(((*,), {'y': *}))"
    assert str(lowered.out_tree) == "PyTreeDef((*, *))"
    cost = lowered.cost_analysis()
    assert cost["flops"] == 8.0


# --- Compiled -----------------------------------------------------------------------------------


def test_compiled_call_and_cost_analysis():
    compiled = olympus.jit(f).trace(3, 4).lower().compile()
    assert isinstance(compiled, Compiled)
    assert compiled.cost_analysis()["flops"] == 2.0
    assert repr(compiled(3, 4)) == "Array(10, dtype=int32, weak_type=True)"
    assert int(compiled(-5, 100)) == 90


def test_compiled_flops_scale_with_the_problem():
    add = olympus.jit(lambda x: x + 1).lower(jnp.zeros(1000, jnp.float32)).compile()
    assert add.cost_analysis()["flops"] == 1000.0
    mm = olympus.jit(lambda a, b: a @ b).lower(jnp.zeros((10, 20)), jnp.zeros((20, 30))).compile()
    assert mm.cost_analysis()["flops"] == 2 * 10 * 20 * 30


def test_compiled_memory_analysis_byte_counts():
    x = olympus.ShapeDtypeStruct((1000,), jnp.float32)
    compiled = olympus.jit(lambda a, b: a * b + 1).trace(x, x).lower().compile()
    mem = compiled.memory_analysis()
    assert mem.argument_size_in_bytes == 2 * 1000 * 4
    assert mem.output_size_in_bytes == 1000 * 4
    assert mem.alias_size_in_bytes == 0
    assert mem.temp_size_in_bytes >= 0
    # Donating an input lets the output reuse it.
    donated = olympus.jit(lambda a, b: a * b + 1, donate_argnums=0).trace(x, x).lower().compile()
    assert donated.memory_analysis().alias_size_in_bytes == 1000 * 4


def test_compiled_as_text_is_optimized_hlo():
    text = olympus.jit(f).lower(3, 4).compile().as_text()
    assert "HloModule jit_f" in text
    assert "ENTRY" in text
    assert "s32[]" in text


def test_compiled_keeps_pytree_structure_and_values():
    def h(p, x):
        return {"out": p["w"] @ x, "n": jnp.sum(x)}

    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = np.array([1.0, -1.0, 2.0], np.float32)
    compiled = olympus.jit(h).trace({"w": jnp.zeros((2, 3))}, jnp.zeros(3)).lower().compile()
    out = compiled({"w": jnp.asarray(w)}, jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(out["out"]), w @ x)
    assert float(out["n"]) == 2.0
    assert str(compiled.out_tree) == "PyTreeDef({'n': *, 'out': *})"


def test_calling_compiled_does_not_trace_or_compile():
    compiled = olympus.jit(lambda x: x * 3).lower(jnp.zeros(5)).compile()
    args = [jnp.full(5, float(i)) for i in range(3)]
    before = dict(jit_mod.counters)
    outs = [compiled(a) for a in args]
    assert jit_mod.counters == before
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(np.asarray(out), [3.0 * i] * 5)


def test_compiled_accepts_numpy_arguments_of_the_right_type():
    compiled = olympus.jit(lambda x: x[::-1]).lower(jnp.zeros(3, jnp.int32)).compile()
    out = compiled(np.array([1, 2, 3], np.int32))
    assert isinstance(out, olympus.Array)
    assert np.asarray(out).tolist() == [3, 2, 1]


def test_compiled_with_static_argument_takes_only_dynamic_ones():
    compiled = olympus.jit(f, static_argnums=0).trace(10, I32).lower().compile()
    assert repr(compiled(5)) == "Array(25, dtype=int32)"
    with pytest.raises(TypeError):
        compiled(10, 5)


def test_static_arguments_must_be_concrete():
    with pytest.raises(TypeError,
                       match=r"unsupported operand type\(s\) for \*: 'int' and "
                             r"'ShapeDtypeStruct'"):
        olympus.jit(f, static_argnums=0).trace(I32, I32)


def test_trace_then_call_shares_the_trace():
    def k(x):
        return x - 1

    jk = olympus.jit(k)
    arg = jnp.zeros(3)
    jk.trace(arg)
    before = dict(jit_mod.counters)
    out = jk(arg)
    assert jit_mod.counters["trace"] == before["trace"]
    np.testing.assert_array_equal(np.asarray(out), [-1.0] * 3)


# --- type checking of Compiled calls ------------------------------------------------------------

MISMATCH = ("Argument types differ from the types for which this computation was compiled. "
            "The mismatches are:\n")


def _type_error(fn, *args, **kwargs) -> str:
    with pytest.raises(TypeError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_mismatched_shapes_list_every_argument():
    compiled = olympus.jit(f).trace(I32, I32).lower().compile()
    x_1d = y_1d = jnp.arange(3)
    assert _type_error(compiled, x_1d, y_1d) == (
        MISMATCH
        + "Argument 'x' compiled with int32[] and called with int32[3]\n"
        + "Argument 'y' compiled with int32[] and called with int32[3]"
    )


def test_mismatched_dtypes_list_every_argument():
    compiled = olympus.jit(f).trace(I32, I32).lower().compile()
    x_f = y_f = jnp.float32(72.0)
    assert _type_error(compiled, x_f, y_f) == (
        MISMATCH
        + "Argument 'x' compiled with int32[] and called with float32[]\n"
        + "Argument 'y' compiled with int32[] and called with float32[]"
    )


def test_only_mismatched_arguments_are_listed():
    compiled = olympus.jit(f).trace(I32, I32).lower().compile()
    assert _type_error(compiled, 1, jnp.arange(2)) == (
        MISMATCH + "Argument 'y' compiled with int32[] and called with int32[2]"
    )


def test_mismatch_names_use_pytree_paths():
    def h(x, y):
        return x["a"] + x["b"] * y

    compiled = olympus.jit(h).trace({"a": jnp.zeros(3), "b": jnp.zeros(3)}, 1.0).lower().compile()
    np.testing.assert_allclose(
        np.asarray(compiled({"a": jnp.ones(3), "b": jnp.ones(3)}, 2.0)), [3.0] * 3)
    assert _type_error(compiled, {"a": jnp.ones(3, jnp.int32), "b": jnp.ones(4)},
                       jnp.ones(2)) == (
        MISMATCH
        + "Argument 'x['a']' compiled with float32[3] and called with int32[3]\n"
        + "Argument 'x['b']' compiled with float32[3] and called with float32[4]\n"
        + "Argument 'y' compiled with float32[] and called with float32[2]"
    )


def test_mismatch_names_for_keyword_arguments():
    compiled = olympus.jit(f).trace(1, y=2).lower().compile()
    assert int(compiled(5, y=6)) == 16
    assert _type_error(compiled, 5, y=jnp.ones(2)) == (
        MISMATCH + "Argument 'y' compiled with int32[] and called with float32[2]"
    )


def test_wrong_pytree_structure_is_a_type_error():
    compiled = olympus.jit(f).trace(I32, I32).lower().compile()
    msg = _type_error(compiled, 1)
    assert "pytree" in msg
    msg = _type_error(compiled, x=1, y=2)
    assert "pytree" in msg


# --- AOT-compiled functions refuse transformations ----------------------------------------------

TRANSFORM_MSG = ("Cannot apply OLYMPUS transformations to a function lowered and compiled for a "
                 "particular signature. Detected argument of Tracer type <class '")


def test_compiled_under_make_olympuspr_raises():
    compiled = olympus.jit(lambda x: x + 1).trace(I32).lower().compile()
    with pytest.raises(TypeError) as info:
        olympus.make_olympuspr(lambda x: compiled(x))(1)
    assert str(info.value).startswith(TRANSFORM_MSG)
    assert "Tracer" in str(info.value).split("<class '")[1]


def test_compiled_under_jit_raises():
    compiled = olympus.jit(lambda x: x + 1).trace(I32).lower().compile()

    @olympus.jit
    def outer(x):
        return compiled(x) * 2

    with pytest.raises(TypeError) as info:
        outer(np.int32(1))
    assert str(info.value).startswith(TRANSFORM_MSG)
    # Called directly, it is fine.
    assert int(compiled(np.int32(1))) == 2


def test_compiled_under_vmap_raises_while_the_jitted_function_batches():
    def g(x):
        assert x.shape == (3, 2)
        return x @ jnp.ones(2)

    z = jnp.arange(6).reshape(3, 2)
    zs = jnp.arange(24).reshape(4, 3, 2)
    g_aot = olympus.jit(g).trace(z).lower().compile()
    out = olympus.vmap(olympus.jit(g))(zs)
    np.testing.assert_allclose(np.asarray(out), np.arange(24).reshape(4, 3, 2).sum(-1))
    with pytest.raises(TypeError) as info:
        olympus.vmap(g_aot)(zs)
    assert str(info.value).startswith(TRANSFORM_MSG)
    assert "BatchTracer" in str(info.value)


def test_compiled_under_grad_raises_while_the_jitted_function_differentiates():
    square = olympus.jit(lambda x: x * x)
    compiled = square.lower(1.0).compile()
    assert float(olympus.grad(square)(3.0)) == 6.0
    with pytest.raises(TypeError) as info:
        olympus.grad(compiled)(3.0)
    assert str(info.value).startswith(TRANSFORM_MSG)


def test_trace_under_a_transformation_raises():
    with pytest.raises(TypeError) as info:
        olympus.make_olympuspr(lambda x: olympus.jit(f).trace(x, x))(1)
    assert str(info.value).startswith(TRANSFORM_MSG)


def test_stages_module_exports():
    assert olympus.stages.Traced is Traced
    assert olympus.stages.Lowered is Lowered
    assert olympus.stages.Compiled is Compiled
    assert isinstance(olympus.jit(f), olympus.stages.Wrapped)


# --- the docs reproduce the seed AOT page -------------------------------------------------------


def test_docs_contain_every_example_of_the_aot_page_with_its_output():
    """docs/*.md (run as doctests by `nox -s olympus`) repeat each `>>>` example of the AOT
    specification page with the same source and the same expected output (doctest
    directives aside)."""
    import doctest

    from seeds import AOT_PAGE, seed_text

    docs_dir = Path(__file__).resolve().parents[1] / "docs"
    docs = "\n".join(p.read_text(encoding="utf-8") for p in sorted(docs_dir.glob("*.md")))
    directive = re.compile(r"\s*# doctest:.*$", re.M)
    parser = doctest.DocTestParser()
    have = {(directive.sub("", e.source), e.want) for e in parser.get_examples(docs)}
    seed = parser.get_examples(seed_text(AOT_PAGE))
    assert len(seed) > 20
    missing = [e.source for e in seed if (directive.sub("", e.source), e.want) not in have]
    assert not missing, missing


def test_compiler_options_type_and_use():
    """``olympus.stages.CompilerOptions`` is JAX's type of ``compile``'s options (option
    name -> str or bool); a dict of that type is accepted by ``Lowered.compile``."""
    from olympus.stages import CompilerOptions

    assert CompilerOptions == dict[str, str | bool]
    opts: CompilerOptions = {}
    f = olympus.jit(lambda x: x * 2).lower(np.float32(3)).compile(opts)
    assert float(f(np.float32(3))) == 6.0


def test_hlo_text_names_parameters_and_instructions_as_jax():
    """`as_text(dialect="hlo")` keeps the module's locations, so XLA names parameters after
    the arguments and instructions after the primitives (recorded from JAX 0.10.2)."""
    def f(x, y):
        return jnp.sin(x) * y

    assert olympus.jit(f).lower(1.0, 2.0).as_text(dialect="hlo") == """\
HloModule jit_f, entry_computation_layout={(f32[], f32[])->f32[]}

ENTRY main.1 {
  x.1 = f32[] parameter(0)
  sin.1 = f32[] sine(x.1)
  y.1 = f32[] parameter(1)
  ROOT mul.1 = f32[] multiply(sin.1, y.1)
}

"""


def test_lowered_text_keeps_jax_converts():
    """Recorded from reference JAX 0.10.2: a convert_element_type lowers to a
    `stablehlo.convert` even when only the weak type changes, and a cast to bool ends in
    one after the comparison."""
    import olympus.numpy as jnp

    x = jnp.ones(3)
    text = olympus.jit(lambda x, y: x * y).lower(x, 2.0).as_text()
    assert "    %0 = stablehlo.convert %arg1 : tensor<f32>\n" \
           "    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> " \
           "tensor<3xf32>\n    %2 = stablehlo.multiply %arg0, %1 : tensor<3xf32>\n" in text
    text = olympus.jit(lambda x: x.astype(bool)).lower(x).as_text()
    assert "stablehlo.compare NE, %arg0, %0, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> " \
           "tensor<3xi1>\n    %2 = stablehlo.convert %1 : tensor<3xi1>\n" in text


def test_compiled_header_asks_jax_sharding_propagation():
    """Recorded from reference JAX 0.10.2: on one device, the compiled module's header
    shows that XLA may choose the unspecified arguments' and results' shardings."""
    import olympus.numpy as jnp

    x = jnp.ones(3)
    head = olympus.jit(lambda x, y: x + y).lower(x, 1.0).compile().as_text().splitlines()[0]
    assert head.endswith("entry_computation_layout={(f32[3]{0}, f32[])->f32[3]{0}}, "
                         "allow_spmd_sharding_propagation_to_parameters={true,true}, "
                         "allow_spmd_sharding_propagation_to_output={true}")
    head = olympus.jit(lambda x: (x, x * 2)).lower(x).compile().as_text().splitlines()[0]
    assert head.endswith("allow_spmd_sharding_propagation_to_parameters={true}, "
                         "allow_spmd_sharding_propagation_to_output={true,true}")
