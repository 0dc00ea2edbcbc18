"""shard_map over a one-device mesh (``make_mesh((1,), ('x',))``), in this (one-device)
process: the body is lowered inline, with no manual computation, as JAX 0.10.2 lowers it
(reference JAX's lowered text has the collectives over ``replica_groups = dense<0>`` and no
``sdy.manual_computation``); eager, jitted and differentiated results are checked against
numpy."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.sharding import AxisType
from olympus.sharding import PartitionSpec as P

A = np.arange(8.0, dtype=np.float32).reshape(4, 2)
B = np.arange(6.0, dtype=np.float32).reshape(2, 3)


@pytest.fixture(params=[AxisType.Auto, AxisType.Explicit], ids=["auto", "explicit"])
def mesh(request):
    return olympus.make_mesh((1,), ("x",), axis_types=(request.param,))


def _body(a, b):
    return (lax.psum(a @ b, "x"), lax.all_gather(a, "x", tiled=True),
            lax.axis_index("x")[None], lax.ppermute(a, "x", [(0, 0)]),
            lax.psum_scatter(a, "x", tiled=True), lax.pmean(a, "x"))


def _specs():
    return dict(in_specs=(P("x"), P()),
                out_specs=(P(), P("x"), P("x"), P("x"), P("x"), P()), check_vma=False)


def _check(outs):
    want = (A @ B, A, np.zeros(1, np.int32), A, A, A)
    for k, (g, w) in enumerate(zip(outs, want, strict=True)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, err_msg=f"output {k}")


def _args(mesh):
    if mesh.explicit_axes:  # an Explicit mesh: the arguments carry the in_specs' shardings
        return (olympus.device_put(A, olympus.sharding.NamedSharding(mesh, P("x"))),
                olympus.device_put(B, olympus.sharding.NamedSharding(mesh, P())))
    return A, B


def test_eager_and_jit(mesh):
    f = olympus.shard_map(_body, mesh=mesh, **_specs())
    _check(f(*_args(mesh)))
    _check(olympus.jit(f)(*_args(mesh)))


def test_lowered_inline_without_manual_computation(mesh):
    f = olympus.shard_map(_body, mesh=mesh, **_specs())
    text = olympus.jit(f).lower(*_args(mesh)).as_text()
    assert "sdy.manual_computation" not in text
    assert "replica_groups = dense<0> : tensor<1x1xi64>" in text
    assert "mhlo.num_partitions = 1" in text


def test_grad(mesh):
    f = olympus.shard_map(lambda a, b: lax.psum(a @ b, "x"), mesh=mesh,
                          in_specs=(P("x"), P()), out_specs=P())
    ga, gb = olympus.grad(lambda a, b: jnp.sum(f(a, b) ** 2), argnums=(0, 1))(*_args(mesh))
    c = 2 * (A @ B)
    np.testing.assert_allclose(np.asarray(ga), c @ B.T, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), A.T @ c, rtol=1e-6)
    gj = olympus.jit(olympus.grad(lambda a, b: jnp.sum(f(a, b) ** 2)))(*_args(mesh))
    np.testing.assert_allclose(np.asarray(gj), c @ B.T, rtol=1e-6)


def test_printed_params_as_jax(mesh):
    """JAX 0.10.2 prints shard_map's manual axes as ``newly_manual_axes=frozenset({'x'})``
    (recorded), after the mesh."""
    f = olympus.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    text = str(olympus.make_olympuspr(f)(*_args(mesh)[:1]))
    assert "newly_manual_axes=frozenset({'x'})" in text and " manual_axes=" not in text
    assert text.index("mesh=") < text.index("newly_manual_axes=") < text.index("out_specs=")
