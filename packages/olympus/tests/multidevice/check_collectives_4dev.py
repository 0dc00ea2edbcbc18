"""shard_map, its collectives and pmap over 4 virtual CPU devices. Run in its own process by
`test_sharding.py` (``OLYMPUS_NUM_CPU_DEVICES=4``). Results are compared with numpy on the
blocks each device holds and with the same function on one device; the error wording of the
replication check was recorded from reference JAX 0.10.2."""

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

X = np.arange(64, dtype=np.float32).reshape(16, 4)
BLOCKS = X.reshape(4, 4, 4)  # device i holds BLOCKS[i]
RING = [(i, (i + 1) % 4) for i in range(4)]


@pytest.fixture(scope="module")
def mesh():
    return olympus.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))


def collectives(a):
    return (lax.psum(a, "x"), lax.pmean(a, "x"), lax.pmax(a, "x"), lax.pmin(a, "x"),
            lax.all_gather(a, "x", tiled=True), lax.all_gather(a, "x"),
            lax.psum_scatter(a, "x", tiled=True), lax.ppermute(a, "x", RING),
            lax.all_to_all(a, "x", 0, 0, tiled=True),
            lax.axis_index("x") * jnp.ones((1,), jnp.int32), lax.axis_size("x") + 0 * a[:1, 0],
            lax.pbroadcast(a, "x", 2), lax.pcast(a[:1] * 0 + 1, "x", to="varying"))


def expected():
    b = BLOCKS
    total = b.sum(0)
    return (np.tile(total, (4, 1)), np.tile(b.mean(0), (4, 1)), np.tile(b.max(0), (4, 1)),
            np.tile(b.min(0), (4, 1)), np.tile(X, (4, 1)), np.tile(b, (4, 1, 1)),
            total, np.concatenate([b[3], b[0], b[1], b[2]]),
            np.concatenate([np.stack([b[i][j] for i in range(4)]) for j in range(4)]),
            np.arange(4, dtype=np.int32), np.full(4, 4.0), np.tile(b[2], (4, 1)),
            np.ones((4, 4)))


def test_every_collective_in_shard_map(mesh):
    f = olympus.shard_map(collectives, mesh=mesh, in_specs=P("x"),
                          out_specs=(P("x"),) * 13, check_vma=False)
    got = olympus.jit(f)(X)
    for k, (g, e) in enumerate(zip(got, expected(), strict=True)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6, err_msg=f"output {k}")
    eager = f(X)  # outside jit: one jitted shard_map equation
    np.testing.assert_allclose(np.asarray(eager[0]), expected()[0])


def test_every_collective_in_pmap():
    """pmap gives each device its row; the same collectives, over the pmap axis."""
    f = olympus.pmap(lambda r: collectives(r.reshape(4, 4)), axis_name="x")
    got = f(X.reshape(4, 16))
    for k, (g, e) in enumerate(zip(got, expected(), strict=True)):
        np.testing.assert_allclose(np.asarray(g).reshape(e.shape), e, rtol=1e-6,
                                   err_msg=f"output {k}")
    idx = olympus.pmap(lambda r: lax.axis_index("x") + 0 * r.astype(jnp.int32), "x")(
        np.zeros(4, np.float32))
    np.testing.assert_array_equal(np.asarray(idx), np.arange(4))


