"""`olympus.numpy.fft`: discrete Fourier transforms on the `fft` primitive
(``stablehlo.fft``), with NumPy's `n`/`s`, `axis`/`axes` and `norm` arguments.

Inputs are cropped or zero-padded to the requested lengths; the transformed axes are
moved to the end for the primitive, which handles up to three at once (more are done in
steps: complex transforms are separable). Results are complex64 (complex128 under x64),
real transforms' inverses float32 (float64).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from olympus_ir import dtypes
from olympus_ir.prims.linalg_lapack import FftType
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

from .._src.jit import jit
from . import _ufuncs as uf
from ._util import arr1 as _arr
from ._util import dtype_of as _dt
from ._util import shape_of as _shape

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
           "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _real_dtype():
    return np.dtype(np.float64) if dtypes.is_x64_enabled() else np.dtype(np.float32)


def _as_complex(x):
    dt = _dt(x)
    if dtypes.is_complex(dt):
        return lax.convert_element_type(x, dt, False)
    cdt = np.dtype(np.complex128) if dt == np.float64 else np.dtype(np.complex64)
    if not dtypes.is_inexact(dt):
        cdt = np.dtype(np.complex128) if dtypes.is_x64_enabled() else np.dtype(np.complex64)
    return lax.convert_element_type(x, cdt, False)


def _as_real(name, x):
    dt = _dt(x)
    if dtypes.is_complex(dt):
        raise TypeError(f"olympus.numpy.fft.{name} does not support complex input.")
    if dt in (np.float32, np.float64):
        return lax.convert_element_type(x, dt, False)
    return lax.convert_element_type(x, np.float64 if dt == np.float64 else _real_dtype(),
                                    False)


def _resize(x, axis, n):
    """Crop or zero-pad `x` along `axis` to length `n`."""
    shape = _shape(x)
    cur = shape[axis]
    if cur == n:
        return x
    if cur > n:
        limit = list(shape)
        limit[axis] = n
        return lax.slice(x, (0,) * len(shape), limit)
    cfg = [(0, 0, 0)] * len(shape)
    cfg[axis] = (0, n - cur, 0)
    return lax.pad(x, np.zeros((), _dt(x)), cfg)


def _prim(x, kind, lengths):
    return lax.fft(x, kind, lengths)


def _complex_nd(x, kind, lengths):
    """FFT or IFFT over the trailing len(lengths) axes, three at a time."""
    k = len(lengths)
    nd = len(_shape(x))
    while k > 0:
        step = builtins.min(3, k)
        # Transform axes [nd - k, nd - k + step): move them to the end, transform, move back.
        axes = list(range(nd - k, nd - k + step))
        perm = [i for i in range(nd) if i not in axes] + axes
        inv = list(np.argsort(perm))
        y = lax.transpose(x, perm)
        y = _prim(y, kind, lengths[len(lengths) - k:len(lengths) - k + step])
        x = lax.transpose(y, inv)
        k -= step
    return x


def _scale(x, norm, n_total, inverse):
    if norm in (None, "backward"):
        return x
    if norm == "ortho":
        f = math.sqrt(n_total)
        factor = f if inverse else 1.0 / f
    else:  # forward
        factor = float(n_total) if inverse else 1.0 / n_total
    return lax.mul(x, np.asarray(factor, _dt(x)))


def _fftn_core(name, kind, a, s, axes, norm):
    a = _arr(name, a)
    s = None if s is None else tuple(int(v) for v in s)
    axes = None if axes is None else tuple(int(v) for v in axes)
    return _fftn_impl(a, name, kind, s, axes, norm)


@jit(static_argnums=(1, 2, 3, 4, 5), inline=True)
def _fftn_impl(a, name, kind, s, axes, norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    a = _arr(name, a)
    nd = len(_shape(a))
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    else:
        axes = [prom.canonicalize_axis(ax, nd) for ax in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name} does not support repeated axes. Got axes {axes}.")
    if s is not None:
        s = [int(v) for v in s]
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    if kind == FftType.RFFT:
        a = _as_real(name, a)
    else:
        a = _as_complex(a)
    shape = _shape(a)
    if s is None and kind in (FftType.FFT, FftType.IFFT) and \
            any(shape[ax] == 0 for ax in axes):
        return a  # the transform of an empty array is empty, as in JAX
    if s is None:
        if kind == FftType.IRFFT:
            s = [shape[ax] for ax in axes[:-1]] + [2 * (shape[axes[-1]] - 1)]
        else:
            s = [shape[ax] for ax in axes]
    for v in s:
        if v < 1:
            raise ValueError(f"Invalid number of FFT data points ({v}) specified.")
    if not axes:
        return a
    # Crop/pad the input.
    for ax, n in zip(axes, s, strict=False):
        want = n // 2 + 1 if (kind == FftType.IRFFT and ax == axes[-1]) else n
        a = _resize(a, ax, want)
    # Move the transformed axes to the end (in the given order).
    perm = [i for i in range(nd) if i not in axes] + list(axes)
    inv = list(np.argsort(perm))
    x = lax.transpose(a, perm)
    k = len(axes)
    if kind in (FftType.FFT, FftType.IFFT):
        y = _complex_nd(x, kind, s)
    elif kind == FftType.RFFT:
        if k <= 3:
            y = _prim(x, FftType.RFFT, s)
        else:
            y = _prim(x, FftType.RFFT, s[-1:])
            y = _complex_nd_leading(y, FftType.FFT, s[:-1])
    else:  # IRFFT
        if k <= 3:
            y = _prim(x, FftType.IRFFT, s)
        else:
            y = _complex_nd_leading(x, FftType.IFFT, s[:-1])
            y = _prim(y, FftType.IRFFT, s[-1:])
    y = lax.transpose(y, inv)
    inverse = kind in (FftType.IFFT, FftType.IRFFT)
    return _scale(y, norm, int(np.prod(s, dtype=np.int64)), inverse)


def _complex_nd_leading(x, kind, lengths):
    """Transform the len(lengths) axes just before the last one."""
    nd = len(_shape(x))
    k = len(lengths)
    perm = list(range(nd - k - 1)) + [nd - 1] + list(range(nd - k - 1, nd - 1))
    inv = list(np.argsort(perm))
    y = lax.transpose(x, perm)
    return lax.transpose(_complex_nd(y, kind, lengths), inv)


def _one_axis(name, kind, a, n, axis, norm):
    return _fftn_core(name, kind, a, None if n is None else [n], [axis], norm)


def fft(a, n=None, axis: int = -1, norm=None):
    """The 1-D discrete Fourier transform of `a` along `axis` (length `n`, padded or cropped)."""
    return _one_axis("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis: int = -1, norm=None):
    """The inverse of `fft` along `axis`."""
    return _one_axis("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis: int = -1, norm=None):
    """The 1-D Fourier transform of real `a`: the `n // 2 + 1` non-negative frequencies."""
    return _one_axis("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis: int = -1, norm=None):
    """The inverse of `rfft`: a real signal of length `n` (default `2 * (m - 1)`)."""
    return _one_axis("irfft", FftType.IRFFT, a, n, axis, norm)


def _swap_norm(norm):
    return {None: "forward", "backward": "forward", "forward": "backward",
            "ortho": "ortho"}[norm]


def hfft(a, n=None, axis: int = -1, norm=None):
    """FFT of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    if norm not in _NORMS:
        raise ValueError(f"Invalid norm value {norm}")
    a = _as_complex(_arr("hfft", a))
    return irfft(lax.conj(a), n, axis, _swap_norm(norm))


