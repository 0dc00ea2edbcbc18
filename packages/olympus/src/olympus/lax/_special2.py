"""More special functions of `olympus.lax`, written like those in `_special` (elementwise
operations plus `while_loop`, with `custom_jvp` derivative rules): the regularized
incomplete beta function, the Hurwitz zeta function and the polygamma functions built on
it, and the exponentially scaled modified Bessel functions of order 0 and 1.

Numerics.

* ``I_x(a, b)``: the prefactor ``x^a (1-x)^b / (a B(a, b))`` times the continued fraction
  ``1/(1 + d1/(1 + d2/(1 + ...)))`` with ``d_{2k+1} = -(a+k)(a+b+k) x / ((a+2k)(a+2k+1))``
  and ``d_{2k} = k(b-k) x / ((a+2k-1)(a+2k))`` (DLMF 8.17.22), evaluated through its
  continuants (renormalized every step, which is the same iteration as Lentz's method but
  lets the derivatives with respect to `a` and `b` be carried term by term). Where
  ``x > (a+1)/(a+b+2)`` the symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` is used, so the
  fraction always converges quickly. Both logs of the prefactor are taken from `x`
  itself (``log x`` and ``log1p(-x)``), never from a rounded ``1 - x``.
* ``zeta(s, q)``: Euler-Maclaurin summation (as in Cephes): the terms ``(q+i)^-s`` are
  added until ``i >= 9`` and ``q + i > 9``, then the integral, the half term and twelve
  Bernoulli corrections at ``w = q + i``. The derivative with respect to `s` comes from
  the same formula differentiated term by term.
* ``i0e``, ``i1e``: Chebyshev expansions of ``i0e(x)`` and ``i1e(x)/x`` on [0, 8] (in
  ``x/4 - 1``) and of ``sqrt(x) i0e(x)``, ``sqrt(x) i1e(x)`` on [8, inf) (in ``16/x - 1``).
  The coefficients are computed here, once, on first use: from the power series of
  ``I0``, ``I1`` on [0, 8] and from the trapezoidal rule on the integral
  ``i_ne(x) = 1/pi int_0^pi cos(n t) exp(-x (1 - cos t)) dt`` (which converges
  geometrically for this periodic integrand) on [8, inf), both in extended precision.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

import olympus.numpy as jnp
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace.core import Tracer

from .._src.custom_derivatives import custom_jvp
from .._src.jit import jit
from ._special import (
    _MAX_ITERS,
    _STIRLING,
    _STIRLING_FROM,
    _and,
    _compute,
    _downcast,
    _float_args,
    _k,
    _log1p,
    _masked_loop,
    _not,
    _or,
    _small,
    _upcast,
    _where,
)
from .control_flow import while_loop

__all__ = ["regularized_incomplete_beta", "zeta", "polygamma", "bessel_i0e", "bessel_i1e"]


def _nan_like(x):
    return _k(x, np.nan)


def _zeros(x):
    return jnp.multiply(x, _k(x, 0))


def _ones_like(x):
    """Ones of x's shape (and batching), whatever the values of x."""
    return _where(jnp.equal(x, x), _k(x, 1), _k(x, 1))


def _is_int(x):
    return jnp.equal(lax.floor(x), x)


# --- regularized incomplete beta ----------------------------------------------------------------


