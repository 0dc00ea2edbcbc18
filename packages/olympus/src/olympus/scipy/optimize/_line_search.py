"""The strong-Wolfe line search used by `minimize`: bracketing then zooming with cubic,
quadratic or bisection steps (Nocedal and Wright, algorithms 3.5 and 3.6), written with
`lax.while_loop` so that it runs inside jit."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from .._util import promote_dtypes_inexact


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = jnp.stack([jnp.stack([dc ** 2, -db ** 2]), jnp.stack([-dc ** 3, db ** 3])])
    d2 = jnp.stack([fb - fa - fpa * db, fc - fa - fpa * dc])
    coef_a, coef_b = (d1 @ d2) / denom
    return a + (-coef_b + jnp.sqrt(coef_b * coef_b - 3.0 * coef_a * fpa)) / (3.0 * coef_a)


def _quad_min(a, fa, fpa, b, fb):
    """The minimizer of the quadratic through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2.0 * curv)


def _select(cond, new, old):
    return {k: jnp.where(cond, new[k], old[k]) for k in new}


class _Zoom(NamedTuple):
    done: object
    failed: object
    j: object
    a_lo: object
    phi_lo: object
    dphi_lo: object
    a_hi: object
    phi_hi: object
    dphi_hi: object
    a_rec: object
    phi_rec: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object
    nfev: object
    ngev: object


def _zoom(phi_dphi, armijo_fails, curvature_holds, a_lo, phi_lo, dphi_lo, a_hi, phi_hi,
          dphi_hi, g_0, skip):
    """Shrink [a_lo, a_hi] (a_lo the best point so far) until a point satisfies the strong
    Wolfe conditions, or the interval collapses (then `failed`)."""
    state = _Zoom(False, False, 0, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi,
                  (a_lo + a_hi) / 2.0, (phi_lo + phi_hi) / 2.0, 1.0, phi_lo, dphi_lo, g_0, 0, 0)

    def body(s):
        width = s.a_hi - s.a_lo
        lo_end = jnp.minimum(s.a_hi, s.a_lo)
        hi_end = jnp.maximum(s.a_hi, s.a_lo)
        small = 1e-5 if np.finfo(jnp.asarray(width).dtype).bits < 64 else 1e-10
        s = s._replace(failed=s.failed | (width <= small))
        cubic = _cubic_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cubic = (s.j > 0) & (cubic > lo_end + 0.2 * width) & (cubic < hi_end - 0.2 * width)
        quad = _quad_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = ~use_cubic & (quad > lo_end + 0.1 * width) & (quad < hi_end - 0.1 * width)
        a_j = jnp.where(use_cubic, cubic, jnp.where(use_quad, quad, (s.a_lo + s.a_hi) / 2.0))
        phi_j, dphi_j, g_j = phi_dphi(a_j)
        phi_j = phi_j.astype(s.phi_lo.dtype)
        dphi_j = dphi_j.astype(s.dphi_lo.dtype)
        g_j = g_j.astype(s.g_star.dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        to_hi = armijo_fails(a_j, phi_j) | (phi_j >= s.phi_lo)
        found = curvature_holds(dphi_j) & ~to_hi
        swap = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & ~to_hi & ~found
        to_lo = ~to_hi & ~found
        d = s._asdict()
        d.update(_select(to_hi, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=d["a_hi"],
                                     phi_rec=d["phi_hi"]), d))
        d.update(_select(found, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j,
                                     g_star=g_j), d))
        d["done"] = found | d["done"]
        d.update(_select(swap, dict(a_hi=d["a_lo"], phi_hi=d["phi_lo"], dphi_hi=d["dphi_lo"],
                                    a_rec=d["a_hi"], phi_rec=d["phi_hi"]), d))
        d.update(_select(to_lo & ~swap, dict(a_rec=d["a_lo"], phi_rec=d["phi_lo"]), d))
        d.update(_select(to_lo, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), d))
        d["j"] = d["j"] + 1
        d["failed"] = d["failed"] | (d["j"] >= 30)
        return _Zoom(**d)

    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, state)


class LineSearchResults(NamedTuple):
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


class _Search(NamedTuple):
    done: object
    failed: object
    i: object
    a_prev: object
    phi_prev: object
    dphi_prev: object
    nfev: object
    ngev: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """A step length along `pk` from `xk` satisfying the strong Wolfe conditions."""
    xk, pk = promote_dtypes_inexact(xk, pk)

    def phi_dphi(t):
        t = jnp.asarray(t, dtype=pk.dtype)
        phi, g = olympus.value_and_grad(f)(xk + t * pk)
        return phi, jnp.real(jnp.dot(g, pk)), g

    fresh = old_fval is None or gfk is None
    if fresh:
        phi_0, dphi_0, gfk = phi_dphi(0.0)
    else:
        phi_0 = old_fval
        dphi_0 = jnp.real(jnp.dot(gfk, pk))
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = jnp.where(candidate > 1, 1.0, candidate)
    else:
        start = 1.0

    def armijo_fails(a, phi):
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_holds(dphi):
        return jnp.abs(dphi) <= -c2 * dphi_0

    state = _Search(jnp.asarray(False), jnp.asarray(False), 1, 0.0, phi_0, dphi_0,
                    1 if fresh else 0, 1 if fresh else 0, 0.0, phi_0, dphi_0, gfk)

    def body(s):
        a_i = jnp.where(s.i == 1, start, s.a_prev * 2.0)
        phi_i, dphi_i, g_i = phi_dphi(a_i)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        zoom_low = armijo_fails(a_i, phi_i) | ((phi_i >= s.phi_prev) & (s.i > 1))
        accept = curvature_holds(dphi_i) & ~zoom_low
        zoom_high = (dphi_i >= 0.0) & ~zoom_low & ~accept
        z1 = _zoom(phi_dphi, armijo_fails, curvature_holds, s.a_prev, s.phi_prev, s.dphi_prev,
                   a_i, phi_i, dphi_i, gfk, ~zoom_low)
        z2 = _zoom(phi_dphi, armijo_fails, curvature_holds, a_i, phi_i, dphi_i, s.a_prev,
                   s.phi_prev, s.dphi_prev, gfk, ~zoom_high)
        d = s._asdict()
        d["nfev"] = d["nfev"] + z1.nfev + z2.nfev
        d["ngev"] = d["ngev"] + z1.ngev + z2.ngev
        keys = ("a_star", "phi_star", "dphi_star", "g_star")
        d.update(_select(zoom_low, {k: getattr(z1, k) for k in keys}, d))
        d["done"] = zoom_low | d["done"]
        d["failed"] = (zoom_low & z1.failed) | d["failed"]
        d.update(_select(accept, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i,
                                      g_star=g_i), d))
        d["done"] = accept | d["done"]
        d.update(_select(zoom_high, {k: getattr(z2, k) for k in keys}, d))
        d["done"] = zoom_high | d["done"]
        d["failed"] = (zoom_high & z2.failed) | d["failed"]
        d.update(i=d["i"] + 1, a_prev=a_i, phi_prev=phi_i, dphi_prev=dphi_i)
        return _Search(**d)

    s = lax.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, state)
    status = jnp.where(s.failed, 1, jnp.where(s.i > maxiter, 3, 0))
    a_k = jnp.asarray(s.a_star)
    if np.finfo(a_k.dtype).bits != 64:
        # Keep single-precision steps away from zero.
        a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=s.failed | ~s.done, nit=s.i - 1, nfev=s.nfev, ngev=s.ngev,
                             k=s.i, a_k=a_k, f_k=s.phi_star, g_k=s.g_star, status=status)
