"""Special functions defined by integrals, for `olympus.scipy.special`: the exponential
integrals E_n, E_1 and Ei, the sine and cosine integrals, and Spence's function (the
dilogarithm). Power series where they converge quickly, continued fractions (modified
Lentz) or asymptotic series elsewhere; derivatives by `custom_jvp`."""

from __future__ import annotations

import math

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from ._util import is_complex, promote_args_inexact, with_weak_type

_EULER = 0.5772156649015329


def _eps(dtype):
    return float(np.finfo(dtype).eps)


def _tiny(dtype):
    return float(np.finfo(dtype).tiny) * 16


def _lentz(a_fn, b0, b_fn, iters: int):
    """The continued fraction 1 / (b0 + a1 / (b1 + a2 / (b2 + ...))) by the modified
    Lentz method, `iters` terms (a fixed count: every element converges by then)."""
    tiny = _tiny(jnp.real(b0).dtype)
    d = 1 / b0
    c = jnp.full_like(b0, 1 / tiny)
    h = d

    def body(i, carry):
        c, d, h = carry
        a = a_fn(i)
        b = b_fn(i)
        d = b + a * d
        d = jnp.where(d == 0, jnp.full_like(d, tiny), d)
        c = b + a / c
        c = jnp.where(c == 0, jnp.full_like(c, tiny), c)
        d = 1 / d
        return c, d, h * c * d

    _, _, h = lax.fori_loop(1, iters, body, (c, d, h))
    return h


def _expn_series(n, x):
    """E_n(x) for 0 < x <= 1 (n >= 1): (-x)^(n-1)/(n-1)! (psi(n) - log x)
    - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)."""
    def body(k, carry):
        total, term = carry  # term = (-x)^k / k!
        denom = k - n + 1
        skip = denom == 0
        total = total - jnp.where(skip, jnp.zeros_like(x),
                                  term / jnp.where(skip, jnp.ones_like(x), denom))
        return total, term * (-x) / (k + 1)

    total, _ = lax.fori_loop(0, 30, body, (jnp.zeros_like(x), jnp.ones_like(x)))
    sign = jnp.where(jnp.fmod(n - 1, 2) == 0, 1.0, -1.0).astype(x.dtype)
    lead = sign * jnp.exp((n - 1) * jnp.log(x) - lax.lgamma(n))
    return lead * (lax.digamma(n) - jnp.log(x)) + total


def _expn_cf(n, x):
    """E_n(x) for x > 1: exp(-x) / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (...)))."""
    cf = _lentz(lambda i: -i * (n - 1 + i), x + n, lambda i: x + n + 2 * i, 120)
    return cf * jnp.exp(-x)


def _expn_value(n, x):
    pos = x > 0
    xs = jnp.where(pos, x, jnp.ones_like(x))
    ns = jnp.where(n >= 1, n, jnp.ones_like(n))
    val = jnp.where(xs > 1, _expn_cf(ns, xs),
                    _expn_series(ns, jnp.minimum(xs, 1.0)))
    val = jnp.where(n == 0, jnp.exp(-xs) / xs, val)
    at_zero = jnp.where(n < 2, jnp.full_like(x, np.inf),
                        1 / jnp.where(n < 2, jnp.ones_like(n), n - 1))
    val = jnp.where(x == 0, at_zero, val)
    val = jnp.where(x == np.inf, jnp.zeros_like(x), val)
    bad = (n < 0) | (x < 0) | (n != jnp.floor(n)) | jnp.isnan(x) | jnp.isnan(n)
    return jnp.where(bad, jnp.full_like(x, np.nan), val)


@olympus.custom_jvp
def _expn(n, x):
    return _expn_value(n, x)


@_expn.defjvp
def _expn_jvp(primals, tangents):
    n, x = primals
    _, dx = tangents
    return _expn(n, x), -_expn_value(n - 1, x) * dx


