"""Tests for `olympus.scipy.fft` (the type-2 DCT and its inverse) against `scipy.fft`:
lengths even and odd, padding and truncation, several axes, both norms, float32/float64
and complex inputs, gradients, jit/vmap, and errors recorded from reference JAX 0.10.2."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus.scipy.fft as F

sf = pytest.importorskip("scipy.fft")

x64 = olympus.enable_x64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dct_idct(dtype):
    r = np.random.default_rng(0)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    with x64(dtype == np.float64):
        for shape in [(1,), (7,), (8,), (3, 4, 6)]:
            x = r.normal(size=shape).astype(dtype)
            for norm in (None, "ortho"):
                for fn, ref in ((F.dct, sf.dct), (F.idct, sf.idct), (F.dctn, sf.dctn),
                                (F.idctn, sf.idctn)):
                    got = fn(x, norm=norm)
                    assert got.dtype == dtype
                    np.testing.assert_allclose(got, ref(x, norm=norm), rtol=tol, atol=tol * 10)
        x = r.normal(size=(4, 5)).astype(dtype)
        for norm in ("backward", "ortho"):
            np.testing.assert_allclose(F.dct(x, n=7, axis=0, norm=norm),
                                       sf.dct(x, n=7, axis=0, norm=norm), rtol=tol,
                                       atol=tol * 10)
            np.testing.assert_allclose(F.idct(x, n=3, norm=norm), sf.idct(x, n=3, norm=norm),
                                       rtol=tol, atol=tol * 10)
        np.testing.assert_allclose(F.dctn(x, s=[3], norm="ortho"),
                                   sf.dctn(x, s=[3], norm="ortho"), rtol=tol, atol=tol * 10)
        np.testing.assert_allclose(F.idctn(x, axes=(0,), s=(6,)),
                                   sf.idctn(x, axes=(0,), s=(6,)), rtol=tol, atol=tol * 10)
        xc = (r.normal(size=6) + 1j * r.normal(size=6)).astype(
            np.complex64 if dtype == np.float32 else np.complex128)
        np.testing.assert_allclose(F.dct(xc), sf.dct(xc), rtol=tol, atol=tol * 10)
        np.testing.assert_allclose(F.idct(F.dct(xc)), xc, rtol=tol, atol=tol * 10)
    assert F.dct(np.arange(4)).dtype == np.float32


def test_gradient_jit_vmap():
    with x64():
        x = np.random.default_rng(1).normal(size=6)
        w = np.arange(6.0)
        g = olympus.grad(lambda v: jnp.sum(F.dct(v, norm="ortho") * w))(x)
        # The orthonormal DCT is an orthogonal linear map: its gradient is its transpose.
        np.testing.assert_allclose(g, sf.idct(w, norm="ortho"), rtol=1e-12, atol=1e-12)
    x = np.random.default_rng(2).normal(size=(3, 8)).astype(np.float32)
    np.testing.assert_allclose(olympus.jit(F.dct)(x), sf.dct(x), rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(olympus.vmap(F.idct)(x), sf.idct(x), rtol=2e-5, atol=2e-5)


def test_errors():
    """Messages recorded from reference JAX 0.10.2."""
    x = np.ones((3, 4), np.float32)
    with pytest.raises(NotImplementedError, match="Only DCT type 2 is implemented."):
        F.dct(x, type=1)
    with pytest.raises(NotImplementedError, match="Only DCT type 2 is implemented."):
        F.idctn(x, type=3)
    with pytest.raises(ValueError, match="olympus.scipy.fft.dct: norm='forward' is not "
                                         "implemented"):
        F.dct(x, norm="forward")
    with pytest.raises(ValueError, match="olympus.scipy.fft.idctn: norm='forward' is not "
                                         "implemented"):
        F.idctn(x, norm="forward")
    with pytest.raises(ValueError, match=r"s must have at most x.ndim \(2\) elements, got 3"):
        F.dctn(x, s=(1, 2, 3))
    with pytest.raises(TypeError, match="dct requires ndarray or scalar arguments, got "
                                        "<class 'list'> at position 0."):
        F.dct([1.0, 2.0])
