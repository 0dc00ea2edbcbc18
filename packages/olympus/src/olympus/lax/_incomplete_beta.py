"""The regularized incomplete beta function of `olympus.lax`
(`regularized_incomplete_beta`), a composite of elementwise operations and `while_loop`
with a `custom_jvp` derivative rule (shared helpers in `_special_common`).

Numerics. ``I_x(a, b)``: the prefactor ``x^a (1-x)^b / (a B(a, b))`` times the continued fraction
  ``1/(1 + d1/(1 + d2/(1 + ...)))`` with ``d_{2k+1} = -(a+k)(a+b+k) x / ((a+2k)(a+2k+1))``
  and ``d_{2k} = k(b-k) x / ((a+2k-1)(a+2k))`` (DLMF 8.17.22), evaluated through its
  continuants (renormalized every step, which is the same iteration as Lentz's method but
  lets the derivatives with respect to `a` and `b` be carried term by term). Where
  ``x > (a+1)/(a+b+2)`` the symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` is used, so the
  fraction always converges quickly. Both logs of the prefactor are taken from `x`
  itself (``log x`` and ``log1p(-x)``), never from a rounded ``1 - x``.
"""

from __future__ import annotations

import numpy as np

from olympus_trace import array_ops as ops
from olympus_trace import lax_ops as lax

from .._src.custom_derivatives import custom_jvp
from .._src.jit import jit
from ._special_common import (
    _STIRLING,
    _STIRLING_FROM,
    _and,
    _downcast,
    _float_args,
    _k,
    _log1p,
    _masked_loop,
    _nan_like,
    _or,
    _small,
    _upcast,
    _where,
    _zeros,
)

__all__ = ["regularized_incomplete_beta"]


# --- regularized incomplete beta ----------------------------------------------------------------


def _beta_cf(a, b, x, active, grad):
    """The continued fraction h = 1/(1 + d1/(1 + d2/(1 + ...))) and dh/da, dh/db, through
    the continuants A_n / B_n (A_n = A_{n-1} + d_{n-1} A_{n-2}, the same for B)."""
    dt_ = ops.aval_of(a).dtype
    eps = _k(a, np.finfo(dt_).eps)
    zero = _zeros(a)
    one = ops.add(zero, _k(a, 1))
    apb = ops.add(a, b)

    def push(st, d, dda, ddb):
        a0, a1, b0, b1, da0, da1, db0, db1, ea0, ea1, eb0, eb1 = st
        a2 = ops.add(a1, ops.multiply(d, a0))
        b2 = ops.add(b1, ops.multiply(d, b0))
        if not grad:
            return a1, a2, b1, b2, da0, da1, db0, db1, ea0, ea1, eb0, eb1
        # d/da of the continuants (da*, db*) and d/db (ea*, eb*)
        da2 = ops.add(ops.add(da1, ops.multiply(dda, a0)), ops.multiply(d, da0))
        db2 = ops.add(ops.add(db1, ops.multiply(dda, b0)), ops.multiply(d, db0))
        ea2 = ops.add(ops.add(ea1, ops.multiply(ddb, a0)), ops.multiply(d, ea0))
        eb2 = ops.add(ops.add(eb1, ops.multiply(ddb, b0)), ops.multiply(d, eb0))
        return a1, a2, b1, b2, da1, da2, db1, db2, ea1, ea2, eb1, eb2

    def step(n, st):
        k = lax.convert_element_type(ops.subtract(n, np.int32(1)), dt_)
        k1 = ops.add(k, _k(a, 1))
        # odd term d_{2k+1} = -(a+k)(a+b+k) x / ((a+2k)(a+2k+1))
        p, r = ops.add(a, k), ops.add(apb, k)
        u = ops.add(a, ops.multiply(_k(a, 2), k))
        den = ops.multiply(u, ops.add(u, _k(a, 1)))
        num = lax.neg(ops.multiply(ops.multiply(p, r), x))
        d = ops.true_divide(num, den)
        dda = ddb = None
        if grad:
            dnum = lax.neg(ops.multiply(ops.add(p, r), x))
            dden = ops.add(ops.multiply(_k(a, 2), u), _k(a, 1))
            dda = ops.true_divide(ops.subtract(dnum, ops.multiply(d, dden)), den)
            ddb = lax.neg(ops.true_divide(ops.multiply(p, x), den))
        st = push(st[:12], d, dda, ddb)
        # even term d_{2k'} = k'(b-k') x / ((a+2k'-1)(a+2k')) with k' = k + 1
        v = ops.add(a, ops.multiply(_k(a, 2), k1))
        vm1 = ops.subtract(v, _k(a, 1))
        den = ops.multiply(vm1, v)
        d = ops.true_divide(ops.multiply(ops.multiply(k1, ops.subtract(b, k1)), x), den)
        if grad:
            dda = lax.neg(ops.multiply(d, ops.add(ops.true_divide(_k(a, 1), vm1),
                                                  ops.true_divide(_k(a, 1), v))))
            ddb = ops.true_divide(ops.multiply(k1, x), den)
        st = push(st, d, dda, ddb)
        # renormalize so that B_n = 1
        sc = ops.true_divide(one, _where(ops.equal(st[3], zero), one, st[3]))
        st = tuple(ops.multiply(v_, sc) for v_ in st)
        h = st[1]
        if not grad:
            return st + (h, zero, zero)
        # h = A/B with B = 1: dh = dA - A dB
        dha = ops.subtract(st[5], ops.multiply(h, st[7]))
        dhb = ops.subtract(st[9], ops.multiply(h, st[11]))
        return st + (h, dha, dhb)

    def converged(old, new):
        ok = _small(ops.subtract(new[12], old[12]), new[12], eps)
        if not grad:
            return ok
        return _and(ok, _small(ops.subtract(new[13], old[13]), new[13], eps),
                    _small(ops.subtract(new[14], old[14]), new[14], eps))

    init = (zero, one, one, one) + (zero,) * 8 + (one, zero, zero)
    st = _masked_loop(active, init, step, converged)
    return st[12], st[13], st[14]


