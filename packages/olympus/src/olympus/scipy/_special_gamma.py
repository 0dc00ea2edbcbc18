"""The gamma-function family of `olympus.scipy.special`: gamma, its sign and complex
logarithm, factorials, binomial coefficients, the beta function, Pochhammer symbols, the
multivariate log-gamma and the Bernoulli numbers."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from ._util import (
    concrete_int,
    default_float,
    is_complex,
    promote_args_inexact,
    with_weak_type,
)


@olympus.jit
def gammasgn(x):
    """The sign of the gamma function: 1 or -1, NaN at the poles (0 gives the sign of
    the zero, as SciPy)."""
    (x,) = promote_args_inexact("gammasgn", x)
    if is_complex(x):
        raise ValueError("gammasgn does not support complex-valued inputs.")
    floor_x = jnp.floor(x)
    neg = x < 0
    nan_case = (neg & (x == floor_x)) | jnp.isnan(x)
    minus = (neg & (jnp.fmod(floor_x, 2) != 0)) | ((x == 0) & jnp.signbit(x))
    one = jnp.ones_like(x)
    return with_weak_type(jnp.where(nan_case, jnp.full_like(x, np.nan),
                                    jnp.where(minus, -one, one)), False)


def gammaln(x):
    (x,) = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


# Stirling's series for log Gamma(w), |w| large: sum_k B_2k / (2k (2k-1) w^(2k-1)).
_STIRLING = [1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400]


def _complex_loggamma(z):
    """The principal branch of log Gamma(z) for complex z (analytic off the negative real
    axis, as SciPy's `loggamma`): shift z right by the recurrence
    log Gamma(z) = log Gamma(z + n) - sum_k log(z + k) until Stirling's series is accurate,
    then sum the series. Poles give NaN."""
    dt = z.dtype
    rdt = np.float64 if dt == np.complex128 else np.float32
    big = 10.0 if rdt == np.float64 else 6.0
    re, im = jnp.real(z), jnp.imag(z)
    pole = (im == 0) & (re <= 0) & (re == jnp.floor(re))
    bad = pole | jnp.isnan(z)
    zs = jnp.where(bad, jnp.ones_like(z), z)
    shift = jnp.where(jnp.abs(im) >= big, 0.0,
                      jnp.maximum(0.0, jnp.ceil(big - jnp.real(zs)))).astype(rdt)

    def cond(state):
        k, _ = state
        return jnp.any(k < shift)

    def body(state):
        k, acc = state
        live = k < shift
        term = jnp.log(jnp.where(live, zs + k.astype(dt), jnp.ones_like(zs)))
        return k + 1, acc + jnp.where(live, term, jnp.zeros_like(term))

    k0 = jnp.zeros(jnp.shape(zs), rdt)
    _, logs = lax.while_loop(cond, body, (k0, jnp.zeros_like(zs)))
    w = zs + shift.astype(dt)
    inv = 1.0 / w
    inv2 = inv * inv
    series = jnp.zeros_like(w)
    for c in reversed(_STIRLING):
        series = series * inv2 + c
    series = series * inv
    stirling = (w - 0.5) * jnp.log(w) - w + 0.5 * math.log(2 * math.pi) + series
    out = stirling - logs
    return jnp.where(bad, jnp.full_like(out, complex(np.nan, np.nan)), out)


@olympus.jit
def loggamma(x):
    """log Gamma(x): real inputs give the real log for x > 0 and NaN otherwise; complex
    inputs the principal branch (SciPy's `loggamma`)."""
    (x,) = promote_args_inexact("loggamma", x)
    if is_complex(x):
        return _complex_loggamma(x)
    return jnp.where(x > 0, lax.lgamma(x), jnp.full_like(x, np.nan))


@olympus.jit
def gamma(x):
    """The gamma function; complex inputs are supported (NaN at the poles)."""
    (x,) = promote_args_inexact("gamma", x)
    if is_complex(x):
        return jnp.exp(_complex_loggamma(x))
    return with_weak_type(gammasgn(x) * jnp.exp(lax.lgamma(x)), False)


def factorial(n, exact: bool = False):
    """n! = Gamma(n + 1) for real n (0 for n < 0); `exact=True` is not supported."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    return _factorial(n)


@olympus.jit
def _factorial(n):
    (n,) = promote_args_inexact("factorial", n)
    return jnp.where(n < 0, jnp.zeros_like(n), jnp.exp(lax.lgamma(n + 1)))


@functools.partial(olympus.jit, static_argnames=('repetition',))
def comb(N, k, *, repetition: bool = False):
    """The binomial coefficient N choose k (0 outside 0 <= k <= N); with `repetition`, the
    number of multisets, comb(N + k - 1, k)."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), jnp.ones_like(N + k),
                         comb(N + k - 1, k, repetition=False))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = jnp.where(ok, N, jnp.zeros_like(N))
    safe_k = jnp.where(ok, k, jnp.zeros_like(k))
    val = jnp.exp(lax.lgamma(safe_n + 1) - lax.lgamma(safe_k + 1)
                  - lax.lgamma(safe_n - safe_k + 1))
    return jnp.where(ok, val, jnp.zeros_like(val))


@olympus.jit
def beta(a, b):
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), with its sign."""
    from .special import betaln

    a, b = promote_args_inexact("beta", a, b)
    if is_complex(a):
        raise ValueError("beta does not support complex-valued inputs.")
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return with_weak_type(sign * jnp.exp(betaln(a, b)), False)


@olympus.custom_jvp
def _poch(z, m):
    return jnp.where(m == 0, jnp.ones_like(z + m), gamma(z + m) / gamma(z))


@_poch.defjvp
def _poch_jvp(primals, tangents):
    z, m = primals
    dz, dm = tangents
    out = _poch(z, m)
    psi_zm = lax.digamma(z + m)
    return out, out * ((psi_zm - lax.digamma(z)) * dz + psi_zm * dm)


@olympus.jit
def poch(z, m):
    """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z)."""
    z, m = promote_args_inexact("poch", z, m)
    if is_complex(z):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    z, m = jnp.broadcast_arrays(z, m)
    return with_weak_type(_poch(z, m), False)


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension `d` (a concrete int)."""
    d = concrete_int(d, "d argument of multigammaln")
    return _multigammaln(a, d)