def _beta_cf(a, b, x, active, grad):
    """The continued fraction h = 1/(1 + d1/(1 + d2/(1 + ...))) and dh/da, dh/db, through
    the continuants A_n / B_n (A_n = A_{n-1} + d_{n-1} A_{n-2}, the same for B)."""
    dt_ = prom.aval_of(a).dtype
    eps = _k(a, np.finfo(dt_).eps)
    zero = _zeros(a)
    one = jnp.add(zero, _k(a, 1))
    apb = jnp.add(a, b)

    def push(st, d, dda, ddb):
        a0, a1, b0, b1, da0, da1, db0, db1, ea0, ea1, eb0, eb1 = st
        a2 = jnp.add(a1, jnp.multiply(d, a0))
        b2 = jnp.add(b1, jnp.multiply(d, b0))
        if not grad:
            return a1, a2, b1, b2, da0, da1, db0, db1, ea0, ea1, eb0, eb1
        # d/da of the continuants (da*, db*) and d/db (ea*, eb*)
        da2 = jnp.add(jnp.add(da1, jnp.multiply(dda, a0)), jnp.multiply(d, da0))
        db2 = jnp.add(jnp.add(db1, jnp.multiply(dda, b0)), jnp.multiply(d, db0))
        ea2 = jnp.add(jnp.add(ea1, jnp.multiply(ddb, a0)), jnp.multiply(d, ea0))
        eb2 = jnp.add(jnp.add(eb1, jnp.multiply(ddb, b0)), jnp.multiply(d, eb0))
        return a1, a2, b1, b2, da1, da2, db1, db2, ea1, ea2, eb1, eb2

    def step(n, st):
        k = lax.convert_element_type(jnp.subtract(n, np.int32(1)), dt_)
        k1 = jnp.add(k, _k(a, 1))
        # odd term d_{2k+1} = -(a+k)(a+b+k) x / ((a+2k)(a+2k+1))
        p, r = jnp.add(a, k), jnp.add(apb, k)
        u = jnp.add(a, jnp.multiply(_k(a, 2), k))
        den = jnp.multiply(u, jnp.add(u, _k(a, 1)))
        num = lax.neg(jnp.multiply(jnp.multiply(p, r), x))
        d = jnp.true_divide(num, den)
        dda = ddb = None
        if grad:
            dnum = lax.neg(jnp.multiply(jnp.add(p, r), x))
            dden = jnp.add(jnp.multiply(_k(a, 2), u), _k(a, 1))
            dda = jnp.true_divide(jnp.subtract(dnum, jnp.multiply(d, dden)), den)
            ddb = lax.neg(jnp.true_divide(jnp.multiply(p, x), den))
        st = push(st[:12], d, dda, ddb)
        # even term d_{2k'} = k'(b-k') x / ((a+2k'-1)(a+2k')) with k' = k + 1
        v = jnp.add(a, jnp.multiply(_k(a, 2), k1))
        vm1 = jnp.subtract(v, _k(a, 1))
        den = jnp.multiply(vm1, v)
        d = jnp.true_divide(jnp.multiply(jnp.multiply(k1, jnp.subtract(b, k1)), x), den)
        if grad:
            dda = lax.neg(jnp.multiply(d, jnp.add(jnp.true_divide(_k(a, 1), vm1),
                                                  jnp.true_divide(_k(a, 1), v))))
            ddb = jnp.true_divide(jnp.multiply(k1, x), den)
        st = push(st, d, dda, ddb)
        # renormalize so that B_n = 1
        sc = jnp.true_divide(one, _where(jnp.equal(st[3], zero), one, st[3]))
        st = tuple(jnp.multiply(v_, sc) for v_ in st)
        h = st[1]
        if not grad:
            return st + (h, zero, zero)
        # h = A/B with B = 1: dh = dA - A dB
        dha = jnp.subtract(st[5], jnp.multiply(h, st[7]))
        dhb = jnp.subtract(st[9], jnp.multiply(h, st[11]))
        return st + (h, dha, dhb)

    def converged(old, new):
        ok = _small(jnp.subtract(new[12], old[12]), new[12], eps)
        if not grad:
            return ok
        return _and(ok, _small(jnp.subtract(new[13], old[13]), new[13], eps),
                    _small(jnp.subtract(new[14], old[14]), new[14], eps))

    init = (zero, one, one, one) + (zero,) * 8 + (one, zero, zero)
    st = _masked_loop(active, init, step, converged)
    return st[12], st[13], st[14]


def _lbeta(a, b):
    return jnp.subtract(jnp.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(jnp.add(a, b)))


def _stirling_corr(z):
    """lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2), for z >= _STIRLING_FROM."""
    inv = jnp.true_divide(_k(z, 1), z)
    inv2 = jnp.multiply(inv, inv)
    acc = _zeros(z)
    for c in reversed(_STIRLING):
        acc = jnp.add(jnp.multiply(acc, inv2), _k(z, c))
    return jnp.multiply(acc, inv)


def _log1pmx(t):
    """log(1 + t) - t."""
    return jnp.subtract(_log1p(t), t)