def _lbeta(a, b):
    return ops.subtract(ops.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(ops.add(a, b)))


def _stirling_corr(z):
    """lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2), for z >= _STIRLING_FROM."""
    inv = ops.true_divide(_k(z, 1), z)
    inv2 = ops.multiply(inv, inv)
    acc = _zeros(z)
    for c in reversed(_STIRLING):
        acc = ops.add(ops.multiply(acc, inv2), _k(z, c))
    return ops.multiply(acc, inv)


def _log1pmx(t):
    """log(1 + t) - t."""
    return ops.subtract(_log1p(t), t)


def _log_beta_prefactor(a, b, x, lx, ly):
    """log(x^a (1-x)^b / (a B(a, b))). lgamma of a large argument carries an absolute
    error of many ulps of its (large) value, so where a or b is large the log-gammas are
    replaced by Stirling's series and the large terms are cancelled analytically: with
    s = a + b, t = x s / a - 1 and u = (1-x) s / b - 1 (so a t + b u = 0), the
    log-prefactor is a (log1p(t) - t) + b (log1p(u) - u) + log(b / (a s)) / 2
    - log(2 pi) / 2 - c(a) - c(b) + c(s) with c the Stirling correction."""
    one = _k(a, 1)
    lim = _k(a, _STIRLING_FROM)
    big_a, big_b = ops.greater_equal(a, lim), ops.greater_equal(b, lim)
    direct = ops.subtract(ops.subtract(ops.add(ops.multiply(a, lx), ops.multiply(b, ly)),
                                       lax.log(a)), _lbeta(a, b))
    # one of a, b large: lgamma(big) - lgamma(s) = -(big - 1/2) log1p(small/big)
    #   - small log s + small + c(big) - c(s)
    small, big = _where(big_a, b, a), _where(big_a, a, b)
    big = _where(_or(big_a, big_b), big, lim)
    s1 = ops.add(small, big)
    cs = _stirling_corr(_where(_or(big_a, big_b), s1, lim))
    diff = ops.add(ops.subtract(ops.add(
        lax.neg(ops.multiply(ops.subtract(big, _k(a, 0.5)), _log1p(ops.true_divide(small, big)))),
        small), ops.multiply(small, lax.log(s1))), ops.subtract(_stirling_corr(big), cs))
    one_big = ops.subtract(ops.subtract(ops.add(ops.multiply(a, lx), ops.multiply(b, ly)),
                                        lax.log(a)),
                           ops.add(lax.lgamma(_where(_and(big_a, big_b), one, small)), diff))
    # both large
    y = ops.subtract(one, x)
    a_s = _where(big_a, a, lim)
    b_s = _where(big_b, b, lim)
    ss_ = ops.add(a_s, b_s)
    t = ops.true_divide(ops.subtract(ops.multiply(x, b_s), ops.multiply(y, a_s)), a_s)
    u = ops.true_divide(ops.subtract(ops.multiply(y, a_s), ops.multiply(x, b_s)), b_s)
    both = ops.add(ops.add(ops.multiply(a_s, _log1pmx(t)), ops.multiply(b_s, _log1pmx(u))),
                   ops.subtract(ops.multiply(_k(a, 0.5), lax.log(
                       ops.true_divide(b_s, ops.multiply(a_s, ss_)))),
                       _k(a, 0.5 * np.log(2 * np.pi))))
    both = ops.subtract(both, ops.subtract(ops.add(_stirling_corr(a_s), _stirling_corr(b_s)),
                                           _stirling_corr(ss_)))
    return _where(_and(big_a, big_b), both, _where(_or(big_a, big_b), one_big, direct))


