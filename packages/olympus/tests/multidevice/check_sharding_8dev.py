"""Arrays and jit over 8 virtual CPU devices. Run in its own process by
`test_sharding.py` (the device count is fixed per process): ``OLYMPUS_NUM_CPU_DEVICES=8``.

Expected pictures, printed types and lowered text were recorded from reference JAX 0.10.2
run in its own process (``jax_num_cpu_devices=8``; the pictures with ``rich`` on a
terminal without colors). Sharded results are compared with the single-device ones.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.sharding import AxisType, NamedSharding
from olympus.sharding import PartitionSpec as P

pytestmark = pytest.mark.skipif(
    olympus.device_count() != 8, reason="needs OLYMPUS_NUM_CPU_DEVICES=8 (see test_sharding.py)")

AUTO = (AxisType.Auto, AxisType.Auto)

VISUALIZE_JAX = {
    '2d_xy': (
        '┌───────┬───────┐\n'
        '│ CPU 0 │ CPU 1 │\n'
        '├───────┼───────┤\n'
        '│ CPU 2 │ CPU 3 │\n'
        '├───────┼───────┤\n'
        '│ CPU 4 │ CPU 5 │\n'
        '├───────┼───────┤\n'
        '│ CPU 6 │ CPU 7 │\n'
        '└───────┴───────┘\n'
    ),
    '2d_x': (
        '┌──────────┐\n'
        '│ CPU 0,1  │\n'
        '├──────────┤\n'
        '│ CPU 2,3  │\n'
        '├──────────┤\n'
        '│ CPU 4,5  │\n'
        '├──────────┤\n'
        '│ CPU 6,7  │\n'
        '└──────────┘\n'
    ),
    '2d_yx': (
        '┌───────┬───────┬───────┬───────┐\n'
        '│       │       │       │       │\n'
        '│ CPU 0 │ CPU 2 │ CPU 4 │ CPU 6 │\n'
        '│       │       │       │       │\n'
        '│       │       │       │       │\n'
        '├───────┼───────┼───────┼───────┤\n'
        '│       │       │       │       │\n'
        '│ CPU 1 │ CPU 3 │ CPU 5 │ CPU 7 │\n'
        '│       │       │       │       │\n'
        '│       │       │       │       │\n'
        '└───────┴───────┴───────┴───────┘\n'
    ),
    '2d_none_x': (
        '┌───────┬───────┬───────┬───────┐\n'
        '│       │       │       │       │\n'
        '│       │       │       │       │\n'
        '│       │       │       │       │\n'
        '│       │       │       │       │\n'
        '│CPU 0,1│CPU 2,3│CPU 4,5│CPU 6,7│\n'
        '│       │       │       │       │\n'
        '│       │       │       │       │\n'
        '│       │       │       │       │\n'
        '│       │       │       │       │\n'
        '└───────┴───────┴───────┴───────┘\n'
    ),
    '1d_x': (
        '┌───────┬───────┬───────┬───────┐\n'
        '│CPU 0,1│CPU 2,3│CPU 4,5│CPU 6,7│\n'
        '└───────┴───────┴───────┴───────┘\n'
    ),
    '1d_xy': (
        '┌───────┬───────┬───────┬───────┬───────┬───────┬───────┬───────┐\n'
        '│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │\n'
        '└───────┴───────┴───────┴───────┴───────┴───────┴───────┴───────┘\n'
    ),
    '2d_rep': (
        '┌───────────────────┐\n'
        '│                   │\n'
        '│                   │\n'
        '│                   │\n'
        '│                   │\n'
        '│CPU 0,1,2,3,4,5,6,7│\n'
        '│                   │\n'
        '│                   │\n'
        '│                   │\n'
        '│                   │\n'
        '└───────────────────┘\n'
    ),
    'single': (
        '┌──────────┐\n'
        '│          │\n'
        '│          │\n'
        '│          │\n'
        '│          │\n'
        '│  CPU 3   │\n'
        '│          │\n'
        '│          │\n'
        '│          │\n'
        '│          │\n'
        '└──────────┘\n'
    ),
    '1d_single': (
        '┌───────┐\n'
        '│ CPU 0 │\n'
        '└───────┘\n'
    ),
    '2d_xy_w': (
        '┌──────────┬──────────┐\n'
        '│  CPU 0   │  CPU 1   │\n'
        '├──────────┼──────────┤\n'
        '│  CPU 2   │  CPU 3   │\n'
        '├──────────┼──────────┤\n'
        '│  CPU 4   │  CPU 5   │\n'
        '├──────────┼──────────┤\n'
        '│  CPU 6   │  CPU 7   │\n'
        '└──────────┴──────────┘\n'
    ),
}


@pytest.fixture(scope="module")
def mesh():
    return olympus.make_mesh((4, 2), ("x", "y"), axis_types=AUTO)


X = np.arange(32, dtype=np.float32).reshape(8, 4)


def picture(arr):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        olympus.debug.visualize_array_sharding(arr)
    return buf.getvalue()


# --- types, meshes, arrays --------------------------------------------------------------------


def test_mesh_and_sharding_reprs(mesh):
    assert repr(mesh) == "Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), axis_types=(Auto, Auto))"
    assert str(mesh) == "Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))"
    s = NamedSharding(mesh, P("x", "y"))
    assert repr(s) == ("NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), "
                       "spec=P('x', 'y'), memory_kind=device)")
    assert NamedSharding(mesh, P("x", "y")) is s and s == NamedSharding(mesh, P("x", "y"))
    assert repr(P("x", None)) == "P('x', None)" and repr(P(("x", "y"))) == "P(('x', 'y'),)"
    assert olympus.P is P and mesh.devices.shape == (4, 2) and mesh.size == 8
    assert mesh.device_ids.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert repr(mesh.abstract_mesh).startswith("AbstractMesh('x': 4, 'y': 2")
    explicit = olympus.make_mesh((4, 2), ("x", "y"))
    assert repr(explicit) == ("Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), "
                              "axis_types=(Explicit, Explicit))")
    assert olympus.process_count() == 1 and olympus.process_index() == 0
    assert olympus.local_device_count() == 8 and olympus.process_indices() == [0]


def test_default_device_live_arrays_and_clear_caches():
    d3 = olympus.devices()[3]
    f = olympus.jit(lambda a: a * 2)
    assert f(jnp.ones(3)).devices() == {olympus.devices()[0]}
    with olympus.default_device(d3):
        x = jnp.ones(3)
        assert x.devices() == {d3} and not x.committed
        assert f(np.ones(3)).devices() == {d3}  # the same jitted function, another device
    assert f(jnp.ones(3)).devices() == {olympus.devices()[0]}
    olympus.config.update("olympus_default_device", d3)
    try:
        assert jnp.arange(3).devices() == {d3}
    finally:
        olympus.config.update("olympus_default_device", None)
    with pytest.raises(TypeError, match="default_device must be a Device or None"):
        olympus.default_device("gpu:0").__enter__()
    keep = jnp.arange(5.0)
    assert any(a is keep for a in olympus.live_arrays())
    assert isinstance(olympus.devices()[0], olympus.Device)
    assert olympus.host_count() == 1 and olympus.host_id() == 0
    olympus.clear_caches()
    np.testing.assert_array_equal(np.asarray(f(keep)), np.arange(5.0) * 2)


def test_typeof_prints_sharding_in_types(mesh):
    em = olympus.make_mesh((4, 2), ("x", "y"))
    z = np.zeros((8, 4), np.float32)
    got = [str(olympus.typeof(olympus.device_put(z, NamedSharding(m, s))))
           for m, s in [(em, P("x", "y")), (em, P(("x", "y"))), (em, P(None, "y")),
                        (mesh, P("x"))]]
    assert got == ["float32[8@x,4@y]", "float32[8@(x,y),4]", "float32[8,4@y]", "float32[8,4]"]
    assert str(olympus.typeof(1.0)) == "~float32[]"


def test_device_put_shards_and_readback(mesh):
    s = NamedSharding(mesh, P("x", "y"))
    a = olympus.device_put(X, s)
    assert a.sharding is s and not a.is_fully_replicated and a.is_fully_addressable
    np.testing.assert_array_equal(np.asarray(a), X)
    shard = a.addressable_shards[1]
    assert repr(shard) == ("Shard(device=CpuDevice(id=1), index=(slice(0, 2, None), slice(2, 4, "
                           "None)), replica_id=0, data=[[2. 3.]\n [6. 7.]])")
    assert [sh.replica_id for sh in olympus.device_put(X, NamedSharding(mesh, P("x")))
            .global_shards] == [0, 1] * 4
    for sh in a.addressable_shards:
        np.testing.assert_array_equal(np.asarray(sh.data), X[sh.index])
    tree = olympus.device_put({"a": X, "b": X[0]}, {"a": s, "b": NamedSharding(mesh, P())})
    assert tree["a"].sharding is s and tree["b"].is_fully_replicated
    back = olympus.device_put(a, olympus.devices()[3])
    assert back.devices() == {olympus.devices()[3]}
    np.testing.assert_array_equal(np.asarray(back), X)


def test_make_array_from_callback_and_single_device_arrays(mesh):
    s = NamedSharding(mesh, P("x"))
    a = olympus.make_array_from_callback(X.shape, s, lambda idx: X[idx])
    np.testing.assert_array_equal(np.asarray(a), X)
    parts = [olympus.device_put(X[sh.index], sh.device) for sh in a.addressable_shards]
    b = olympus.make_array_from_single_device_arrays(X.shape, s, parts)
    np.testing.assert_array_equal(np.asarray(b), X)
    c = olympus.make_array_from_process_local_data(s, X)
    np.testing.assert_array_equal(np.asarray(c), X)


@pytest.mark.parametrize("name", sorted(VISUALIZE_JAX))
def test_visualize_array_sharding_as_jax_draws_it(mesh, name):
    x16 = np.zeros((16, 16), np.float32)
    arrays = {
        "2d_xy": lambda: olympus.device_put(X, NamedSharding(mesh, P("x", "y"))),
        "2d_x": lambda: olympus.device_put(X, NamedSharding(mesh, P("x"))),
        "2d_yx": lambda: olympus.device_put(X, NamedSharding(mesh, P("y", "x"))),
        "2d_none_x": lambda: olympus.device_put(X, NamedSharding(mesh, P(None, "x"))),
        "1d_x": lambda: olympus.device_put(np.arange(8.0), NamedSharding(mesh, P("x"))),
        "1d_xy": lambda: olympus.device_put(np.arange(8.0), NamedSharding(mesh, P(("x", "y")))),
        "2d_rep": lambda: olympus.device_put(X, NamedSharding(mesh, P())),
        "single": lambda: olympus.device_put(X, olympus.devices()[3]),
        "1d_single": lambda: jnp.arange(8.0),
        "2d_xy_w": lambda: olympus.device_put(x16, NamedSharding(mesh, P("x", "y"))),
    }
    assert picture(arrays[name]()) == VISUALIZE_JAX[name]


# --- sharded jit ------------------------------------------------------------------------------


def test_lowered_text_matches_jax(mesh):
    """JAX 0.10.2's text, with its ``jax.result_info`` attribute named ``olympus.result_info``."""
    x = olympus.device_put(X, NamedSharding(mesh, P("x", "y")))

    def f(a, b):
        return jnp.sin(a) * 2, b

    lowered = olympus.jit(f, out_shardings=(NamedSharding(mesh, P(None, "y")), None)).lower(x, 1.0)
    # (JAX's text ends with a newline, Olympus's not: the AOT seed page prints it so)
    assert lowered.as_text() + "\n" == textwrap.dedent("""\
    module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
      sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
      sdy.mesh @empty_mesh = <[]> {stablehlo.mesh = {axes = []}}
      func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<f32> {sdy.sharding = #sdy.sharding<@empty_mesh, []>}) -> (tensor<8x4xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, tensor<f32> {jax.result_info = "result[1]"}) {
        %0 = stablehlo.sine %arg0 : tensor<8x4xf32>
        %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
        %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x4xf32>
        %2 = stablehlo.multiply %0, %1 : tensor<8x4xf32>
        return %2, %arg1 : tensor<8x4xf32>, tensor<f32>
      }
    }
    """).replace("jax.result_info", "olympus.result_info")
    compiled = lowered.compile()
    ins, kw = compiled.input_shardings
    assert kw == {} and ins[0] is x.sharding and ins[1] is NamedSharding(mesh, P())
    outs = compiled.output_shardings
    assert outs[0] is NamedSharding(mesh, P(None, "y")) and outs[1].is_fully_replicated
    r = compiled(x, 1.0)
    np.testing.assert_allclose(np.asarray(r[0]), np.sin(X) * 2, rtol=1e-6)
    assert r[0].sharding is NamedSharding(mesh, P(None, "y"))


