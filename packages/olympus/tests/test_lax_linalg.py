"""``olympus.lax.linalg``'s functions that JAX gives primitives of their own and Olympus
composes (lu_pivots_to_permutation, symmetric_product, tridiagonal_solve,
cholesky_update, householder_product), its enums and its primitives: values against
NumPy/SciPy and reference JAX 0.10.2's recorded outputs (said where), gradients against
finite differences, vmap against a loop."""

from __future__ import annotations

import numpy as np
import pytest
from _transform_checks import check_grads, check_vmap, x64

import olympus
import olympus.numpy as jnp
from olympus.lax import linalg as L
from olympus_ir import primitives as P

rng = np.random.default_rng(11)


def test_enums_and_primitives():
    assert L.EigImplementation.LAPACK.value == "lapack"
    assert [m.name for m in L.EighImplementation] == ["QR", "JACOBI", "QDWH"]
    assert L.SvdAlgorithm.DIVIDE_AND_CONQUER.value == "divide_and_conquer"
    for n in ("cholesky_p", "eig_p", "eigh_p", "lu_p", "qr_p", "svd_p", "triangular_solve_p"):
        assert getattr(L, n) is getattr(P, n)
    jaxpr = olympus.make_olympuspr(L.cholesky)(np.eye(2, dtype=np.float32))
    assert L.cholesky_p in [e.primitive for e in jaxpr.eqns]


def test_lu_pivots_to_permutation():
    """Recorded from reference JAX 0.10.2."""
    got = L.lu_pivots_to_permutation(jnp.array([2, 2, 2], jnp.int32), 5)
    assert np.asarray(got).tolist() == [2, 0, 1, 3, 4]
    got = L.lu_pivots_to_permutation(jnp.array([[1, 1], [0, 1]], jnp.int32), 3)
    assert np.asarray(got).tolist() == [[1, 0, 2], [0, 1, 2]]
    # It is the permutation lu returns.
    a = rng.standard_normal((4, 4)).astype(np.float32)
    _, piv, perm = L.lu(a)
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(piv, 4), perm)
    with pytest.raises(ValueError, match="Output permutation size 2 has to exceed the "
                                         "trailing dimension of the pivots. Got pivots size 3"):
        L.lu_pivots_to_permutation(jnp.array([2, 2, 2], jnp.int32), 2)
    with pytest.raises(TypeError, match="does not accept dtype float32 at position 0"):
        L.lu_pivots_to_permutation(jnp.array([2.0, 2, 2]), 4)


def test_symmetric_product():
    """Recorded from reference JAX 0.10.2 (CPU computes the whole product)."""
    a = jnp.arange(6.0).reshape(2, 3)
    c = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(L.symmetric_product(a, c, alpha=2.0, beta=3.0),
                               [[13, 34], [37, 112]])
    np.testing.assert_allclose(L.symmetric_product(a, c, alpha=2.0, beta=3.0,
                                                   symmetrize_output=True),
                               [[13, 37], [37, 112]])
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(L.symmetric_product(x, np.zeros((3, 4, 4), np.float32)),
                               x @ x.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)


def _tridiag_dense(dl, d, du):
    m = d.shape[-1]
    return (np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:m - 1], 1))


def test_tridiagonal_solve_against_numpy():
    m = 6
    dl = rng.standard_normal(m).astype(np.float32)
    du = rng.standard_normal(m).astype(np.float32)
    d = (4 + rng.random(m)).astype(np.float32)
    dl[0] = du[-1] = 0
    b = rng.standard_normal((m, 2)).astype(np.float32)
    got = L.tridiagonal_solve(dl, d, du, b)
    np.testing.assert_allclose(got, np.linalg.solve(_tridiag_dense(dl, d, du), b),
                               rtol=1e-5, atol=1e-5)
    # recorded from reference JAX 0.10.2
    got = L.tridiagonal_solve(jnp.array([0.0, 1, 1]), jnp.array([4.0, 4, 4]),
                              jnp.array([1.0, 1, 0]), jnp.array([[1.0], [2], [3]]))
    np.testing.assert_allclose(got, [[0.17857143], [0.28571427], [0.6785714]], rtol=1e-6)
    check_vmap(lambda dl, d, du, b: L.tridiagonal_solve(dl, d, du, b),
               [np.stack([dl, dl]), np.stack([d, d + 1]), np.stack([du, du]),
                np.stack([b, 2 * b])])
    with pytest.raises(ValueError, match="tridiagonal_solve requires that d has shape"):
        L.tridiagonal_solve(dl, d[:-1], du, b)
    with x64():
        args = [dl.astype(np.float64), d.astype(np.float64), du.astype(np.float64),
                b.astype(np.float64)]
        check_grads(lambda d, b: L.tridiagonal_solve(args[0], d, args[2], b),
                    [args[1], args[3]], rtol=1e-4, atol=1e-6)


def test_cholesky_update():
    """Recorded from reference JAX 0.10.2, and checked against a fresh factorization."""
    r = np.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)).T
    got = L.cholesky_update(r, jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(got, [[2.236068, 1.7888544], [0.0, 1.9493588]], rtol=1e-6)
    a = rng.standard_normal((5, 5))
    a = (a @ a.T + 5 * np.eye(5)).astype(np.float32)
    w = rng.standard_normal(5).astype(np.float32)
    got = L.cholesky_update(np.linalg.cholesky(a).T, w)
    np.testing.assert_allclose(got, np.linalg.cholesky(a + np.outer(w, w)).T,
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(olympus.jit(L.cholesky_update)(np.linalg.cholesky(a).T, w),
                               got, rtol=1e-6, atol=1e-6)


def test_householder_product():
    """Recorded from reference JAX 0.10.2, and checked against qr's Q."""
    got = L.householder_product(jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                                jnp.array([0.5, 1.2]))
    np.testing.assert_allclose(got, [[0.5, 18.300001], [-1.5, 54.700005], [-2.5, 84.3]],
                               rtol=1e-5)
    import scipy.linalg

    x = rng.standard_normal((5, 3))
    (qr_raw, tau), _ = scipy.linalg.qr(x, mode="raw")
    q = scipy.linalg.qr(x, mode="economic")[0]
    np.testing.assert_allclose(L.householder_product(qr_raw.astype(np.float32),
                                                     tau.astype(np.float32)), q,
                               rtol=1e-4, atol=1e-5)
    batched = L.householder_product(np.stack([qr_raw, qr_raw]).astype(np.float32),
                                    np.stack([tau, tau]).astype(np.float32))
    np.testing.assert_allclose(batched[1], q, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        L.householder_product(np.ones((2, 3), np.float32), np.ones(2, np.float32))
