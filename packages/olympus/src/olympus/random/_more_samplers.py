"""More samplers for `olympus.random`: binomial and multinomial counts, the Weibull, F,
Wald, triangular, double-sided Maxwell and generalized normal distributions, uniform
points in Lp balls and Haar-random orthogonal (unitary) matrices.

They are built on the samplers of `_samplers` (uniform, normal, exponential, gamma,
chi-square, Maxwell, Rademacher). Where the construction is a fixed transformation of
those building blocks it is the one ``jax.random`` uses (same key splits, same draws), so
the streams should agree; `binomial` uses the same two algorithms as JAX (geometric
waiting times when ``n * min(p, 1 - p) <= 10``, Hormann's BTRS rejection sampler
otherwise) written independently. Every function works eagerly, under `olympus.jit` and
under `olympus.vmap` over keys.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from olympus_ir import dtypes
from olympus_trace.core import Tracer
from olympus_trace.errors import ConcretizationTypeError

from .. import lax as _lax
from .. import numpy as jnp
from ._prng import _canonicalize_shape, _sampler_jit, _split_n, _to_raw
from ._samplers import (
    _as_operand,
    _check_shape,
    _exponential,
    _float_dtype,
    _normal,
    _shape_of,
    _uniform,
    chisquare,
    gamma,
    maxwell,
    rademacher,
)

__all__ = [
    "ball", "binomial", "double_sided_maxwell", "f", "generalized_normal", "multinomial",
    "orthogonal", "triangular", "wald", "weibull_min",
]


# --- helpers ---------------------------------------------------------------------------------


def _param(x, dtype):
    """`x` (Python scalar, list or array) as an array of `dtype`."""
    return jnp.asarray(_as_operand(x)).astype(dtype)


def _concrete_index(x, what, fn):
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(x, f"The error occurred in olympus.random.{fn}() "
                                         f"argument `{what}`.")
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError(f"olympus.random.{fn}: `{what}` must be an integer, got "
                        f"{type(x).__name__} {x!r}") from None
    if v < 0:
        raise ValueError(f"olympus.random.{fn}: `{what}` must be nonnegative, got {v}")
    return v


def _result_shape(name, shape, *params):
    """`shape` (checked against the parameter shapes) or, if None, their broadcast."""
    pshapes = [_shape_of(_as_operand(p)) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*pshapes)) if pshapes else ()
    shape = _canonicalize_shape(shape)
    _check_shape(name, shape, *pshapes)
    return shape


# --- simple transformations -------------------------------------------------------------------


@_sampler_jit(("shape", "dtype"))
def _weibull_min_jit(key, scale, concentration, *, shape, dtype):
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    # Inverse CDF: x = scale * (-log(1 - u)) ** (1 / concentration).
    e = jnp.negative(jnp.log1p(jnp.negative(u)))
    return jnp.multiply(jnp.power(e, jnp.divide(1.0, _param(concentration, dtype))),
                        _param(scale, dtype))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull values with density proportional to
    ``x**(c - 1) * exp(-(x / scale)**c)`` on x > 0 (c = `concentration`), by inverting the
    CDF. The result has `shape` broadcast with the parameters' shapes."""
    raw, _ = _to_raw("weibull_min", key)
    dt = _float_dtype("weibull_min", dtype)
    shape = _canonicalize_shape(shape)
    return _weibull_min_jit(raw, _as_operand(scale), _as_operand(concentration), shape=shape,
                            dtype=dt)