def _log_beta_prefactor(a, b, x, lx, ly):
    """log(x^a (1-x)^b / (a B(a, b))). lgamma of a large argument carries an absolute
    error of many ulps of its (large) value, so where a or b is large the log-gammas are
    replaced by Stirling's series and the large terms are cancelled analytically: with
    s = a + b, t = x s / a - 1 and u = (1-x) s / b - 1 (so a t + b u = 0), the
    log-prefactor is a (log1p(t) - t) + b (log1p(u) - u) + log(b / (a s)) / 2
    - log(2 pi) / 2 - c(a) - c(b) + c(s) with c the Stirling correction."""
    one = _k(a, 1)
    lim = _k(a, _STIRLING_FROM)
    big_a, big_b = jnp.greater_equal(a, lim), jnp.greater_equal(b, lim)
    direct = jnp.subtract(jnp.subtract(jnp.add(jnp.multiply(a, lx), jnp.multiply(b, ly)),
                                       lax.log(a)), _lbeta(a, b))
    # one of a, b large: lgamma(big) - lgamma(s) = -(big - 1/2) log1p(small/big)
    #   - small log s + small + c(big) - c(s)
    small, big = _where(big_a, b, a), _where(big_a, a, b)
    big = _where(_or(big_a, big_b), big, lim)
    s1 = jnp.add(small, big)
    cs = _stirling_corr(_where(_or(big_a, big_b), s1, lim))
    diff = jnp.add(jnp.subtract(jnp.add(
        lax.neg(jnp.multiply(jnp.subtract(big, _k(a, 0.5)), _log1p(jnp.true_divide(small, big)))),
        small), jnp.multiply(small, lax.log(s1))), jnp.subtract(_stirling_corr(big), cs))
    one_big = jnp.subtract(jnp.subtract(jnp.add(jnp.multiply(a, lx), jnp.multiply(b, ly)),
                                        lax.log(a)),
                           jnp.add(lax.lgamma(_where(_and(big_a, big_b), one, small)), diff))
    # both large
    y = jnp.subtract(one, x)
    a_s = _where(big_a, a, lim)
    b_s = _where(big_b, b, lim)
    ss_ = jnp.add(a_s, b_s)
    t = jnp.true_divide(jnp.subtract(jnp.multiply(x, b_s), jnp.multiply(y, a_s)), a_s)
    u = jnp.true_divide(jnp.subtract(jnp.multiply(y, a_s), jnp.multiply(x, b_s)), b_s)
    both = jnp.add(jnp.add(jnp.multiply(a_s, _log1pmx(t)), jnp.multiply(b_s, _log1pmx(u))),
                   jnp.subtract(jnp.multiply(_k(a, 0.5), lax.log(
                       jnp.true_divide(b_s, jnp.multiply(a_s, ss_)))),
                       _k(a, 0.5 * np.log(2 * np.pi))))
    both = jnp.subtract(both, jnp.subtract(jnp.add(_stirling_corr(a_s), _stirling_corr(b_s)),
                                           _stirling_corr(ss_)))
    return _where(_and(big_a, big_b), both, _where(_or(big_a, big_b), one_big, direct))