@pytest.mark.parametrize("spec_a, spec_b", [(P("x"), P()), (P(None, "y"), P("y")),
                                            (P("x", "y"), P("y", None)), (P(), P(None, "x"))])
def test_matmul_with_each_operand_split(mesh, spec_a, spec_b):
    a_h = np.arange(32, dtype=np.float32).reshape(8, 4) / 10
    b_h = np.arange(16, dtype=np.float32).reshape(4, 4) / 10
    a = olympus.device_put(a_h, NamedSharding(mesh, spec_a))
    b = olympus.device_put(b_h, NamedSharding(mesh, spec_b))
    out = olympus.jit(jnp.matmul)(a, b)
    np.testing.assert_allclose(np.asarray(out), a_h @ b_h, rtol=1e-5)
    assert out.sharding.mesh == mesh


def test_elementwise_and_reductions_match_single_device(mesh):
    x = olympus.device_put(X, NamedSharding(mesh, P("x", "y")))

    def f(a):
        return jnp.tanh(a) + a * 2, a.sum(0), a.max(1), jnp.mean(a)

    sharded = olympus.jit(f)(x)
    single = olympus.jit(f)(X)
    for s, r in zip(sharded, single, strict=True):
        np.testing.assert_allclose(np.asarray(s), np.asarray(r), rtol=1e-6)
    assert sharded[1].sharding is NamedSharding(mesh, P("y"))  # as XLA propagates in JAX