def test_pmap_arguments_and_stages():
    x = X[:, :3].reshape(4, 4, 3)
    scaled = olympus.pmap(lambda a, s: a * s, in_axes=(0, None))(x, 2.0)
    np.testing.assert_allclose(np.asarray(scaled), x * 2)
    outs = olympus.pmap(lambda a: a.sum(0), out_axes=1)(x)
    np.testing.assert_allclose(np.asarray(outs), x.sum(1).T)
    static = olympus.pmap(lambda a, k: a * k, static_broadcasted_argnums=1)(x, 3)
    np.testing.assert_allclose(np.asarray(static), x * 3)
    nested = olympus.pmap(lambda a: olympus.vmap(lambda r: lax.psum(r, "j") + lax.psum(r, "i"),
                                                 axis_name="j")(a), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(nested), x.sum(1, keepdims=True) + x.sum(0), rtol=1e-6)
    lowered = olympus.pmap(lambda a: a + 1)(x) if False else olympus.pmap(lambda a: a + 1).lower(x)
    assert "mhlo.num_partitions = 4" in lowered.as_text()
    assert "sdy.manual_computation" in lowered.as_text()
    np.testing.assert_allclose(np.asarray(lowered.compile()(x)), x + 1)
    donor = olympus.device_put(x)
    out = olympus.pmap(lambda a: a * 2, donate_argnums=0)(donor)
    np.testing.assert_allclose(np.asarray(out), x * 2)
    with pytest.raises(ValueError, match="requires 5 logical devices"):
        olympus.pmap(lambda a: a)(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        olympus.pmap(lambda a, b: a + b)(np.zeros((4, 2)), np.zeros((2, 2)))


def test_ppermute_permutation_is_checked_when_lowering_as_in_jax(mesh):
    """Over a mesh axis JAX traces any permutation and rejects one whose indices, modulo
    the axis size, repeat when lowering (message recorded from reference JAX 0.10.2); an
    index out of range that does not repeat is a clear ValueError (JAX: an IndexError)."""
    def smap(perm):
        return olympus.shard_map(lambda a: lax.ppermute(a, "x", perm=perm), mesh=mesh,
                                 in_specs=P("x"), out_specs=P("x"))

    x = np.zeros((8, 2), np.float32)
    assert len(olympus.make_olympuspr(smap(((4, 0), (0, 1))))(x).eqns) == 1
    with pytest.raises(ValueError, match=r"^ppermute sources and destinations must be unique, "
                       r"got \(\(4, 0\), \(0, 1\)\)\.\n"):
        olympus.jit(smap(((4, 0), (0, 1)))).lower(x)
    with pytest.raises(ValueError, match=r"indices in perm \(\(5, 0\), \(0, 1\)\) must be "
                       r"in range\(0, 4\)"):
        olympus.jit(smap(((5, 0), (0, 1)))).lower(x)
    with pytest.raises(ValueError, match=r"must be in range\(0, 4\)"):
        olympus.vmap(lambda a: lax.ppermute(a, "i", perm=((4, 0),)), axis_name="i")(
            np.zeros((4, 2), np.float32))


def test_grad_through_shard_map_with_replicated_and_split_inputs(mesh):
    w = np.linspace(-1, 1, 4).astype(np.float32)

    def per_device(w, x):
        return lax.psum(jnp.sum(jnp.tanh(x @ w)), "x")

    loss = olympus.shard_map(per_device, mesh=mesh, in_specs=(P(), P("x")), out_specs=P())
    gw, gx = olympus.jit(olympus.grad(loss, argnums=(0, 1)))(w, X / 100)
    rw, rx = olympus.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w)), argnums=(0, 1))(w, X / 100)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(rw), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(rx), rtol=1e-5)
    # A replicated output of a replicated input: no psum is implied.
    g = olympus.grad(lambda w: olympus.shard_map(lambda v: v * 3.0, mesh=mesh, in_specs=P(),
                                                 out_specs=P())(w).sum())(w)
    np.testing.assert_allclose(np.asarray(g), np.full(4, 3.0))


def test_data_parallel_training_step_in_shard_map(mesh):
    rng = np.random.default_rng(1)
    params = {"w": rng.normal(size=(4, 2)).astype(np.float32), "b": np.zeros(2, np.float32)}
    xb, yb = rng.normal(size=(16, 4)).astype(np.float32), rng.normal(size=(16, 2)).astype(
        np.float32)

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w"] + p["b"]) - y) ** 2)

    def step(p, x, y):
        val, g = olympus.value_and_grad(loss)(p, x, y)
        val, g = lax.pmean((val, g), "x")
        return val, olympus.tree.map(lambda a, b: a - 0.1 * b, p, g)

    sharded = olympus.jit(olympus.shard_map(step, mesh=mesh, in_specs=(P(), P("x"), P("x")),
                                            out_specs=(P(), P())))
    val, new = sharded(params, xb, yb)
    want_val, want_g = olympus.value_and_grad(loss)(params, xb, yb)
    np.testing.assert_allclose(float(val), float(want_val), rtol=1e-5)
    for k in params:
        np.testing.assert_allclose(np.asarray(new[k]), params[k] - 0.1 * np.asarray(want_g[k]),
                                   rtol=1e-5, atol=1e-6)


