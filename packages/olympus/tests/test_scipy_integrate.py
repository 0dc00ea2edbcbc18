"""Tests for `olympus.scipy.integrate.trapezoid` against `scipy.integrate`."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.scipy.integrate import trapezoid

sint = pytest.importorskip("scipy.integrate")


def test_trapezoid():
    r = np.random.default_rng(0)
    y = r.normal(size=(3, 10)).astype(np.float32)
    x = np.sort(r.normal(size=10)).astype(np.float32)
    np.testing.assert_allclose(trapezoid(y, x), sint.trapezoid(y, x), rtol=1e-5)
    np.testing.assert_allclose(trapezoid(y, dx=0.5, axis=0), sint.trapezoid(y, dx=0.5, axis=0),
                               rtol=1e-5)
    assert trapezoid(np.arange(5)).dtype == np.float32
    with olympus.enable_x64():
        g = olympus.grad(lambda v: trapezoid(v, dx=0.5))(np.ones(4))
        np.testing.assert_allclose(g, [0.25, 0.5, 0.5, 0.25])
    np.testing.assert_allclose(olympus.vmap(lambda v: trapezoid(v, x))(y),
                               sint.trapezoid(y, x), rtol=1e-5)
    np.testing.assert_allclose(trapezoid(jnp.asarray(y), x, axis=-1),
                               sint.trapezoid(y, x), rtol=1e-5)