def _mlp_step(params, xb, yb):
    def loss(p):
        h = jnp.tanh(xb @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - yb) ** 2)

    val, g = olympus.value_and_grad(loss)(params)
    return val, {k: params[k] - 0.1 * g[k] for k in params}


def _mlp_data():
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(4, 8)).astype(np.float32) * 0.5,
              "b1": np.zeros(8, np.float32),
              "w2": rng.normal(size=(8, 2)).astype(np.float32) * 0.5}
    return params, rng.normal(size=(16, 4)).astype(np.float32), \
        rng.normal(size=(16, 2)).astype(np.float32)


@pytest.mark.parametrize("model_parallel", [False, True])
def test_mlp_training_step(mesh, model_parallel):
    """Data parallel (batch over x and y) and 2-D (batch over x, hidden units over y)."""
    params, xb, yb = _mlp_data()
    step = olympus.jit(_mlp_step)
    want_loss, want = step(params, xb, yb)
    if model_parallel:
        batch = NamedSharding(mesh, P("x"))
        pshard = {"w1": NamedSharding(mesh, P(None, "y")), "b1": NamedSharding(mesh, P("y")),
                  "w2": NamedSharding(mesh, P("y"))}
    else:
        batch = NamedSharding(mesh, P(("x", "y")))
        pshard = {k: NamedSharding(mesh, P()) for k in params}
    p = olympus.device_put(params, pshard)
    loss, new = step(p, olympus.device_put(xb, batch), olympus.device_put(yb, batch))
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5)
    for k in params:
        np.testing.assert_allclose(np.asarray(new[k]), np.asarray(want[k]), rtol=1e-5, atol=1e-6)


