"""The factorizations and solvers of `olympus.scipy.linalg`: Cholesky, LU, QR (with column
pivoting), SVD, Hermitian eigendecomposition, Hessenberg and Schur forms, and the linear
solvers built on them.

LAPACK-backed `olympus.lax.linalg` primitives do the work where one exists; column-pivoted
QR, the Hessenberg reduction and the Schur form are written with lax control flow
(`_linalg_schur`). SciPy's ``overwrite_*`` and ``check_finite`` arguments are accepted and
ignored, as in JAX."""

from __future__ import annotations

import functools
import warnings

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from . import _linalg_schur
from ._util import is_complex, promote_dtypes_complex, promote_dtypes_inexact


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _H(x):
    return jnp.conj(_mT(x)) if is_complex(x) else _mT(x)


def _vector_or_matrix_signature(name, a, b, n_mats=1):
    """JAX's rule for the right-hand side: 1-D `b` is one vector; a batch of vectors (b
    one dimension short of `a`, same trailing size) is deprecated; otherwise matrices."""
    mats = "(n,n)," * n_mats
    if b.ndim == 1:
        return f"{mats}(n)->(n)"
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(
            f"olympus.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and "
            "in the future will be treated as a batched 2D solve. Use "
            f"{name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
            category=FutureWarning, stacklevel=4)
        return f"{mats}(n)->(n)"
    return f"{mats}(n,k)->(n,k)"


def _tri_solve(a, b, *, lower, transpose_a=False, conjugate_a=False, unit_diagonal=False):
    """Left-side triangular solve of one matrix with a vector or matrix right side."""
    vec = b.ndim == 1
    bm = b[:, None] if vec else b
    x = lax.linalg.triangular_solve(a, bm, left_side=True, lower=lower,
                                    transpose_a=transpose_a, conjugate_a=conjugate_a,
                                    unit_diagonal=unit_diagonal)
    return x[:, 0] if vec else x


# --- Cholesky -----------------------------------------------------------------------------


@functools.partial(olympus.jit, static_argnames=("lower",))
def _cholesky(a, lower):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    factor = lax.linalg.cholesky(a if lower else jnp.conj(_mT(a)), symmetrize_input=False)
    return factor if lower else jnp.conj(_mT(factor))


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor of a Hermitian positive-definite matrix: upper (``U^H U = a``)
    by default, lower with `lower`. NaNs where `a` is not positive definite."""
    del overwrite_a, check_finite
    return _cholesky(a, bool(lower))


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(c, lower)`` for `cho_solve`."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


@functools.partial(olympus.jit, static_argnames=("lower",))
def _cho_solve(c, b, lower):
    return _cho_solve_impl(c, b, lower)


def _cho_solve_impl(c, b, lower):
    c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
    sig = _vector_or_matrix_signature("cho_solve", c, b)

    def one(c, b):
        # c c^H x = b (lower) or c^H c x = b (upper): two triangular solves.
        y = _tri_solve(c, b, lower=lower, transpose_a=not lower, conjugate_a=not lower)
        return _tri_solve(c, y, lower=lower, transpose_a=lower, conjugate_a=lower)

    return jnp.vectorize(one, signature=sig)(c, b)


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a x = b`` from `cho_factor`'s ``(c, lower)``."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(c, b, bool(lower))


# --- SVD, determinant, inverse, eigh ---------------------------------------------------------


@functools.partial(olympus.jit, static_argnames=("full_matrices", "compute_uv"))
def _svd(a, full_matrices, compute_uv):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    return lax.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """``(u, s, vh)`` with ``a = u @ diag(s) @ vh``, or `s` alone."""
    del overwrite_a, check_finite, lapack_driver
    return _svd(a, bool(full_matrices), bool(compute_uv))


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """The determinant of a square matrix (SciPy's signature: `overwrite_a` and `check_finite`
    are accepted and ignored).
    """
    del overwrite_a, check_finite
    return jnp.linalg.det(a)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """The inverse of a square matrix (SciPy's signature; the overwrite and check flags are
    ignored).
    """
    del overwrite_a, check_finite
    return jnp.linalg.inv(a)


@functools.partial(olympus.jit, static_argnames=("lower", "eigvals_only"))
def _eigh(a, lower, eigvals_only):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    v, w = lax.linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,
         check_finite: bool = True):
    """``(w, v)``: the ascending eigenvalues and eigenvectors (columns) of Hermitian `a`
    (the standard problem only, as JAX)."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    return _eigh(a, bool(lower), bool(eigvals_only))


