"""The confluent (1F1) and Gauss (2F1) hypergeometric functions of `olympus.scipy.special`.

Both sum their defining power series, after a transformation that makes it converge
quickly: Kummer's ``M(a,b,x) = e^x M(b-a,b,-x)`` for negative x and the asymptotic
expansion for large x (1F1); Pfaff's ``(1-x)^-a F(a,c-b;c;x/(x-1))`` for negative x and the
``1 - x`` connection formula near 1 (2F1). Derivatives come from `custom_jvp` rules; the
parameter derivatives sum the differentiated series (harmonic sums times the terms)."""

from __future__ import annotations

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from ._util import is_complex, promote_args_inexact


def _eps(x):
    return float(np.finfo(x.dtype).eps)


def _is_nonpos_int(v):
    return (v <= 0) & (v == jnp.floor(v))


def _rgamma(v):
    """1 / Gamma(v), zero at the poles."""
    pole = _is_nonpos_int(v)
    vs = jnp.where(pole, jnp.ones_like(v), v)
    floor_v = jnp.floor(vs)
    sign = jnp.where((vs < 0) & (jnp.fmod(floor_v, 2) != 0), -1.0, 1.0).astype(v.dtype)
    return jnp.where(pole, jnp.zeros_like(v), sign * jnp.exp(-lax.lgamma(vs)))


def _sum_series(ratio, first, dtype_of, max_terms, weights=()):
    """sum_k t_k with t_0 = `first` and t_{k+1} = t_k * ratio(k); stops once every term
    is below eps times its sum (or after `max_terms`). `weights` are functions w(k) whose
    weighted sums sum_k t_k * W_k(k) are returned too, with W accumulated as
    W_k = sum_{j<k} w(j) (the harmonic sums of the parameter derivatives)."""
    eps = _eps(dtype_of)
    n_w = len(weights)

    def cond(state):
        k, term, total = state[0], state[1], state[2]
        return (k < max_terms) & jnp.any(jnp.abs(term) > eps * jnp.abs(total))

    def body(state):
        k, term, total, accs, sums = state
        sums = tuple(s + term * a for s, a in zip(sums, accs))
        accs = tuple(a + w(k) for a, w in zip(accs, weights))
        new_term = term * ratio(k)
        return k + 1, new_term, total + new_term, accs, sums

    zero = jnp.zeros_like(first)
    init = (0, first, first, tuple(zero for _ in range(n_w)), tuple(zero for _ in range(n_w)))
    k, term, total, accs, sums = lax.while_loop(cond, body, init)
    if n_w:
        sums = tuple(s + term * a for s, a in zip(sums, accs))
        return total, sums
    return total


# --- 1F1 ----------------------------------------------------------------------------------


def _m_series(a, b, x):
    return _sum_series(lambda k: (a + k) / (b + k) * x / (k + 1), jnp.ones_like(x), x, 1000)


def _m_asymptotic(a, b, x, log_prefactor):
    """exp(log_prefactor) M(a,b,x) for large x, from M(a,b,x) ~ Gamma(b)/Gamma(a) e^x
    x^(a-b) sum_k (b-a)_k (1-a)_k / (k! x^k) (the exponentials combined before they can
    overflow)."""
    def body(k, carry):
        total, term = carry
        nxt = term * (b - a + k) * (1 - a + k) / ((k + 1) * x)
        # Optimal truncation: stop adding once the terms start to grow.
        nxt = jnp.where(jnp.abs(nxt) < jnp.abs(term), nxt, jnp.zeros_like(nxt))
        return total + term, nxt

    total, _ = lax.fori_loop(0, 60, body, (jnp.zeros_like(x), jnp.ones_like(x)))
    gb = jnp.where(_is_nonpos_int(b), jnp.ones_like(b), b)
    sign = jnp.sign(_rgamma(a)) * jnp.sign(_rgamma(gb))
    log_mag = lax.lgamma(gb) - lax.lgamma(a) + x + (a - b) * jnp.log(x) + log_prefactor
    return sign * jnp.exp(log_mag) * total


def _kummer_args(a, b, x):
    a_poly = _is_nonpos_int(a)
    flip = (x < 0) & ~a_poly
    return flip, jnp.where(flip, b - a, a), jnp.where(flip, -x, x)