def test_committed_input_on_another_device_runs_there():
    d1 = olympus.devices()[1]
    x = olympus.device_put(jnp.arange(4.0), d1)
    out = olympus.jit(lambda a, b: a + b)(x, jnp.ones(4))
    assert out.devices() == {d1} and out.committed
    np.testing.assert_array_equal(np.asarray(out), np.arange(4.0) + 1)
    again = olympus.jit(lambda a: a * 2)(x)  # the C++ fast path, second call
    again = olympus.jit(lambda a: a * 2)(x)
    assert again.devices() == {d1}


def test_shape_dtype_struct_sharding_places_the_traced_argument():
    """A ShapeDtypeStruct's sharding places the argument of `jit(f).trace(...)` and is part
    of the signature, as in JAX's export page. Expected input shardings recorded from
    reference JAX 0.10.2 (8 CPU devices): the struct's NamedSharding (a spec resolved on
    the current mesh), a SingleDeviceSharding on the struct's device, and device 0 when
    the struct has no sharding."""
    m = olympus.sharding.Mesh(np.array(olympus.local_devices()), ("a",))
    jf = olympus.jit(lambda x: x.T)
    named = NamedSharding(m, P("a"))
    sharded = olympus.ShapeDtypeStruct((32,), np.int32, sharding=named)

    def in_sharding(spec):
        (s,), kw = jf.trace(spec).lower().compile().input_shardings
        assert kw == {}
        return s

    assert in_sharding(sharded) == named
    assert in_sharding(olympus.ShapeDtypeStruct((32,), np.int32)) == \
        olympus.sharding.SingleDeviceSharding(olympus.devices()[0])
    assert in_sharding(sharded) == named  # not the unsharded signature's cache entry
    d3 = olympus.sharding.SingleDeviceSharding(olympus.devices()[3])
    assert in_sharding(olympus.ShapeDtypeStruct((32,), np.int32, sharding=d3)) == d3
    with olympus.set_mesh(m):
        assert in_sharding(olympus.ShapeDtypeStruct((32,), np.int32, sharding=P("a"))) == named
    # An export of such a function says so instead of exporting for one device.
    with pytest.raises(NotImplementedError, match="shardings over several devices"):
        olympus.export.export(jf)(sharded)