def _betainc_parts(a, b, x, grad):
    """(I_x(a, b), dI/da, dI/db) (the derivatives only with `grad`)."""
    interior = _and(jnp.greater(a, _k(a, 0)), jnp.greater(b, _k(b, 0)),
                    jnp.greater(x, _k(x, 0)), jnp.less(x, _k(x, 1)),
                    lax.is_finite(a), lax.is_finite(b))
    one = _k(a, 1)
    a_s = _where(interior, a, one)
    b_s = _where(interior, b, one)
    x_s = _where(interior, x, _k(x, 0.5))
    lx, ly = lax.log(x_s), _log1p(lax.neg(x_s))
    swap = jnp.greater(x_s, jnp.true_divide(jnp.add(a_s, one),
                                            jnp.add(jnp.add(a_s, b_s), _k(a, 2))))
    a2, b2 = _where(swap, b_s, a_s), _where(swap, a_s, b_s)
    x2 = _where(swap, jnp.subtract(one, x_s), x_s)
    lx2, ly2 = _where(swap, ly, lx), _where(swap, lx, ly)
    h, dha, dhb = _beta_cf(a2, b2, x2, interior, grad)
    lpre = _log_beta_prefactor(a2, b2, x2, lx2, ly2)
    pre = lax.exp(lpre)
    j = jnp.multiply(pre, h)
    val = _where(swap, jnp.subtract(one, j), j)
    # edges (as SciPy): I_0 = 0, I_1 = 1; a = 0 (b > 0) or b = inf: 1 for x > 0;
    # b = 0 (a > 0) or a = inf: 0 for x < 1
    zero = _k(a, 0)
    a0 = _or(jnp.equal(a, zero), jnp.equal(b, _k(b, np.inf)))
    b0 = _or(jnp.equal(b, zero), jnp.equal(a, _k(a, np.inf)))
    edge = _where(jnp.equal(x, zero), zero,
                  _where(jnp.equal(x, one), one, _where(a0, one, zero)))
    nan = _or(jnp.not_equal(a, a), jnp.not_equal(b, b), jnp.not_equal(x, x),
              jnp.less(a, zero), jnp.less(b, zero), jnp.less(x, zero), jnp.greater(x, one),
              _and(a0, b0))
    val = _where(nan, _nan_like(a), _where(interior, val, edge))
    if not grad:
        return val, None, None
    psab = lax.digamma(jnp.add(a2, b2))
    ga = jnp.add(jnp.subtract(jnp.subtract(lx2, jnp.true_divide(one, a2)),
                              lax.digamma(a2)), psab)
    gb = jnp.add(jnp.subtract(ly2, lax.digamma(b2)), psab)
    dja = jnp.multiply(pre, jnp.add(jnp.multiply(h, ga), dha))
    djb = jnp.multiply(pre, jnp.add(jnp.multiply(h, gb), dhb))
    da = _where(swap, lax.neg(djb), dja)
    db = _where(swap, lax.neg(dja), djb)
    da = _where(nan, _nan_like(a), _where(interior, da, zero))
    db = _where(nan, _nan_like(a), _where(interior, db, zero))
    return val, da, db


def _beta_log_pdf(a, b, x):
    """log of the Beta(a, b) density at x, with 0 log 0 = 0."""
    one = _k(a, 1)
    am1, bm1 = jnp.subtract(a, one), jnp.subtract(b, one)
    lx = _where(jnp.equal(am1, _k(a, 0)), _k(a, 0), jnp.multiply(am1, lax.log(x)))
    ly = _where(jnp.equal(bm1, _k(a, 0)), _k(a, 0),
                jnp.multiply(bm1, _log1p(lax.neg(x))))
    return jnp.subtract(jnp.add(lx, ly), _lbeta(a, b))


@custom_jvp
def _betainc_cj(a, b, x):
    return _betainc_parts(a, b, x, grad=False)[0]


@_betainc_cj.defjvp
def _betainc_jvp(primals, tangents):
    a, b, x = primals
    ta, tb, tx = tangents
    val, da, db = _betainc_parts(a, b, x, grad=True)
    inside = _and(jnp.greater_equal(x, _k(x, 0)), jnp.less_equal(x, _k(x, 1)))
    dx = lax.exp(_beta_log_pdf(a, b, _where(inside, x, _k(x, 0.5))))
    dx = _where(inside, dx, _nan_like(x))
    out = jnp.add(jnp.add(jnp.multiply(ta, da), jnp.multiply(tb, db)), jnp.multiply(tx, dx))
    return val, out


def _compute3(fn):
    def run(a, b, x):
        dt, (a, b, x) = _upcast(a, b, x)
        return _downcast(dt, fn(a, b, x))

    return jit(run)


_betainc_jit = _compute3(_betainc_cj)


def regularized_incomplete_beta(a, b, x):
    """The regularized incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b), for
    a, b >= 0 and 0 <= x <= 1 (NaN elsewhere). Differentiable in all three arguments."""
    a, b, x = _float_args("regularized_incomplete_beta", a, b, x)
    return _betainc_jit(a, b, x)


# --- Hurwitz zeta -------------------------------------------------------------------------------


def _bernoulli_even(count):
    """B_2, B_4, ..., B_{2 count} as Fractions (from sum_k C(n+1, k) B_k = 0)."""
    bern = [Fraction(1)]
    for n in range(1, 2 * count + 1):
        acc = Fraction(0)
        binom = 1
        for k in range(n):
            acc += binom * bern[k]
            binom = binom * (n + 1 - k) // (k + 1)
        bern.append(-acc / (n + 1))
    return [bern[2 * j] for j in range(1, count + 1)]