def ihfft(a, n=None, axis: int = -1, norm=None):
    """The inverse of `hfft`: the transform of a real signal with Hermitian symmetry."""
    if norm not in _NORMS:
        raise ValueError(f"Invalid norm value {norm}")
    return lax.conj(rfft(a, n, axis, _swap_norm(norm)))


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """The 2-D Fourier transform over `axes` (default the last two)."""
    return _fftn_core("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """The inverse of `fft2`."""
    return _fftn_core("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """The 2-D Fourier transform of a real array over `axes`."""
    return _fftn_core("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """The inverse of `rfft2`."""
    return _fftn_core("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    """The N-D Fourier transform over `axes` (default all)."""
    return _fftn_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """The inverse of `fftn`."""
    return _fftn_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """The N-D Fourier transform of a real array over `axes`."""
    return _fftn_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of `rfftn`."""
    return _fftn_core("irfftn", FftType.IRFFT, a, s, axes, norm)


# --- frequencies and shifts ---------------------------------------------------------------------


def _freq_result(k, n, d, dtype):
    dt = dtypes.canonicalize_dtype(dtype) if dtype is not None else _real_dtype()
    kk = np.asarray(k, dt)
    if isinstance(d, (int, float, np.integer, np.floating)):
        import olympus_runtime as rt

        return rt.device_put((kk / (float(d) * n)).astype(dt))
    d = lax.convert_element_type(prom.to_operand(d), dt)
    return uf.true_divide(kk, uf.multiply(d, float(n)))


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """Sample frequencies ``[0, 1, ..., -(n//2), ..., -1] / (d * n)``."""
    n = int(n)
    if n <= 0:
        raise ValueError(f"fftfreq: n must be positive, got {n}.")
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _freq_result(k, n, d, dtype)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """Sample frequencies ``[0, 1, ..., n//2] / (d * n)``."""
    n = int(n)
    if n <= 0:
        raise ValueError(f"rfftfreq: n must be positive, got {n}.")
    return _freq_result(np.arange(0, n // 2 + 1), n, d, dtype)


def _roll(x, shift, axis):
    n = _shape(x)[axis]
    if n == 0:
        return x
    shift %= n
    if shift == 0:
        return x
    shape = _shape(x)
    nd = len(shape)
    lim1 = list(shape)
    lim1[axis] = n - shift
    start2 = [0] * nd
    start2[axis] = n - shift
    a = lax.slice(x, (0,) * nd, lim1)
    b = lax.slice(x, start2, shape)
    return lax.concatenate([b, a], axis)


def _shift(name, x, axes, inverse):
    x = _arr(name, x)
    nd = len(_shape(x))
    if axes is None:
        axes = list(range(nd))
    elif isinstance(axes, (int, np.integer)):
        axes = [int(axes)]
    for ax in axes:
        ax = prom.canonicalize_axis(ax, nd)
        n = _shape(x)[ax]
        x = _roll(x, -(n // 2) if inverse else n // 2, ax)
    return x


def fftshift(x, axes=None):
    """Move the zero-frequency term to the center."""
    return _shift("fftshift", x, axes, False)


def ifftshift(x, axes=None):
    """The inverse of `fftshift`."""
    return _shift("ifftshift", x, axes, True)
