"""Bessel functions of the first kind (`bessel_jn`), spherical harmonics (`sph_harm_y`) and
the associated Legendre functions (`lpmn`, `lpmn_values`) for `olympus.scipy.special`, all
by recurrences."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from ._util import concrete_int, is_complex, promote_dtypes_inexact


def bessel_jn(z, *, v: int, n_iter: int = 50):
    """J_0(z) ... J_v(z), stacked on a new leading axis, by Miller's backward recurrence
    J_{k-1} = (2k/z) J_k - J_{k+1} started `n_iter` orders up and normalized with
    J_0 + 2 sum_k J_2k = 1 (accurate for |z| well below `n_iter`)."""
    (z,) = promote_dtypes_inexact(jnp.asarray(z))
    if is_complex(z):
        raise ValueError("complex input not supported.")
    v = concrete_int(v, "Argument v of bessel_jn.")
    n_iter = concrete_int(n_iter, "Argument n_iter of bessel_jn.")
    if v < 0:
        raise ValueError(f"bessel_jn: v must be a non-negative integer, got {v}.")
    return _bessel_jn(z, v, n_iter)


@functools.partial(olympus.jit, static_argnums=(1, 2))
def _bessel_jn(z, v, n_iter):
    top = max(n_iter, v + 1)
    zero = z == 0
    zs = jnp.where(zero, jnp.ones_like(z), z)
    big = 1e10 if z.dtype == np.float32 else 1e100
    keep = jnp.zeros((v + 1,) + z.shape, z.dtype)

    def body(i, carry):
        f_next, f, norm, keep = carry
        k = top - i  # f holds the value at order k
        f_prev = (2.0 * k) * f / zs - f_next  # order k - 1
        norm = norm + jnp.where((k - 1) % 2 == 0, 2 * f_prev, jnp.zeros_like(f_prev))
        slot = jnp.clip(k - 1, 0, v)
        keep = jnp.where((k - 1 <= v), lax.dynamic_update_slice(
            keep, f_prev[None], (slot,) + (0,) * z.ndim), keep)
        # Rescale everything together before it overflows.
        scale = jnp.where(jnp.abs(f_prev) > big, 1 / big, 1.0).astype(z.dtype)
        return f * scale, f_prev * scale, norm * scale, keep * scale

    init = (jnp.zeros_like(z), jnp.full_like(z, 1.0), jnp.zeros_like(z), keep)
    _, f0, norm, keep = lax.fori_loop(0, top, body, init)
    # `norm` counted 2 J_0 once; the sum rule is J_0 + 2 sum_{k>=1} J_2k.
    norm = norm - f0
    out = keep / norm
    first = (jnp.arange(v + 1) == 0).reshape((v + 1,) + (1,) * z.ndim)
    return jnp.where(zero, jnp.where(first, 1.0, 0.0).astype(z.dtype), out)


def sph_harm_y(n, m, theta, phi, diff_n: int | None = None, n_max: int | None = None):
    """The spherical harmonic Y_n^m(theta, phi) (theta the polar angle, phi the azimuth;
    SciPy's `sph_harm_y` convention, with the Condon-Shortley phase), from the normalized
    associated Legendre recurrence in the degree up to `n_max` (by default max(n), which
    then must be concrete)."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to olympus.scipy.special.sph_harm_y is not supported.")
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n)))
        except Exception as e:
            raise TypeError(
                "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
                "specified to use `sph_harm` within JAX transformations.") from e
    n_max = concrete_int(n_max, "The `n_max` argument of sph_harm_y")
    return _sph_harm_y(n, m, theta, phi, n_max)


@functools.partial(olympus.jit, static_argnums=(4,))
def _sph_harm_y(n, m, theta, phi, n_max):
    theta, phi = promote_dtypes_inexact(theta, phi)
    n = jnp.asarray(n)
    m = jnp.asarray(m)
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    dt = theta.dtype
    am = jnp.abs(m).astype(dt)
    nf = n.astype(dt)
    x = jnp.cos(theta)
    s = jnp.sin(theta)
    # P_mm = (-1)^m sqrt((2m+1)/(4 pi) prod_{k<=m} (2k-1)/(2k)) sin^m(theta), built up to
    # |m| by a masked loop (m differs per element).
    pmm = jnp.full_like(x, 1 / math.sqrt(4 * math.pi))

    def diag(k, p):
        kf = jnp.asarray(k, dt)
        step = -jnp.sqrt((2 * kf + 1) / (2 * kf)) * s
        return jnp.where(kf <= am, p * step, p)

    pmm = lax.fori_loop(1, n_max + 1, diag, pmm)
    # Upward in the degree: P_{l,m} = a (x P_{l-1,m} - b P_{l-2,m}).
    p_prev = jnp.zeros_like(x)
    p_cur = pmm

    def up(l, carry):
        p_prev, p_cur = carry
        lf = jnp.asarray(l, dt)
        live = lf > am
        denom = jnp.where(live, lf * lf - am * am, jnp.ones_like(am))
        a = jnp.sqrt((4 * lf * lf - 1) / denom)
        b = jnp.sqrt(jnp.maximum((lf - 1) ** 2 - am * am, 0.0) / (4 * (lf - 1) ** 2 - 1))
        nxt = a * (x * p_cur - b * p_prev)
        grow = live & (lf <= nf)
        return jnp.where(grow, p_cur, p_prev), jnp.where(grow, nxt, p_cur)

    _, plm = lax.fori_loop(1, n_max + 1, up, (p_prev, p_cur))
    plm = jnp.where((am > nf) | (n < 0), jnp.zeros_like(plm), plm)
    angle = am * phi
    y = lax.complex(plm * jnp.cos(angle), plm * jnp.sin(angle))
    odd = jnp.fmod(am, 2) == 1
    neg_m = jnp.where(odd, -jnp.conj(y), jnp.conj(y))
    return jnp.where(m < 0, neg_m, y)