_EM_TERMS = 12
# B_2j / (2j)!
_EM_COEFS = [float(bj / Fraction(int(np.prod(np.arange(1, 2 * j + 1, dtype=object)))))
             for j, bj in enumerate(_bernoulli_even(_EM_TERMS), start=1)]
_EM_SHIFT = 9.0


def _zeta_core(s, q, grad):
    """sum_{i>=0} (q+i)^-s by Euler-Maclaurin, with its derivative in s (with `grad`).
    Valid for finite q > -(_MAX_ITERS - 10) that is not a non-positive integer; for
    negative q only with integer s. Returns (value, d/ds, lanes that ran out of terms)."""
    zero = _zeros(s)
    shift = _k(s, _EM_SHIFT)

    def cond(carry):
        i, w, _, _ = carry
        more = _or(jnp.less(i, np.int32(_EM_SHIFT)), jnp.less_equal(w, shift))
        return lax.bitwise_and(lax.lt(i, np.int32(_MAX_ITERS)), jnp.any(more))

    def body(carry):
        i, w, acc, dacc = carry
        more = _or(jnp.less(i, np.int32(_EM_SHIFT)), jnp.less_equal(w, shift))
        term = lax.pow(w, lax.neg(s))
        acc = _where(more, jnp.add(acc, term), acc)
        if grad:
            dterm = lax.neg(jnp.multiply(term, lax.log(w)))
            dacc = _where(more, jnp.add(dacc, dterm), dacc)
        w = _where(more, jnp.add(w, _k(s, 1)), w)
        return lax.add(i, np.int32(1)), w, acc, dacc

    _, w, acc, dacc = while_loop(cond, body, (np.int32(0), q, zero, zero))
    short = jnp.less_equal(w, shift)
    w = _where(short, jnp.add(zero, _k(s, 10)), w)
    lw = lax.log(w)
    one = _k(s, 1)
    sm1 = jnp.subtract(s, one)
    wms = lax.pow(w, lax.neg(s))  # w^-s
    inv_w = jnp.true_divide(one, w)
    inv_w2 = jnp.multiply(inv_w, inv_w)
    tail = jnp.add(jnp.true_divide(jnp.multiply(wms, w), sm1), jnp.multiply(wms, _k(s, 0.5)))
    # w^-s sum_j c_j r_j with r_j = P_j(s) w^(1-2j), P_j(s) = s (s+1) ... (s+2j-2) (the
    # ratio r_j is carried, not P_j, which overflows float32 for large s)
    r, dr = jnp.multiply(s, inv_w), inv_w  # dr = dP_j/ds w^(1-2j)
    corr, dcorr = zero, zero
    for j, c in enumerate(_EM_COEFS, start=1):
        corr = jnp.add(corr, jnp.multiply(_k(s, c), r))
        if grad:
            dcorr = jnp.add(dcorr, jnp.multiply(_k(s, c), jnp.subtract(dr, jnp.multiply(r, lw))))
        f1, f2 = jnp.add(s, _k(s, 2 * j - 1)), jnp.add(s, _k(s, 2 * j))
        g = jnp.multiply(jnp.multiply(f1, f2), inv_w2)
        if grad:
            dr = jnp.add(jnp.multiply(dr, g), jnp.multiply(r, jnp.multiply(jnp.add(f1, f2),
                                                                           inv_w2)))
        r = jnp.multiply(r, g)
    corr = jnp.multiply(corr, wms)
    dcorr = jnp.multiply(dcorr, wms)
    val = jnp.add(jnp.add(acc, tail), corr)
    if not grad:
        return val, None, short
    # d/ds [w^(1-s) / (s-1)] = -log(w) w^(1-s)/(s-1) - w^(1-s)/(s-1)^2
    w1ms = jnp.multiply(wms, w)
    dtail = jnp.subtract(lax.neg(jnp.multiply(lw, jnp.add(jnp.true_divide(w1ms, sm1),
                                                          jnp.multiply(wms, _k(s, 0.5))))),
                         jnp.true_divide(w1ms, jnp.multiply(sm1, sm1)))
    dval = jnp.add(jnp.add(dacc, dtail), dcorr)
    return val, dval, short


