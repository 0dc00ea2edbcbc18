"""Matrix functions of `olympus.scipy.linalg`: the exponential (Pade approximation with
scaling and squaring, Higham 2005) and its Frechet derivative, general functions through
the Schur form (Parlett's recurrence), the principal square root, the polar decomposition
(QDWH iterations or the SVD) and the Sylvester equation."""

from __future__ import annotations

import functools

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.lax._qdwh import qdwh

from ._linalg_decompositions import rsf2csf, schur, solve_triangular
from ._util import is_complex, promote_dtypes_inexact

# --- expm ---------------------------------------------------------------------------------

# Numerator coefficients of the [m/m] Pade approximants of exp (the denominator's are the
# same with alternating signs), m = 3, 5, 7, 9, 13.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
# The 1-norm bounds (theta_m) below which the degree-m approximant is accurate to unit
# roundoff, for double and single precision (Higham 2005, table 2.3 and its analogue).
_THETA64 = (0.01495585217958292, 0.253939833006323, 0.9504178996162932, 2.097847961257068,
            5.371920351148152)
_THETA32 = (0.4258730016922831, 1.880152677804762, 3.92572478313866)


def _pade_uv(a, m):
    """U (odd part) and V (even part) of the degree-m approximant: exp(a) ~ (V+U)/(V-U)."""
    b = _PADE[m]
    n = a.shape[-1]
    eye = jnp.eye(n, dtype=a.dtype)
    a2 = a @ a
    if m == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
                 + b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * eye
        return u, v
    powers = [eye, a2]
    while len(powers) <= m // 2:
        powers.append(powers[-1] @ a2)
    u = a @ sum(b[2 * k + 1] * powers[k] for k in range(m // 2 + 1))
    v = sum(b[2 * k] * powers[k] for k in range(m // 2 + 1))
    return u, v


def _expm_2d(a, upper_triangular, max_squarings):
    if a.dtype in (np.float64, np.complex128):
        theta, degrees, maxnorm = _THETA64[:4], (3, 5, 7, 9, 13), _THETA64[4]
    else:
        theta, degrees, maxnorm = _THETA32[:2], (3, 5, 7), _THETA32[2]
    norm1 = jnp.max(jnp.sum(jnp.abs(a), axis=0))
    squarings = jnp.maximum(0.0, jnp.floor(jnp.log2(norm1 / maxnorm)))
    scaled = a / (2.0 ** squarings).astype(a.dtype)
    idx = jnp.digitize(norm1, jnp.asarray(theta, norm1.dtype))
    u, v = lax.switch(idx, [functools.partial(_pade_uv, m=m) for m in degrees], scaled)
    p, q = v + u, v - u
    r = solve_triangular(q, p) if upper_triangular else jnp.linalg.solve(q, p)

    def square(i, r):
        return lax.cond(i < squarings, lambda x: x @ x, lambda x: x, r)

    r = lax.fori_loop(0, max_squarings, square, r)
    return jnp.where(squarings > max_squarings, jnp.full_like(r, np.nan), r)


@functools.partial(olympus.jit, static_argnames=("upper_triangular", "max_squarings"))
def _expm(a, upper_triangular, max_squarings):
    fn = functools.partial(_expm_2d, upper_triangular=upper_triangular,
                           max_squarings=max_squarings)
    return jnp.vectorize(fn, signature="(n,n)->(n,n)")(a)


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """The matrix exponential, by the Pade approximant of the degree the 1-norm calls for
    after scaling by a power of two, then squaring (NaN if more than `max_squarings`
    squarings would be needed). Differentiable."""
    (a,) = promote_dtypes_inexact(jnp.asarray(A))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape!r}.")
    if a.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    return _expm(a, bool(upper_triangular), int(max_squarings))


def expm_frechet(A, E, *, method: str | None = None, compute_expm: bool = True):
    """The Frechet derivative of `expm` at `A` in direction `E` (with ``expm(A)`` first
    when `compute_expm`), by forward-mode differentiation."""
    del method
    a, e = jnp.asarray(A), jnp.asarray(E)
    if a.ndim < 2 or a.shape[-2] != a.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={a.shape} "
                         f"E.shape={e.shape}")
    a, e = promote_dtypes_inexact(a, e)
    value, deriv = olympus.jvp(expm, (a,), (e,))
    return (value, deriv) if compute_expm else deriv


# --- functions through the Schur form -----------------------------------------------------


def _parlett(f, t):
    """Parlett's recurrence for F = f(T), T upper triangular with f(diag T) on F's
    diagonal: superdiagonal by superdiagonal. Returns F and the smallest |t_jj - t_ii|."""
    n = t.shape[0]
    idx = jnp.arange(n)
    minden = jnp.abs(t[0, 0])

    def inner(i, carry):
        p, f, minden = carry
        j = i + p
        s = t[i, j] * (f[j, j] - f[i, i])
        between = (idx > i) & (idx < j)
        s = s + jnp.sum(jnp.where(between, t[i] * f[:, j] - f[i] * t[:, j], 0))
        den = t[j, j] - t[i, i]
        s = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
        return p, f.at[i, j].set(s), jnp.minimum(minden, jnp.abs(den))

    def outer(p, carry):
        f, minden = carry
        _, f, minden = lax.fori_loop(0, n - p, inner, (p, f, minden))
        return f, minden

    return lax.fori_loop(1, n, outer, (f, minden))


def funm(A, func, disp: bool = True):
    """``func`` applied to a square matrix through its complex Schur form (Parlett's
    recurrence; the result is complex). With ``disp=False`` also returns an error
    estimate."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    # The Schur form and its conversion run as their own (cached) executables, shared
    # with sqrtm and solve_sylvester.
    t, z = rsf2csf(*schur(a))
    fdiag = jnp.asarray(func(jnp.diag(t))).astype(t.dtype)
    f, err = _funm_finish(t, z, fdiag)
    return f if disp else (f, err)


@olympus.jit
def _funm_finish(t, z, fdiag):
    f, minden = _parlett(jnp.diag(fdiag), t)
    f = z @ f @ jnp.conj(z.T)
    tol = float(np.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf, jnp.minimum(1, jnp.maximum(
        tol, (tol / minden) * jnp.linalg.norm(jnp.triu(t, 1), 1))))
    return f, err


def _sqrtm_triu(t):
    """The upper triangular square root of upper triangular `t`, column by column."""
    n = t.shape[0]
    diag = jnp.sqrt(jnp.diag(t))
    u = jnp.diag(diag)
    idx = jnp.arange(n)

    def col(j, u):
        def row(k, u):
            i = j - 1 - k
            between = (idx > i) & (idx < j)
            s = jnp.sum(jnp.where(between, u[i] * u[:, j], 0))
            num = t[i, j] - s
            val = jnp.where(t[i, j] == s, 0, num / (diag[i] + diag[j]))
            return u.at[i, j].set(val)

        return lax.fori_loop(0, j, row, u)

    return lax.fori_loop(0, n, col, u)


@olympus.jit
def _sqrtm_finish(t, z):
    return z @ _sqrtm_triu(t) @ jnp.conj(z.T)


def sqrtm(A, blocksize: int = 1):
    """The principal square root of a square matrix (complex), through its complex Schur
    form."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"sqrtm: expected a square matrix, got shape {a.shape}.")
    return _sqrtm_finish(*schur(a, output="complex"))


# --- polar decomposition ------------------------------------------------------------------


def _qdwh(x, eps):
    u, h, _, _ = qdwh(x, eps=eps)
    return u, h


def _polar_2d(a, side, method, eps):
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            return _qdwh(a, eps)
        if m < n and side == "left":
            u, h = _qdwh(jnp.conj(a.T), eps)
            return jnp.conj(u.T), jnp.conj(h.T)
        raise NotImplementedError(
            "method='qdwh' only supports mxn matrices where m < n where side='right' and "
            f"m >= n side='left', got {a.shape} with side={side!r}")
    if method == "svd":
        u, s, vh = lax.linalg.svd(a, full_matrices=False)
        s = s.astype(u.dtype)
        if side == "right":
            return u @ vh, (jnp.conj(vh.T) * s[None, :]) @ vh
        return u @ vh, (u * s[None, :]) @ jnp.conj(u.T)
    raise ValueError(f"Unknown polar decomposition method {method}.")


@functools.partial(olympus.jit, static_argnames=("side", "method", "eps"))
def _polar(a, side, method, eps):
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    fn = functools.partial(_polar_2d, side=side, method=method, eps=eps)
    return jnp.vectorize(fn, signature=sig)(a)


def polar(a, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None):
    """``(u, p)`` with ``a = u p`` ('right', p Hermitian positive semidefinite, n x n) or
    ``a = p u`` ('left', p m x m), u with orthonormal columns (rows)."""
    del max_iterations
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    (arr,) = promote_dtypes_inexact(arr)
    return _polar(arr, side, method, eps)


# --- Sylvester equation -------------------------------------------------------------------


def _sylvester_triangular(r, s, f):
    """Y with R Y + Y S = F, R upper and S lower triangular: row by row from the bottom,
    each row a triangular solve with (r_ii I + S)."""
    m, n = f.shape
    eye = jnp.eye(n, dtype=f.dtype)
    idx = jnp.arange(m)

    def row(k, y):
        i = m - 1 - k
        below = jnp.where((idx > i)[:, None], y, 0)
        g = f[i] - r[i] @ below
        yi = lax.linalg.triangular_solve(r[i, i] * eye + s, g[None, :], left_side=False,
                                         lower=True)[0]
        return y.at[i].set(yi)

    return lax.fori_loop(0, m, row, jnp.zeros_like(f))


def _sylvester_from_schur(r, u, s, v, c):
    f = jnp.conj(u.T) @ c.astype(r.dtype) @ v
    y = _sylvester_triangular(r, jnp.conj(s.T), f)
    return u @ y @ jnp.conj(v.T)


def _sylvester_by_eigen(a, b, c):
    ra, ua = jnp.linalg.eig(a)
    rb, ub = jnp.linalg.eig(b)
    f = jnp.linalg.solve(ua, c.astype(ra.dtype) @ ub)
    y = f / (ra[:, None] + rb[None, :])
    return ua @ y @ jnp.linalg.inv(ub)


@functools.partial(olympus.jit, static_argnames=("method", "tol"))
def _sylvester_finish(a, b, c, schur_a, schur_b, method, tol):
    if method == "schur":
        x = jnp.vectorize(_sylvester_from_schur,
                          signature="(m,m),(m,m),(n,n),(n,n),(m,n)->(m,n)")(*schur_a, *schur_b, c)
    else:
        x = jnp.vectorize(_sylvester_by_eigen, signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
    if not is_complex(c):
        x = jnp.real(x)
    ea = jnp.linalg.eigvals(a)
    eb = jnp.linalg.eigvals(b)
    singular = jnp.any(jnp.abs(ea[..., :, None] + eb[..., None, :]) < tol, axis=(-2, -1))
    return jnp.where(singular[..., None, None], jnp.full_like(x, np.nan), x)


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """X with ``A X + X B = C``; NaN when A and -B share an eigenvalue (within `tol`)."""
    a, b, c = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         f'"schur" or "eigen".')
    if method == "schur":
        schur_a = schur(a, output="complex")
        schur_b = schur(jnp.conj(jnp.swapaxes(b, -1, -2)), output="complex")
    else:
        schur_a = schur_b = ()
    return _sylvester_finish(a, b, c, schur_a, schur_b, method, float(tol))
