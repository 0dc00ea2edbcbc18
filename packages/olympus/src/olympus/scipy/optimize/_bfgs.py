"""BFGS and limited-memory BFGS for `minimize`, each one `lax.while_loop`."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from ._line_search import line_search


class BFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimize `fun` from `x0` by BFGS with a strong-Wolfe line search; the inverse
    Hessian estimate starts at the identity."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    d = x0.shape[0]
    f_0, g_0 = olympus.value_and_grad(fun)(x0)
    state = BFGSResults(
        converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1, ngev=1,
        nhev=0, x_k=x0, f_k=f_0, g_k=g_0, H_k=jnp.eye(d, dtype=x0.dtype),
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2, status=0, line_search_status=0)

    def cond(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def body(s):
        p_k = -(s.H_k @ s.g_k)
        ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                         gfk=s.g_k, maxiter=line_search_maxiter)
        s_k = ls.a_k * p_k
        x_next = s.x_k + s_k
        y_k = ls.g_k - s.g_k
        rho = jnp.reciprocal(jnp.dot(y_k, s_k))
        # H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T
        w = jnp.eye(d, dtype=rho.dtype) - rho * s_k[:, None] * y_k[None, :]
        h_next = w @ s.H_k @ w.T + rho * s_k[:, None] * s_k[None, :]
        h_next = jnp.where(jnp.isfinite(rho), h_next, s.H_k)
        return s._replace(
            nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, failed=ls.failed,
            line_search_status=ls.status, converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol,
            k=s.k + 1, x_k=x_next, f_k=ls.f_k, g_k=ls.g_k, H_k=h_next, old_old_fval=s.f_k)

    s = lax.while_loop(cond, body, state)
    status = jnp.where(s.converged, 0, jnp.where(
        s.k == maxiter, 1, jnp.where(s.failed, 2 + s.line_search_status, -1)))
    return s._replace(status=status)


class LBFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    x_k: object
    f_k: object
    g_k: object
    s_history: object
    y_history: object
    rho_history: object
    gamma: object
    status: object
    ls_status: object


def _two_loop(s):
    """The L-BFGS search direction -H g from the stored (s, y) pairs (oldest first, the
    most recent at the end)."""
    dtype = s.rho_history.dtype
    size = s.rho_history.shape[0]
    used = jnp.where(s.k < size, s.k, size)
    q = -jnp.conj(s.g_k)

    def back(j, carry):
        q, alphas = carry
        i = size - 1 - j
        a_i = s.rho_history[i] * jnp.real(jnp.dot(jnp.conj(s.s_history[i]), q)).astype(dtype)
        return q - a_i * jnp.conj(s.y_history[i]), alphas.at[i].set(a_i)

    q, alphas = lax.fori_loop(0, used, back, (q, jnp.zeros_like(s.rho_history)))
    q = s.gamma * q

    def forward(j, q):
        i = size - used + j
        b_i = s.rho_history[i] * jnp.real(jnp.dot(s.y_history[i], q)).astype(dtype)
        return q + (alphas[i] - b_i) * s.s_history[i]

    return lax.fori_loop(0, used, forward, q)


def _push(history, new):
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


def minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
                   gtol=1e-05, maxfun=None, maxgrad=None, maxls=20):
    """Minimize `fun` by limited-memory BFGS (`maxcor` stored pairs)."""
    d = len(x0)
    dtype = x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad
    f_0, g_0 = olympus.value_and_grad(fun)(x0)
    state = LBFGSResults(
        converged=jnp.asarray(False), failed=jnp.asarray(False), k=0, nfev=1, ngev=1, x_k=x0,
        f_k=f_0, g_k=g_0, s_history=jnp.zeros((maxcor, d), dtype),
        y_history=jnp.zeros((maxcor, d), dtype), rho_history=jnp.zeros((maxcor,), dtype),
        gamma=1.0, status=0, ls_status=0)

    def body(s):
        p_k = _two_loop(s)
        ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        s_k = jnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
        y_k = ls.g_k - s.g_k
        rho_inv = jnp.real(jnp.dot(y_k, s_k))
        rho = jnp.reciprocal(rho_inv).astype(y_k.dtype)
        gamma = rho_inv / jnp.real(jnp.dot(jnp.conj(y_k), y_k))
        status = jnp.asarray(0)
        status = jnp.where(s.f_k - ls.f_k < ftol, 4, status)
        status = jnp.where(s.ngev >= maxgrad, 3, status)
        status = jnp.where(s.nfev >= maxfun, 2, status)
        status = jnp.where(s.k >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = jnp.linalg.norm(ls.g_k, ord=norm) < gtol
        return s._replace(
            converged=converged, failed=(status > 0) & ~converged, k=s.k + 1,
            nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=(s.x_k + s_k).astype(dtype),
            f_k=ls.f_k.astype(s.f_k.dtype), g_k=ls.g_k.astype(s.g_k.dtype),
            s_history=_push(s.s_history, s_k), y_history=_push(s.y_history, y_k),
            rho_history=_push(s.rho_history, rho), gamma=gamma.astype(s.g_k.dtype),
            status=jnp.where(converged, 0, status), ls_status=ls.status)

    return lax.while_loop(lambda s: ~s.converged & ~s.failed, body, state)
