"""The error-function family of `olympus.scipy.special`: the Faddeeva function `wofz`
(Weideman's rational expansion), `erfcx`, Dawson's integral, the Fresnel integrals and
Owen's T function."""

from __future__ import annotations

import math

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from ._util import is_complex, promote_args_inexact, promote_dtypes_complex

_SQRT_PI = math.sqrt(math.pi)


def _weideman_coefficients(n: int):
    """Coefficients of Weideman's (1994) expansion of w(z) on the upper half plane: w is a
    polynomial in Z = (L + iz) / (L - iz) over (L - iz)^2, with the polynomial's
    coefficients the Fourier coefficients of exp(-t^2) (L^2 + t^2) on the mapped line."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    L = math.sqrt(n / math.sqrt(2))
    t = L * np.tan(k * np.pi / m / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (L * L + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return np.flipud(a[1:n + 1]), L


_W_COEFFS, _W_L = _weideman_coefficients(40)


def _w_upper(z):
    """w(z) for Im z >= 0."""
    iz = 1j * z
    denom = _W_L - iz
    Z = (_W_L + iz) / denom
    p = jnp.polyval(jnp.asarray(_W_COEFFS, dtype=z.dtype), Z)
    return 2 * p / (denom * denom) + (1 / _SQRT_PI) / denom


def _w(z):
    upper = jnp.imag(z) >= 0
    zu = jnp.where(upper, z, -z)
    wu = _w_upper(zu)
    return jnp.where(upper, wu, 2 * jnp.exp(-(z * z)) - wu)


@olympus.custom_jvp
def _wofz(z):
    return _w(z)


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    w = _wofz(z)
    return w, (-2 * z * w + 2j / _SQRT_PI) * dz


@olympus.jit
def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz)."""
    (z,) = promote_dtypes_complex(*promote_args_inexact("wofz", z))
    return _wofz(z)


@olympus.custom_jvp
def _erfcx_real(x):
    # Small or negative x: the direct product (it overflows to inf where erfcx does);
    # larger x: erfcx(x) = w(ix), accurate where erfc underflows.
    direct = jnp.exp(x * x) * lax.erfc(x)
    cdt = np.complex128 if x.dtype == np.float64 else np.complex64
    xs = jnp.where(x >= 0.5, x, jnp.ones_like(x))
    via_w = jnp.real(_w_upper((1j * xs).astype(cdt))).astype(x.dtype)
    out = jnp.where((x < 0.5) | jnp.isnan(x), direct, via_w)
    return jnp.where(x == np.inf, jnp.zeros_like(x), out)


@_erfcx_real.defjvp
def _erfcx_real_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    y = _erfcx_real(x)
    return y, (2 * x * y - 2 / _SQRT_PI) * dx