def test_scan_inside_shard_map(mesh):
    def cumsum_rows(a):
        def body(c, r):
            c = c + r
            return c, c
        # The carry varies over 'x' once the rows are added: it starts varying (JAX's rule).
        return lax.scan(body, lax.pcast(jnp.zeros(a.shape[1:]), "x", to="varying"), a)[1]

    out = olympus.jit(olympus.shard_map(cumsum_rows, mesh=mesh, in_specs=P("x"),
                                        out_specs=P("x")))(X)
    np.testing.assert_allclose(np.asarray(out), np.concatenate([np.cumsum(b, 0) for b in BLOCKS]))


def test_vmap_of_shard_map_and_shard_map_of_vmap(mesh):
    total = olympus.shard_map(lambda a: lax.psum(a, "x"), mesh=mesh, in_specs=P("x"),
                              out_specs=P())
    v = olympus.vmap(total)(np.stack([X, 2 * X]))
    np.testing.assert_allclose(np.asarray(v), np.stack([BLOCKS.sum(0), 2 * BLOCKS.sum(0)]))
    inner = olympus.shard_map(olympus.vmap(lambda r: lax.psum(r.sum(), "x")), mesh=mesh,
                              in_specs=P("x"), out_specs=P("x"))
    out = olympus.jit(inner)(X)
    np.testing.assert_allclose(np.asarray(out), np.tile(BLOCKS.sum((0, 2)), 4))


def test_shard_map_output_sharding_and_inferred_specs(mesh):
    x = olympus.device_put(X, NamedSharding(mesh, P("x")))
    out = olympus.shard_map(lambda a: a * 2, mesh=mesh, out_specs=P("x"))(x)
    assert out.sharding is NamedSharding(mesh, P("x"))
    np.testing.assert_allclose(np.asarray(out), X * 2)
    with olympus.set_mesh(mesh):
        sm = olympus.smap(lambda a: lax.psum(a, "x"), in_axes=0, out_axes=None, axis_name="x")
        np.testing.assert_allclose(np.asarray(olympus.jit(sm)(X)), BLOCKS.sum(0))


def test_replication_check_errors_as_jax_words_them(mesh):
    """Called outside jit, JAX runs the body eagerly and checks each result in a shard_map
    of its own helper, `_rem_singleton`, whose name its message carries (recorded from
    reference JAX 0.10.2, 4 CPU devices); under jit the message names the function."""
    with pytest.raises(ValueError) as e:
        olympus.jit(olympus.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"),
                                      out_specs=P()))(X)
    assert "to the function '<lambda>' was given" in str(e.value)
    with pytest.raises(ValueError) as e:
        olympus.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P())(X)
    assert str(e.value) == (
        "shard_map applied to the function '_rem_singleton' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\nThe mesh given has "
        "shape (4,) with corresponding axis names ('x',).\n\nout_specs is P() which implies "
        "that the corresponding output value is replicated across mesh axis 'x', but could not "
        "infer replication over any axes\n\nCheck if these output values are meant to be "
        "replicated over those mesh axes. If not, consider revising the corresponding "
        "out_specs entries. If so, consider disabling the check by passing the check_vma=False "
        "argument to `olympus.shard_map`.")
    unchecked = olympus.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P(),
                                  check_vma=False)(X)
    np.testing.assert_allclose(np.asarray(unchecked), BLOCKS[0])
    with pytest.raises(ValueError, match="does not divide it evenly"):
        olympus.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(X[:6])
    with pytest.raises(ValueError, match="naming the axis 'z'"):
        olympus.shard_map(lambda a: a, mesh=mesh, in_specs=P("z"), out_specs=P("x"))(X)
    with pytest.raises(NameError, match="unbound axis name: y"):
        olympus.shard_map(lambda a: lax.psum(a, "y"), mesh=mesh, in_specs=P("x"),
                          out_specs=P())(X)