def _hyp1f1_value(a, b, x):
    flip, a2, x2 = _kummer_args(a, b, x)
    poly = _is_nonpos_int(a2)
    # The series' terms grow to about e^x: past 100 (50 in float32) the asymptotic series.
    limit = 100.0 if x.dtype == np.float64 else 50.0
    big = (x2 > limit) & ~poly
    xs = jnp.where(big, x2, jnp.minimum(x2, limit))
    series = _m_series(a2, b, jnp.where(big, jnp.zeros_like(xs), xs))
    series = jnp.where(flip, jnp.exp(x) * series, series)
    asym = _m_asymptotic(a2, b, jnp.where(big, xs, jnp.full_like(xs, 2 * limit)),
                         jnp.where(flip, x, jnp.zeros_like(x)))
    val = jnp.where(big, asym, series)
    b_pole = _is_nonpos_int(b) & ~(_is_nonpos_int(a) & (a > b))
    val = jnp.where(b_pole, jnp.full_like(val, np.inf), val)
    val = jnp.where(a == b, jnp.exp(x), val)
    return jnp.where(a == 0, jnp.ones_like(val), val)


def _hyp1f1_param_derivatives(a, b, x):
    """(dM/da, dM/db) from the differentiated power series."""
    _, (da, db) = _sum_series(
        lambda k: (a + k) / (b + k) * x / (k + 1), jnp.ones_like(x), x, 1000,
        weights=(lambda k: 1 / (a + k), lambda k: -1 / (b + k)))
    return da, db


@olympus.custom_jvp
def _hyp1f1(a, b, x):
    return _hyp1f1_value(a, b, x)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    a, b, x = primals
    da_t, db_t, dx_t = tangents
    out = _hyp1f1(a, b, x)
    d_x = a / b * _hyp1f1_value(a + 1, b + 1, x)
    d_a, d_b = _hyp1f1_param_derivatives(a, b, x)
    return out, d_a * da_t + d_b * db_t + d_x * dx_t


