"""`olympus.scipy.sparse.linalg`: Krylov solvers for ``A x = b`` with `A` given as a matrix
or as a function computing ``A @ x`` (JAX's `cg`, `bicgstab` and `gmres`).

`b` (and `x0`) may be any pytree of arrays; the solvers work on its leaves raveled into one
vector, so `A` and the preconditioner `M` are called on pytrees of `b`'s structure. The
iterations are `lax.while_loop`s: the solvers run under `jit` and `vmap` and differentiate
in forward mode (through the iterations; JAX differentiates implicitly, the same
derivative once the solves converge)."""

from __future__ import annotations

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.flatten_util import ravel_pytree
from olympus.tree_util import tree_leaves, tree_map, tree_structure

from ..linalg import solve_triangular

__all__ = ["bicgstab", "cg", "gmres"]


def _operator(f):
    """(callable, matrix): `f` as a function of x, or as a square matrix applied by `dot`."""
    if callable(f):
        return f, None
    if isinstance(f, (np.ndarray, olympus.Array)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(
                f"linear operator must be a square matrix, but has shape: {f.shape}")
        return None, f
    if hasattr(f, "__matmul__"):
        shape = getattr(f, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(
                f"linear operator must be a square matrix, but has shape: {shape}")
        return (lambda x: f @ x), None
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _solve(solver, A, b, x0, M, tol, atol, maxiter, options=(), check_shapes=True):
    """Check the arguments, then run `solver` on the raveled problem, compiled once per
    operator function, tree structure, shapes and options."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.asarray, x0)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if check_shapes:
        shapes_x0 = [np.shape(leaf) for leaf in tree_leaves(x0)]
        shapes_b = [np.shape(leaf) for leaf in tree_leaves(b)]
        if shapes_x0 != shapes_b:
            raise ValueError(
                f"arrays in x0 and b must have matching shapes: {shapes_x0} vs {shapes_b}")
    if maxiter is None:
        maxiter = 10 * sum(int(np.size(leaf)) for leaf in tree_leaves(b))  # SciPy's default
    a_fn, a_mat = _operator(A)
    m_fn, m_mat = (None, None) if M is None else _operator(M)
    static = dict(solver=solver, a_fn=a_fn, m_fn=m_fn, options=options)
    try:
        hash((a_fn, m_fn))
    except TypeError:  # an unhashable callable: run op by op
        return _run(a_mat, m_mat, b, x0, tol, atol, maxiter, **static)
    return _run_jit(a_mat, m_mat, b, x0, tol, atol, maxiter, **static)


def _run(a_mat, m_mat, b, x0, tol, atol, maxiter, *, solver, a_fn, m_fn, options):
    b_flat, unravel = ravel_pytree(b)
    x0_flat = ravel_pytree(x0)[0].astype(b_flat.dtype)

    def flat(fn, mat):
        if fn is None and mat is None:
            return None
        op = fn if fn is not None else (lambda x: jnp.dot(mat, x))
        return lambda v: ravel_pytree(op(unravel(v)))[0].astype(b_flat.dtype)

    x = solver(flat(a_fn, a_mat), flat(m_fn, m_mat), b_flat, x0_flat, tol, atol, maxiter,
               *options)
    return unravel(x), None


_run_jit = olympus.jit(_run, static_argnames=("solver", "a_fn", "m_fn", "options"))


def _identity(v):
    return v


def _real_dot(x, y):
    """Re(x^H y): the real inner product (what CG needs for Hermitian forms)."""
    out = jnp.sum(jnp.real(x) * jnp.real(y))
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        out = out + jnp.sum(jnp.imag(x) * jnp.imag(y))
    return out


def _tolerance2(b, tol, atol):
    """SciPy's (non-legacy) stopping rule ||r|| <= max(tol ||b||, atol), squared."""
    return jnp.maximum(jnp.square(tol) * _real_dot(b, b), jnp.square(atol))


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` for Hermitian positive definite `A` by (preconditioned)
    conjugate gradients; stops when ``norm(residual) <= max(tol * norm(b), atol)`` or
    after `maxiter` steps. Returns ``(x, None)`` (no convergence information, as JAX)."""
    return _solve(_cg, A, b, x0, M, tol, atol, maxiter)


def _cg(A, M, b, x0, tol, atol, maxiter):
    identity = M is None
    M = M or _identity
    limit = _tolerance2(b, tol, atol)
    r0 = b - A(x0)
    z0 = M(r0)
    dtype = z0.dtype
    gamma0 = _real_dot(r0, z0).astype(dtype)

    def cond(state):
        _, r, gamma, _, k = state
        rs = jnp.real(gamma) if identity else _real_dot(r, r)
        return (rs > limit) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = gamma / _real_dot(p, ap).astype(dtype)
        x = x + alpha * p
        r = r - alpha * ap
        z = M(r)
        gamma_next = _real_dot(r, z).astype(dtype)
        p = z + (gamma_next / gamma) * p
        return x, r, gamma_next, p, k + 1

    x, *_ = lax.while_loop(cond, body, (x0, r0, gamma0, z0, 0))
    return x


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` for general `A` by the (preconditioned) biconjugate gradient
    stabilized method; stops on SciPy's tolerance, after `maxiter` steps, or on a
    breakdown (a zero inner product). Returns ``(x, None)``."""
    return _solve(_bicgstab, A, b, x0, M, tol, atol, maxiter)


def _bicgstab(A, M, b, x0, tol, atol, maxiter):
    M = M or _identity
    limit = _tolerance2(b, tol, atol)
    r0 = b - A(x0)
    one = jnp.ones((), b.dtype)

    def cond(state):
        _, r, *_, k = state
        return (_real_dot(r, r) > limit) & (k < maxiter) & (k >= 0)

    def body(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = jnp.vdot(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = r + beta * (p - omega * q)
        phat = M(p)
        q = A(phat)
        alpha = rho_next / jnp.vdot(rhat, q)
        s = r - alpha * q
        done = _real_dot(s, s) < limit  # converged half-way through the step
        shat = M(s)
        t = A(shat)
        omega = jnp.vdot(t, s) / jnp.vdot(t, t)
        x = jnp.where(done, x + alpha * phat, x + alpha * phat + omega * shat)
        r = jnp.where(done, s, s - omega * t)
        # A negative count records a breakdown and stops the loop.
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    x, *_ = lax.while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, 0))
    return x


def _normalize(v):
    """v / ||v|| and ||v||, or zeros and 0 when the norm is below the dtype's epsilon."""
    norm = jnp.sqrt(_real_dot(v, v))
    big = norm > jnp.finfo(norm.dtype).eps
    unit = jnp.where(big, v / jnp.where(big, norm, 1).astype(v.dtype), jnp.zeros_like(v))
    return unit, jnp.where(big, norm, 0)


def _arnoldi_step(A, M, V, k):
    """The next Krylov vector M A V[:, k], orthogonalized against the columns of V by
    classical Gram-Schmidt done twice; returns it normalized, its overlaps (with its norm
    at position k + 1) and whether the space stopped growing."""
    v = M(A(V[:, k]))
    h = jnp.zeros(V.shape[1], V.dtype)
    for _ in range(2):
        overlap = jnp.conj(V).T @ v
        v = v - V @ overlap
        h = h + overlap
    unit, norm = _normalize(v)
    h = h.at[k + 1].set(norm.astype(h.dtype))
    return V.at[:, k + 1].set(unit), h, norm == 0


def _givens(a, b):
    """c, s with [[c, s], [-conj(s), c]] @ [a, b] = [r, 0] (c real)."""
    abs_a, abs_b = jnp.abs(a), jnp.abs(b)
    scale = jnp.maximum(jnp.hypot(abs_a, abs_b), jnp.finfo(abs_a.dtype).tiny)
    c = jnp.where(abs_b == 0, 1.0, abs_a / scale).astype(abs_a.dtype)
    phase = jnp.where(abs_a == 0, jnp.ones_like(a), a / jnp.where(abs_a == 0, 1, abs_a))
    s = jnp.where(abs_b == 0, jnp.zeros_like(b), phase * jnp.conj(b) / scale)
    return c.astype(a.dtype), s


def _restart_incremental(A, M, b, x, unit, beta, ptol, restart):
    """One GMRES cycle with the Hessenberg matrix reduced by Givens rotations as it
    grows, which gives the residual norm at each step and stops early at `ptol`."""
    n = b.shape[0]
    V = jnp.zeros((n, restart + 1), b.dtype).at[:, 0].set(unit)
    R = jnp.zeros((restart + 1, restart), b.dtype)
    g = jnp.zeros(restart + 1, b.dtype).at[0].set(beta.astype(b.dtype))
    cs = jnp.ones(restart, b.dtype)
    sn = jnp.zeros(restart, b.dtype)
    rows = jnp.arange(restart + 1)

    def cond(state):
        k, err, breakdown, *_ = state
        return (k < restart) & (err > ptol) & ~breakdown

    def body(state):
        k, _, _, V, R, g, cs, sn = state
        V, h, breakdown = _arnoldi_step(A, M, V, k)

        def rotate(i, h):
            hi, hj = h[i], h[i + 1]
            live = i < k
            new_i = cs[i] * hi + sn[i] * hj
            new_j = -jnp.conj(sn[i]) * hi + cs[i] * hj
            return h.at[i].set(jnp.where(live, new_i, hi)).at[i + 1].set(
                jnp.where(live, new_j, hj))

        h = lax.fori_loop(0, restart, rotate, h)
        c, s = _givens(h[k], h[k + 1])
        h = h.at[k].set(c * h[k] + s * h[k + 1]).at[k + 1].set(0)
        gk = g[k]
        g = g.at[k].set(c * gk).at[k + 1].set(-jnp.conj(s) * gk)
        R = R.at[:, k].set(jnp.where(rows <= k, h, 0))
        return (k + 1, jnp.abs(g[k + 1]), breakdown, V, R, g, cs.at[k].set(c),
                sn.at[k].set(s))

    init = (0, beta, False, V, R, g, cs, sn)
    k, _, _, V, R, g, _, _ = lax.while_loop(cond, body, init)
    cols = jnp.arange(restart)
    unused = cols >= k
    square = R[:restart] + jnp.diag(unused.astype(b.dtype))
    y = solve_triangular(square, jnp.where(unused, 0, g[:restart]), lower=False)
    return x + V[:, :restart] @ y


def _restart_batched(A, M, b, x, unit, beta, ptol, restart):
    """One GMRES cycle that builds the whole Krylov basis, then solves the small
    least-squares problem once (by its normal equations)."""
    del ptol
    n = b.shape[0]
    V = jnp.zeros((n, restart + 1), b.dtype).at[:, 0].set(unit)
    H = jnp.zeros((restart + 1, restart), b.dtype)

    def cond(state):
        k, breakdown, _, _ = state
        return (k < restart) & ~breakdown

    def body(state):
        k, _, V, H = state
        V, h, breakdown = _arnoldi_step(A, M, V, k)
        return k + 1, breakdown, V, H.at[:, k].set(h)

    k, _, V, H = lax.while_loop(cond, body, (0, False, V, H))
    unused = (jnp.arange(restart) >= k).astype(b.dtype)
    g = jnp.zeros(restart + 1, b.dtype).at[0].set(beta.astype(b.dtype))
    gram = jnp.conj(H).T @ H + jnp.diag(unused)
    y = jnp.linalg.solve(gram, jnp.conj(H).T @ g)
    return x + V[:, :restart] @ y


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve ``A x = b`` by restarted GMRES: each cycle projects onto a Krylov space of
    dimension `restart` (at most the problem size), at most `maxiter` cycles, until the
    preconditioned residual ``norm(M(b - A x))`` is below ``max(tol * norm(b), atol)``.
    ``solve_method='incremental'`` reduces the Hessenberg matrix by Givens rotations as
    it grows (and stops a cycle early); 'batched' solves it once per cycle. Returns
    ``(x, None)``."""
    if solve_method == "incremental":
        cycle = _restart_incremental
    elif solve_method == "batched":
        cycle = _restart_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")
    size = sum(int(np.size(leaf)) for leaf in tree_leaves(b))
    return _solve(_gmres, A, b, x0, M, tol, atol, maxiter,
                  (cycle, min(int(restart), size)), check_shapes=False)


def _gmres(A, M, b, x0, tol, atol, maxiter, cycle, restart):
    M = M or _identity
    b_norm = jnp.sqrt(_real_dot(b, b))
    limit = jnp.maximum(tol * b_norm, atol)
    ptol = jnp.sqrt(_real_dot(M(b), M(b))) * jnp.minimum(1.0, limit / b_norm)
    unit, beta = _normalize(M(b - A(x0)))

    def cond(state):
        _, k, _, beta = state
        return (k < maxiter) & (beta > limit)

    def body(state):
        x, k, unit, beta = state
        x = cycle(A, M, b, x, unit, beta, ptol, restart)
        unit, beta = _normalize(M(b - A(x)))
        return x, k + 1, unit, beta

    x, *_ = lax.while_loop(cond, body, (x0, 0, unit, beta))
    return x
