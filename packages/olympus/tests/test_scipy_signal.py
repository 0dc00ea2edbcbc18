"""Tests for `olympus.scipy.signal` against `scipy.signal` (float32 and float64, 1- to
3-D, real and complex): convolution and correlation in every mode and method, detrending,
the spectral estimates (`welch`, `csd`, `stft`, `istft`) over their options, gradients
against finite differences, jit and vmap, and error messages recorded from reference JAX
0.10.2."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus.scipy.signal as S

ss = pytest.importorskip("scipy.signal")

x64 = olympus.enable_x64


def _rng(seed=0):
    return np.random.default_rng(seed)


def _close(got, want, dtype, scale=1.0):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    tol = scale * (2e-5 if dtype in (np.float32, np.complex64) else 1e-11)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(1, np.max(np.abs(w))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolve_correlate(dtype):
    r = _rng(1)
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    with x64(dtype == np.float64):
        pairs = {
            "1d": (r.normal(size=20), r.normal(size=5)),
            "1d swapped": (r.normal(size=4), r.normal(size=11)),
            "2d": (r.normal(size=(7, 9)), r.normal(size=(3, 4))),
            "3d": (r.normal(size=(5, 6, 4)), r.normal(size=(2, 3, 2))),
            "complex": (r.normal(size=12) + 1j * r.normal(size=12), r.normal(size=3)),
        }
        for x, y in pairs.values():
            x = x.astype(cdt if np.iscomplexobj(x) else dtype)
            y = y.astype(dtype)
            for mode in ("full", "same", "valid"):
                want = ss.convolve(x, y, mode)
                _close(S.convolve(x, y, mode), want, dtype)
                _close(S.convolve(x, y, mode, method="fft"), want, dtype)
                _close(S.fftconvolve(x, y, mode), want, dtype)
                _close(S.correlate(x, y, mode), ss.correlate(x, y, mode), dtype)
        a, b = pairs["2d"]
        a, b = a.astype(dtype), b.astype(dtype)
        ac = (a + 1j).astype(cdt)
        for mode in ("full", "same", "valid"):
            _close(S.convolve2d(a, b, mode), ss.convolve2d(a, b, mode), dtype)
            for x, y in ((a, b), (b, a), (ac, b + 1j), (b + 1j, ac)):
                _close(S.correlate2d(x, y, mode), ss.correlate2d(x, y, mode), dtype)
        x3, y3 = (v.astype(dtype) for v in pairs["3d"])
        y3 = np.repeat(y3[:, :, :1], 4, axis=2)
        for mode in ("full", "same", "valid"):
            _close(S.fftconvolve(x3, y3, mode, axes=(0, 1)),
                   ss.fftconvolve(x3, y3, mode, axes=(0, 1)), dtype)
    assert S.convolve(np.arange(5), np.arange(3)).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_detrend_and_spectral(dtype):
    r = _rng(2)
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    with x64(dtype == np.float64):
        a = r.normal(size=(7, 30)).astype(dtype)
        _close(S.detrend(a), ss.detrend(a), dtype, 10)
        _close(S.detrend(a, type="constant", axis=0), ss.detrend(a, type="constant", axis=0),
               dtype)
        _close(S.detrend(a[0], bp=[5, 12]), ss.detrend(a[0], bp=[5, 12]), dtype, 10)
        x = r.normal(size=(2, 300)).astype(dtype)
        y = r.normal(size=(2, 300)).astype(dtype)
        configs = (dict(nperseg=64, noverlap=16, nfft=100, detrend="linear"),
                   dict(window="hamming", nperseg=50, scaling="spectrum", average="median"),
                   dict(nperseg=64, return_onesided=False))
        for kw in configs if dtype == np.float32 else configs[:1]:
            _close(S.welch(x, **kw), ss.welch(x, **kw), dtype, 10)
            _close(S.csd(x, y, **kw), ss.csd(x, y, **kw), dtype, 10)
        _close(S.welch(x.T, nperseg=32, axis=0), ss.welch(x.T, nperseg=32, axis=0), dtype, 10)
        configs = (dict(nperseg=50, noverlap=10, nfft=64, boundary="odd"),
                   dict(nperseg=64, boundary=None, padded=False),
                   dict(nperseg=33, boundary="even"), dict(nperseg=33, boundary="constant"),
                   dict(nperseg=64, return_onesided=False, window="hamming"))
        for kw in configs if dtype == np.float32 else configs[:1]:
            _close(S.stft(x, **kw), ss.stft(x, **kw), dtype, 10)
        for kw in (dict(nperseg=64), dict(nperseg=50, noverlap=30))[:2 if dtype == np.float32
                                                                      else 1]:
            _, _, z = ss.stft(x, **kw)
            _close(S.istft(z.astype(cdt), **kw), ss.istft(z, **kw), dtype, 10)
        _, _, z = ss.stft(x[0], nperseg=64, return_onesided=False)
        _close(S.istft(z.astype(cdt), input_onesided=False), ss.istft(z, input_onesided=False),
               dtype, 10)
        # Recorded from reference JAX 0.10.2: nperseg=None means the whole signal.
        f, p = S.welch(x[0])
        assert f.shape == p.shape == (151,)


def test_gradients():
    with x64():
        r = _rng(3)
        x, k = r.normal(size=12), r.normal(size=4)
        for fn in (lambda x, k: S.convolve(x, k, "same"),
                   lambda x, k: S.correlate(x, k, "valid"),
                   lambda x, k: S.fftconvolve(x, k)):
            w = r.normal(size=np.shape(fn(x, k)))
            loss = lambda x, k, fn=fn, w=w: jnp.sum(fn(x, k) * w)  # noqa: E731
            gx, gk = olympus.grad(loss, argnums=(0, 1))(x, k)
            eps = 1e-6
            for arg, g in ((0, gx), (1, gk)):
                base = [x, k]
                fd = np.zeros_like(base[arg])
                for i in range(fd.size):
                    up = [v.copy() for v in base]
                    dn = [v.copy() for v in base]
                    up[arg][i] += eps
                    dn[arg][i] -= eps
                    fd[i] = (np.sum(np.asarray(fn(*up)) * w)
                             - np.sum(np.asarray(fn(*dn)) * w)) / (2 * eps)
                np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)
        sig = r.normal(size=64)
        g = olympus.grad(lambda s: jnp.sum(S.welch(s, nperseg=16)[1]))(sig)
        eps = 1e-6
        fd = np.array([(float(jnp.sum(S.welch(sig + eps * e, nperseg=16)[1]))
                        - float(jnp.sum(S.welch(sig - eps * e, nperseg=16)[1]))) / (2 * eps)
                       for e in np.eye(64)])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_jit_and_vmap():
    r = _rng(4)
    x = r.normal(size=(3, 40)).astype(np.float32)
    k = r.normal(size=5).astype(np.float32)
    conv = lambda v: S.convolve(v, k, "same")  # noqa: E731
    want = np.stack([ss.convolve(v, k, "same") for v in x])
    np.testing.assert_allclose(olympus.vmap(conv)(x), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(olympus.jit(olympus.vmap(conv))(x), want, rtol=1e-5, atol=1e-5)
    f, p = olympus.jit(lambda v: S.welch(v, nperseg=16))(x)
    _close((f, p), ss.welch(x, nperseg=16), np.float32, 10)
    got = olympus.vmap(lambda v: S.stft(v, nperseg=16)[2])(x)
    _close(got, ss.stft(x, nperseg=16)[2], np.float32, 10)


def test_errors():
    """Messages recorded from reference JAX 0.10.2."""
    x, k = np.ones(10, np.float32), np.ones(3, np.float32)
    z = np.ones((5, 4), np.complex64)
    cases = [
        (lambda: S.convolve(x, k, "x"), ValueError,
         "mode must be one of ['full', 'same', 'valid']"),
        (lambda: S.convolve(x, k, method="x"), ValueError,
         "Got method='x'; expected 'auto', 'fft', or 'direct'."),
        (lambda: S.convolve(x, np.ones((2, 2))), ValueError,
         "in1 and in2 must have the same number of dimensions"),
        (lambda: S.convolve(x, np.ones(0)), ValueError,
         "zero-size arrays not supported in convolutions, got shapes (10,) and (0,)."),
        (lambda: S.convolve(np.ones((3, 5)), np.ones((4, 2))), ValueError,
         "One input must be smaller than the other in every dimension."),
        (lambda: S.convolve2d(x, k), ValueError,
         "convolve2d() only supports 2-dimensional inputs."),
        (lambda: S.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap"),
         NotImplementedError, "convolve2d() only supports boundary='fill', fillvalue=0"),
        (lambda: S.correlate2d(np.ones((3, 3)), np.ones((2, 2)), fillvalue=1),
         NotImplementedError, "correlate2d() only supports boundary='fill', fillvalue=0"),
        (lambda: S.fftconvolve(x, k, "x"), ValueError,
         "mode must be one of ['same', 'full', 'valid']"),
        (lambda: S.fftconvolve(np.ones((3, 5)), np.ones((4, 2)), "valid"), ValueError,
         "For 'valid' mode, One input must be at least as large as the other in every "
         "dimension."),
        (lambda: S.fftconvolve(np.ones((3, 5)), np.ones((4, 2)), axes=1), ValueError,
         "mapped axes must have same shape; got in1.shape=(3, 5) in2.shape=(4, 2) axes=(1,)"),
        (lambda: S.fftconvolve([1.0, 2.0], k), TypeError,
         "fftconvolve requires ndarray or scalar arguments, got <class 'list'> at position 0."),
        (lambda: S.detrend(x, type="x"), ValueError,
         "Trend type must be 'linear' or 'constant'."),
        (lambda: S.detrend(x, bp=20), ValueError,
         "Breakpoints must be non-negative and less than length of data along given axis."),
        (lambda: S.detrend(x, overwrite_data=True), NotImplementedError,
         "overwrite_data argument not implemented."),
        (lambda: S.welch(x, nperseg=0), ValueError, "nperseg must be a positive integer"),
        (lambda: S.welch(x, nperseg=4, noverlap=4), ValueError,
         "noverlap must be less than nperseg."),
        (lambda: S.welch(x, nperseg=4, nfft=2), ValueError,
         "nfft must be greater than or equal to nperseg."),
        (lambda: S.welch(x, nperseg=4, scaling="x"), ValueError, "Unknown scaling: x"),
        (lambda: S.welch(x, nperseg=4, average="x"), ValueError,
         'average must be "median" or "mean", got x'),
        (lambda: S.welch(x, nperseg=4, detrend=3), ValueError, "Unsupported detrend type: 3"),
        (lambda: S.welch(x, window=np.ones((2, 2))), ValueError, "window must be 1-D"),
        (lambda: S.welch(x, window=np.ones(20)), ValueError,
         "window is longer than input signal"),
        (lambda: S.welch(x, window=np.ones(4), nperseg=5), ValueError,
         "value specified for nperseg is different from length of window"),
        (lambda: S.stft(x, nperseg=4, boundary="x"), ValueError,
         "Unknown boundary option 'x', must be one of: ['even', 'odd', 'constant', 'zeros', "
         "None]"),
        (lambda: S.csd(x, np.ones((2, 10)), nperseg=4), ValueError,
         "two-arguments must have the same rank"),
        (lambda: S.csd(np.ones((2, 10)), np.ones((3, 10)), nperseg=4), ValueError,
         "x and y cannot be broadcast together."),
        (lambda: S.istft(x), ValueError, "Input stft must be at least 2d!"),
        (lambda: S.istft(np.ones((3, 4)), time_axis=0, freq_axis=0), ValueError,
         "Must specify differing time and frequency axes!"),
        (lambda: S.istft(z, nfft=4), ValueError,
         "FFT length (4) must be longer than nperseg (8)."),
        (lambda: S.istft(z, noverlap=8), ValueError, "noverlap must be less than nperseg."),
        (lambda: S.istft(z, window=np.ones(3)), ValueError, "window must have length of 8"),
        (lambda: S.istft(z, window=np.ones((2, 4))), ValueError, "window must be 1-D"),
        (lambda: S.istft(z, nperseg=-1), ValueError, "nperseg must be a positive integer"),
    ]
    for fn, exc, msg in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(exc) as info:
                fn()
        assert msg in str(info.value), (msg, str(info.value))