def _zeta_parts(s, q, grad, riemann=False):
    """Hurwitz zeta with SciPy's domain: NaN for s < 1 (unless `riemann`, where the
    Euler-Maclaurin formula continues it to 0 <= s < 1), inf at s = 1 and at
    non-positive integer q, NaN for negative q with non-integer s."""
    one = _k(s, 1)
    zero = _k(s, 0)
    q_nonpos_int = _and(jnp.less_equal(q, zero), _is_int(q))
    neg_q = jnp.less(q, zero)
    lo = zero if riemann else one
    ok = _and(jnp.greater_equal(s, lo), jnp.not_equal(s, one), lax.is_finite(s),
              lax.is_finite(q), _not(q_nonpos_int),
              _or(_not(neg_q), _is_int(s)))
    s_s = _where(ok, s, _k(s, 2))
    q_s = _where(ok, q, one)
    val, dval, short = _zeta_core(s_s, q_s, grad)
    inf = _k(s, np.inf)
    nan = _nan_like(s)
    s_inf = jnp.equal(s, inf)
    # s = inf: q^-inf; q = inf (s > 1): 0
    edge = _where(_and(s_inf, jnp.greater(q, zero)),
                  _where(jnp.greater(q, one), zero, _where(jnp.equal(q, one), one, inf)),
                  _where(_and(jnp.equal(q, inf), jnp.greater(s, one)), zero, nan))
    edge = _where(_and(_or(jnp.equal(s, one), q_nonpos_int), jnp.greater_equal(s, lo),
                       _not(s_inf)), inf, edge)
    bad = _or(jnp.not_equal(s, s), jnp.not_equal(q, q), short)
    val = _where(bad, nan, _where(ok, val, edge))
    if not grad:
        return val, None
    # on q < 0 the function is only defined at integer s, so d/ds is taken as 0 there
    dval = _where(_and(ok, _not(neg_q), _not(short)), dval,
                  _where(_and(_not(bad), _or(ok, jnp.greater(q, zero))), zero, nan))
    return val, dval


@custom_jvp
def _zeta_cj(s, q):
    return _zeta_parts(s, q, grad=False)[0]


@_zeta_cj.defjvp
def _zeta_jvp(primals, tangents):
    s, q = primals
    ts, tq = tangents
    val, ds = _zeta_parts(s, q, grad=True)
    dq = lax.neg(jnp.multiply(s, _zeta_cj(jnp.add(s, _k(s, 1)), q)))
    return val, jnp.add(jnp.multiply(ts, ds), jnp.multiply(tq, dq))


@custom_jvp
def _riemann_nonneg_cj(s):
    q = _ones_like(s)
    return _zeta_parts(s, q, grad=False, riemann=True)[0]


@_riemann_nonneg_cj.defjvp
def _riemann_nonneg_jvp(primals, tangents):
    (s,), (ts,) = primals, tangents
    q = _ones_like(s)
    val, ds = _zeta_parts(s, q, grad=True, riemann=True)
    return val, jnp.multiply(ts, ds)


def _riemann_impl(s):
    """Riemann zeta for all real s: Euler-Maclaurin for s >= 0, the functional equation
    zeta(s) = 2^s pi^(s-1) sin(pi s / 2) Gamma(1-s) zeta(1-s) for s < 0."""
    zero = _k(s, 0)
    neg = jnp.less(s, zero)
    s_pos = _where(neg, zero, s)
    s_neg = _where(neg, s, _k(s, -1))
    direct = _riemann_nonneg_cj(s_pos)
    t = jnp.subtract(_k(s, 1), s_neg)  # > 1
    zt = _zeta_cj(t, _ones_like(t))
    logmag = jnp.add(jnp.add(jnp.multiply(s_neg, _k(s, np.log(2.0))),
                             jnp.multiply(jnp.subtract(s_neg, _k(s, 1)), _k(s, np.log(np.pi)))),
                     jnp.add(lax.lgamma(t), lax.log(zt)))
    # sin(pi s / 2) with s reduced mod 4 first (exact), exactly 0 at the even integers
    r = jnp.subtract(s_neg, jnp.multiply(_k(s, 4), lax.floor(jnp.multiply(s_neg, _k(s, 0.25)))))
    sn = lax.sin(jnp.multiply(r, _k(s, np.pi / 2)))
    sn = _where(_and(_is_int(s_neg), jnp.equal(lax.rem(s_neg, _k(s, 2)), zero)), zero, sn)
    refl = jnp.multiply(sn, lax.exp(logmag))
    refl = _where(jnp.equal(sn, zero), zero, refl)
    return _where(neg, refl, direct)


