"""olympus.numpy.fft against numpy.fft: 1-D/2-D/N-D transforms with n/s cropping and
padding, axes, norms and dtypes; frequencies and shifts; derivatives (finite differences
+ transpose dot-product test for every FFT type); vmap; jit."""

from __future__ import annotations

import numpy as np
import pytest
from _transform_checks import assert_close, check_grads, check_vmap, x64

import olympus
import olympus.numpy as jnp
from olympus import lax

rng = np.random.default_rng(0)


def _close(got, want, rtol=2e-5, atol=2e-5, dtype=None):
    assert_close(got, want, rtol=rtol, atol=atol, dtype=dtype)


def _c64(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 5, 12])
def test_1d(norm, n):
    z = _c64(3, 8)
    x = _f32(3, 8)
    _close(jnp.fft.fft(z, n, norm=norm), np.fft.fft(z, n, norm=norm), dtype=np.complex64)
    _close(jnp.fft.ifft(z, n, axis=0, norm=norm), np.fft.ifft(z, n, axis=0, norm=norm))
    _close(jnp.fft.rfft(x, n, norm=norm), np.fft.rfft(x, n, norm=norm), dtype=np.complex64)
    h = np.fft.rfft(x)
    _close(jnp.fft.irfft(h.astype(np.complex64), n, norm=norm), np.fft.irfft(h, n, norm=norm),
           dtype=np.float32)


def test_hfft_ihfft_and_input_dtypes():
    h = _c64(6)
    _close(jnp.fft.hfft(h), np.fft.hfft(h), 1e-4, 1e-4)
    _close(jnp.fft.hfft(h, 7, norm="ortho"), np.fft.hfft(h, 7, norm="ortho"), 1e-4, 1e-4)
    x = _f32(9)
    _close(jnp.fft.ihfft(x), np.fft.ihfft(x))
    i = np.arange(6, dtype=np.int32)
    _close(jnp.fft.fft(i), np.fft.fft(i), 1e-5, 1e-4, dtype=np.complex64)
    _close(jnp.fft.rfft(i), np.fft.rfft(i), 1e-5, 1e-4, dtype=np.complex64)
    with pytest.raises(TypeError):
        jnp.fft.rfft(_c64(4))
    with pytest.raises(ValueError):
        jnp.fft.fft(_c64(4), 0)
    with pytest.raises(ValueError):
        jnp.fft.fft(_c64(4), norm="bogus")


@pytest.mark.parametrize("s,axes", [(None, None), ((4, 6), (0, 2)), ((3, 5), (-1, 0)),
                                    (None, (1,)), ((6,), (2,))])
def test_nd(s, axes):
    z = _c64(4, 5, 6)
    x = _f32(4, 5, 6)
    _close(jnp.fft.fftn(z, s, axes), np.fft.fftn(z, s, axes), 1e-4, 1e-4)
    _close(jnp.fft.ifftn(z, s, axes), np.fft.ifftn(z, s, axes), 1e-4, 1e-4)
    _close(jnp.fft.rfftn(x, s, axes), np.fft.rfftn(x, s, axes), 1e-4, 1e-4)
    h = np.fft.rfftn(x, s, axes).astype(np.complex64)
    _close(jnp.fft.irfftn(h, s, axes), np.fft.irfftn(h, s, axes), 1e-4, 1e-4)


def test_2d_and_more_than_three_axes():
    z = _c64(2, 3, 4, 5)
    x = _f32(2, 3, 4, 5)
    _close(jnp.fft.fft2(z), np.fft.fft2(z), 1e-4, 1e-4)
    _close(jnp.fft.ifft2(z, norm="ortho"), np.fft.ifft2(z, norm="ortho"), 1e-4, 1e-4)
    _close(jnp.fft.rfft2(x, (3, 6)), np.fft.rfft2(x, (3, 6)), 1e-4, 1e-4)
    h = np.fft.rfft2(x).astype(np.complex64)
    _close(jnp.fft.irfft2(h, (4, 5)), np.fft.irfft2(h, (4, 5)), 1e-4, 1e-4)
    # Four transformed axes: done in steps of at most three.
    _close(jnp.fft.fftn(z), np.fft.fftn(z), 1e-3, 1e-3)
    _close(jnp.fft.rfftn(x), np.fft.rfftn(x), 1e-3, 1e-3)
    h4 = np.fft.rfftn(x).astype(np.complex64)
    _close(jnp.fft.irfftn(h4, x.shape), np.fft.irfftn(h4, x.shape, axes=(0, 1, 2, 3)), 1e-4,
           1e-4)