@olympus.jit
def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) = M(a, b, x) for real
    arguments."""
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    if is_complex(x):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    a, b, x = jnp.broadcast_arrays(a, b, x)
    return _hyp1f1(a, b, x)


# --- 2F1 ----------------------------------------------------------------------------------


def _f_series(a, b, c, x, max_terms):
    return _sum_series(lambda k: (a + k) * (b + k) / ((c + k) * (k + 1)) * x,
                       jnp.ones_like(x), x, max_terms)


def _f_unit_interval(a, b, c, w):
    """2F1(a, b; c; w) for 0 <= w < 1 (no parameter a nonpositive integer)."""
    d = c - a - b
    near_int = jnp.abs(d - jnp.round(d)) < 0.05
    use_conn = (w > 0.5) & ~near_int
    # Near 1 with c - a - b away from an integer: the 1 - w connection formula.
    wc = jnp.where(use_conn, w, jnp.full_like(w, 0.75))
    s = 1 - wc
    d_safe = jnp.where(use_conn, d, jnp.full_like(d, 0.5))
    f1 = _f_series(a, b, a + b - c + 1, jnp.where(use_conn, s, jnp.zeros_like(s)), 400)
    f2 = _f_series(c - a, c - b, d_safe + 1, jnp.where(use_conn, s, jnp.zeros_like(s)), 400)
    gc = jnp.where(_is_nonpos_int(c), jnp.ones_like(c), c)
    a1 = _gamma_signed(gc) * _gamma_signed(d_safe) * _rgamma(c - a) * _rgamma(c - b)
    a2 = _gamma_signed(gc) * _gamma_signed(-d_safe) * _rgamma(a) * _rgamma(b)
    conn = a1 * f1 + a2 * jnp.exp(d_safe * jnp.log(s)) * f2
    # Elsewhere the series itself, after Euler's transformation when c - a - b < 0.
    euler = (d < 0) & ~use_conn
    ws = jnp.where(use_conn, jnp.zeros_like(w), w)
    aa = jnp.where(euler, c - a, a)
    bb = jnp.where(euler, c - b, b)
    direct = _f_series(aa, bb, c, ws, 4000)
    direct = jnp.where(euler, jnp.exp(d * jnp.log1p(-ws)) * direct, direct)
    return jnp.where(use_conn, conn, direct)


def _gamma_signed(v):
    floor_v = jnp.floor(v)
    sign = jnp.where((v < 0) & (jnp.fmod(floor_v, 2) != 0), -1.0, 1.0).astype(v.dtype)
    return sign * jnp.exp(lax.lgamma(v))


def _terminating(a, b, c, x):
    """The finite sum when a (or b) is a nonpositive integer."""
    swap = ~_is_nonpos_int(a) | (_is_nonpos_int(b) & (b > a))
    n = jnp.where(swap, b, a)
    other = jnp.where(swap, a, b)

    def body(k, state):
        term, total = state
        kf = k.astype(x.dtype)
        live = kf < -n
        term = jnp.where(live, term * (n + kf) * (other + kf) / ((c + kf) * (kf + 1)) * x,
                         jnp.zeros_like(term))
        return term, total + term

    steps = jnp.max(jnp.where(_is_nonpos_int(n), -n, 0.0)).astype(np.int32)
    _, total = lax.fori_loop(0, steps, body, (jnp.ones_like(x), jnp.ones_like(x)))
    return total


def _hyp2f1_value(a, b, c, x):
    poly = _is_nonpos_int(a) | _is_nonpos_int(b)
    d = c - a - b
    # x < 0: Pfaff's transformation onto w = x / (x - 1) in (0, 1).
    neg = x < 0
    xs = jnp.where(poly | (x >= 1), jnp.zeros_like(x), x)
    w = jnp.where(neg, xs / (xs - 1), xs)
    bb = jnp.where(neg, c - b, b)
    f = _f_unit_interval(jnp.where(poly, jnp.full_like(a, 0.5), a),
                         jnp.where(poly, jnp.full_like(b, 0.25), bb),
                         jnp.where(poly, jnp.ones_like(c), c), w)
    f = jnp.where(neg, jnp.exp(-a * jnp.log1p(-xs)) * f, f)
    val = jnp.where(poly, _terminating(a, b, c, x), f)
    # x = 1: Gauss's sum when c - a - b > 0; x > 1 outside the series' domain.
    gauss = (_gamma_signed(jnp.where(_is_nonpos_int(c), jnp.ones_like(c), c))
             * _gamma_signed(jnp.where(d > 0, d, jnp.ones_like(d)))
             * _rgamma(c - a) * _rgamma(c - b))
    at_one = jnp.where(d > 0, gauss, jnp.full_like(gauss, np.inf))
    val = jnp.where((x == 1) & ~poly, at_one, val)
    val = jnp.where((x > 1) & ~poly, jnp.full_like(val, np.inf), val)
    one_minus_x = 1 - x
    val = jnp.where((b == c) & (x < 1) & ~poly, one_minus_x ** (-a), val)
    val = jnp.where((a == c) & (x < 1) & ~poly, one_minus_x ** (-b), val)
    c_pole = _is_nonpos_int(c) & ~(poly & (jnp.maximum(jnp.where(_is_nonpos_int(a), a, -np.inf),
                                                       jnp.where(_is_nonpos_int(b), b, -np.inf))
                                           > c))
    val = jnp.where(c_pole, jnp.full_like(val, np.inf), val)
    trivial = (x == 0) | (((a == 0) | (b == 0)) & (c != 0))
    return jnp.where(trivial, jnp.ones_like(val), val)


def _hyp2f1_param_derivatives(a, b, c, x):
    _, (da, db, dc) = _sum_series(
        lambda k: (a + k) * (b + k) / ((c + k) * (k + 1)) * x, jnp.ones_like(x), x, 4000,
        weights=(lambda k: 1 / (a + k), lambda k: 1 / (b + k), lambda k: -1 / (c + k)))
    return da, db, dc


@olympus.custom_jvp
def _hyp2f1(a, b, c, x):
    return _hyp2f1_value(a, b, c, x)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    ta, tb, tc, tx = tangents
    out = _hyp2f1(a, b, c, x)
    d_x = a * b / c * _hyp2f1_value(a + 1, b + 1, c + 1, x)
    d_a, d_b, d_c = _hyp2f1_param_derivatives(a, b, c, x)
    return out, d_a * ta + d_b * tb + d_c * tc + d_x * tx


@olympus.jit
def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for real arguments and x <= 1
    (inf beyond, where the series has no real continuation in general)."""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    if is_complex(x):
        raise ValueError("hyp2f1 does not support complex-valued inputs.")
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    return _hyp2f1(a, b, c, x)
