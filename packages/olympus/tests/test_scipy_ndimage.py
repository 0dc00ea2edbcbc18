"""Tests for `olympus.scipy.ndimage.map_coordinates` against `scipy.ndimage` (JAX's modes
'constant' and 'wrap' are SciPy's 'grid-constant' and 'grid-wrap'), integer inputs,
rounding half away from zero, gradients, jit/vmap and errors (recorded from reference
JAX 0.10.2)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.scipy.ndimage import map_coordinates

nd = pytest.importorskip("scipy.ndimage")

_SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap", "nearest": "nearest",
               "mirror": "mirror", "reflect": "reflect"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_values(dtype):
    r = np.random.default_rng(0)
    with olympus.enable_x64(dtype == np.float64):
        a = (r.normal(size=(5, 6)) * (10 if dtype == np.int32 else 1)).astype(dtype)
        coords = [r.uniform(-1.5, 6.5, (4, 5)), r.uniform(-1.5, 7.5, (4, 5))]
        # (JAX casts cval to the input's dtype: 1.5 is 1 for integers; use an integer.)
        cval = 2 if dtype == np.int32 else 1.5
        for order in (0, 1):
            for mode, smode in _SCIPY_MODE.items():
                got = map_coordinates(a, coords, order, mode, cval=cval)
                want = nd.map_coordinates(a, np.stack(coords), order=order, mode=smode,
                                          cval=cval)
                assert got.dtype == dtype and got.shape == (4, 5)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # Rounding half away from zero, as SciPy.
    x = np.arange(-3, 3, dtype=np.float32)
    c = [np.array([0.5, 1.5, 2.5, 3.5])]
    np.testing.assert_array_equal(map_coordinates(x, c, 0), nd.map_coordinates(x, c, order=0))


def test_gradient_jit_vmap():
    with olympus.enable_x64():
        x = np.sin(np.linspace(0, 3, 12))
        c = np.array([2.3, 5.7, 8.1])
        g = olympus.grad(lambda c: jnp.sum(map_coordinates(x, [c], 1)))(c)
        np.testing.assert_allclose(g, np.diff(x)[np.floor(c).astype(int)], rtol=1e-12)
    a = np.random.default_rng(1).normal(size=(3, 6)).astype(np.float32)
    coords = np.array([0.5, 2.25, 4.75], np.float32)
    f = lambda row: map_coordinates(row, [coords], 1)  # noqa: E731
    want = np.stack([nd.map_coordinates(row, [coords], order=1) for row in a])
    np.testing.assert_allclose(olympus.vmap(f)(a), want, rtol=1e-6)
    np.testing.assert_allclose(olympus.jit(f)(a[0]), want[0], rtol=1e-6)


def test_errors():
    x, c = np.arange(5.0), [np.linspace(0, 5, num=3)]
    with pytest.raises(NotImplementedError, match="requires order<=1"):
        map_coordinates(x, c, order=2)
    with pytest.raises(NotImplementedError, match="does not yet support mode grid-wrap"):
        map_coordinates(x, c, order=1, mode="grid-wrap")
    with pytest.raises(ValueError, match="coordinates must be a sequence of length "
                                         "input.ndim, but 2 != 1"):
        map_coordinates(x, [c[0], c[0]], order=1)