def _check_legendre_args(m, n, z):
    z = jnp.asarray(z)
    if z.dtype not in (np.float32, np.float64):
        raise TypeError(
            f"z.dtype={z.dtype} is not supported, see docstring for supported types.")
    if z.ndim != 1:
        raise ValueError("z must be a 1D array.")
    m = concrete_int(m, "Argument m of lpmn.")
    n = concrete_int(n, "Argument n of lpmn.")
    if m != n:
        raise NotImplementedError("Computations for m!=n are not yet supported.")
    if n < 0:
        raise ValueError(f"lpmn: n must be a non-negative integer, got {n}.")
    return n, z


def _deprecated(name):
    warnings.warn(f"olympus.scipy.special.{name} is deprecated; no replacement is planned.",
                  DeprecationWarning, stacklevel=3)


def lpmn(m: int, n: int, z):
    """The associated Legendre functions P_l^k(z) of the first kind (with the
    Condon-Shortley phase, unnormalized) and their derivatives in z, for orders k and
    degrees l up to `n` (= `m`): two arrays of shape (m + 1, n + 1, len(z)), indexed
    [order, degree, point]. Deprecated, as in JAX."""
    _deprecated("lpmn")
    l_max, z = _check_legendre_args(m, n, z)
    return _lpmn(z, l_max)


def lpmn_values(m: int, n: int, z, is_normalized: bool):
    """The values of `lpmn`, or with `is_normalized` the functions scaled by
    sqrt((2l + 1) / (4 pi) (l - k)! / (l + k)!) (orthonormal spherical harmonics).
    Deprecated, as in JAX."""
    _deprecated("lpmn_values")
    l_max, z = _check_legendre_args(m, n, z)
    return _legendre_table(z, l_max, bool(is_normalized))


@functools.partial(olympus.jit, static_argnums=(1, 2))
def _legendre_table(x, l_max, normalized):
    """P[k, l, :] for 0 <= k, l <= l_max by the upward recurrence in the degree, every
    order at once; the entries with l < k are zero."""
    dt = x.dtype
    k = jnp.arange(l_max + 1, dtype=dt)[:, None]
    s = jnp.sqrt(1 - x * x)
    # The diagonal P_k^k: a running product over the order.
    kk = jnp.arange(1, l_max + 1, dtype=dt)[:, None]
    if normalized:
        first, factors = 0.5 / math.sqrt(math.pi), -jnp.sqrt(1 + 0.5 / kk) * s
    else:
        first, factors = 1.0, (1 - 2 * kk) * s
    diag = jnp.concatenate([jnp.ones((1,) + x.shape, dt),
                            jnp.cumprod(factors, axis=0)], axis=0) * first
    cols = [jnp.where(k == 0, diag, 0.0)]  # degree 0
    prev2 = jnp.zeros_like(diag)
    for deg in range(1, l_max + 1):
        lf = float(deg)
        below = k < deg  # orders for which the recurrence applies
        if normalized:
            a = jnp.sqrt((4 * lf * lf - 1) / jnp.where(below, lf * lf - k * k, 1.0))
            b = jnp.sqrt(jnp.maximum((lf - 1) ** 2 - k * k, 0.0) / (4 * (lf - 1) ** 2 - 1))
            rec = a * (x * cols[-1] - b * prev2)
        else:
            rec = ((2 * lf - 1) * x * cols[-1] - (lf + k - 1) * prev2) / jnp.where(
                below, lf - k, 1.0)
        col = jnp.where(below, rec, jnp.where(k == deg, diag, 0.0))
        prev2 = cols[-1]
        cols.append(col)
    return jnp.stack(cols, axis=1).astype(dt)


@functools.partial(olympus.jit, static_argnums=(1,))
def _lpmn(x, l_max):
    p = _legendre_table(x, l_max, False)
    dt = x.dtype
    k = jnp.arange(l_max + 1, dtype=dt)[:, None, None]
    deg = jnp.arange(l_max + 1, dtype=dt)[None, :, None]
    p_lower = jnp.concatenate([jnp.zeros_like(p[:, :1]), p[:, :-1]], axis=1)  # P_{l-1}^k
    # (x^2 - 1) dP_l^k/dx = l x P_l^k - (l + k) P_{l-1}^k inside (-1, 1) ...
    edge = jnp.abs(x) == 1
    safe = jnp.where(edge, 0.5, x * x - 1)
    inner = (deg * x * p - (deg + k) * p_lower) / safe
    # ... and its limits at x = +-1: l(l+1)/2 for k = 0, infinite for k = 1,
    # -(l-1)l(l+1)(l+2)/4 for k = 2 (times the parity x^(l+1) or x^l), zero beyond.
    parity = jnp.where((deg % 2 == 1) & (x < 0), -1.0, 1.0)  # x^l at x = +-1
    limit = jnp.where(k == 0, jnp.sign(x) * parity * deg * (deg + 1) / 2,
                      jnp.where(k == 1, parity * np.inf,
                                jnp.where(k == 2, -jnp.sign(x) * parity * (deg - 1) * deg
                                          * (deg + 1) * (deg + 2) / 4, 0.0)))
    d = jnp.where(edge, limit, inner) + 0.0  # (no -0.0 from the sign factors)
    return p, jnp.where(k <= deg, d, 0.0).astype(dt)