def test_partition_specs_under_set_mesh(mesh):
    with olympus.set_mesh(mesh):
        h = olympus.jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P())
        out = h(np.arange(8.0, dtype=np.float32))
    assert out.sharding is NamedSharding(mesh, P())
    np.testing.assert_array_equal(np.asarray(out), np.arange(8.0) * 2)
    assert olympus.sharding.get_mesh().empty


def test_with_sharding_constraint_lowers_to_shardy_and_composes(mesh):
    """The module text is JAX 0.10.2's (result_info renamed), recorded under set_mesh."""

    def g(a):
        return olympus.lax.with_sharding_constraint(a * 2, P("y"))

    with olympus.set_mesh(mesh):
        text = olympus.jit(g).lower(jnp.arange(8.0)).as_text()
        out = olympus.jit(g)(jnp.arange(8.0))
        grad = olympus.grad(lambda a: olympus.jit(g)(a).sum())(jnp.arange(8.0))
        batched = olympus.jit(olympus.vmap(g))(jnp.ones((3, 8)))
        moved = olympus.reshard(jnp.arange(8.0), P("x"))
    assert text == textwrap.dedent("""\
    module @jit_g attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
      sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
      func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8xf32> {olympus.result_info = "result"}) {
        %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
        %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8xf32>
        %1 = stablehlo.multiply %arg0, %0 : tensor<8xf32>
        %2 = sdy.sharding_constraint %1 <@mesh, [{"y"}]> : tensor<8xf32>
        return %2 : tensor<8xf32>
      }
    }""")
    assert out.sharding is NamedSharding(mesh, P("y"))
    np.testing.assert_array_equal(np.asarray(out), np.arange(8.0) * 2)
    np.testing.assert_array_equal(np.asarray(grad), np.full(8, 2.0))
    assert batched.sharding is NamedSharding(mesh, P(None, "y"))
    assert moved.sharding is NamedSharding(mesh, P("x"))