@pytest.mark.parametrize("name,op,dense,out_rows", [
    ("ppermute", lambda a: lax.ppermute(a, "x", RING),
     lambda x: jnp.roll(x.reshape(4, 4, 4), 1, axis=0).reshape(16, 4), 16),
    ("psum_scatter", lambda a: lax.psum_scatter(a, "x", tiled=True),
     lambda x: x.reshape(4, 4, 4).sum(0), 4),
    ("all_to_all", lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True),
     lambda x: x.reshape(4, 4, 4).transpose(1, 0, 2).reshape(16, 4), 16),
])
def test_grad_of_linear_collectives_matches_the_dense_function(mesh, name, op, dense, out_rows):
    """The transpose rules of ppermute, psum_scatter and all_to_all: the gradient through
    shard_map equals the gradient of the same linear map written densely on one device."""
    w = np.random.default_rng(0).standard_normal((out_rows, 4)).astype(np.float32)
    f = olympus.shard_map(op, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    got = olympus.jit(olympus.grad(lambda x: jnp.sum(f(x) * w)))(X)
    want = olympus.grad(lambda x: jnp.sum(dense(x) * w))(X)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, err_msg=name)
    np.testing.assert_allclose(np.asarray(olympus.jit(f)(X)), np.asarray(dense(X)), rtol=1e-6)


@pytest.mark.parametrize("name,op", [
    ("ppermute", lambda a: lax.ppermute(a, "x", RING)),
    ("psum_scatter", lambda a: lax.psum_scatter(a, "x", tiled=True)),
    ("all_to_all", lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True)),
])
def test_vmap_of_shard_map_with_linear_collectives(mesh, name, op):
    """Their batching rules: vmap over a shard_map equals the loop over the batch."""
    f = olympus.shard_map(op, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    xs = np.stack([X, 2 * X, -X])
    got = olympus.jit(olympus.vmap(f))(xs)
    want = np.stack([np.asarray(olympus.jit(f)(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("policy", [None, "no_all_gather"])
def test_grad_through_remat_inside_shard_map(mesh, policy):
    """A remat'ed function inside the body (the JVP of a remat has primal and tangent
    results in one equation, which shard_map's partial evaluation must split): the
    gradient equals the dense one's."""
    kw = {} if policy is None else dict(policy=lambda op, *_, **__: str(op) != "all_gather")

    def body(w_frag, xb):
        w = lax.all_gather(w_frag, "x", tiled=True)
        h = olympus.remat(lambda a: jnp.sin(a[:4]) * xb, **kw)(w)
        return lax.psum(jnp.sum(h), "x")

    def dense(w, x):
        return jnp.sum(jnp.sin(w[:4]) * x.reshape(4, 4, 4).sum(0))

    f = olympus.shard_map(body, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P())
    w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(16, 4)
    xb = X / 64
    want = np.asarray(olympus.grad(dense)(w, xb))
    np.testing.assert_allclose(np.asarray(olympus.jit(olympus.grad(f))(w, xb)), want,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(olympus.grad(f)(w, xb)), want, rtol=1e-5, atol=1e-6)


def test_grad_through_a_remat_whose_primal_the_tangent_reads(mesh):
    """``remat(f)(w, x) ** 2``: the tangent of the square reads the remat's primal result,
    which the JVP computes in the same equation as the remat's tangent; the transposed body
    must recompute it (it is not a cotangent). Against the derivative by hand."""
    pred = olympus.remat(lambda w, x: x * jnp.sum(w))
    f = olympus.shard_map(lambda w, x: pred(w, x) ** 2, mesh=mesh, in_specs=(P(), P("x")),
                          out_specs=P("x"))
    w = np.arange(3, dtype=np.float32)
    x = np.arange(8, dtype=np.float32)
    want = np.full(3, 2 * w.sum() * np.sum(x ** 2), np.float32)
    for g in (olympus.grad(lambda w, x: f(w, x).sum()),
              olympus.jit(olympus.grad(lambda w, x: f(w, x).sum()))):
        np.testing.assert_allclose(np.asarray(g(w, x)), want, rtol=1e-6)
