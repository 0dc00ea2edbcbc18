"""`olympus.scipy.fft`: the type-2 discrete cosine transform and its inverse (JAX
implements type 2 only), by FFTs of the reordered input (Makhoul's algorithm)."""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

import olympus
import olympus.numpy as jnp

from ._util import canonicalize_axis, check_arraylike, promote_dtypes_inexact

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"olympus.scipy.fft.{name}: norm={norm!r} is not implemented")


def _resize(x, n, axis):
    """Zero-pad or truncate `x` to length `n` along `axis`."""
    size = x.shape[axis]
    if n is None or n == size:
        return x
    if n < size:
        return jnp.take(x, jnp.arange(n), axis=axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - size)
    return jnp.pad(x, pad)


def _along(v, axis, ndim):
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)


def _ortho_factor(n, dtype):
    f = np.full(n, 1 / math.sqrt(2 * n))
    if n:
        f[0] = 1 / math.sqrt(4 * n)
    return f.astype(dtype)


def _dct_real(x, axis):
    """2 sum_n x_n cos(pi k (2n+1) / 2N): the FFT of [x0, x2, x4, ..., x5, x3, x1] times
    exp(-i pi k / 2N)."""
    n = x.shape[axis]
    order = np.concatenate([np.arange(0, n, 2), np.arange(n - 1 if n % 2 == 0 else n - 2, 0,
                                                          -2)])
    v = jnp.take(x, jnp.asarray(order), axis=axis)
    spec = jnp.fft.fft(v, axis=axis)
    k = np.arange(n)
    twiddle = np.exp(-0.5j * np.pi * k / n).astype(spec.dtype)
    return 2 * jnp.real(spec * _along(jnp.asarray(twiddle), axis, x.ndim))


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The type-2 DCT along `axis` (after zero-padding or truncating to `n`)."""
    check_arraylike("dct", x)
    _check("dct", type, norm)
    x = jnp.asarray(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        re = dct(jnp.real(x), type=type, n=n, axis=axis, norm=norm)
        im = dct(jnp.imag(x), type=type, n=n, axis=axis, norm=norm)
        return re + 1j * im
    return _dct(x, n, canonicalize_axis(axis, x.ndim), norm)


@functools.partial(olympus.jit, static_argnums=(1, 2, 3))
def _dct(x, n, axis, norm):
    x = _resize(x, n, axis)
    (x,) = promote_dtypes_inexact(x)
    out = _dct_real(x, axis)
    if norm == "ortho":
        out = out * _along(jnp.asarray(_ortho_factor(x.shape[axis], out.dtype)), axis, x.ndim)
    return out


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of the type-2 DCT (a scaled type-3 DCT) along `axis`."""
    check_arraylike("idct", x)
    _check("idct", type, norm)
    x = jnp.asarray(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        re = idct(jnp.real(x), type=type, n=n, axis=axis, norm=norm)
        im = idct(jnp.imag(x), type=type, n=n, axis=axis, norm=norm)
        return re + 1j * im
    return _idct(x, n, canonicalize_axis(axis, x.ndim), norm)


@functools.partial(olympus.jit, static_argnums=(1, 2, 3))
def _idct(x, n, axis, norm):
    x = _resize(x, n, axis)
    (x,) = promote_dtypes_inexact(x)
    size = x.shape[axis]
    # To orthonormal coefficients, then c_k = ortho_k sqrt(N/2) exp(i pi k / 2N) (c_0
    # halved): the real part of the inverse FFT of c is the reordered signal.
    scale = _ortho_factor(size, np.float64)
    if norm != "ortho":
        scale = scale * scale
    k = np.arange(size)
    coef = (scale * 2 * size * np.exp(0.5j * np.pi * k / size))
    cdt = np.complex128 if x.dtype == np.float64 else np.complex64
    c = x.astype(cdt) * _along(jnp.asarray(coef.astype(cdt)), axis, x.ndim)
    v = jnp.real(jnp.fft.ifft(c, axis=axis))
    half = math.ceil(size / 2)
    inv = np.empty(size, np.int64)
    inv[0::2] = np.arange(half)
    inv[1::2] = np.arange(size - 1, half - 1, -1)
    return jnp.take(v, jnp.asarray(inv), axis=axis)


def _axes_and_sizes(name, x, s, axes):
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = tuple(canonicalize_axis(a, x.ndim) for a in axes)
    sizes = [None] * len(axes) if s is None else list(s)
    return axes, sizes


def dctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):
    """The type-2 DCT over several axes (all by default), one axis after another."""
    check_arraylike("dctn", x)
    _check("dctn", type, norm)
    x = jnp.asarray(x)
    axes, sizes = _axes_and_sizes("dctn", x, s, axes)
    for axis, n in zip(axes, sizes):
        x = dct(x, n=n, axis=axis, norm=norm)
    return x


def idctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):
    """The inverse of `dctn`."""
    check_arraylike("idctn", x)
    _check("idctn", type, norm)
    x = jnp.asarray(x)
    axes, sizes = _axes_and_sizes("idctn", x, s, axes)
    for axis, n in zip(axes, sizes):
        x = idct(x, n=n, axis=axis, norm=norm)
    return x