def test_sharded_call_uses_cache_and_donation(mesh):
    s = NamedSharding(mesh, P("x"))
    f = olympus.jit(lambda a: a + 1, donate_argnums=0)
    x = olympus.device_put(np.arange(8.0, dtype=np.float32), s)
    y = f(x)
    assert x.is_deleted() and y.sharding is s
    z = f(y)
    np.testing.assert_array_equal(np.asarray(z), np.arange(8.0) + 2)
    assert f._cache_size() == 1


def test_cached_call_on_sharded_inputs_stays_in_cpp(mesh, monkeypatch):
    """A cached call on NamedSharding inputs runs on jaxlib's C++ fast path alone: it never
    calls back into Python to place an argument (jaxlib compares the device count it
    recorded for the input's sharding with the executable's; a sharding class whose C++
    part recorded none sent every call through that fallback)."""
    import olympus_runtime as rt

    s = NamedSharding(mesh, P("x", "y"))
    a = olympus.device_put(X, s)
    b = olympus.device_put(X + 1, s)
    f = olympus.jit(lambda u, v: u * v + 1)
    f(a, b)
    placed = []
    real = rt.device_put
    monkeypatch.setattr(rt, "device_put", lambda *args: placed.append(args) or real(*args))
    for _ in range(3):
        out = f(a, b)
    assert placed == []
    np.testing.assert_array_equal(np.asarray(out), X * (X + 1) + 1)
    assert s.num_devices == 8 and hash(s) == object.__hash__(s)
    explicit = olympus.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    assert NamedSharding(explicit, P("x", "y")) != s  # axis types matter: no shared entry


def test_jit_without_results_or_arguments_on_a_mesh(mesh):
    """A program with no results (or no parameters) over several devices compiles: XLA
    still reports one sharding for its empty result tuple."""
    x = olympus.device_put(X, NamedSharding(mesh, P("x")))
    assert olympus.jit(lambda a: None)(x) is None
    out = olympus.jit(lambda: olympus.lax.with_sharding_constraint(
        jnp.ones((8, 2)), NamedSharding(mesh, P("x"))))()
    assert out.sharding.spec == P("x") and float(out.sum()) == 16.0