@_sampler_jit(("shape", "dtype"))
def _double_sided_maxwell_jit(key, loc, scale, *, shape, dtype):
    k_maxwell, k_sign = _split_n(key)
    m = maxwell(k_maxwell, shape, dtype)
    s = rademacher(k_sign, shape, dtype)
    return jnp.add(jnp.multiply(jnp.multiply(s, m), _param(scale, dtype)), _param(loc, dtype))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Values ``loc + scale * s * m`` with m one-sided Maxwell and s a random sign: the
    density is proportional to ``z**2 exp(-z**2 / 2)``, z = (x - loc) / scale. The result
    shape is ``shape + broadcast(loc.shape, scale.shape)`` ("shape added to the parameters'
    shape", as documented by JAX)."""
    raw, _ = _to_raw("double_sided_maxwell", key)
    dt = _float_dtype("double_sided_maxwell", dtype)
    loc, scale = _as_operand(loc), _as_operand(scale)
    pshape = tuple(np.broadcast_shapes(_shape_of(loc), _shape_of(scale)))
    shape = _canonicalize_shape(shape) + pshape
    return _double_sided_maxwell_jit(raw, loc, scale, shape=shape, dtype=dt)


@_sampler_jit(("shape", "dtype"))
def _f_jit(key, dfnum, dfden, *, shape, dtype):
    dfnum = jnp.broadcast_to(_param(dfnum, dtype), shape)
    dfden = jnp.broadcast_to(_param(dfden, dtype), shape)
    k_den, k_num = _split_n(key)
    num = jnp.divide(chisquare(k_num, dfnum, shape, dtype), dfnum)
    den = jnp.divide(chisquare(k_den, dfden, shape, dtype), dfden)
    return jnp.divide(num, den)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distributed values with `dfnum` and `dfden` degrees of freedom (a ratio of
    scaled chi-square values); shape default: the parameters broadcast."""
    raw, _ = _to_raw("f", key)
    dt = _float_dtype("f", dtype)
    shape = _result_shape("f", shape, dfnum, dfden)
    return _f_jit(raw, _as_operand(dfnum), _as_operand(dfden), shape=shape, dtype=dt)


@_sampler_jit(("shape", "dtype"))
def _wald_jit(key, mean, *, shape, dtype):
    k_normal, k_uniform = _split_n(key)
    mu = jnp.broadcast_to(_param(mean, dtype), shape)
    v = _normal(k_normal, shape, dtype)
    z = _uniform(k_uniform, 0.0, 1.0, shape, dtype)
    # Michael, Schucany & Haas (1976): a root of the chi-square(1) transformation, picked
    # with probability mu / (mu + x).
    y = jnp.multiply(v, v)
    mu2 = jnp.multiply(mu, mu)
    root = jnp.sqrt(jnp.add(jnp.multiply(jnp.multiply(4.0, mu), y),
                            jnp.multiply(mu2, jnp.multiply(y, y))))
    x = jnp.subtract(jnp.add(mu, jnp.multiply(mu2, jnp.divide(y, 2.0))),
                     jnp.multiply(jnp.divide(mu, 2.0), root))
    return jnp.where(jnp.less_equal(z, jnp.divide(mu, jnp.add(mu, x))), x, jnp.divide(mu2, x))


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian, unit shape) values with `mean`; shape default
    ``mean.shape``."""
    raw, _ = _to_raw("wald", key)
    dt = _float_dtype("wald", dtype)
    shape = _result_shape("wald", shape, mean)
    return _wald_jit(raw, _as_operand(mean), shape=shape, dtype=dt)


@_sampler_jit(("shape", "dtype"))
def _triangular_jit(key, left, mode, right, *, shape, dtype):
    a = jnp.broadcast_to(_param(left, dtype), shape)
    c = jnp.broadcast_to(_param(mode, dtype), shape)
    b = jnp.broadcast_to(_param(right, dtype), shape)
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    width = jnp.subtract(b, a)
    split = jnp.divide(jnp.subtract(c, a), width)  # the CDF at the mode
    lo = jnp.add(a, jnp.sqrt(jnp.multiply(jnp.multiply(u, width), jnp.subtract(c, a))))
    hi = jnp.subtract(b, jnp.sqrt(jnp.multiply(jnp.multiply(jnp.subtract(1.0, u), width),
                                               jnp.subtract(b, c))))
    return jnp.where(jnp.less(u, split), lo, hi)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular values on [left, right] peaking at `mode` (inverse CDF); shape default:
    the three parameters broadcast."""
    raw, _ = _to_raw("triangular", key)
    dt = _float_dtype("triangular", dtype)
    shape = _result_shape("triangular", shape, left, mode, right)
    return _triangular_jit(raw, _as_operand(left), _as_operand(mode), _as_operand(right),
                           shape=shape, dtype=dt)


def _generalized_normal(key, p, shape, dtype):
    k_gamma, k_sign = _split_n(key)
    inv_p = jnp.divide(1.0, _param(p, dtype))
    g = gamma(k_gamma, inv_p, shape, dtype)
    s = rademacher(k_sign, shape, dtype)
    return jnp.multiply(s, jnp.power(g, inv_p))


@_sampler_jit(("shape", "dtype"))
def _generalized_normal_jit(key, p, *, shape, dtype):
    return _generalized_normal(key, p, shape, dtype)


def generalized_normal(key, p, shape=(), dtype=None):
    """Values with density proportional to ``exp(-|x|**p)`` (p > 0): a random sign times
    ``Gamma(1/p) ** (1/p)``."""
    raw, _ = _to_raw("generalized_normal", key)
    dt = _float_dtype("generalized_normal", dtype)
    shape = _canonicalize_shape(shape)
    _check_shape("generalized_normal", shape, _shape_of(_as_operand(p)))
    return _generalized_normal_jit(raw, _as_operand(p), shape=shape, dtype=dt)


@_sampler_jit(("shape", "dtype"))
def _ball_jit(key, p, *, shape, dtype):
    k_gen, k_exp = _split_n(key)
    g = _generalized_normal(k_gen, p, shape, dtype)
    e = _exponential(k_exp, shape[:-1], dtype)
    pp = _param(p, dtype)
    # Barthe, Guedon, Mendelson & Naor (2005): normalize by (sum |g|^p + E)^(1/p).
    denom = jnp.power(jnp.add(jnp.sum(jnp.power(jnp.abs(g), pp), axis=-1), e),
                      jnp.divide(1.0, pp))
    return jnp.divide(g, jnp.expand_dims(denom, -1))


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit Lp ball of dimension `d`, of shape ``(*shape, d)``."""
    raw, _ = _to_raw("ball", key)
    dt = _float_dtype("ball", dtype)
    d = _concrete_index(d, "d", "ball")
    p = _as_operand(p)
    if _shape_of(p) != ():
        raise ValueError(f"olympus.random.ball: `p` must be a scalar, got shape "
                         f"{_shape_of(p)}")
    shape = _canonicalize_shape(shape)
    return _ball_jit(raw, p, shape=shape + (d,), dtype=dt)


# --- orthogonal matrices ----------------------------------------------------------------------


@_sampler_jit(("shape", "dtype", "n", "m"))
def _orthogonal_jit(key, *, shape, dtype, n, m):
    tall, short = max(n, m), min(n, m)
    z = _normal(key, shape + (tall, short), dtype)
    if np.dtype(dtype).itemsize < 4:  # no half-precision QR: factor in float32
        z = z.astype(np.float32)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, 0, -2, -1)
    # Multiply column j by the phase of r[j, j] so that the factorization is unique and the
    # result Haar-distributed (Mezzadri 2007); a zero diagonal entry keeps its column.
    absd = jnp.abs(d).astype(d.dtype)
    phase = jnp.where(jnp.equal(absd, 0), jnp.ones_like(d), jnp.divide(d, jnp.where(
        jnp.equal(absd, 0), jnp.ones_like(absd), absd)))
    q = jnp.multiply(q, jnp.expand_dims(phase, -2))
    if n < m:
        q = jnp.swapaxes(q, -1, -2)
    return q.astype(dtype)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-random orthogonal matrices (unitary for complex `dtype`) of shape
    ``(*shape, n, m)`` (m defaults to n). If n != m the result is semi-orthogonal: its
    rows (n < m) or its columns (n > m) are orthonormal."""
    raw, _ = _to_raw("orthogonal", key)
    dt = dtypes.canonicalize_dtype(float if dtype is None else dtype)
    if not dtypes.is_inexact(dt):
        raise ValueError(f"dtype argument to `orthogonal` must be a float or complex dtype, "
                         f"got {dt}")
    n = _concrete_index(n, "n", "orthogonal")
    m = n if m is None else _concrete_index(m, "m", "orthogonal")
    shape = _canonicalize_shape(shape)
    return _orthogonal_jit(raw, shape=shape, dtype=dt, n=n, m=m)


# --- binomial ---------------------------------------------------------------------------------


def _stirling_tail_table():
    """delta(k) = log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2], k = 0..9."""
    half_log_2pi = 0.5 * math.log(2 * math.pi)
    return np.array([math.lgamma(k + 1) - ((k + 0.5) * math.log(k + 1) - (k + 1)
                                            + half_log_2pi) for k in range(10)])


_STIRLING_TAIL = _stirling_tail_table()


def _stirling_tail(k):
    """delta(k) (see `_stirling_tail_table`) for integer-valued float `k` >= 0: the table
    for k <= 9, the asymptotic series in 1 / (k + 1) above."""
    dt = k.dtype
    table = jnp.asarray(_STIRLING_TAIL.astype(dt))
    small = jnp.less_equal(k, 9)
    kc = jnp.clip(k, 0, 9)
    from_table = jnp.take(table, kc.astype(np.int32))
    k1 = jnp.add(jnp.maximum(k, 9), 1)
    inv2 = jnp.divide(1.0, jnp.multiply(k1, k1))
    series = jnp.divide(
        jnp.subtract(1.0 / 12, jnp.multiply(jnp.subtract(1.0 / 360, jnp.multiply(
            1.0 / 1260, inv2)), inv2)), k1)
    return jnp.where(small, from_table, series)


_MAX_ITERS = np.iinfo(np.int32).max


def _binomial_inversion(key, count, q, shape):
    """Binomial(count, q) by counting Geometric(q) waiting times (the trial index of each
    success) until they add up to more than `count`; fast when count * q is small."""
    dt = q.dtype
    log1mq = jnp.log1p(jnp.negative(q))

    def cond(c):
        i, _, total, _ = c
        return jnp.logical_and(jnp.any(jnp.less_equal(total, count)), i < _MAX_ITERS)

    def body(c):
        i, successes, total, k = c
        k, sub = _split_n(k)
        successes = jnp.where(jnp.less_equal(total, count), successes + 1, successes)
        u = _uniform(sub, 0.0, 1.0, shape, dt)
        wait = jnp.ceil(jnp.divide(jnp.log(u), log1mq))
        return i + 1, successes, jnp.add(total, wait), k

    zeros = jnp.zeros(shape, dt)
    init = (jnp.asarray(0, np.int32), zeros, zeros, key)
    return jnp.subtract(_lax.while_loop(cond, body, init)[1], 1)


def _binomial_btrs(key, count, q, shape):
    """Binomial(count, q) for count * q >= 10, q <= 1/2: Hormann's (1993) transformed
    rejection with squeeze ("BTRS"). The acceptance test compares log V with the exact
    log ratio f(k) / f(mode), written with Stirling's series so that it stays accurate in
    single precision for large counts."""
    dt = q.dtype
    sd = jnp.sqrt(count * q * (1 - q))
    b = 1.15 + 2.53 * sd
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = count * q + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * sd
    odds = q / (1 - q)
    mode = jnp.floor((count + 1) * q)
    log_mode_terms = ((mode + 0.5) * jnp.log((mode + 1) / (odds * (count - mode + 1)))
                      + _stirling_tail(mode) + _stirling_tail(count - mode))

    def cond(c_):
        i, _, done, _ = c_
        return jnp.logical_and(jnp.any(jnp.logical_not(done)), i < _MAX_ITERS)

    def body(c_):
        i, out, done, k_ = c_
        k_, ku, kv = _split_n(k_, 3)
        u = _uniform(ku, 0.0, 1.0, shape, dt) - 0.5
        v = _uniform(kv, 0.0, 1.0, shape, dt)
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + c)
        out_of_range = jnp.logical_or(k < 0, k > count)
        squeeze = jnp.logical_and(jnp.logical_and(us >= 0.07, v <= v_r),
                                  jnp.logical_not(out_of_range))
        # Clamp k into [0, count] for the log-ratio (out-of-range k is rejected anyway).
        kk = jnp.clip(k, 0, count)
        log_v = jnp.log(v * alpha / (a / (us * us) + b))
        log_ratio = (log_mode_terms
                     + (count + 1) * jnp.log((count - mode + 1) / (count - kk + 1))
                     + (kk + 0.5) * jnp.log(odds * (count - kk + 1) / (kk + 1))
                     - _stirling_tail(kk) - _stirling_tail(count - kk))
        accept = jnp.logical_or(squeeze, jnp.logical_and(jnp.logical_not(out_of_range),
                                                         log_v <= log_ratio))
        accept = jnp.logical_and(accept, jnp.logical_not(done))
        return i + 1, jnp.where(accept, k, out), jnp.logical_or(done, accept), k_

    init = (jnp.asarray(0, np.int32), jnp.full(shape, -1, dt), jnp.zeros(shape, bool), key)
    return _lax.while_loop(cond, body, init)[1]


def _binomial_impl(key, n, p, shape, dtype):
    p = jnp.asarray(p)
    if not dtypes.is_inexact(p.dtype):
        p = p.astype(dtypes.default_float())
    cdt = p.dtype if np.dtype(p.dtype).itemsize >= 4 else np.dtype(np.float32)
    p = jnp.broadcast_to(p.astype(cdt), shape)
    count = jnp.broadcast_to(jnp.asarray(n).astype(cdt), shape)
    flip = jnp.greater_equal(p, 0.5)
    q = jnp.where(flip, 1 - p, p)
    bad_count = jnp.logical_or(jnp.isnan(count), count < 0)
    bad_q = jnp.logical_or(jnp.isnan(q), q < 0)
    inf_count = jnp.logical_and(jnp.isinf(count), jnp.logical_not(bad_count))
    invalid = jnp.logical_or(bad_count, bad_q)
    q = jnp.where(bad_q, 0.01, q)
    count = jnp.floor(jnp.where(jnp.logical_or(bad_count, inf_count), 0, count))
    small = count * q <= 10
    inv = _binomial_inversion(key, jnp.where(small, count, 0), q, shape)
    rej = _binomial_btrs(key, jnp.where(small, 1e4, count), jnp.where(small, 0.5, q), shape)
    k = jnp.where(small, inv, rej)
    k = jnp.where(flip, count - k, k)
    k = jnp.where(inf_count, np.inf, k)
    k = jnp.where(invalid, np.nan, k)
    return k.astype(dtype)


@_sampler_jit(("shape", "dtype"))
def _binomial_jit(key, n, p, *, shape, dtype):
    return _binomial_impl(key, n, p, shape, dtype)


def _check_real(name, what, x):
    dt = jnp.asarray(x).dtype if not isinstance(x, (int, float)) else None
    if dt is not None and (dtypes.is_complex(dt) or dt == np.bool_):
        raise TypeError(f"olympus.random.{name}: `{what}` must be a real number array, "
                        f"got dtype {dt}")


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats (`dtype`, default float): the number of successes
    in `n` independent trials of success probability `p`. Shape default: `n` and `p`
    broadcast. Non-integer n is floored; NaN or negative n, and p outside [0, 1], give
    NaN; infinite n gives inf."""
    raw, _ = _to_raw("binomial", key)
    dt = _float_dtype("binomial", dtype)
    n, p = _as_operand(n), _as_operand(p)
    _check_real("binomial", "n", n)
    _check_real("binomial", "p", p)
    shape = _result_shape("binomial", shape, n, p)
    return _binomial_jit(raw, n, p, shape=shape, dtype=dt)