# --- LU -----------------------------------------------------------------------------------


def _pivots_to_permutation(pivots, m):
    """The row permutation the LAPACK swaps `pivots` (row i swapped with pivots[i]) make."""
    perm = jnp.broadcast_to(jnp.arange(m, dtype=np.int32), pivots.shape[:-1] + (m,))

    def swap(i, p):
        j = pivots[..., i]
        pi = p[..., i]
        pj = jnp.take_along_axis(p, j[..., None], axis=-1)[..., 0]
        cols = jnp.arange(m)
        p = jnp.where(cols == i, pj[..., None], p)
        return jnp.where(cols == j[..., None], pi[..., None], p)

    k = pivots.shape[-1]
    return lax.fori_loop(0, k, swap, perm) if k else perm


@olympus.jit
def _lu_factor(a):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    lu, pivots, _ = lax.linalg.lu(a)
    return lu, pivots


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)``: the packed LU factors and LAPACK's (0-based) row-swap pivots."""
    del overwrite_a, check_finite
    return _lu_factor(a)


@functools.partial(olympus.jit, static_argnames=("trans",))
def _lu_solve(lu, pivots, b, trans):
    lu, b = promote_dtypes_inexact(jnp.asarray(lu), jnp.asarray(b))
    m = lu.shape[-2]
    perm = _pivots_to_permutation(jnp.asarray(pivots), m)
    sig = _vector_or_matrix_signature("lu_solve", lu, b)
    sig = sig.replace("(n,n),", "(n,n),(n),")

    def one(lu, perm, b):
        if trans == 0:  # P^T L U x = b  with a[perm] = L U
            y = _tri_solve(lu, b[perm], lower=True, unit_diagonal=True)
            return _tri_solve(lu, y, lower=False)
        conj = trans == 2
        y = _tri_solve(lu, b, lower=False, transpose_a=True, conjugate_a=conj)
        y = _tri_solve(lu, y, lower=True, transpose_a=True, conjugate_a=conj,
                       unit_diagonal=True)
        inv = jnp.zeros_like(perm).at[perm].set(jnp.arange(perm.shape[0], dtype=perm.dtype))
        return y[inv]

    return jnp.vectorize(one, signature=sig)(lu, perm, b)


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """Solve ``a x = b`` (trans 0), ``a^T x = b`` (1) or ``a^H x = b`` (2) from
    `lu_factor`'s output."""
    del overwrite_b, check_finite
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    lu, pivots = lu_and_piv
    return _lu_solve(lu, pivots, b, trans)