def test_shard_map_with_some_axes_manual(mesh):
    """``axis_names={'x'}`` on a (4, 2) mesh: the body is per device along x only ('y' is
    the partitioner's). Values, result specs, the lowered manual computations (an
    ``axis_index`` wrapped in one over the remaining axis) and the error for a spec naming
    a non-manual axis as recorded from reference JAX 0.10.2."""
    from olympus import lax

    x = np.arange(64, dtype=np.float32).reshape(8, 8)

    def body(b):
        return lax.psum(b * 2, "x"), b + lax.axis_index("x")

    f = olympus.jit(olympus.shard_map(body, mesh=mesh, in_specs=P("x"),
                                      out_specs=(P(), P("x")), axis_names={"x"}))
    a, b = f(x)
    np.testing.assert_array_equal(np.asarray(a), 2 * x.reshape(4, 2, 8).sum(0))
    np.testing.assert_array_equal(np.asarray(b), x + np.repeat(np.arange(4.0), 2)[:, None])
    assert (a.shape, b.shape, a.sharding.spec, b.sharding.spec) == ((2, 8), (8, 8), P(),
                                                                     P("x"))
    lines = [ln.strip().split(" = ", 1)[1] for ln in f.lower(x).as_text().splitlines()
             if "sdy.manual_computation" in ln]
    assert lines == [
        'sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {?}]>] '
        'out_shardings=[<@mesh, [{?}, {?}]>, <@mesh, [{"x", ?}, {?}]>] manual_axes={"x"} '
        '(%arg1: tensor<2x8xf32>) {',
        'sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, []>] '
        'manual_axes={"y"} () {']
    with pytest.raises(ValueError) as e:
        olympus.shard_map(body, mesh=mesh, in_specs=P("y"), out_specs=(P(), P("y")),
                          axis_names={"x"})(x)
    assert str(e.value) == (
        "shard_map in_specs argument must refer to an axis marked as manual "
        "(frozenset({'x'})), but:\n\n  in_specs refers to 'y'\n\nCheck the in_specs values "
        "passed to shard_map.")
    g = olympus.jit(olympus.shard_map(lambda t: jnp.sin(t) @ t.T, mesh=mesh,
                                      in_specs=P("x", None), out_specs=P("x"),
                                      axis_names={"x"}))
    want = np.concatenate([np.sin(x[i:i + 2]) @ x[i:i + 2].T for i in range(0, 8, 2)])
    np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-5, atol=1e-3)


def test_pmap_sharding_nesting_and_named_axes_as_jax():
    """JAX 0.10.2's pmap is a shard_map: its results carry a NamedSharding on the mesh axis
    ``_internal_pmap_axis_name`` (there is no public PmapSharding), a nested pmap is an
    error, and vmap's named axes compose with pmap's in collectives. Values, reprs and
    messages recorded from reference JAX 0.10.2 on 8 devices."""
    from olympus import lax

    x = np.arange(16, dtype=np.float32).reshape(4, 2, 2)
    for body in (lambda v: lax.psum(v, "i") + lax.psum(v, "j"),
                 lambda v: v * 0 + lax.axis_index("i") * 10 + lax.axis_index("j")):
        with pytest.raises(ValueError) as e:
            olympus.pmap(olympus.pmap(body, "i"), "j")(x)
        assert str(e.value) == (
            "The context mesh AbstractMesh('j': 4, axis_types=(Manual,), device_kind=cpu, "
            "num_cores=None, platform=cpu) should match the mesh passed to shard_map "
            "Mesh('i': 2, axis_types=(Auto,))")
    r = olympus.pmap(olympus.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), "i")(x)
    np.testing.assert_array_equal(np.asarray(r), np.broadcast_to(x.sum((0, 1)), x.shape))
    r = olympus.vmap(olympus.pmap(lambda v: lax.psum(v, "i") - lax.pmean(v, "j"), "i"),
                     axis_name="j")(x)
    np.testing.assert_array_equal(np.asarray(r), x.sum(1, keepdims=True) - x.mean(
        0, keepdims=True))
    assert np.asarray(r).tolist() == [[[-4.0, -3.0], [-6.0, -5.0]], [[4.0, 5.0], [2.0, 3.0]],
                                      [[12.0, 13.0], [10.0, 11.0]],
                                      [[20.0, 21.0], [18.0, 19.0]]]
    p = olympus.pmap(lambda v: v * 2)(np.arange(8.0, dtype=np.float32).reshape(4, 2))
    assert repr(p.sharding) == (
        "NamedSharding(mesh=Mesh('_internal_pmap_axis_name': 4, axis_types=(Auto,)), "
        "spec=P('_internal_pmap_axis_name',), memory_kind=device)")
    assert [(str(s.device), s.index, s.data.shape) for s in p.addressable_shards][:2] == [
        ("cpu:0", (slice(0, 1, None), slice(None, None, None)), (1, 2)),
        ("cpu:1", (slice(1, 2, None), slice(None, None, None)), (1, 2))]
    assert p.sharding.shard_shape((4, 2)) == (1, 2)


