"""Tests for `olympus.scipy.interpolate.RegularGridInterpolator` against SciPy's (linear
and nearest, in and out of bounds, trailing value axes, pytree use under jit), and the
errors recorded from reference JAX 0.10.2."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
from olympus.scipy.interpolate import RegularGridInterpolator

si = pytest.importorskip("scipy.interpolate")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values(dtype):
    r = np.random.default_rng(0)
    with olympus.enable_x64(dtype == np.float64):
        grid = (np.linspace(0, 1, 5), np.sort(r.uniform(0, 2, 6)))
        values = r.normal(size=(5, 6, 2)).astype(dtype)
        pts = np.stack([r.uniform(-0.1, 1.1, (3, 5)), r.uniform(0, 2, (3, 5))], -1)
        for method in ("linear", "nearest"):
            got = RegularGridInterpolator(grid, values, method=method)(pts)
            want = si.RegularGridInterpolator(grid, values, method=method,
                                              bounds_error=False)(pts)
            assert got.shape == (3, 5, 2) and got.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        interp = RegularGridInterpolator(grid, values[..., 0], fill_value=None)
        want = si.RegularGridInterpolator(grid, values[..., 0], bounds_error=False,
                                          fill_value=None)(pts)
        np.testing.assert_allclose(interp(pts), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(interp((pts[..., 0], pts[..., 1])), want, rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(interp(pts, method="nearest"),
                                   si.RegularGridInterpolator(grid, values[..., 0],
                                                              method="nearest",
                                                              bounds_error=False,
                                                              fill_value=None)(pts),
                                   rtol=1e-6)
        # A pytree: passes through jit as an argument.
        np.testing.assert_allclose(olympus.jit(lambda f, p: f(p))(interp, pts), want,
                                   rtol=1e-5, atol=1e-6)


def test_errors():
    g, v = (np.arange(3.0),), np.ones(3)
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(g, v, method="cubic")
    with pytest.raises(NotImplementedError, match="`bounds_error` takes no effect under JIT"):
        RegularGridInterpolator(g, v, bounds_error=True)
    with pytest.raises(ValueError, match="there are 2 point arrays, but values has 1 "
                                         "dimensions"):
        RegularGridInterpolator((np.arange(3.0), np.arange(2.0)), v)
    with pytest.raises(ValueError, match="fill_value must be either 'None' or of a type "
                                         "compatible with values"):
        RegularGridInterpolator(g, v, fill_value=1j)
    with pytest.raises(ValueError, match="the requested sample points xi have dimension 2, "
                                         "but this RegularGridInterpolator has dimension 1"):
        RegularGridInterpolator(g, v)(np.ones((2, 2)))
    with pytest.raises(ValueError, match="method 'x' is not defined"):
        RegularGridInterpolator(g, v)(np.ones(2), method="x")