@functools.partial(olympus.jit, static_argnames=("permute_l",))
def _lu(a, permute_l):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    lu, _, perm = lax.linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    dt = a.dtype
    p = (perm[..., None, :] == jnp.arange(m, dtype=perm.dtype)[:, None]).astype(dt)
    low = jnp.tril(lu, -1)[..., :, :k] + jnp.eye(m, k, dtype=dt)
    up = jnp.triu(lu)[..., :k, :]
    if permute_l:
        return jnp.matmul(p, low), up
    return p, low, up


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(p, l, u)`` with ``a = p @ l @ u`` (or ``(p @ l, u)`` with `permute_l`)."""
    del overwrite_a, check_finite
    return _lu(a, bool(permute_l))


# --- QR -----------------------------------------------------------------------------------


def _qr_pivoted_2d(a, full_matrices):
    """Householder QR with column pivoting (LAPACK's ``?geqp3`` choice: at each step the
    remaining column of largest norm): ``(q, r, p)`` with ``a[:, p] = q @ r``."""
    m, n = a.shape
    k = min(m, n)
    dt = a.dtype
    rows = jnp.arange(m)
    cols = jnp.arange(n)

    def step(j, carry):
        a, perm, q = carry
        norms = jnp.sqrt(jnp.sum(jnp.where(rows[:, None] >= j, jnp.abs(a) ** 2, 0.0), axis=0))
        norms = jnp.where(cols >= j, norms, -1.0)
        piv = jnp.argmax(norms)
        # Swap columns j and piv.
        cj, cp = a[:, j], a[:, piv]
        a = a.at[:, j].set(cp).at[:, piv].set(cj)
        pj, pp = perm[j], perm[piv]
        perm = perm.at[j].set(pp).at[piv].set(pj)
        col = a[:, j]
        below = rows > j
        beta, tau, vpart = _linalg_schur._larfg(col[j], jnp.where(below, col, 0))
        v = jnp.where(below, vpart, jnp.zeros_like(vpart))
        v = jnp.where(rows == j, jnp.ones_like(v), v)
        # A = H^H A on the columns after j; column j becomes (.., beta, 0, ..).
        vha = jnp.conj(v) @ a
        vha = jnp.where(cols > j, vha, jnp.zeros_like(vha))
        a = a - jnp.conj(tau) * v[:, None] * vha[None, :]
        a = a.at[:, j].set(jnp.where(rows == j, beta, jnp.where(below, 0, a[:, j])))
        q = q - tau * (q @ v)[:, None] * jnp.conj(v)[None, :]
        return a, perm, q

    perm0 = jnp.arange(n, dtype=np.int32)
    q0 = jnp.eye(m, dtype=dt)
    r, perm, q = lax.fori_loop(0, k, step, (a, perm0, q0)) if k else (a, perm0, q0)
    r = jnp.triu(r)
    if not full_matrices:
        q, r = q[:, :k], r[:k]
    return q, r, perm


@functools.partial(olympus.jit, static_argnames=("mode", "pivoting"))
def _qr(a, mode, pivoting):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    full = mode in ("full", "r")
    if pivoting:
        fn = functools.partial(_qr_pivoted_2d, full_matrices=full)
        q, r, p = jnp.vectorize(fn, signature="(m,n)->(m,a),(b,n),(n)")(a)
    else:
        q, r = lax.linalg.qr(a, full_matrices=full)
        p = None
    if mode == "r":
        return (r, p) if pivoting else (r,)
    return (q, r, p) if pivoting else (q, r)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """``(q, r)`` (mode 'full' or 'economic'), ``(r,)`` (mode 'r'), with the column
    permutation ``p`` appended when `pivoting` (``a[:, p] = q @ r``)."""
    del overwrite_a, lwork, check_finite
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    return _qr(a, mode, bool(pivoting))


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """``(Q @ c, r)`` (mode 'left') or ``(c @ Q, r)`` (mode 'right') with Q the (economic)
    Q factor of `a` (conjugated with `conjugate`), plus the pivots with `pivoting`."""
    del overwrite_a, overwrite_c
    a, c = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left":
        if c.shape[-2] != k:
            raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                             f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                             f"rows (expected {k}).")
    elif c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} "
                         f"columns (expected {m}).")
    return _qr_multiply(a, c, mode, bool(pivoting), bool(conjugate), onedim)


@functools.partial(olympus.jit, static_argnames=("mode", "pivoting", "conjugate", "onedim"))
def _qr_multiply(a, c, mode, pivoting, conjugate, onedim):
    out = _qr(a, "economic", pivoting)
    q, r = out[0], out[1]
    if conjugate:
        q = jnp.conj(q)
    cq = q @ c if mode == "left" else c @ q
    if onedim:
        cq = cq.ravel()
    return (cq, r, out[2]) if pivoting else (cq, r)


# --- solvers ------------------------------------------------------------------------------


@functools.partial(olympus.jit, static_argnames=("assume_a", "lower"))
def _solve(a, b, assume_a, lower):
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    factor = _cholesky(a, lower)
    if a.ndim == b.ndim + 1:  # (a batch of) vectors
        return _cho_solve_impl(factor, b[..., None], lower)[..., 0]
    return _cho_solve_impl(factor, b, lower)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """Solve ``a x = b``; ``assume_a='pos'`` uses the Cholesky factorization."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    return _solve(a, b, assume_a, bool(lower))


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


