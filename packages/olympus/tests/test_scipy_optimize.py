"""Tests for `olympus.scipy.optimize.minimize`: solutions against closed forms and
`scipy.optimize`, iteration counts and statuses recorded from reference JAX 0.10.2 (the
algorithm is the same, so they agree exactly), args and options, float32/float64, jit,
vmap, forward-mode differentiation, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.scipy.optimize import OptimizeResults, minimize

so = pytest.importorskip("scipy.optimize")

x64 = olympus.enable_x64


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)


def test_quadratic_result_fields():
    """Values recorded from reference JAX 0.10.2."""
    r = minimize(lambda x: jnp.sum((x - 1.0) ** 2), jnp.zeros(3), method="BFGS")
    assert isinstance(r, OptimizeResults)
    assert r._fields == ("x", "success", "status", "fun", "jac", "hess_inv", "nfev", "njev",
                         "nit")
    np.testing.assert_allclose(r.x, np.ones(3), atol=1e-6)
    assert bool(r.success) and int(r.status) == 0
    assert (int(r.nit), int(r.nfev), int(r.njev)) == (2, 3, 3)
    np.testing.assert_allclose(r.hess_inv, [[0.8333333, -0.16666664, -0.16666664],
                                            [-0.16666664, 0.8333333, -0.16666664],
                                            [-0.16666664, -0.16666664, 0.8333333]], rtol=1e-5)
    assert r.x.dtype == np.float32 and r.status.dtype == np.int32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rosenbrock_matches_reference_jax(dtype):
    """x, nit, nfev and status recorded from reference JAX 0.10.2 (its BFGS stops on a
    line-search failure here: status 3)."""
    x0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2], dtype)
    with x64(dtype == np.float64):
        r = minimize(rosen, x0, method="BFGS")
        want = [0.99673969, 0.99450075, 0.98856497, 0.97546818, 0.9507831]
        np.testing.assert_allclose(r.x, want, rtol=1e-4 if dtype == np.float32 else 1e-7)
        assert (int(r.nit), int(r.nfev), int(r.status), bool(r.success)) == (19, 25, 3, False)
        if dtype == np.float64:
            r = minimize(rosen, x0, method="l-bfgs-experimental-do-not-rely-on-this")
            np.testing.assert_allclose(r.x, np.ones(5), atol=1e-6)
            assert (int(r.nit), int(r.nfev), int(r.status)) == (27, 42, 4)
            assert r.hess_inv is None


def test_against_scipy_and_args_options():
    with x64():
        a = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.5]])
        b = np.array([1.0, -2.0, 0.5])

        def f(x, a, b):
            return 0.5 * x @ a @ x - b @ x + 0.1 * jnp.sum(x ** 4)

        r = minimize(f, jnp.zeros(3), args=(a, b), method="BFGS", options=dict(gtol=1e-9))
        ref = so.minimize(lambda x: 0.5 * x @ a @ x - b @ x + 0.1 * np.sum(x ** 4),
                          np.zeros(3), method="BFGS", options=dict(gtol=1e-10))
        np.testing.assert_allclose(r.x, ref.x, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(r.fun, ref.fun, rtol=1e-10)
        np.testing.assert_allclose(r.jac, np.zeros(3), atol=1e-8)
        # An iteration limit: status 1, not successful (recorded from reference JAX).
        r = minimize(lambda x, c: jnp.sum((x - c) ** 2), jnp.zeros(2), args=(jnp.ones(2),),
                     method="bfgs", options=dict(maxiter=1))
        assert int(r.status) == 1 and not bool(r.success) and int(r.nit) == 1


def _quartic(x):
    return jnp.sum((x - jnp.array([1.0, -0.5])) ** 2) + jnp.sum(x ** 4)


def _solve(x0):
    return minimize(_quartic, x0, method="BFGS").x


def _shifted(x, a):
    return jnp.sum((x - a) ** 2) + 0.1 * jnp.sum(x ** 4)


def test_jit_vmap_and_forward_mode():
    x0 = np.array([[1.5, 1.5], [-1.0, 2.0], [0.3, 0.4]], np.float32)
    want = so.minimize(lambda x: np.sum((x - np.array([1.0, -0.5])) ** 2) + np.sum(x ** 4),
                       np.zeros(2), options=dict(gtol=1e-9)).x
    np.testing.assert_allclose(olympus.jit(olympus.vmap(_solve))(x0), np.stack([want] * 3),
                               atol=2e-5)
    with x64():
        def argmin(a):
            return minimize(_shifted, jnp.zeros(2), args=(a,), method="BFGS").x

        # Forward mode goes through the while loops (reference JAX: the same tangent).
        primal, tangent = olympus.jvp(argmin, (jnp.ones(2),), (jnp.array([1.0, 0.0]),))
        np.testing.assert_allclose(primal, [0.86883004, 0.86883004], rtol=1e-7)
        np.testing.assert_allclose(tangent, [1.07055143, -0.38228137], rtol=1e-6)
        # Reverse mode does not (as in JAX).
        with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
            olympus.grad(lambda a: argmin(a).sum())(jnp.ones(2))


def test_errors():
    """Messages recorded from reference JAX 0.10.2."""
    with pytest.raises(ValueError, match="Method CG not recognized"):
        minimize(lambda x: jnp.sum(x ** 2), jnp.zeros(3), method="CG")
    with pytest.raises(TypeError, match="args argument to olympus.scipy.optimize.minimize must be "
                                        "a tuple, got"):
        minimize(lambda x, a: jnp.sum(x ** 2), jnp.zeros(3), args=[1], method="BFGS")
