"""Tests for `olympus.scipy.sparse.linalg` (`cg`, `bicgstab`, `gmres`): solutions against
`numpy.linalg.solve`, the first iterates against `scipy.sparse.linalg` (the same Krylov
recurrences), real and complex, matrices and functions as operators, pytrees,
preconditioners, jit, vmap, forward-mode derivatives, and the argument errors recorded
from reference JAX 0.10.2."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg as ssl

import olympus
import olympus.numpy as jnp
from olympus.scipy.sparse.linalg import bicgstab, cg, gmres

N = 8


def _problem(complex_=False):
    r = np.random.default_rng(3)
    a = r.normal(size=(N, N))
    b = r.normal(size=N)
    if complex_:
        a = a + 1j * r.normal(size=(N, N))
        b = b + 1j * r.normal(size=N)
    hpd = a @ a.conj().T + N * np.eye(N)
    general = a + N * np.eye(N)
    return hpd, general, b


@pytest.mark.parametrize("complex_", [False, True])
def test_solutions(complex_):
    hpd, general, b = _problem(complex_)
    with olympus.enable_x64(True):
        x, info = cg(hpd, b, tol=1e-12)
        assert info is None and x.dtype == b.dtype
        np.testing.assert_allclose(x, np.linalg.solve(hpd, b), atol=1e-10)
        np.testing.assert_allclose(bicgstab(general, b, tol=1e-12)[0],
                                   np.linalg.solve(general, b), atol=1e-10)
        # restart=3 < N: several restart cycles.
        for method, restart in (("batched", 20), ("incremental", 3)):
            x, _ = gmres(general, b, tol=1e-12, restart=restart, solve_method=method)
            np.testing.assert_allclose(x, np.linalg.solve(general, b), atol=1e-10)


def test_iterates_match_scipy():
    """Stopped after a few steps, the iterates are SciPy's (with SciPy's `rtol`, which
    is JAX's `tol`)."""
    hpd, general, b = _problem()
    jacobi = np.diag(1 / np.diag(hpd))
    x0 = np.full(N, 0.1)
    with olympus.enable_x64(True):
        for steps in (1, 3):
            want, _ = ssl.cg(hpd, b, x0=x0, rtol=1e-3, M=jacobi, maxiter=steps)
            np.testing.assert_allclose(cg(hpd, b, x0=x0, tol=1e-3, M=jacobi, maxiter=steps)[0],
                                       want, atol=1e-12)
            want, _ = ssl.bicgstab(general, b, rtol=1e-3, maxiter=steps)
            np.testing.assert_allclose(bicgstab(general, b, tol=1e-3, maxiter=steps)[0],
                                       want, atol=1e-12)
        for method in ("batched", "incremental"):
            want, _ = ssl.gmres(general, b, rtol=1e-3, restart=3, maxiter=1)
            got, _ = gmres(general, b, tol=1e-3, restart=3, maxiter=1, solve_method=method)
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_functions_pytrees_and_preconditioners():
    hpd, _, b = _problem()
    want = np.linalg.solve(hpd, b)

    def operator(tree):  # a function of a pytree with b's structure
        w = hpd @ jnp.concatenate([tree["a"], tree["b"].ravel()])
        return {"a": w[:3], "b": w[3:].reshape(5, 1)}

    tree = {"a": b[:3], "b": b[3:].reshape(5, 1)}
    with olympus.enable_x64(True):
        for solve in (cg, bicgstab, gmres):
            x, _ = solve(operator, tree, tol=1e-12, M=lambda t: t)
            assert set(x) == {"a", "b"} and x["b"].shape == (5, 1)
            np.testing.assert_allclose(np.concatenate([x["a"], x["b"].ravel()]), want,
                                       atol=1e-10)
        for solve in (cg, gmres):  # a matrix preconditioner
            np.testing.assert_allclose(solve(hpd, b, M=np.diag(1 / np.diag(hpd)),
                                             tol=1e-12)[0], want, atol=1e-10)


def test_jit_vmap_and_forward_mode():
    hpd, general, b = (m.astype(np.float32) for m in _problem())
    np.testing.assert_allclose(olympus.jit(lambda b: cg(hpd, b)[0])(b),
                               np.linalg.solve(hpd, b), rtol=1e-4, atol=1e-5)
    bs = np.random.default_rng(4).normal(size=(3, N)).astype(np.float32)
    got = olympus.vmap(lambda b: gmres(general, b, solve_method="incremental")[0])(bs)
    np.testing.assert_allclose(got, np.linalg.solve(general, bs.T).T, rtol=1e-4, atol=1e-5)
    # d x / d b . t = A^-1 t (forward mode goes through the iterations).
    _, tangent = olympus.jvp(lambda b: bicgstab(general, b, tol=1e-7)[0], (b,),
                             (np.ones(N, np.float32),))
    np.testing.assert_allclose(tangent, np.linalg.solve(general, np.ones(N)), rtol=1e-4,
                               atol=1e-5)


def test_errors_as_jax():
    """Messages recorded from reference JAX 0.10.2."""
    b = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"x0 and b must have matching tree structure: "
                       r"PyTreeDef\(\(\*,\)\) vs PyTreeDef\(\*\)"):
        cg(np.eye(3), b, x0=(b,))
    with pytest.raises(ValueError, match=r"arrays in x0 and b must have matching shapes: "
                       r"\[\(2,\)\] vs \[\(3,\)\]"):
        cg(np.eye(3), b, x0=np.ones(2))
    with pytest.raises(ValueError, match=r"linear operator must be a square matrix, but has "
                       r"shape: \(3, 2\)"):
        bicgstab(np.ones((3, 2)), b)
    with pytest.raises(ValueError, match="invalid solve_method x, must be either "
                       "'incremental' or 'batched'"):
        gmres(np.eye(3), b, solve_method="x")
    with pytest.raises(TypeError, match="linear operator must be either a function or "
                       "ndarray: abc"):
        cg("abc", b)