def _compute1(fn):
    def run(x):
        dt, (x,) = _upcast(x)
        return _downcast(dt, fn(x))

    return jit(run)


_zeta_jit = _compute(_zeta_cj)
_riemann_jit = _compute1(_riemann_impl)


def zeta(x, q):
    """The Hurwitz zeta function zeta(x, q) = sum_{n>=0} (q + n)^-x, for x > 1 (NaN for
    x < 1, inf at x = 1 and at non-positive integer q; negative non-integer q needs an
    integer x). Differentiable in both arguments."""
    x, q = _float_args("zeta", x, q)
    return _zeta_jit(x, q)


def riemann_zeta(x):
    """The Riemann zeta function for all real x (inf at x = 1)."""
    (x,) = _float_args("riemann_zeta", x)
    return _riemann_jit(x)


# --- polygamma ----------------------------------------------------------------------------------


def _polygamma_impl(m, x):
    one = _k(x, 1)
    valid = _and(jnp.greater_equal(m, _k(m, 0)), _is_int(m))
    pos = _and(valid, jnp.greater_equal(m, one))
    m_s = _where(pos, m, one)
    n1 = jnp.add(m_s, one)
    odd = jnp.equal(lax.rem(m_s, _k(x, 2)), one)
    sign = _where(odd, one, _k(x, -1))
    fact = lax.exp(lax.lgamma(n1))
    hi = jnp.multiply(jnp.multiply(sign, fact), _zeta_cj(n1, x))
    return _where(valid, _where(pos, hi, lax.digamma(x)), _nan_like(x))


@custom_jvp
def _polygamma_cj(m, x):
    return _polygamma_impl(m, x)


@_polygamma_cj.defjvp
def _polygamma_jvp(primals, tangents):
    # m is an integer index: its tangent does not enter (derivative 0 along the integers)
    m, x = primals
    _, tx = tangents
    val = _polygamma_cj(m, x)
    return val, jnp.multiply(tx, _polygamma_cj(jnp.add(m, _k(m, 1)), x))


_polygamma_jit = _compute(_polygamma_cj)


def polygamma(m, x):
    """The polygamma function psi^(m)(x), the m-th derivative of digamma, for integer
    m >= 0: digamma for m = 0, (-1)^(m+1) m! zeta(m+1, x) otherwise. A concrete `m` that
    is not a non-negative integer is a ValueError; a traced one gives NaN."""
    if not isinstance(m, Tracer):
        mv = np.asarray(m)
        if mv.dtype.kind in "fiub" and mv.size and not (
                np.all(mv >= 0) and np.all(np.floor(mv) == mv)):
            raise ValueError("lax.polygamma: m must be a non-negative integer, got "
                             f"{mv if mv.ndim == 0 else mv[(mv < 0) | (np.floor(mv) != mv)]}.")
    m, x = _float_args("polygamma", m, x)
    return _polygamma_jit(m, x)


# --- modified Bessel functions ------------------------------------------------------------------


_LD = np.longdouble
_PI_LD = _LD("3.14159265358979323846264338327950288")
_CHEB_SMALL_N = 30  # coefficients on [0, 8]
_CHEB_LARGE_N = 26  # on [8, inf)
_SPLIT = 8.0


def _cheb_fit(f, n):
    """Chebyshev coefficients c_k (f ~ sum c_k T_k on [-1, 1]) from n first-kind nodes."""
    th = (np.arange(n, dtype=_LD) + _LD(0.5)) / n * _PI_LD
    v = f(np.cos(th))
    c = np.array([_LD(2) / n * np.sum(v * np.cos(k * th)) for k in range(n)])
    c[0] /= 2
    return c


def _small_series(x):
    """(i0e(x), i1e(x) / x) from the power series of I0 and I1 (all terms positive)."""
    q = x * x / 4
    t0, t1 = np.ones_like(x), np.full_like(x, _LD(0.5))
    s0, s1 = t0.copy(), t1.copy()
    for k in range(1, 70):
        t0 = t0 * q / (k * k)
        t1 = t1 * q / (k * (k + 1))
        s0, s1 = s0 + t0, s1 + t1
    e = np.exp(-x)
    return s0 * e, s1 * e