def test_x64_dtypes():
    with x64():
        x = rng.standard_normal(8)
        out = jnp.fft.fft(x)
        assert out.dtype == np.complex128
        _close(out, np.fft.fft(x), 1e-12, 1e-12)
        assert jnp.fft.irfft(np.fft.rfft(x)).dtype == np.float64
        assert jnp.fft.fftfreq(4).dtype == np.float64


def test_freqs_and_shifts():
    for n in (1, 6, 7):
        _close(jnp.fft.fftfreq(n), np.fft.fftfreq(n), dtype=np.float32)
        _close(jnp.fft.rfftfreq(n, 0.5), np.fft.rfftfreq(n, 0.5))
    _close(olympus.jit(lambda d: jnp.fft.fftfreq(5, d))(np.float32(0.1)),
           np.fft.fftfreq(5, 0.1))
    x = _f32(4, 5)
    _close(jnp.fft.fftshift(x), np.fft.fftshift(x))
    _close(jnp.fft.ifftshift(x), np.fft.ifftshift(x))
    _close(jnp.fft.fftshift(x, axes=1), np.fft.fftshift(x, axes=1))
    _close(jnp.fft.ifftshift(jnp.fft.fftshift(x, axes=(0,)), axes=(0,)), x)


def test_empty_batch():
    z = np.zeros((0, 4), np.complex64)
    assert jnp.fft.fft(z).shape == (0, 4)
    assert jnp.fft.rfft(np.zeros((0, 6), np.float32)).shape == (0, 4)


# --- derivatives --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,lengths", [("FFT", (6,)), ("IFFT", (3, 4)), ("RFFT", (7,)),
                                          ("RFFT", (4, 6)), ("IRFFT", (8,)),
                                          ("IRFFT", (3, 5))])
def test_fft_primitive_grads(kind, lengths):
    """JVP and transpose of each FFT type (the transposes are not adjoints: RFFT/IRFFT need
    the zero-padding and the (1, 2, ..., 2, 1) weights)."""
    with x64():
        shape = (2,) + tuple(lengths)
        if kind == "IRFFT":
            shape = shape[:-1] + (lengths[-1] // 2 + 1,)
        if kind == "RFFT":
            x = rng.standard_normal(shape)
        else:
            x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        check_grads(lambda a: lax.fft(a, kind, lengths), (x,))


def test_numpy_fft_grads():
    with x64():
        x = rng.standard_normal((3, 6))
        check_grads(lambda a: jnp.abs(jnp.fft.rfft(a, 8, norm="ortho")) ** 2, (x,))
        check_grads(lambda a: jnp.fft.irfft2(jnp.fft.rfft2(a) * 2.0, a.shape), (x,))
    # Parseval: sum |fft(a)|^2 = n * sum a^2, so the gradient is 2 n a.
    x = _f32(8)
    g = olympus.grad(lambda a: jnp.sum(jnp.abs(jnp.fft.fft(a)) ** 2))(x)
    _close(g, 16 * x, 1e-4, 1e-4)


def test_vmap_and_jit():
    z = _c64(3, 4, 8)
    check_vmap(lambda a: jnp.fft.fft(a), (z,), 2, rtol=1e-4, atol=1e-4)
    check_vmap(lambda a: jnp.fft.rfft2(a), (_f32(4, 3, 6),), 1, rtol=1e-4, atol=1e-4)
    check_vmap(lambda a: lax.fft(a, "IRFFT", (6,)), (_c64(2, 3, 4),), 0, rtol=1e-4, atol=1e-4)
    f = olympus.jit(lambda a: jnp.fft.ifft(jnp.fft.fft(a)))
    _close(f(z), z, 1e-5, 1e-5)