def _betainc_parts(a, b, x, grad):
    """(I_x(a, b), dI/da, dI/db) (the derivatives only with `grad`)."""
    interior = _and(ops.greater(a, _k(a, 0)), ops.greater(b, _k(b, 0)),
                    ops.greater(x, _k(x, 0)), ops.less(x, _k(x, 1)),
                    lax.is_finite(a), lax.is_finite(b))
    one = _k(a, 1)
    a_s = _where(interior, a, one)
    b_s = _where(interior, b, one)
    x_s = _where(interior, x, _k(x, 0.5))
    lx, ly = lax.log(x_s), _log1p(lax.neg(x_s))
    swap = ops.greater(x_s, ops.true_divide(ops.add(a_s, one),
                                            ops.add(ops.add(a_s, b_s), _k(a, 2))))
    a2, b2 = _where(swap, b_s, a_s), _where(swap, a_s, b_s)
    x2 = _where(swap, ops.subtract(one, x_s), x_s)
    lx2, ly2 = _where(swap, ly, lx), _where(swap, lx, ly)
    h, dha, dhb = _beta_cf(a2, b2, x2, interior, grad)
    lpre = _log_beta_prefactor(a2, b2, x2, lx2, ly2)
    pre = lax.exp(lpre)
    j = ops.multiply(pre, h)
    val = _where(swap, ops.subtract(one, j), j)
    # edges (as SciPy): I_0 = 0, I_1 = 1; a = 0 (b > 0) or b = inf: 1 for x > 0;
    # b = 0 (a > 0) or a = inf: 0 for x < 1
    zero = _k(a, 0)
    a0 = _or(ops.equal(a, zero), ops.equal(b, _k(b, np.inf)))
    b0 = _or(ops.equal(b, zero), ops.equal(a, _k(a, np.inf)))
    edge = _where(ops.equal(x, zero), zero,
                  _where(ops.equal(x, one), one, _where(a0, one, zero)))
    nan = _or(ops.not_equal(a, a), ops.not_equal(b, b), ops.not_equal(x, x),
              ops.less(a, zero), ops.less(b, zero), ops.less(x, zero), ops.greater(x, one),
              _and(a0, b0))
    val = _where(nan, _nan_like(a), _where(interior, val, edge))
    if not grad:
        return val, None, None
    psab = lax.digamma(ops.add(a2, b2))
    ga = ops.add(ops.subtract(ops.subtract(lx2, ops.true_divide(one, a2)),
                              lax.digamma(a2)), psab)
    gb = ops.add(ops.subtract(ly2, lax.digamma(b2)), psab)
    dja = ops.multiply(pre, ops.add(ops.multiply(h, ga), dha))
    djb = ops.multiply(pre, ops.add(ops.multiply(h, gb), dhb))
    da = _where(swap, lax.neg(djb), dja)
    db = _where(swap, lax.neg(dja), djb)
    da = _where(nan, _nan_like(a), _where(interior, da, zero))
    db = _where(nan, _nan_like(a), _where(interior, db, zero))
    return val, da, db


def _beta_log_pdf(a, b, x):
    """log of the Beta(a, b) density at x, with 0 log 0 = 0."""
    one = _k(a, 1)
    am1, bm1 = ops.subtract(a, one), ops.subtract(b, one)
    lx = _where(ops.equal(am1, _k(a, 0)), _k(a, 0), ops.multiply(am1, lax.log(x)))
    ly = _where(ops.equal(bm1, _k(a, 0)), _k(a, 0),
                ops.multiply(bm1, _log1p(lax.neg(x))))
    return ops.subtract(ops.add(lx, ly), _lbeta(a, b))


@custom_jvp
def _betainc_cj(a, b, x):
    return _betainc_parts(a, b, x, grad=False)[0]


@_betainc_cj.defjvp
def _betainc_jvp(primals, tangents):
    a, b, x = primals
    ta, tb, tx = tangents
    val, da, db = _betainc_parts(a, b, x, grad=True)
    inside = _and(ops.greater_equal(x, _k(x, 0)), ops.less_equal(x, _k(x, 1)))
    dx = lax.exp(_beta_log_pdf(a, b, _where(inside, x, _k(x, 0.5))))
    dx = _where(inside, dx, _nan_like(x))
    out = ops.add(ops.add(ops.multiply(ta, da), ops.multiply(tb, db)), ops.multiply(tx, dx))
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