@olympus.jit
def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt, for
    integer n >= 0 and x >= 0 (NaN elsewhere, including non-integer n)."""
    n, x = promote_args_inexact("expn", n, x)
    if is_complex(x):
        raise ValueError("expn does not support complex-valued inputs.")
    n, x = jnp.broadcast_arrays(n, x)
    return _expn(n, x)


@olympus.jit
def exp1(x):
    """The exponential integral E_1(x) = int_1^inf exp(-x t) / t dt (NaN for x < 0)."""
    (x,) = promote_args_inexact("exp1", x)
    if is_complex(x):
        raise ValueError("exp1 does not support complex-valued inputs.")
    return _expn(jnp.ones_like(x), x)


def _expi_positive(x):
    """Ei(x) for x > 0: the power series gamma + log x + sum x^k / (k k!) up to 40, the
    asymptotic series exp(x)/x sum k!/x^k beyond."""
    eps = _eps(x.dtype)
    xs = jnp.minimum(x, 40.0)

    def cond(state):
        k, _, term, total = state
        return (k < 400) & jnp.any(jnp.abs(term) > eps * jnp.abs(total))

    def body(state):
        k, power, term, total = state
        power = power * xs / k  # x^k / k!
        term = power / k
        return k + 1, power, term, total + term

    one = jnp.ones_like(xs)
    _, _, _, series = lax.while_loop(cond, body, (1, one, one, jnp.zeros_like(xs)))
    small = _EULER + jnp.log(xs) + series
    xl = jnp.maximum(x, 40.0)
    def body(k, carry):
        asym, term = carry
        return asym + term, term * (k + 1) / xl

    asym, _ = lax.fori_loop(0, 40, body, (jnp.zeros_like(xl), jnp.ones_like(xl)))
    large = jnp.exp(xl) / xl * asym
    return jnp.where(x <= 40, small, large)


@olympus.custom_jvp
def _expi(x):
    neg = x < 0
    e1 = _expn_value(jnp.ones_like(x), jnp.where(neg, -x, jnp.ones_like(x)))
    pos_val = _expi_positive(jnp.where(x > 0, x, jnp.ones_like(x)))
    out = jnp.where(neg, -e1, pos_val)
    out = jnp.where(x == 0, jnp.full_like(x, -np.inf), out)
    out = jnp.where(x == np.inf, jnp.full_like(x, np.inf), out)
    return jnp.where(jnp.isnan(x), x, out)


@_expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _expi(x), jnp.exp(x) / x * dx


@olympus.jit
def expi(x):
    """The exponential integral Ei(x) = -PV int_{-x}^inf exp(-t) / t dt."""
    (x,) = promote_args_inexact("expi", x)
    if is_complex(x):
        raise ValueError("expi does not support complex-valued inputs.")
    return _expi(x)


def _sici_value(x):
    ax = jnp.abs(x)
    finite = jnp.isfinite(ax)
    xs = jnp.where(finite & (ax > 0), ax, jnp.ones_like(ax))
    # |x| <= 4: the power series of Si and of Ci - gamma - log x.
    t = xs * xs
    def body(k, carry):
        si_ser, ci_ser, term, cterm = carry
        # term = (-1)^k x^(2k+1) / (2k+1)!, cterm = (-1)^k x^(2k) / (2k)!
        si_ser = si_ser + term / (2 * k + 1)
        term = term * -t / ((2 * k + 2) * (2 * k + 3))
        cterm = cterm * -t / ((2 * k + 1) * (2 * k + 2))
        return si_ser, ci_ser + cterm / (2 * k + 2), term, cterm

    zero = jnp.zeros_like(xs)
    si_ser, ci_ser, _, _ = lax.fori_loop(0, 22, body, (zero, zero, xs, jnp.ones_like(xs)))
    ci_ser = _EULER + jnp.log(xs) + ci_ser
    # |x| > 4: E_1(ix) = -Ci(x) + i (Si(x) - pi/2), by its continued fraction.
    cdt = np.complex128 if x.dtype == np.float64 else np.complex64
    z = (1j * xs).astype(cdt)
    cf = _lentz(lambda i: -(i * i), z + 1,
                lambda i: z + (2 * i + 1), 48)
    e1 = cf * jnp.exp(-z)
    si_big = (jnp.imag(e1) + np.pi / 2).astype(x.dtype)
    ci_big = (-jnp.real(e1)).astype(x.dtype)
    small = xs <= 4
    si = jnp.where(small, si_ser, si_big)
    ci = jnp.where(small, ci_ser, ci_big)
    si = jnp.where(ax == 0, jnp.zeros_like(si), si)
    ci = jnp.where(ax == 0, jnp.full_like(ci, -np.inf), ci)
    si = jnp.where(ax == np.inf, jnp.full_like(si, np.pi / 2), si)
    ci = jnp.where(ax == np.inf, jnp.zeros_like(ci), ci)
    si = jnp.sign(x) * si
    ci = jnp.where((x == -np.inf) | jnp.isnan(x), jnp.full_like(ci, np.nan), ci)
    return si, ci


@olympus.custom_jvp
def _sici(x):
    return _sici_value(x)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    si, ci = _sici(x)
    return (si, ci), (jnp.sinc(x / np.pi) * dx, jnp.cos(x) / x * dx)


@olympus.jit
def sici(x):
    """The sine and cosine integrals ``(Si(x), Ci(x))``; Ci is taken at |x|."""
    (x,) = promote_args_inexact("sici", x)
    if is_complex(x):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    return _sici(x)


# B_2k / (2k + 1)! for the series Li2(1 - x) = u - u^2/4 + sum_k B_2k u^(2k+1) / (2k+1)!,
# u = -log x.
_SPENCE_COEFFS = [
    (1 / 6) / math.factorial(3), (-1 / 30) / math.factorial(5), (1 / 42) / math.factorial(7),
    (-1 / 30) / math.factorial(9), (5 / 66) / math.factorial(11),
    (-691 / 2730) / math.factorial(13), (7 / 6) / math.factorial(15),
    (-3617 / 510) / math.factorial(17), (43867 / 798) / math.factorial(19),
    (-174611 / 330) / math.factorial(21)]


def _spence_core(x):
    """spence(x) = Li2(1 - x) for 1/2 <= x <= 2."""
    u = -jnp.log(x)
    u2 = u * u
    acc = jnp.zeros_like(u)
    for c in reversed(_SPENCE_COEFFS):
        acc = acc * u2 + c
    return u - u2 / 4 + acc * u2 * u


def _spence_unit(x):
    """spence(x) for 0 < x <= 2, by reflection below 1/2."""
    lo = x < 0.5
    core = _spence_core(jnp.where(lo, 1 - x, x))
    xl = jnp.where(lo, x, jnp.full_like(x, 0.25))
    refl = np.pi ** 2 / 6 - jnp.log(xl) * jnp.log1p(-xl) - core
    return jnp.where(lo, refl, core)


def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN for
    x < 0)."""
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    return with_weak_type(_spence(x), False)


@olympus.jit
def _spence(x):
    pos = x > 0
    xs = jnp.where(pos, x, jnp.ones_like(x))
    inv = xs > 2
    y = jnp.where(inv, 1 / xs, xs)
    base = _spence_unit(y)
    logx = jnp.log(xs)
    out = jnp.where(inv, -base - 0.5 * logx * logx, base)
    out = jnp.where(x == 0, jnp.full_like(x, np.pi ** 2 / 6), out)
    bad = (x < 0) | jnp.isnan(x) | (x == np.inf)
    return jnp.where(bad, jnp.full_like(x, np.nan), out)