def test_abstract_mesh_inside_shard_map_has_manual_axes(mesh):
    """``get_abstract_mesh()`` in a shard_map body: its manual axes are ``Manual`` (as
    recorded from reference JAX 0.10.2)."""
    seen = []

    def body(b):
        seen.append(repr(olympus.sharding.get_abstract_mesh()))
        return b

    for names in ({"x"}, frozenset()):
        olympus.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                          axis_names=names)(np.zeros((8, 2), np.float32))
    kinds = ("device_kind=cpu, num_cores=None, platform=cpu")
    assert seen == [f"AbstractMesh('x': 4, 'y': 2, axis_types=(Manual, Auto), {kinds})",
                    f"AbstractMesh('x': 4, 'y': 2, axis_types=(Manual, Manual), {kinds})"]


# --- bad input: clean Python errors, checked in a fresh process --------------------------------

BAD_INPUTS = {
    "mis-sharded argument": (
        "x = olympus.device_put(np.zeros((8, 4), np.float32), NamedSharding(mesh, P('x', 'y')))\n"
        "olympus.jit(lambda a: a + 1, in_shardings=NamedSharding(mesh, P('x')))(x)",
        "ValueError: Sharding passed to jit does not match the sharding on the respective arg"),
    "shard count does not divide": (
        "olympus.jit(lambda a: a + 1, in_shardings=NamedSharding(mesh, P('x')))(np.zeros(6))",
        "IndivisibleError: Sharding NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, "
        "Auto)), spec=P('x',), memory_kind=device) implies that array axis 0 is partitioned 4 "
        "times, but the dimension size is 6"),
    "arrays committed to different devices": (
        "a = olympus.device_put(np.zeros(4), olympus.devices()[1])\n"
        "b = olympus.device_put(np.zeros(4), olympus.devices()[2])\n"
        "olympus.jit(lambda a, b: a + b)(a, b)",
        "ValueError: Received incompatible devices for jitted computation. Got argument a of "
        "<lambda> with shape float32[4] and with device ids [1] on platform CPU and argument b "
        "of <lambda> with shape float32[4] and with device ids [2] on platform CPU"),
    "mesh with the wrong device count": (
        "olympus.make_mesh((16,), ('x',))",
        "ValueError: Number of devices 8 must be >= the product of mesh_shape (16,)"),
    "spec of too high a rank": (
        "olympus.device_put(np.zeros(8), NamedSharding(mesh, P('x', 'y')))",
        "ValueError: One of device_put args is incompatible with its sharding annotation"),
    "unknown mesh axis": (
        "NamedSharding(mesh, P('z'))",
        "ValueError: Resource axis: z of P('z',) is not found in mesh: ('x', 'y')."),
    "wrongly sharded argument to a compiled executable": (
        "s = NamedSharding(mesh, P('x'))\n"
        "c = olympus.jit(lambda a: a + 1).lower(olympus.device_put(np.zeros(8), s)).compile()\n"
        "c(olympus.device_put(np.zeros(8), NamedSharding(mesh, P('y'))))",
        "ValueError: Executable jit__lambda: argument 0 (f32[8]) has sharding "
        "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('y',), "
        "memory_kind=device), but the executable expects NamedSharding(mesh=Mesh('x': 4, 'y': 2, "
        "axis_types=(Auto, Auto)), spec=P('x',), memory_kind=device)"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_a_clean_python_error(name):
    code, message = BAD_INPUTS[name]
    prog = textwrap.dedent("""\
        import numpy as np
        import olympus
        from olympus.sharding import AxisType, NamedSharding, PartitionSpec as P
        mesh = olympus.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
        """) + code
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="8")
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])  # an exception, not a signal
    last = r.stderr.strip().splitlines()[-1] if "\n" not in message else r.stderr
    assert message in r.stderr, r.stderr[-2000:]
    assert "Traceback" in r.stderr and last