# --- multinomial ------------------------------------------------------------------------------


@_sampler_jit(("shape", "dtype", "unroll"))
def _multinomial_jit(key, n, p, *, shape, dtype, unroll):
    p = jnp.asarray(p)
    if not dtypes.is_inexact(p.dtype):
        p = p.astype(dtypes.default_float())
    cdt = p.dtype if np.dtype(p.dtype).itemsize >= 4 else np.dtype(np.float32)
    batch, k = shape[:-1], shape[-1]
    p = jnp.moveaxis(jnp.broadcast_to(p.astype(cdt), shape), -1, 0)
    count = jnp.broadcast_to(jnp.asarray(n).astype(cdt), batch)
    # Category i gets Binomial(remaining trials, p_i / (p_i + ... + p_k)).
    tail = jnp.flip(jnp.cumsum(jnp.flip(p, 0), axis=0), 0)
    ratios = jnp.clip(jnp.divide(p, jnp.where(tail == 0, 1, tail)), 0, 1)
    keys = jnp.stack(_split_n(key, k)) if k else jnp.zeros((0, 2), np.uint32)

    def step(remaining, xs):
        ratio, kk = xs
        draw = _binomial_impl(kk, remaining, ratio, batch, cdt)
        return remaining - draw, draw

    _, counts = _lax.scan(step, count, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts (as floats) of `n` trials over the outcomes along the last axis
    of `p` (probabilities, normalized if they do not sum to 1), by drawing one binomial per
    outcome conditioned on the previous ones. `shape` is the batch shape (the result has
    shape ``shape + p.shape[-1:]``, default ``p.shape``); `n` broadcasts against it."""
    raw, _ = _to_raw("multinomial", key)
    dt = _float_dtype("multinomial", dtype)
    n, p = _as_operand(n), _as_operand(p)
    _check_real("multinomial", "n", n)
    _check_real("multinomial", "p", p)
    pshape = _shape_of(p)
    if len(pshape) < 1:
        raise ValueError("olympus.random.multinomial: `p` must have at least one axis (the "
                         "outcomes), got a scalar")
    if shape is None:
        batch = tuple(np.broadcast_shapes(_shape_of(n), pshape[:-1]))
        if batch != pshape[:-1]:
            raise ValueError(f"olympus.random.multinomial: `n` of shape {_shape_of(n)} must "
                             f"broadcast to p.shape[:-1] = {pshape[:-1]}")
    else:
        batch = _canonicalize_shape(shape)
        _check_shape("multinomial", batch, _shape_of(n), pshape[:-1])
    if isinstance(unroll, bool):  # True: unroll the whole loop over outcomes
        unroll = max(pshape[-1], 1) if unroll else 1
    else:
        unroll = _concrete_index(unroll, "unroll", "multinomial")
    return _multinomial_jit(raw, n, p, shape=batch + pshape[-1:], dtype=dt, unroll=unroll)
