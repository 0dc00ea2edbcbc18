"""Shared checks for the test_numpy_* / test_lax_conv_window tests: derivatives against
finite differences and the transpose dot-product test, vmap against a Python loop."""

from __future__ import annotations

import numpy as np

import olympus
from olympus_trace import tree_util

x64 = olympus.enable_x64


def assert_same(got, want, dtype=None):
    """`got` (an olympus Array) equals NumPy's `want` exactly: shape, values, and `dtype`
    if given."""
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if dtype is not None:
        assert got_np.dtype == np.dtype(dtype), (got_np.dtype, dtype)
    np.testing.assert_array_equal(got_np, want)


def assert_close(got, want, rtol=1e-5, atol=1e-6, dtype=None):
    """Like `assert_same`, with values within `rtol`/`atol`."""
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if dtype is not None:
        assert got_np.dtype == np.dtype(dtype), (got_np.dtype, dtype)
    np.testing.assert_allclose(got_np, want, rtol=rtol, atol=atol)


def _like(rng, a):
    a = np.asarray(a)
    if np.iscomplexobj(a):
        return (rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(
            a.dtype)
    return rng.standard_normal(a.shape).astype(a.dtype)


def _pair(a, b):
    """Re(sum(a * b)): the pairing under which JAX's (complex) cotangents transpose."""
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def check_grads(f, args, *, eps=1e-6, rtol=1e-5, atol=1e-6, seed=0, vjp=True, dot_tol=None):
    """Check `f` (float64/complex128 arrays -> array or tuple of arrays) at `args`:
    the JVP along a random direction against central differences, and, with `vjp`, the
    VJP against the JVP by ``<ct, J t> == <J^T ct, t>``. One jit runs everything."""
    rng = np.random.default_rng(seed)
    args = [np.asarray(a) for a in args]
    ts = [_like(rng, a) for a in args]
    out_avals = olympus.make_olympuspr(lambda *xs: f(*xs))(*args).out_avals
    cts = [_like(rng, np.zeros(a.shape, a.dtype)) for a in out_avals]

    def leaves(t):
        return tree_util.tree_leaves(t)

    def run(xs, ts, cts):
        y, ty = olympus.jvp(f, tuple(xs), tuple(ts))
        yp = f(*[x + eps * t for x, t in zip(xs, ts, strict=False)])
        ym = f(*[x - eps * t for x, t in zip(xs, ts, strict=False)])
        fd = [(a - b) / (2 * eps) for a, b in zip(leaves(yp), leaves(ym), strict=False)]
        out = {"ty": leaves(ty), "fd": fd}
        if vjp:
            y0, f_vjp = olympus.vjp(f, *xs)
            tree = tree_util.tree_structure(y0)
            out["g"] = list(f_vjp(tree_util.tree_unflatten(tree, list(cts))))
        return out

    res = olympus.jit(run)(args, ts, cts)
    for got, want in zip(res["ty"], res["fd"], strict=False):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol,
                                   err_msg="JVP vs finite differences")
    if vjp:
        lhs = sum(_pair(c, t) for c, t in zip(cts, res["ty"], strict=False))
        rhs = sum(_pair(g, t) for g, t in zip(res["g"], ts, strict=False))
        if dot_tol is None:
            single = any(np.asarray(a).dtype in (np.float32, np.complex64) for a in args)
            dot_tol = 1e-5 if single else 1e-8
        np.testing.assert_allclose(lhs, rhs, rtol=dot_tol, atol=dot_tol,
                                   err_msg="<ct, J t> != <J^T ct, t>")


def check_vmap(f, batched_args, in_axes=0, *, rtol=1e-5, atol=1e-5):
    """olympus.vmap(f) against a loop of f over the mapped axis (both jitted, so each
    compiles once)."""
    if not isinstance(in_axes, (list, tuple)):
        in_axes = [in_axes] * len(batched_args)
    size = next(np.shape(a)[ax] for a, ax in zip(batched_args, in_axes, strict=False) if ax is not None)
    got = olympus.jit(olympus.vmap(f, in_axes=tuple(in_axes)))(*batched_args)
    jf = olympus.jit(f)
    rows = []
    for i in range(size):
        xs = [a if ax is None else np.take(np.asarray(a), i, axis=ax)
              for a, ax in zip(batched_args, in_axes, strict=False)]
        rows.append(jf(*xs))
    got_l = tree_util.tree_leaves(got)
    rows_l = [tree_util.tree_leaves(r) for r in rows]
    for k, g in enumerate(got_l):
        want = np.stack([np.asarray(r[k]) for r in rows_l])
        np.testing.assert_allclose(np.asarray(g), want, rtol=rtol, atol=atol)