def _large_quadrature(x, n=4096):
    """(sqrt(x) i0e(x), sqrt(x) i1e(x)) by the trapezoidal rule on
    1/pi int_0^pi cos(k t) exp(-2 x sin(t/2)^2) dt."""
    t = _PI_LD * np.arange(n + 1, dtype=_LD) / n
    w = np.ones(n + 1, dtype=_LD)
    w[0] = w[-1] = _LD(0.5)
    s2 = np.sin(t / 2) ** 2
    f = np.exp(-2 * x[:, None] * s2) * w
    i0 = f.sum(-1) / n
    i1 = (f * (1 - 2 * s2)).sum(-1) / n
    r = np.sqrt(x)
    return r * i0, r * i1


@functools.cache
def _bessel_coefs():
    small = [_cheb_fit(lambda y, k=k: _small_series(_LD(4) * (y + 1))[k], _CHEB_SMALL_N)
             for k in (0, 1)]
    large = [_cheb_fit(lambda y, k=k: _large_quadrature(_LD(16) / (y + 1))[k], _CHEB_LARGE_N)
             for k in (0, 1)]
    return tuple(tuple(float(v) for v in c) for c in small + large)


def _clenshaw(y, coefs):
    dt_ = prom.aval_of(y).dtype
    cs = list(coefs)
    if dt_ != np.float64:  # drop the terms below float32 resolution
        big = max(abs(c) for c in cs)
        while len(cs) > 2 and abs(cs[-1]) < 1e-9 * big:
            cs.pop()
    y2 = jnp.multiply(y, _k(y, 2))
    b1 = b2 = _zeros(y)
    for c in reversed(cs[1:]):
        b1, b2 = jnp.add(jnp.subtract(jnp.multiply(y2, b1), b2), _k(y, c)), b1
    return jnp.add(jnp.subtract(jnp.multiply(y, b1), b2), _k(y, cs[0]))


def _bessel_parts(x):
    """(i0e(x), i1e(x), i1e(x)/x), the last finite at x = 0."""
    c0, c1, g0, g1 = _bessel_coefs()
    ax = lax.abs(x)
    small = jnp.less_equal(ax, _k(x, _SPLIT))
    ys = _where(small, jnp.subtract(jnp.multiply(ax, _k(x, 0.25)), _k(x, 1)), _zeros(x))
    axl = _where(small, _k(x, 2 * _SPLIT), ax)
    yl = jnp.subtract(jnp.true_divide(_k(x, 16), axl), _k(x, 1))
    rl = lax.rsqrt(axl)
    i0 = _where(small, _clenshaw(ys, c0), jnp.multiply(_clenshaw(yl, g0), rl))
    r1_small = _clenshaw(ys, c1)
    i1_large = jnp.multiply(jnp.multiply(_clenshaw(yl, g1), rl), lax.sign(x))
    i1 = _where(small, jnp.multiply(x, r1_small), i1_large)
    i1_over_x = _where(small, r1_small, jnp.true_divide(i1_large, _where(small, _k(x, 1), x)))
    return i0, i1, i1_over_x


@custom_jvp
def _i0e_cj(x):
    return _bessel_parts(x)[0]


@custom_jvp
def _i1e_cj(x):
    return _bessel_parts(x)[1]


def _i1e_over_x(x):
    small = jnp.less_equal(lax.abs(x), _k(x, _SPLIT))
    xs = _where(small, _k(x, 1), x)
    return _where(small, _bessel_parts(x)[2], jnp.true_divide(_i1e_cj(x), xs))


@_i0e_cj.defjvp
def _i0e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    i0 = _i0e_cj(x)
    d = jnp.subtract(_i1e_cj(x), jnp.multiply(lax.sign(x), i0))
    return i0, jnp.multiply(t, d)


@_i1e_cj.defjvp
def _i1e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    i1 = _i1e_cj(x)
    d = jnp.subtract(jnp.subtract(_i0e_cj(x), jnp.multiply(lax.sign(x), i1)), _i1e_over_x(x))
    return i1, jnp.multiply(t, d)


_i0e_jit = _compute1(_i0e_cj)
_i1e_jit = _compute1(_i1e_cj)


def bessel_i0e(x):
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0."""
    (x,) = _float_args("bessel_i0e", x)
    return _i0e_jit(x)


def bessel_i1e(x):
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1."""
    (x,) = _float_args("bessel_i1e", x)
    return _i1e_jit(x)