@functools.partial(olympus.jit, static_argnames=("d",))
def _multigammaln(a, d):
    a, d_ = promote_args_inexact("multigammaln", a, d)
    const = 0.25 * d_ * (d_ - 1) * math.log(math.pi)
    halves = jnp.arange(d, dtype=a.dtype) / 2
    res = jnp.sum(lax.lgamma(jnp.expand_dims(a, -1) - halves), axis=-1)
    return res + const


@functools.cache
def _bernoulli_exact(n: int) -> tuple:
    """B_0 ... B_n as exact fractions, by B_m = -1/(m+1) sum_{k<m} C(m+1, k) B_k."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        acc = sum(math.comb(m + 1, k) * b[k] for k in range(m))
        b.append(-acc / (m + 1))
    return tuple(b)


def bernoulli(n: int):
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2): exact up to B_120, then from the
    zeta function, B_2k = (-1)^(k+1) 2 (2k)! zeta(2k) / (2 pi)^(2k)."""
    if isinstance(n, float):
        raise TypeError("'float' object cannot be interpreted as an integer")
    n = concrete_int(n, "Argument n of bernoulli")
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    exact = _bernoulli_exact(min(n, 120))
    vals = np.zeros(n + 1, np.float64)
    for m, b in enumerate(exact):
        vals[m] = float(b)
    for m in range(122, n + 1, 2):
        zeta = 1.0 + 2.0 ** -m + 3.0 ** -m
        log_mag = math.log(2.0 * zeta) + math.lgamma(m + 1) - m * math.log(2 * math.pi)
        mag = math.exp(log_mag) if log_mag < 709 else math.inf
        vals[m] = mag if (m // 2) % 2 == 1 else -mag
    with np.errstate(over="ignore"):
        out = vals.astype(default_float())
    return jnp.asarray(out)