@functools.partial(olympus.jit, static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a, b, trans, lower, unit_diagonal):
    transpose_a, conjugate_a = _TRANS[trans]
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    sig = _vector_or_matrix_signature("solve_triangular", a, b)
    fn = functools.partial(_tri_solve, lower=lower, transpose_a=transpose_a,
                           conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return jnp.vectorize(fn, signature=sig)(a, b)


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solve ``op(a) x = b`` for triangular `a`, op given by `trans` (0/'N', 1/'T',
    2/'C')."""
    del overwrite_b, debug, check_finite
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    return _solve_triangular(a, b, trans, bool(lower), bool(unit_diagonal))


# --- Hessenberg and Schur forms -------------------------------------------------------------


def _check_float_or_complex(name, a):
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.complexfloating)):
        raise TypeError(f"{name} does not accept dtype {a.dtype} at position 0. Accepted "
                        "dtypes at position 0 are subtypes of floating, complexfloating.")


@functools.partial(olympus.jit, static_argnames=("calc_q",))
def _hessenberg(a, calc_q):
    if calc_q:
        return jnp.vectorize(lambda x: _linalg_schur.hessenberg_2d(x, True),
                             signature="(n,n)->(n,n),(n,n)")(a)
    return jnp.vectorize(lambda x: _linalg_schur.hessenberg_2d(x, False)[0],
                         signature="(n,n)->(n,n)")(a)


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True):
    """The upper Hessenberg form ``h = q^H a q`` (and `q` with `calc_q`), by Householder
    reflections with LAPACK's conventions."""
    del overwrite_a, check_finite
    a = jnp.asarray(a)
    _check_float_or_complex("hessenberg", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {a.shape}")
    if a.shape[-1] == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    return _hessenberg(a, bool(calc_q))


@olympus.jit
def _schur(a):
    return jnp.vectorize(_linalg_schur.schur_2d, signature="(n,n)->(n,n),(n,n)")(a)


def schur(a, output: str = "real"):
    """``(T, Z)`` with ``a = Z T Z^H``: T quasi-upper-triangular with standardized 2x2
    blocks for complex eigenvalue pairs ('real'), or upper triangular ('complex').

    The eigenvalues come out in the order LAPACK's ``?gees`` gives them; the Schur vectors
    agree with SciPy's up to a sign per vector (and the orientation of a 2x2 block), which
    rounding decides when the QR iteration has converged."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    a = jnp.asarray(a)
    if a.ndim < 2:
        raise TypeError(f"Input 0 to schur must have rank at least 2, but got shape={a.shape}")
    if output == "complex":
        (a,) = promote_dtypes_complex(a)
    _check_float_or_complex("schur", a)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {a.shape}.")
    return _schur(a)


def _eig2_far_first(blk, d):
    """The eigenvalues of a 2x2 complex block, the one farther from `d` first (the order
    LAPACK's QR iteration puts them in: the nearer one converges at the bottom)."""
    p, q, r, s = blk[0, 0], blk[0, 1], blk[1, 0], blk[1, 1]
    half_tr = (p + s) / 2
    disc = jnp.sqrt(((p - s) / 2) ** 2 + q * r)
    l1, l2 = half_tr + disc, half_tr - disc
    d1, d2 = jnp.abs(l1 - d), jnp.abs(l2 - d)
    tol = 64 * jnp.finfo(jnp.real(l1).dtype).eps * (d1 + d2)
    tie = jnp.abs(d1 - d2) <= tol
    first_1 = jnp.where(tie, jnp.imag(l1) >= jnp.imag(l2), d1 > d2)
    return jnp.where(first_1, l1, l2)


def _rsf2csf_2d(t, z):
    (t, z) = promote_dtypes_complex(t, z)
    n = t.shape[0]
    if n == 1:
        return t, z
    eps = float(np.finfo(np.float64 if t.dtype == np.complex128 else np.float32).eps)
    idx = jnp.arange(n)

    def step(i, tz):
        t, z = tz
        m = n - 1 - i  # n-1 down to 1
        sub = t[m, m - 1]
        need = jnp.abs(sub) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        blk = _linalg_schur._ds(t, (m - 1, m - 1), (2, 2))
        mu = _eig2_far_first(blk, t[m, m]) - t[m, m]
        rr = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(sub) ** 2).astype(t.dtype)
        rr = jnp.where(rr == 0, jnp.ones_like(rr), rr)
        c, s = mu / rr, sub / rr
        g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        rows = _linalg_schur._ds(t, (m - 1, 0), (2, n))
        new_rows = jnp.where(idx >= m - 1, g @ rows, rows)
        t2 = _linalg_schur._dus(t, new_rows, (m - 1, 0))
        cols = _linalg_schur._ds(t2, (0, m - 1), (n, 2))
        gh = jnp.conj(g.T)
        new_cols = jnp.where((idx < m + 1)[:, None], cols @ gh, cols)
        t2 = _linalg_schur._dus(t2, new_cols, (0, m - 1))
        zc = _linalg_schur._ds(z, (0, m - 1), (n, 2))
        z2 = _linalg_schur._dus(z, zc @ gh, (0, m - 1))
        t = jnp.where(need, t2, t)
        z = jnp.where(need, z2, z)
        return t.at[m, m - 1].set(0), z

    return lax.fori_loop(0, n - 1, step, (t, z))


@olympus.jit
def _rsf2csf(t, z):
    return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


def rsf2csf(T, Z, check_finite: bool = True):
    """Convert a real Schur form ``(T, Z)`` to the complex one, by rotations that zero the
    subdiagonal of each 2x2 block (SciPy's algorithm)."""
    del check_finite
    t, z = jnp.asarray(T), jnp.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    return _rsf2csf(t, z)
