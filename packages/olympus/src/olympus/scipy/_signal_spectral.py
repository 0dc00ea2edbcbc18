"""Windowed-FFT spectral estimates for `olympus.scipy.signal`: the short-time Fourier
transform and its inverse (overlap-add), Welch's power spectral density and the
cross-spectral density, with SciPy's arguments, scalings and segment layout."""

from __future__ import annotations

import functools
import warnings

import numpy as np

import olympus
import olympus.numpy as jnp

from ._util import canonicalize_axis, check_arraylike, concrete_int, promote_dtypes_inexact


def _complex_dtype(dtype):
    return np.dtype(np.complex128 if dtype in (np.float64, np.complex128) else np.complex64)


def _hann(n, dtype):
    if n == 1:
        return jnp.ones((1,), dtype)
    k = np.arange(n)
    return jnp.asarray((np.sin(np.pi * k / n) ** 2).astype(dtype))


def _window(window, nperseg, input_length, dtype):
    """The window array and the segment length (SciPy's `_triage_segments`)."""
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else int(nperseg)
        if n > input_length:
            warnings.warn(f"nperseg={n} is greater than input_length={input_length!r}, using "
                          f"nperseg={input_length}", stacklevel=4)
            n = input_length
        if isinstance(window, str) and window == "hann":
            return _hann(n, dtype), n
        return jnp.asarray(_scipy_window(window, n), dtype=dtype), n
    win = jnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _scipy_window(window, n):
    try:
        from scipy.signal import get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return get_window(window, n)


def _odd_ext(x, n):
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    left = 2 * x[..., :1] - jnp.flip(x[..., 1:n + 1], axis=-1)
    right = 2 * x[..., -1:] - jnp.flip(x[..., -(n + 1):-1], axis=-1)
    return jnp.concatenate([left, x, right], axis=-1)


def _extend(x, n, boundary):
    if boundary == "odd":
        return _odd_ext(x, n)
    mode = {"even": "reflect", "constant": "edge", "zeros": "constant"}[boundary]
    pad = [(0, 0)] * (x.ndim - 1) + [(n, n)]
    return jnp.pad(x, pad, mode)


_BOUNDARIES = ["even", "odd", "constant", "zeros", None]


def _segments_fft(x, win, detrend_fn, nperseg, noverlap, nfft, sides):
    """The windowed FFTs of the overlapping segments of x's last axis, on a new
    second-to-last axis."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    if nperseg == 1 and noverlap == 0:
        segs = x[..., None]
    else:
        step = nperseg - noverlap
        starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
        idx = starts[:, None] + np.arange(nperseg)[None, :]
        segs = x[..., idx]
    segs = detrend_fn(segs)
    if np.issubdtype(win.dtype, np.complexfloating) and not np.issubdtype(segs.dtype,
                                                                          np.complexfloating):
        segs = segs.astype(_complex_dtype(segs.dtype))
    segs = win * segs
    if sides == "twosided":
        return jnp.fft.fft(segs, n=nfft)
    return jnp.fft.rfft(jnp.real(segs), n=nfft)


def _detrend_fn(detrend_type):
    from .signal import detrend

    if isinstance(detrend_type, str):
        return lambda d: detrend(d, type=detrend_type, axis=-1)
    if callable(detrend_type):
        return detrend_type
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided,
              scaling, axis, mode, boundary=None, padded=False, average=None):
    """SciPy's spectral helper: ``(freqs, times, result)`` with the segments' spectra on
    the last axis of `result` (and the frequencies on `axis`)."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{_BOUNDARIES}")
    axis = concrete_int(axis, "axis of windowed-FFT")
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(x)
        axis = canonicalize_axis(axis, x.ndim)
        outer = x.shape[:axis] + x.shape[axis + 1:]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y = promote_dtypes_inexact(x, y)
        if x.ndim != y.ndim:
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        axis = canonicalize_axis(axis, x.ndim)
        try:
            outer = jnp.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                         y.shape[:axis] + y.shape[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = np.dtype(np.float64 if result_dtype == np.complex128 else np.float32)
    if nperseg is not None:
        nperseg = concrete_int(nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else concrete_int(noverlap,
                                                                  "noverlap of windowed-FFT")
    nfft = nperseg if nfft is None else concrete_int(nfft, "nfft of windowed-FFT")
    if y is None and x.size == 0:
        return (jnp.zeros(x.shape, freq_dtype), jnp.zeros(x.shape, freq_dtype),
                jnp.zeros(x.shape, result_dtype))
    if y is not None and (x.size == 0 or y.size == 0):
        shape = outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"Unknown scaling: {scaling}")
    if not (isinstance(detrend_type, str) or callable(detrend_type) or not detrend_type):
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and (np.issubdtype(x.dtype, np.complexfloating) or (
            y is not None and np.issubdtype(y.dtype, np.complexfloating))):
        sides = "twosided"
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      stacklevel=4)
    return _spectral_core(x, y, fs, win, nperseg=nperseg, noverlap=noverlap, nfft=nfft,
                          detrend_type=detrend_type, sides=sides, scaling=scaling, axis=axis,
                          mode=mode, boundary=boundary, padded=padded, average=average)


@functools.partial(olympus.jit, static_argnames=(
    "nperseg", "noverlap", "nfft", "detrend_type", "sides", "scaling", "axis", "mode",
    "boundary", "padded", "average"))
