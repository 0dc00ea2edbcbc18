"""olympus.experimental.ode.odeint: values against scipy.integrate.odeint, adjoint
gradients (with respect to y0, args and t) against finite differences of scipy's solution
and closed forms, pytree states, jit, and JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import odeint as sp_odeint

import olympus
import olympus.numpy as jnp
from olympus.experimental.ode import odeint

T = np.linspace(0.0, 2.0, 5).astype(np.float32)


def _f(y, t, k):
    return -k * y + jnp.sin(t)


def _sp(k, y0=(1.0, 2.0), t=T):
    return sp_odeint(lambda y, t: -k * y + np.sin(t), list(y0), np.asarray(t, np.float64),
                     rtol=1e-10, atol=1e-10)


def test_values_against_scipy():
    ys = odeint(_f, jnp.array([1.0, 2.0]), T, 0.7)
    np.testing.assert_allclose(ys, _sp(0.7), rtol=1e-5, atol=1e-5)
    # A nonlinear system (a pendulum), pytree state.
    def pend(state, t, b, c):
        theta, omega = state["theta"], state["omega"]
        return {"theta": omega, "omega": -b * omega - c * jnp.sin(theta)}
    out = odeint(pend, {"theta": jnp.float32(np.pi - 0.1), "omega": jnp.float32(0.0)},
                 np.linspace(0, 3, 7, dtype=np.float32), 0.25, 5.0)
    want = sp_odeint(lambda y, t: [y[1], -0.25 * y[1] - 5.0 * np.sin(y[0])],
                     [np.pi - 0.1, 0.0], np.linspace(0, 3, 7), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out["theta"], want[:, 0], rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(out["omega"], want[:, 1], rtol=2e-4, atol=2e-4)


def test_adjoint_gradients():
    def loss(y0, k, t):
        return odeint(_f, y0, t, k)[-1].sum()
    g_y0, g_k, g_t = olympus.jit(olympus.grad(loss, argnums=(0, 1, 2)))(
        jnp.array([1.0, 2.0]), 0.7, jnp.asarray(T))
    # d y(T)/d y0 = exp(-k T) for this linear system.
    np.testing.assert_allclose(g_y0, np.full(2, np.exp(-0.7 * 2.0)), rtol=1e-4)
    eps = 1e-4
    fd_k = (_sp(0.7 + eps)[-1].sum() - _sp(0.7 - eps)[-1].sum()) / (2 * eps)
    np.testing.assert_allclose(g_k, fd_k, rtol=1e-3)
    # d/dt_last: the derivative of the solution at the last time; d/dt_0 through y(t0)=y0.
    y_last = _sp(0.7)[-1]
    np.testing.assert_allclose(g_t[-1], (-0.7 * y_last + np.sin(2.0)).sum(), rtol=1e-3)
    t_shift = T.astype(np.float64).copy()
    t_shift[0] += eps
    plus = _sp(0.7, t=t_shift)[-1].sum()
    t_shift[0] -= 2 * eps
    minus = _sp(0.7, t=t_shift)[-1].sum()
    np.testing.assert_allclose(g_t[0], (plus - minus) / (2 * eps), rtol=1e-2, atol=1e-4)
    np.testing.assert_allclose(g_t[1:-1], 0.0, atol=1e-4)


def test_errors():
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(_f, jnp.ones(2), jnp.arange(3), 0.7)
    with pytest.raises(TypeError, match="The contents of odeint \\*args must be arrays or "
                       "scalars, but got foo."):
        odeint(lambda y, t, s: y, jnp.ones(2), T, "foo")
