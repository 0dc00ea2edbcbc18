"""`olympus.scipy.signal`: convolution and correlation (direct, by XLA's convolution, or by
FFT), detrending, and the spectral estimates (`stft`, `istft`, `welch`, `csd`)."""

from __future__ import annotations

import operator

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from ._signal_spectral import csd, istft, stft, welch
from ._util import canonicalize_axis, check_arraylike, promote_dtypes_inexact

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]

_MODES = ("full", "same", "valid")


def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """N-dimensional convolution by FFT (real FFTs for real inputs); with `axes`, only
    over those axes (the others are batch axes and must match)."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ["same", "full", "valid"]:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        return _fftconvolve_unbatched(in1, in2, mode)
    axes = (axes,) if isinstance(axes, int) else tuple(operator.index(a) for a in axes)
    axes = tuple(canonicalize_axis(ax, in1.ndim) for ax in axes)
    mapped = sorted(set(range(in1.ndim)) - set(axes))
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape!r} "
                         f"in2.shape={in2.shape!r} axes={axes!r}")
    fn = lambda a, b: _fftconvolve_unbatched(a, b, mode)  # noqa: E731
    for ax in mapped:
        fn = olympus.vmap(fn, in_axes=ax, out_axes=ax)
    return fn(in1, in2)


def _fftconvolve_unbatched(in1, in2, mode):
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        conv = in1 * in2
    elif np.issubdtype(in1.dtype, np.complexfloating):
        conv = jnp.fft.ifftn(jnp.fft.fftn(in1, full_shape) * jnp.fft.fftn(in2, full_shape),
                             full_shape)
    else:
        conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, full_shape) * jnp.fft.rfftn(in2, full_shape),
                              full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    starts = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape))
    return conv[tuple(slice(s, s + o) for s, o in zip(starts, out_shape))]


def _convolve_nd(in1, in2, mode, *, precision):
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    shape = in2.shape
    kernel = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                   for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    out = lax.conv_general_dilated(in1[None, None], kernel[None, None], (1,) * len(shape),
                                   padding, precision=precision)
    return out[0, 0]


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """N-dimensional convolution: directly (XLA's convolution) or by FFT."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        check_arraylike("convolve", in1, in2)
        return _convolve_nd(jnp.asarray(in1), jnp.asarray(in2), mode, precision=precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue: float = 0,
               precision=None):
    """Two-dimensional convolution (zero fill only, as JAX)."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("convolve2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("convolve2d() only supports 2-dimensional inputs.")
    return _convolve_nd(jnp.asarray(in1), jnp.asarray(in2), mode, precision=precision)


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """N-dimensional cross-correlation: convolution with the flipped conjugate."""
    in2 = jnp.asarray(in2)
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode, precision=precision, method=method)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue: float = 0,
                precision=None):
    """Two-dimensional cross-correlation (zero fill only), with SciPy's choice of which
    input slides over which."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("correlate2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("correlate2d() only supports 2-dimensional inputs.")
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    same_shape = in1.shape == in2.shape
    if mode == "same" or (mode == "valid" and not (swap and not same_shape)) or (
            mode not in ("same", "valid") and not swap):
        out = _convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision=precision)
        return jnp.flip(out)
    out = _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision=precision)
    return out if mode == "valid" else jnp.conj(out)


def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data=None):
    """Remove the mean ('constant') or a least-squares line ('linear', piecewise between
    the breakpoints `bp`) along `axis`."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return x - x.mean(axis, keepdims=True)
    n = x.shape[axis]
    bps = np.sort(np.unique(np.r_[0, bp, n]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along "
                         "given axis.")
    x = jnp.moveaxis(x, axis, 0)
    shape = x.shape
    x = x.reshape(n, -1)
    for lo, hi in zip(bps[:-1], bps[1:]):
        npts = int(hi - lo)
        design = jnp.stack([jnp.ones(npts, x.dtype),
                            jnp.arange(1, npts + 1, dtype=x.dtype) / npts], axis=1)
        coef = jnp.linalg.lstsq(design, x[lo:hi])[0]
        x = x.at[lo:hi].add(-(design @ coef))
    return jnp.moveaxis(x.reshape(shape), 0, axis)