def _spectral_core(x, y, fs, win, *, nperseg, noverlap, nfft, detrend_type, sides, scaling,
                   axis, mode, boundary, padded, average):
    """The segmenting, windowed FFTs and scaling, as one compiled program (and with
    `average`, the averaging over segments of `csd`)."""
    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = np.dtype(np.float64 if result_dtype == np.complex128 else np.float32)
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
        if x.shape[-1] != y.shape[-1]:  # zero-pad the shorter one
            if x.shape[-1] < y.shape[-1]:
                x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, y.shape[-1] - x.shape[-1])])
            else:
                y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, x.shape[-1] - y.shape[-1])])
    nstep = nperseg - noverlap
    if boundary is not None:
        x = _extend(x, nperseg // 2, boundary)
        if y is not None:
            y = _extend(y, nperseg // 2, boundary)
    if padded:
        nadd = -(x.shape[-1] - nperseg) % nstep % nperseg
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, nadd)])
        if y is not None:
            y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, nadd)])
    detrend_fn = _detrend_fn(detrend_type)
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    else:
        scale = 1.0 / jnp.sum(win) ** 2
    if mode == "stft":
        scale = jnp.sqrt(scale)
    if sides == "twosided":
        freqs = jnp.fft.fftfreq(nfft, dtype=freq_dtype) * fs
    else:
        freqs = jnp.fft.rfftfreq(nfft, dtype=freq_dtype) * fs
    result = _segments_fft(x, win, detrend_fn, nperseg, noverlap, nfft, sides)
    if y is not None:
        result = jnp.conj(result) * _segments_fft(y, win, detrend_fn, nperseg, noverlap, nfft,
                                                  sides)
    elif mode == "psd":
        result = jnp.conj(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        end = None if nfft % 2 else -1
        result = result.at[..., 1:end].multiply(2)
    times = jnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nstep,
                       dtype=freq_dtype) / fs
    if boundary is not None:
        times = times - (nperseg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = jnp.real(result)
    result = jnp.moveaxis(result, -1, axis)
    if average is not None:
        result = _average_segments(result, y is not None, average)
    return freqs.astype(freq_dtype), times.astype(freq_dtype), result


def _average_segments(pxy, two_args, average):
    if two_args:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1])
                if np.issubdtype(pxy.dtype, np.complexfloating):
                    pxy = (jnp.median(jnp.real(pxy), axis=-1)
                           + 1j * jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / jnp.asarray(bias, pxy.dtype)
            else:
                pxy = pxy.mean(axis=-1)
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return pxy


def stft(x, fs=1.0, window: str = "hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: bool = False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1):
    """``(f, t, Zxx)``: the short-time Fourier transform of `x` along `axis` (frequencies
    and segment times added as the last two axes' positions, SciPy's layout)."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary, padded)


def _median_bias(n):
    ii = np.arange(2.0, n, 2)
    return 1 + np.sum(1.0 / (ii + 1) - 1.0 / ii)


def csd(x, y, fs=1.0, window: str = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean"):
    """``(f, Pxy)``: the cross power spectral density of `x` and `y` by Welch's method
    (segments averaged by mean or bias-corrected median)."""
    if average not in ("mean", "median"):
        raise ValueError(f'average must be "median" or "mean", got {average}')
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd", average=average)
    return freqs, pxy


def welch(x, fs=1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean"):
    """``(f, Pxx)``: the power spectral density of `x` by Welch's method."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, jnp.real(pxx)


def _overlap_add(frames, step):
    """Sum of the frames (..., nframes, length) placed `step` apart."""
    *batch, nframes, length = frames.shape
    out_len = step * (nframes - 1) + length
    idx = (np.arange(nframes)[:, None] * step + np.arange(length)[None, :]).ravel()
    flat = frames.reshape(tuple(batch) + (nframes * length,))
    out = jnp.zeros(tuple(batch) + (out_len,), frames.dtype)
    return out.at[..., idx].add(flat)


def istft(Zxx, fs=1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2):
    """``(t, x)``: the inverse short-time Fourier transform by windowed overlap-add."""
    check_arraylike("istft", Zxx)
    z = jnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, z.ndim)
    time_axis = canonicalize_axis(time_axis, z.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    z = z.astype(_complex_dtype(z.dtype) if not np.issubdtype(z.dtype, np.complexfloating)
                 else z.dtype)
    n_default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    nperseg = concrete_int(nperseg or n_default, "nperseg: segment length of STFT")
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    else:
        nfft = concrete_int(nfft, "nfft of STFT")
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = concrete_int(noverlap or nperseg // 2, "noverlap of STFT")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg - noverlap
    if time_axis != z.ndim - 1 or freq_axis != z.ndim - 2:
        outer = tuple(i for i in range(z.ndim) if i not in (time_axis, freq_axis))
        z = jnp.transpose(z, outer + (freq_axis, time_axis))
    ifft = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    xsubs = ifft(z, axis=-2, n=nfft)[..., :nperseg, :]
    if isinstance(window, str) and window == "hann":
        win = _hann(nperseg, xsubs.dtype)
    elif isinstance(window, (str, tuple)):
        win = jnp.asarray(_scipy_window(window, nperseg), dtype=xsubs.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    xsubs = xsubs * jnp.sum(win)
    frames = jnp.swapaxes(xsubs * win[:, None], -2, -1)
    x = _overlap_add(frames, nstep)
    norm = _overlap_add(jnp.broadcast_to(win * win, (xsubs.shape[-1], nperseg)), nstep)
    if boundary:
        half = nperseg // 2
        x = x[..., half:x.shape[-1] - half]
        norm = norm[..., half:norm.shape[-1] - half]
    norm = jnp.real(norm)
    x = x / jnp.where(norm > 1e-10, norm, 1.0).astype(x.dtype)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    times = jnp.arange(x.shape[0], dtype=jnp.real(x).dtype) / fs
    return times, x

