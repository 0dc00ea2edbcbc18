"""`olympus.extend.core` and the helpers JAX's custom-interpreter guide uses
(``ClosedOlympuspr.literals``, ``olympus._src.util.safe_map``)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus._src.util import safe_map, safe_zip
from olympus.extend import core
from olympus.extend.core import primitives


def _eval(olympuspr, consts, *args):
    """The guide's interpreter: walk the equations, binding each primitive."""
    env = {}

    def read(v):
        return v.val if type(v) is core.Literal else env[v]

    def write(v, val):
        env[v] = val

    safe_map(write, olympuspr.invars, args)
    safe_map(write, olympuspr.constvars, consts)
    for eqn in olympuspr.eqns:
        outvals = eqn.primitive.bind(*safe_map(read, eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            outvals = [outvals]
        safe_map(write, eqn.outvars, outvals)
    return safe_map(read, olympuspr.outvars)


def test_custom_interpreter_from_the_guide():
    """The guide's `eval_olympuspr` over `closed.olympuspr` and `closed.literals` gives the
    function's value (checked against NumPy)."""
    def f(x):
        return jnp.exp(jnp.tanh(x)) + jnp.float32(np.pi) * jnp.ones(5)

    closed = olympus.make_olympuspr(f)(jnp.ones(5))
    assert closed.literals is closed.consts
    assert closed.invars == closed.olympuspr.invars
    assert closed.outvars == closed.olympuspr.outvars
    assert closed.constvars == closed.olympuspr.constvars
    (out,) = _eval(closed.olympuspr, closed.literals, jnp.ones(5))
    np.testing.assert_allclose(out, np.exp(np.tanh(1.0)) + np.pi, rtol=1e-6)
    assert out.dtype == np.float32


def test_extend_core_names():
    """The IR types and helpers as ``jax.extend.core`` exports them."""
    closed = olympus.make_olympuspr(lambda x: x + 1)(1)
    assert isinstance(closed, core.ClosedOlympuspr)
    assert isinstance(closed.olympuspr, core.Olympuspr)
    (eqn,) = closed.eqns
    assert isinstance(eqn, core.OlympusprEqn)
    assert isinstance(eqn.invars[0], core.Var) and isinstance(eqn.invars[1], core.Literal)
    assert eqn.primitive is primitives.add_p is lax.add_p
    assert isinstance(eqn.primitive, core.Primitive)
    assert core.olympuspr_as_fun(closed)(4) == [5]
    assert list(core.subolympusprs(closed.olympuspr)) == []
    assert core.primal_dtype_to_tangent_dtype(np.dtype(np.float32)) == np.float32
    assert core.valid_olympustype(1.0) and not core.valid_olympustype("a")


def test_extend_primitives():
    """JAX's primitive names that Olympus has (each a real primitive, never a stand-in);
    add_olympusvals_p is add_any_p."""
    assert primitives.sin_p is lax.sin_p
    assert primitives.add_olympusvals_p is primitives.add_any_p
    assert primitives.add_any_p.name == "add_any"
    assert "cond_p" in primitives.__all__ and "scan_p" in primitives.__all__
    assert all(isinstance(getattr(primitives, n), core.Primitive) for n in primitives.__all__)


def test_safe_map_and_zip_messages():
    """Messages recorded from reference JAX 0.10.2's jax._src.util."""
    assert safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    assert safe_zip([1], [2]) == [(1, 2)]
    with pytest.raises(ValueError, match=r"^safe_map\(\) argument 2 is shorter than argument 1$"):
        safe_map(lambda a, b: a, [1, 2], [1])
    with pytest.raises(ValueError, match=r"^safe_map\(\) argument 2 is longer than argument 1$"):
        safe_map(lambda a, b: a, [1], [1, 2])
    with pytest.raises(ValueError, match=r"^safe_zip\(\) argument 1 has length 3 but argument 0 "
                                         r"has length 1\. All lengths: \(1, 3\)$"):
        safe_zip([1], [1, 2, 3])


def test_private_paths_the_primitives_page_imports():
    """JAX's "writing new primitives" page imports ``jax._src.lax.lax`` and ``jax._src.api``;
    the same paths reach olympus.lax and the transformations (values as the page prints
    them under reference JAX 0.10.2: 14.0 and 4.0)."""
    from olympus._src import api
    from olympus._src.lax import lax as lax_mod

    assert api.jit is olympus.jit
    assert lax_mod.add is lax.add

    def square_add_lax(a, b):
        return lax_mod.add(lax_mod.mul(a, a), b)

    assert float(square_add_lax(2.0, 10.0)) == 14.0
    assert float(api.grad(square_add_lax, argnums=0)(2.0, 10.0)) == 4.0
    assert float(api.jit(square_add_lax)(2.0, 10.0)) == 14.0
    with pytest.raises(AttributeError):
        api.no_such_name  # noqa: B018


# --- olympus.extend's other modules -----------------------------------------------------


def test_extend_backend():
    """Recorded from reference JAX 0.10.2 on CPU: ``backends()`` is ``{'cpu': client}``,
    ``backend_xla_version()`` is None, and an absent platform is a RuntimeError."""
    from olympus.extend import backend

    client = backend.get_backend()
    assert backend.backends() == {"cpu": client}
    assert client.platform == "cpu"
    assert backend.backend_xla_version() is None
    assert backend.get_default_device() == olympus.devices()[0]
    with pytest.raises(RuntimeError, match=r"^Unknown backend: 'gpu' requested, but no "
                                           r"platforms that are instances of gpu are "
                                           r"present\. Platforms present are: cpu$"):
        backend.get_backend("gpu")
    opts = backend.get_compile_options(1, 1, device_assignment=[olympus.devices()[0]])
    assert opts.num_replicas == 1 and opts.num_partitions == 1
    assert opts.executable_build_options.use_spmd_partitioning
    with pytest.raises(ValueError, match="device_assignment"):
        backend.get_compile_options(2, 1, device_assignment=[0])
    import functools

    @functools.lru_cache
    def doubled(x):
        return 2 * x

    doubled(1)
    backend.register_backend_cache(doubled, "test cache")
    with pytest.raises(TypeError, match="cache_clear"):
        backend.register_backend_cache(object(), "not a cache")
    f = olympus.jit(lambda x: x * 2)
    assert int(f(3)) == 6
    backend.clear_backends()  # compiled programs are forgotten; the client stays
    assert int(f(4)) == 8
    assert doubled.cache_info().currsize == 0  # registered caches are cleared too
    doubled(2)
    olympus.clear_caches()
    assert doubled.cache_info().currsize == 0


def test_extend_mlir_modules():
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    from olympus.extend import mlir as emlir
    from olympus.extend.mlir import ir as eir
    from olympus.extend.mlir.dialects import func
    from olympus.extend.mlir.dialects import stablehlo as ehlo

    assert eir.Context is ir.Context
    assert ehlo.AddOp is stablehlo.AddOp
    assert func.FuncOp is not None
    from olympus.extend import lowering

    ctx = ir.Context()
    ctx.append_dialect_registry(lowering.upstream_dialects)
    ctx.load_all_available_dialects()
    with ctx:
        # MLIR's upstream dialects (func, arith, ...); StableHLO is registered apart.
        m = ir.Module.parse("func.func @f(%a: i32) -> i32 {\n"
                            "  %0 = arith.addi %a, %a : i32\n"
                            "  return %0 : i32\n}")
    assert "arith.addi" in str(m)
    assert lowering.OlympusIrContext is ir.Context
    # A module round-trips through the portable artifact helpers.
    text = olympus.jit(lambda x: x + 1).lower(np.float32(1)).as_text()
    art = emlir.serialize_portable_artifact(text, "1.0.0")
    assert isinstance(art, bytes) and len(art) > 0
    from olympus.interpreters.mlir import make_ir_context

    back = emlir.deserialize_portable_artifact(art, make_ir_context())
    assert "stablehlo.add %arg0" in str(back)


def test_extend_random():
    """Key data and the threefry hash as reference JAX 0.10.2 gives them: seed 3 is
    ``[0 3]`` (threefry) and ``[0 3 0 3]`` (rbg); threefry_2x32([1, 2], arange(4)) is
    ``[4128513521 3192206206 2345921600 3057534555]``."""
    from olympus.extend import random as erandom

    k = erandom.random_seed(3, impl=erandom.threefry_prng_impl)
    np.testing.assert_array_equal(olympus.random.key_data(k), [0, 3])
    k = erandom.seed_with_impl(erandom.rbg_prng_impl, 3)
    np.testing.assert_array_equal(olympus.random.key_data(k), [0, 3, 0, 3])
    out = erandom.threefry_2x32(np.array([1, 2], np.uint32), np.arange(4, dtype=np.uint32))
    np.testing.assert_array_equal(out, [4128513521, 3192206206, 2345921600, 3057534555])
    assert erandom.threefry2x32_p.name == "threefry2x32"
    impl = erandom.define_prng_impl(
        key_shape=(2,), seed=erandom.threefry_prng_impl.seed,
        split=erandom.threefry_prng_impl.split,
        random_bits=erandom.threefry_prng_impl.random_bits,
        fold_in=erandom.threefry_prng_impl.fold_in, name="test_extend_mine", tag="m")
    k = erandom.random_seed(3, impl=impl)
    np.testing.assert_array_equal(olympus.random.key_data(k), [0, 3])
    assert str(k.dtype) == "key<m>"
    np.testing.assert_array_equal(olympus.random.key_data(olympus.random.split(k)),
                                  olympus.random.key_data(olympus.random.split(
                                      olympus.random.key(3))))
    with pytest.raises(ValueError, match="already defined"):
        erandom.define_prng_impl(key_shape=(2,), seed=impl.seed, split=impl.split,
                                 random_bits=impl.random_bits, fold_in=impl.fold_in,
                                 name="rbg")


def test_extend_sharding_protos():
    from jaxlib import xla_client as xc

    from olympus.extend import sharding as esharding

    s = xc.HloSharding.replicate()
    data = esharding.get_serialized_proto_from_hlo_sharding(s)
    assert esharding.get_hlo_sharding_from_serialized_proto(data) == s
    assert esharding.get_op_sharding_from_serialized_proto(data).type == \
        xc.OpSharding.Type.REPLICATED
    assert esharding.GSPMDSharding is not None


def test_extend_source_info_util():
    """Name stacks print as JAX's (``NameStack(stack=(Scope(name='a'),))``, recorded from
    reference JAX 0.10.2); an extended stack is what traced equations record."""
    from olympus.extend import source_info_util as siu

    assert repr(siu.new_name_stack("a")) == "NameStack(stack=(Scope(name='a'),))"
    assert repr(siu.current_name_stack()) == "NameStack(stack=())"
    with siu.extend_name_stack("outer"), siu.extend_name_stack("inner"):
        assert str(siu.current_name_stack()) == "outer/inner"
        j = olympus.make_olympuspr(lambda x: jnp.sin(x))(1.0)
        with siu.reset_name_stack():
            assert str(siu.current_name_stack()) == ""
    assert j.eqns[0].source_info.name_stack == "outer/inner"
    here = siu.current()
    assert here.file == __file__ and here.function == "test_extend_source_info_util"
    assert siu.summarize(here) == f"{__file__}:{here.line} (test_extend_source_info_util)"
    assert siu.summarize(None) == "unknown"


def test_extend_linear_util_and_partial_eval():
    """A `WrappedFun` with a generator transformation and an aux transformation, staged
    by ``partial_eval.trace_to_olympuspr_dynamic`` and trimmed by ``dce_olympuspr``
    (values by hand: 2*(x + y))."""
    import warnings

    from olympus.extend import linear_util as lu
    from olympus.interpreters import partial_eval as pe
    from olympus_ir.core import DebugInfo

    def f(x, y):
        return [jnp.sin(x), x + y]

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lu.wrap_init(f)
    assert w and w[0].category is DeprecationWarning
    wf = lu.wrap_init(f, debug_info=DebugInfo("test", "f", ("x", "y")))

    @lu.transformation
    def double(*args):
        out = yield args, {}
        yield [2 * o for o in out]

    @lu.transformation_with_aux2
    def count(f, store, *args):
        out = f(*args)
        store.store(len(out))
        return out

    g, aux = count(double(wf))
    out = g.call_wrapped(1.0, 2.0)
    assert float(out[1]) == 6.0 and aux() == 2
    with pytest.raises(lu.StoreException, match="Store occupied"):
        g.call_wrapped(1.0, 2.0)
    a = olympus.core.ShapedArray((), np.float32)
    j, out_avals, consts = pe.trace_to_olympuspr_dynamic(double(wf), [a, a])
    assert [e.primitive.name for e in j.eqns] == ["sin", "add", "mul", "mul"]
    assert out_avals == [a, a] and consts == []
    j2, used = pe.dce_olympuspr(j, [False, True])
    assert used == [True, True] and [e.primitive.name for e in j2.eqns] == ["add", "mul"]
    assert float(core.olympuspr_as_fun(core.ClosedOlympuspr(j2, []))(1.0, 2.0)[0]) == 6.0
    j3, used = pe.dce_olympuspr(j, [True, False])
    assert used == [True, False] and len(j3.invars) == 1
    assert lu.merge_linear_aux(lambda: 1, _raise_store) == (True, 1)
    # Constvars too: a closed-over array used only by a dropped output goes.
    c = np.full(2, 5.0, np.float32)
    jc = olympus.make_olympuspr(lambda x: (x * c, x + 1))(np.ones(2, np.float32)).olympuspr
    assert len(jc.constvars) == 1
    j4, used_c, used_i = pe.dce_olympuspr_consts(jc, [False, True])
    assert (used_c, used_i, j4.constvars) == ([False], [True], [])
    assert [e.primitive.name for e in j4.eqns] == ["add"]
    j5, used_c, used_i = pe.dce_olympuspr_consts(jc, [True, False])
    assert (used_c, used_i, len(j5.constvars)) == ([True], [True], 1)
    assert [e.primitive.name for e in j5.eqns] == ["mul"]

    calls = []

    @lu.cache
    def traced(fun, n):
        calls.append(n)
        return fun.call_wrapped(n, n)

    doubled = double(wf)
    traced(doubled, 1.0)
    traced(doubled, 1.0)
    traced(doubled, 2.0)
    assert calls == [1.0, 2.0]


def _raise_store():
    from olympus.extend.linear_util import StoreException

    raise StoreException("Store empty")


def test_private_xla_bridge_and_xla_client_as_autodidax_uses_them():
    """Autodidax compiles its own StableHLO text with ``jax._src.xla_bridge`` and feeds it
    with ``jax._src.lib.xla_client.batched_device_put`` (JAX's docs; its 98 cells run with
    the same output under Olympus)."""
    from olympus._src import xla_bridge as xb
    from olympus._src.lib import xla_client as xc

    backend = xb.get_backend(None)
    assert backend is xb.get_backend("cpu") and xb.default_backend() == "cpu"
    assert list(xb.backends()) == ["cpu"]
    text = """module @m { func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.add %a, %a : tensor<3xf32>
      return %0 : tensor<3xf32> } }"""
    compiled = backend.compile_and_load(text, backend.devices()[:1])
    device = backend.devices()[0]
    x = np.array([1.0, 2.0, 3.0], np.float32)
    buf = xc.batched_device_put(olympus.core.ShapedArray((3,), np.float32),
                                xc.GSPMDSharding((device,), xc.OpSharding()),
                                [x], [device], True, enable_x64=True)
    np.testing.assert_array_equal(np.asarray(compiled.execute([buf])[0]), 2 * x)
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
        xb.get_backend("gpu")


def test_primitive_lowered_to_a_custom_call_as_the_export_page():
    """JAX's export page defines a primitive through the private paths ``jax._src.core``
    and ``jax._src.interpreters.mlir`` and lowers it with ``mlir.custom_call``; the lowered
    line, the export error and the disabled check were recorded from reference JAX 0.10.2."""
    from olympus import export
    from olympus._src import core
    from olympus._src.interpreters import mlir

    new_prim = core.Primitive("new_prim_for_export_page")
    new_prim.def_abstract_eval(lambda x: x)
    mlir.register_lowering(new_prim, lambda ctx, o: mlir.custom_call(
        "my_new_prim", operands=[o], result_types=[o.type]).results)
    text = str(olympus.jit(new_prim.bind).lower(1.0).compiler_ir())
    assert ("%0 = stablehlo.custom_call @my_new_prim(%arg0) {api_version = 2 : i32, "
            'backend_config = ""} : (tensor<f32>) -> tensor<f32>') in text
    with pytest.raises(ValueError, match="Cannot serialize code with custom calls whose "
                       "targets have no compatibility guarantees"):
        export.export(olympus.jit(new_prim.bind))(1.0)
    exp = export.export(olympus.jit(new_prim.bind), disabled_checks=[
        export.DisabledSafetyCheck.custom_call("my_new_prim")])(1.0)
    assert "stablehlo.custom_call @my_new_prim" in exp.mlir_module()


def test_custom_call_attributes():
    """`mlir.custom_call`'s options land on the op as JAX's helper puts them (a dict
    backend config in ``mhlo.backend_config`` with API version 1, the default, so not
    printed; layouts as index tensors; side effects): the lowered line was recorded from
    reference JAX 0.10.2."""
    from olympus._src.interpreters import mlir

    p = olympus.extend.core.Primitive("custom_call_attributes_check")
    p.def_abstract_eval(lambda x: x)

    def rule(ctx, o):
        return mlir.custom_call(
            "target_x", operands=[o], result_types=[o.type], has_side_effect=True,
            backend_config={"k": mlir.i32_attr(3)}, operand_layouts=[(1, 0)],
            result_layouts=[(1, 0)]).results

    mlir.register_lowering(p, rule)
    text = olympus.jit(p.bind).lower(np.ones((2, 3), np.float32)).as_text()
    line = next(ln for ln in text.splitlines() if "target_x" in ln)
    assert line.strip() == (
        '%0 = stablehlo.custom_call @target_x(%arg0) {backend_config = "", '
        "has_side_effect = true, mhlo.backend_config = {k = 3 : i32}, operand_layouts = "
        "[dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : "
        "tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>")
    with pytest.raises(ValueError, match="backend_config unexpected type"):
        mlir.custom_call("t", operands=[], result_types=[], backend_config=3)