@olympus.jit
def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x)."""
    (x,) = promote_args_inexact("erfcx", x)
    if is_complex(x):
        return _wofz(1j * x)
    if x.dtype not in (np.float32, np.float64):
        return _erfcx_real(x.astype(np.float32)).astype(x.dtype)
    return _erfcx_real(x)


@olympus.custom_jvp
def _dawsn(x):
    # D(x) = sqrt(pi)/2 Im w(x) for real x; its Taylor series near 0, where Im w loses
    # relative accuracy.
    cdt = np.complex128 if x.dtype == np.float64 else np.complex64
    ax = jnp.abs(x)
    finite = jnp.isfinite(ax)
    xs = jnp.where(finite, ax, jnp.ones_like(ax))
    via_w = (0.5 * _SQRT_PI) * jnp.imag(_w_upper(xs.astype(cdt))).astype(x.dtype)
    x2 = xs * xs
    series = jnp.zeros_like(xs)
    coef = [(-2.0) ** k / math.prod(range(1, 2 * k + 2, 2)) for k in range(9)]
    for c in reversed(coef):
        series = series * x2 + c
    series = series * xs
    val = jnp.where(xs < 0.1, series, via_w)
    val = jnp.where(ax == np.inf, jnp.zeros_like(val), val)
    return jnp.sign(x) * val


@_dawsn.defjvp
def _dawsn_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    y = _dawsn(x)
    return y, (1 - 2 * x * y) * dx


@olympus.jit
def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    (x,) = promote_args_inexact("dawsn", x)
    if is_complex(x):
        raise ValueError("dawsn does not support complex-valued inputs.")
    if x.dtype not in (np.float32, np.float64):
        return _dawsn(x.astype(np.float32)).astype(x.dtype)
    return _dawsn(x)


def _sincos_half_pi_x2(x):
    """sin and cos of pi x^2 / 2 for x >= 0, with x^2 / 2 reduced modulo 2 before the
    multiplication by pi (x = n + f, n an integer, so that large x keeps its phase)."""
    n = jnp.round(x)
    f = x - n
    r = jnp.fmod(jnp.fmod(n * n, 4.0) / 2 + jnp.fmod(n * f, 2.0) + f * f / 2, 2.0)
    r = jnp.where(r < 0, r + 2, r)
    return jnp.sin(np.pi * r), jnp.cos(np.pi * r)


@olympus.custom_jvp
def _fresnel(x):
    cdt = np.complex128 if x.dtype == np.float64 else np.complex64
    ax = jnp.abs(x)
    finite = jnp.isfinite(ax)
    xs = jnp.where(finite, ax, jnp.ones_like(ax))
    # Power series for small x.
    t = (np.pi / 2) * xs * xs
    t2 = t * t
    c_ser = jnp.zeros_like(xs)
    s_ser = jnp.zeros_like(xs)
    for k in reversed(range(16)):
        c_ser = c_ser * t2 + (-1) ** k / (math.factorial(2 * k) * (4 * k + 1))
        s_ser = s_ser * t2 + (-1) ** k / (math.factorial(2 * k + 1) * (4 * k + 3))
    c_ser = xs * c_ser
    s_ser = xs * t * s_ser
    # Elsewhere: C + iS = (1 + i)/2 (1 - exp(i pi x^2 / 2) w((1 + i) sqrt(pi) x / 2)).
    sn, cs = _sincos_half_pi_x2(xs)
    w = _w_upper(((1 + 1j) * (_SQRT_PI / 2) * xs).astype(cdt))
    phase = lax.complex(cs, sn)
    cis = (0.5 + 0.5j) * (1 - phase * w)
    c_big = jnp.real(cis).astype(x.dtype)
    s_big = jnp.imag(cis).astype(x.dtype)
    small = xs < 1.5
    c = jnp.where(small, c_ser, c_big)
    s = jnp.where(small, s_ser, s_big)
    half = jnp.full_like(c, 0.5)
    c = jnp.where(ax == np.inf, half, c)
    s = jnp.where(ax == np.inf, half, s)
    sign = jnp.sign(x)
    return s * sign, c * sign


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    s, c = _fresnel(x)
    sn, cs = _sincos_half_pi_x2(jnp.abs(x))
    return (s, c), (sn * dx, cs * dx)


@olympus.jit
def fresnel(x):
    """The Fresnel integrals ``(S(x), C(x))``: int_0^x sin(pi t^2 / 2) dt and the cosine
    analogue."""
    (x,) = promote_args_inexact("fresnel", x)
    if is_complex(x):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if x.dtype not in (np.float32, np.float64):
        s, c = _fresnel(x.astype(np.float32))
        return s.astype(x.dtype), c.astype(x.dtype)
    return _fresnel(x)


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(40)


def _owens_t_base(h, a):
    """T(h, a) for h >= 0 and 0 <= a <= 1 by Gauss-Legendre quadrature of
    (1/2pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx; for h >= 1 in the variable
    u = h x, with exp(-h^2/2) taken out so that the tail keeps its relative accuracy."""
    nodes = jnp.asarray((_GL_NODES + 1) / 2, h.dtype)
    weights = jnp.asarray(_GL_WEIGHTS / 2, h.dtype)
    x = a[..., None] * nodes
    fx = jnp.exp(-0.5 * (h * h)[..., None] * (1 + x * x)) / (1 + x * x)
    small_h = a * jnp.sum(fx * weights, axis=-1) / (2 * np.pi)
    hs = jnp.maximum(h, 1.0)
    upper = jnp.minimum(hs * a, 9.0)
    u = upper[..., None] * nodes
    fu = jnp.exp(-0.5 * u * u) / (1 + (u / hs[..., None]) ** 2)
    large_h = (jnp.exp(-0.5 * hs * hs) * upper * jnp.sum(fu * weights, axis=-1)
               / (2 * np.pi * hs))
    return jnp.where(h < 1, small_h, large_h)


def _norm_sf(h):
    return 0.5 * lax.erfc(h / math.sqrt(2))


@olympus.custom_jvp
def _owens_t(h, a):
    ah_abs = jnp.abs(a)
    habs = jnp.abs(h)
    big = ah_abs > 1
    a_red = jnp.where(big, 1 / jnp.where(big, ah_abs, 1.0), ah_abs)
    ah = jnp.where(habs == 0, jnp.zeros_like(habs), ah_abs * habs)
    h_red = jnp.where(big, ah, habs)
    finite = jnp.isfinite(h_red)
    t = _owens_t_base(jnp.where(finite, h_red, jnp.zeros_like(h_red)), a_red)
    t = jnp.where(finite, t, jnp.zeros_like(t))
    qh, qah = _norm_sf(habs), _norm_sf(ah)
    t = jnp.where(big, 0.5 * (qh + qah) - qh * qah - t, t)
    t = jnp.sign(a) * t
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(t, np.nan), t)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    h, a = primals
    dh, da = tangents
    out = _owens_t(h, a)
    d_h = -jnp.exp(-0.5 * h * h) * lax.erf(a * h / math.sqrt(2)) / (2 * math.sqrt(2 * np.pi))
    d_a = jnp.exp(-0.5 * (1 + a * a) * h * h) / (2 * np.pi * (1 + a * a))
    return out, d_h * dh + d_a * da


@olympus.jit
def owens_t(h, a):
    """Owen's T function T(h, a) = (1/2pi) int_0^a exp(-h^2 (1+x^2)/2) / (1+x^2) dx."""
    h, a = promote_args_inexact("owens_t", h, a)
    h, a = jnp.broadcast_arrays(h, a)
    return _owens_t(h, a)
