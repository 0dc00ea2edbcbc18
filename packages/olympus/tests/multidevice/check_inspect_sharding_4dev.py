"""`olympus.debug.inspect_array_sharding` / `visualize_array_sharding` inside jit over 4
virtual CPU devices: the callback gets the layout XLA's partitioner chose for the value, at
compile time. Run in its own process by `test_sharding.py` (``OLYMPUS_NUM_CPU_DEVICES=4``).
The expected reprs were recorded from reference JAX 0.10.2 (the same programs, names
jax -> olympus): JAX reports a NamedSharding on the program's mesh with its axes Auto, P()
inside shard_map, and a GSPMDSharding when the program has no mesh."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.sharding import AxisType, NamedSharding
from olympus.sharding import PartitionSpec as P

pytestmark = pytest.mark.skipif(
    olympus.device_count() != 4, reason="needs OLYMPUS_NUM_CPU_DEVICES=4 (see test_sharding.py)")

X = np.arange(32.0, dtype=np.float32).reshape(8, 4)
M1 = "Mesh('x': 4, axis_types=(Auto,))"
M2 = "Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))"


def _named(mesh, spec):
    return f"NamedSharding(mesh={mesh}, spec={spec}, memory_kind=device)"


@pytest.fixture(scope="module")
def mesh():
    return olympus.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))


@pytest.fixture(scope="module")
def mesh2():
    return olympus.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def _body(seen):
    def body(a):
        b = jnp.sin(a)
        olympus.debug.inspect_array_sharding(b, callback=lambda s: seen.append(repr(s)))
        return b * 2
    return body


def _reported(make):
    seen: list = []
    out = make(_body(seen))
    np.testing.assert_allclose(np.asarray(out), np.sin(X) * 2, rtol=1e-6)
    return seen


@pytest.mark.parametrize("which,spec,want", [
    ("1d", P("x"), _named(M1, "P('x',)")),
    ("1d", P(None, "x"), _named(M1, "P(None, 'x')")),
    ("1d", P(), _named(M1, "P()")),
    ("2d", P("x", "y"), _named(M2, "P('x', 'y')")),
    ("2d", P(("x", "y")), _named(M2, "P(('x', 'y'),)")),
    ("2d", P("y"), _named(M2, "P('y',)")),
])
def test_in_shardings_are_reported(mesh, mesh2, which, spec, want):
    m = mesh if which == "1d" else mesh2
    seen = _reported(lambda f: olympus.jit(f, in_shardings=NamedSharding(m, spec))(X))
    assert seen == [want]


def test_out_shardings_committed_args_set_mesh_and_explicit_mesh(mesh):
    s = NamedSharding(mesh, P("x"))
    want = [_named(M1, "P('x',)")]
    assert _reported(lambda f: olympus.jit(f, in_shardings=s, out_shardings=s)(X)) == want
    assert _reported(lambda f: olympus.jit(f)(olympus.device_put(X, s))) == want
    with olympus.set_mesh(mesh):
        assert _reported(lambda f: olympus.jit(f, in_shardings=P("x"))(X)) == want
    emesh = olympus.make_mesh((4,), ("x",), axis_types=(AxisType.Explicit,))
    xe = olympus.device_put(X, NamedSharding(emesh, P("x")))
    assert _reported(lambda f: olympus.jit(f)(xe)) == want  # JAX reports the axes as Auto


def test_sharding_constraint_decides_the_layout(mesh2):
    seen = _reported(lambda f: olympus.jit(lambda a: f(lax.with_sharding_constraint(
        a, NamedSharding(mesh2, P("y", "x")))))(X))
    assert seen == [_named(M2, "P('y', 'x')")]


def test_no_mesh_is_a_gspmd_sharding_reported_at_lowering():
    seen = _reported(lambda f: olympus.jit(f)(X))
    assert seen == ["GSPMDSharding({replicated}, memory_kind=device)"]


def test_inside_shard_map_each_block_is_manual(mesh, mesh2):
    seen = _reported(lambda f: olympus.jit(olympus.shard_map(
        f, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(X))
    assert seen == [_named(M1, "P()")]
    seen = _reported(lambda f: olympus.jit(olympus.shard_map(
        f, mesh=mesh2, in_specs=P("x"), out_specs=P("x"), axis_names={"x"}))(X))
    assert seen == [_named(M2, "P()")]


def test_grad_vmap_pytrees_and_eager(mesh):
    s = NamedSharding(mesh, P("x"))
    want = _named(M1, "P('x',)")
    seen: list = []
    g = olympus.jit(olympus.grad(lambda a: _body(seen)(a).sum()), in_shardings=s)(X)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(X), rtol=1e-5)
    assert seen == [want]
    assert _reported(lambda f: olympus.jit(olympus.vmap(f), in_shardings=s)(X)) == [want]
    seen = []
    olympus.jit(lambda a: olympus.debug.inspect_array_sharding(
        (a, {"k": a}), callback=lambda sh: seen.append(repr(sh))), in_shardings=s)(X)
    assert seen == [want, want]
    assert _reported(lambda f: f(olympus.device_put(X, s))) == [want]  # eager: at once


def test_called_at_compile_time_only(mesh):
    seen: list = []
    f = olympus.jit(_body(seen), in_shardings=NamedSharding(mesh, P("x")))
    lowered = f.lower(X)
    assert seen == []  # lowering a partitioned program does not call back
    lowered.compile()
    assert seen == [_named(M1, "P('x',)")]
    f(X)
    f(X)
    assert len(seen) == 1  # the calls run the executable compiled above (as in JAX)
    assert "stablehlo.custom_call @InspectSharding" in lowered.as_text()


def test_callback_errors_surface_as_python_errors(mesh):
    def bad(s):
        raise ValueError("boom")

    f = olympus.jit(lambda a: olympus.debug.inspect_array_sharding(a * 2, callback=bad),
                    in_shardings=NamedSharding(mesh, P("x")))
    with pytest.raises(Exception, match="Error calling inspect_sharding(.|\n)*boom"):
        f(X)


def test_visualize_array_sharding_inside_jit(mesh2, capsys):
    olympus.jit(lambda a: olympus.debug.visualize_array_sharding(a),
                in_shardings=NamedSharding(mesh2, P("x", "y")))(X)
    picture = capsys.readouterr().out
    olympus.debug.visualize_array_sharding(
        olympus.device_put(X, NamedSharding(mesh2, P("x", "y"))))
    assert picture == capsys.readouterr().out
    assert "CPU 3" in picture
