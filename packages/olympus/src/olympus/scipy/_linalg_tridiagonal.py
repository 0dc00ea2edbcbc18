"""`eigh_tridiagonal`: eigenvalues of a symmetric (Hermitian) tridiagonal matrix by
bisection on Sturm sequence counts, eigenvectors from the dense Hermitian solver."""

from __future__ import annotations

import functools

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax


def _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """For each x: the number of eigenvalues below x, from the signs of the pivots of the
    LDL^T factorization of T - x I (a pivot at or below `pivmin` counts as negative and
    is pushed away from zero)."""
    q = alpha[0] - x
    count = (q < 0).astype(np.int32)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(carry, ab):
        q, count = carry
        a, b2 = ab
        q = a - b2 / q - x
        neg = q <= pivmin
        return (jnp.where(neg, jnp.minimum(q, -pivmin), q), count + neg.astype(np.int32)), None

    (_, count), _ = lax.scan(step, (q, count), (alpha[1:], beta_sq))
    return count


@functools.partial(olympus.jit, static_argnames=("eigvals_only", "select", "select_range"))
def _eigh_tridiagonal(alpha, beta, tol, eigvals_only, select, select_range):
    n = alpha.shape[0]
    if np.issubdtype(alpha.dtype, np.complexfloating):
        diag = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        diag = alpha
        beta_abs = jnp.abs(beta)
        beta_sq = beta * beta
    rdt = diag.dtype
    finfo = np.finfo(rdt)
    # Gershgorin bounds on the spectrum.
    off = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    est_max = jnp.max(diag + off)
    est_min = jnp.min(diag - off)
    t_norm = jnp.maximum(jnp.abs(est_min), jnp.abs(est_max))
    safemin = max(1 / float(finfo.max), (1 + float(finfo.eps)) * float(finfo.tiny))
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    perturb = (float(finfo.eps) * beta_abs[0]) ** 2
    abs_tol = float(finfo.eps) * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    if select == "a":
        targets = jnp.arange(n, dtype=np.int32)
    else:
        targets = jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    slack = n * 2.1 * float(finfo.eps) * t_norm
    lower = jnp.broadcast_to(est_min - slack - 2 * 2.1 * pivmin, targets.shape)
    upper = jnp.broadcast_to(est_max + slack + 2.1 * pivmin, targets.shape)
    max_it = finfo.nmant + 1

    def cond(state):
        i, lower, upper = state
        return (i < max_it) & (jnp.max(upper - lower) > abs_tol)

    def body(state):
        i, lower, upper = state
        mid = (lower + upper) / 2
        counts = _sturm_counts(diag, beta_sq, pivmin, perturb, mid)
        return (i + 1, jnp.where(counts <= targets, mid, lower),
                jnp.where(counts > targets, mid, upper))

    _, lower, upper = lax.while_loop(cond, body, (0, lower, upper))
    w = (lower + upper) / 2
    if eigvals_only:
        return w
    dense = (jnp.diag(alpha) + jnp.diag(jnp.conj(beta), -1) + jnp.diag(beta, 1))
    v, _ = lax.linalg.eigh(dense, lower=True)
    v = v[:, targets]
    return w, v


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol: float | None = None, key=None):
    """The eigenvalues (ascending) of the Hermitian tridiagonal matrix with diagonal `d`
    and superdiagonal `e` (all, or those with indices in `select_range` for
    ``select='i'``), and unless `eigvals_only` the eigenvectors as columns."""
    del key
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    supported = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        "olympus.scipy.linalg.eigh_tridiagonal, got "
                        f"{alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        w = jnp.real(alpha)
        return w if eigvals_only else (w, jnp.eye(n, dtype=alpha.dtype))
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        select_range = (int(select_range[0]), int(select_range[1]))
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    elif select != "a":
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    else:
        select_range = None
    return _eigh_tridiagonal(alpha, beta, tol, bool(eigvals_only), select, select_range)
