"""QDWH: the polar decomposition ``x = u h`` by QR-based dynamically weighted Halley
iterations (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31(5), 2010), as
``jax.lax.linalg.qdwh``; `olympus.scipy.linalg.polar` (``method='qdwh'``) uses it too.

Each iteration maps the singular values of the scaled iterate towards 1 by a rational
function whose weights (a, b, c) are fixed in advance from a lower bound on the smallest
singular value (so the weights are Python constants): while c is large the step goes
through a QR factorization of ``[sqrt(c) u; I]`` (stable when ``I + c u^H u`` is
ill-conditioned), afterwards through a Cholesky factorization of ``I + c u^H u``. Then
plain Halley steps (a, b, c) = (3, 1, 3) run until the iterate stops moving, and one
Newton-Schulz step polishes u.
"""

from __future__ import annotations

import olympus.numpy as jnp
from olympus_ir import dtypes
from olympus_trace.lax_ops import elementwise as _elementwise
from olympus_trace.lax_ops import linalg_lapack as _linalg

from .control_flow import while_loop

__all__ = ["qdwh"]

#: Above this c the QR form of the step is used (as JAX does).
_CHOLESKY_CUTOFF = 100


def _weights(l0: float, max_iterations: int) -> list[tuple[float, float, float]]:
    """The (a, b, c) of each weighted iteration, from the lower bound `l0` on the smallest
    singular value of the scaled matrix, until the bound reaches 1 (to tolerance)."""
    out: list[tuple[float, float, float]] = []
    l, tol_l = l0, 5 * l0
    while l + tol_l < 1 and len(out) < max_iterations:
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1 + dd) ** 0.5
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        out.append((a, b, c))
    return out


def _mask(x, m: int, n: int):
    """`x` with the entries outside its leading m x n block zeroed (a padded matrix)."""
    rows = jnp.arange(x.shape[0])[:, None] < m
    cols = jnp.arange(x.shape[1])[None, :] < n
    return jnp.where(rows & cols, x, jnp.zeros_like(x))


def _step(u, a: float, b: float, c: float, m: int, n: int):
    """``u <- (b/c) u + (a - b/c) u (I + c u^H u)^-1`` for the leading m x n block of u."""
    big_n = u.shape[1]
    eye = jnp.eye(big_n, dtype=u.dtype)
    e = b / c
    if c > _CHOLESKY_CUTOFF:
        sqrt_c = c ** 0.5  # Python floats: weakly typed, u keeps its dtype
        y = jnp.concatenate([sqrt_c * u[:m], eye, jnp.zeros_like(u[m:])])
        q, _ = _linalg.qr(y, full_matrices=False)
        q1 = _mask(q[:u.shape[0]], m, n)
        q2 = _mask(q[m:m + big_n], n, n)
        return e * u + ((a - e) / sqrt_c) * (q1 @ jnp.conj(q2.T))
    gram = c * (jnp.conj(u.T) @ u) + eye
    # The padded corner gets the identity so the factorization exists.
    inside = (jnp.arange(big_n)[:, None] < n) & (jnp.arange(big_n)[None, :] < n)
    gram = jnp.where(inside, gram, eye)
    chol = _linalg.cholesky(gram, symmetrize_input=False)
    w = _linalg.triangular_solve(chol, jnp.conj(u.T), left_side=True, lower=True)
    w = _linalg.triangular_solve(chol, w, left_side=True, lower=True, transpose_a=True,
                                 conjugate_a=True)
    return e * u + (a - e) * jnp.conj(w.T)


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
    """The polar decomposition ``x = u h`` of a full-rank M x N matrix (M >= N) by QDWH
    iterations: ``(u, h, num_iters, is_converged)``, u with orthonormal columns, h Hermitian
    positive semi-definite, the number of iterations run and whether the iterate settled
    (``|u_k - u_{k-1}| < (5 eps)^(1/3)``) within `max_iterations` (default 10).
    `dynamic_shape` ``(m, n)`` is the true size of an `x` zero-padded to M x N.
    `is_hermitian` is unused, as in JAX."""
    del is_hermitian
    x = jnp.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"qdwh: expected a matrix, got shape {x.shape}.")
    if not dtypes.is_inexact(x.dtype):
        raise TypeError(f"qdwh: expected a floating or complex matrix, got {x.dtype}.")
    big_m, big_n = x.shape
    if big_m < big_n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    m, n = (big_m, big_n) if dynamic_shape is None else map(int, dynamic_shape)
    if dynamic_shape is not None:
        x = _mask(x, m, n)
    eps = float(dtypes.finfo(jnp.real(x).dtype).eps) if eps is None else float(eps)

    one_norm = jnp.max(jnp.sum(jnp.abs(x), axis=0))
    inf_norm = jnp.max(jnp.sum(jnp.abs(x), axis=1))
    scale = jnp.where(one_norm == 0, jnp.ones_like(one_norm),
                      _elementwise.rsqrt(one_norm) * _elementwise.rsqrt(inf_norm))
    u = x * scale.astype(x.dtype)
    tol = (5 * eps) ** (1 / 3)
    weights = _weights(eps, max_iterations)
    moving = jnp.asarray(True)
    for a, b, c in weights:
        nxt = _step(u, a, b, c, m, n)
        if c <= _CHOLESKY_CUTOFF:  # JAX tests convergence in the Cholesky phase only
            moving = jnp.linalg.norm(nxt - u) > tol
        u = nxt

    def cond(state):
        k, _, moving = state
        return moving & (k < max_iterations)

    def body(state):
        k, u, _ = state
        nxt = _step(u, 3.0, 1.0, 3.0, m, n)
        return k + 1, nxt, jnp.linalg.norm(nxt - u) > tol

    num_iters, u, moving = while_loop(
        cond, body, (len(weights), u, moving))  # a weakly typed count, as in JAX
    u = 1.5 * u - 0.5 * u @ (jnp.conj(u.T) @ u)  # one Newton-Schulz polish
    h = jnp.conj(u.T) @ x
    h = (h + jnp.conj(h.T)) / 2
    return u, h, num_iters, jnp.logical_not(moving)
