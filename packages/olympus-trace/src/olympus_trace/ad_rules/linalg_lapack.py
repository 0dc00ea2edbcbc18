"""JVP (and, for the linear ones, transpose) rules for the matrix decompositions, the FFT
and top_k. Matrix rules work on batches (leading dimensions).

* cholesky: ``L' = L phi(L^-1 S' L^-H)`` where phi takes the lower triangle and halves the
  diagonal (Murray, arXiv:1602.07527). The primitive reads only the lower triangle of its
  operand, so the tangent used is ``S' = tril(T) + tril(T, -1)^H``.
* triangular_solve: linear in b (transpose: the solve with ``op(a)`` transposed); for a,
  ``x' = -op(a)^-1 op(a') x`` (left side) or ``-x op(a') op(a)^-1`` (right side), with
  `a'` masked to the triangle the primitive reads.
* lu: ``L' = L tril(M, -1)``, ``U' = triu(M) U`` with ``M = L^-1 P A' U^-1`` (de Hoog,
  Anderssen, Lukas); pivots and permutation get zero (float0) tangents.
* qr (m >= n, Q not completed): the rule of Walter and Lehmann as in JAX.
* eigh: non-degenerate perturbation theory: ``w' = Re diag(V^H A' V)``,
  ``V' = V (F o V^H A' V)`` with ``F_ij = 1 / (w_j - w_i)`` off the diagonal.
* svd (U, V not completed unless square): the standard formulas (Townsend), as in JAX.
* eig (right eigenvectors only): with ``M = V^-1 A' V`` (an LU solve),
  ``w' = diag(M)`` and ``V' = V (F o M)`` with ``F_ij = 1 / (w_j - w_i)`` off the
  diagonal, then the component along each ``v_j`` chosen so the columns keep unit norm
  (``Re(v_j^H v_j') = 0``; the phase of each column is left as it is). The derivative of
  the left eigenvectors is not implemented.
* fft is linear: the tangent is the FFT of the tangent; the transposes are FFT -> FFT,
  IFFT -> IFFT, RFFT -> real part of the FFT of the zero-extended cotangent, IRFFT ->
  RFFT of the cotangent scaled by ``(1, 2, ..., 2, (1)) / prod(fft_lengths)``.
* top_k: the tangents of the selected entries (a gather, so reverse mode works).
"""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.prims.linalg_lapack import FftType

from .. import lax_ops as lax
from ..ad import Zero, jvp_rules, tangent_aval, transpose_rules
from ..core import bind, get_aval
from ._util import take_along_axis

# --- batched matrix helpers ----------------------------------------------------------------------


def _shape(x):
    return get_aval(x).shape


def _dt(x):
    return get_aval(x).dtype


def mm(a, b):
    """Batched matmul ``a @ b`` (same leading batch dimensions)."""
    na = len(_shape(a))
    nb = na - 2
    batch = tuple(range(nb))
    return lax.dot_general(a, b, (((na - 1,), (nb,)), (batch, batch)))


def T(x):
    nd = len(_shape(x))
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def H(x):
    x = T(x)
    return lax.conj(x) if dtypes.is_complex(_dt(x)) else x


def tri_mask(shape, k, lower):
    nd = len(shape)
    rows = lax.broadcasted_iota(np.int32, shape, nd - 2)
    cols = lax.broadcasted_iota(np.int32, shape, nd - 1)
    diff = lax.sub(cols, rows)
    return lax.le(diff, np.int32(k)) if lower else lax.ge(diff, np.int32(k))


def zeros(shape, dt):
    return lax.broadcast_in_dim(np.zeros((), dt), tuple(shape), ())


def tril(x, k=0):
    return lax.select(tri_mask(_shape(x), k, True), x, zeros(_shape(x), _dt(x)))


def triu(x, k=0):
    return lax.select(tri_mask(_shape(x), k, False), x, zeros(_shape(x), _dt(x)))


def eye_like(shape, dt):
    """Identity matrices of `shape` (``[..., m, n]``)."""
    nd = len(shape)
    eq = lax.eq(lax.broadcasted_iota(np.int32, shape, nd - 2),
                lax.broadcasted_iota(np.int32, shape, nd - 1))
    return lax.convert_element_type(eq, dt)


def diag_of(x):
    """The diagonal of square matrices ``[..., n, n]`` -> ``[..., n]``."""
    shape = _shape(x)
    return lax.reduce_sum(lax.select(tri_mask(shape, 0, True),
                                     lax.select(tri_mask(shape, 0, False), x,
                                                zeros(shape, _dt(x))),
                                     zeros(shape, _dt(x))), (len(shape) - 1,))


def real_part(x):
    return lax.real(x) if dtypes.is_complex(_dt(x)) else x


def tsolve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
           unit_diagonal=False):
    return bind(P.triangular_solve_p, a, b, left_side=bool(left_side), lower=bool(lower),
                transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                unit_diagonal=bool(unit_diagonal))


def _hermitian_from_triangle(t, lower):
    """The Hermitian matrix whose `lower` (or upper) triangle is that of `t`."""
    if lower:
        return lax.add(tril(t), H(tril(t, -1)))
    return lax.add(triu(t), H(triu(t, 1)))


def _zero_like_out(x):
    return Zero(tangent_aval(get_aval(x)))


# --- cholesky --------------------------------------------------------------------------------


def _cholesky_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    l = bind(P.cholesky_p, x)
    if isinstance(t, Zero):
        return l, _zero_like_out(l)
    s = _hermitian_from_triangle(t, lower=True)
    tmp = tsolve(l, s, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    inner = tsolve(l, tmp, left_side=True, lower=True)
    shape = _shape(inner)
    halve = lax.add(np.ones((), _dt(inner)), eye_like(shape, _dt(inner)))
    phi = lax.div(tril(inner), halve)
    return l, mm(l, phi)


jvp_rules[P.cholesky_p] = _cholesky_jvp


# --- triangular_solve ------------------------------------------------------------------------


def _op(x, transpose_a, conjugate_a):
    if transpose_a:
        x = T(x)
    if conjugate_a and dtypes.is_complex(_dt(x)):
        x = lax.conj(x)
    return x


def _triangular_solve_jvp(primals, tangents, *, left_side=False, lower=False,
                          transpose_a=False, conjugate_a=False, unit_diagonal=False):
    a, b = primals
    ta, tb = tangents
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
              conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    x = tsolve(a, b, **kw)
    out_t = None
    if not isinstance(tb, Zero):
        out_t = tsolve(a, tb, **kw)
    if not isinstance(ta, Zero):
        k = -1 if unit_diagonal else 0
        ta_m = tril(ta, k) if lower else triu(ta, -k)
        opd = _op(ta_m, transpose_a, conjugate_a)
        rhs = mm(opd, x) if left_side else mm(x, opd)
        d = lax.neg(tsolve(a, rhs, **kw))
        out_t = d if out_t is None else lax.add(out_t, d)
    if out_t is None:
        return x, _zero_like_out(x)
    return x, out_t


def _triangular_solve_transpose(ct, a, b, *, left_side=False, lower=False, transpose_a=False,
                                conjugate_a=False, unit_diagonal=False):
    from ..ad import is_undefined_primal

    if is_undefined_primal(a):  # pragma: no cover - a is never the linear operand
        raise NotImplementedError("triangular_solve is not linear in a")
    if isinstance(ct, Zero):
        return [None, Zero(b.aval)]
    out = tsolve(a, ct, left_side=left_side, lower=lower, transpose_a=not transpose_a,
                 conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return [None, out]


jvp_rules[P.triangular_solve_p] = _triangular_solve_jvp
transpose_rules[P.triangular_solve_p] = _triangular_solve_transpose


# --- lu ---------------------------------------------------------------------------------------


def _lu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    lu, pivots, perm = bind(P.lu_p, x)
    outs = [lu, pivots, perm]
    if isinstance(t, Zero):
        return outs, [_zero_like_out(o) for o in outs]
    *batch, m, n = _shape(x)
    batch = tuple(batch)
    nb = len(batch)
    k = min(m, n)
    dt = _dt(x)
    zero = np.zeros((), dt)
    lk = lax.slice(lu, (0,) * (nb + 2), batch + (m, k))
    cfg = [(0, 0, 0)] * nb + [(0, 0, 0), (0, m - k, 0)]
    l_mat = lax.add(lax.pad(tril(lk, -1), zero, cfg), eye_like(batch + (m, m), dt))
    uk = lax.slice(lu, (0,) * (nb + 2), batch + (k, n))
    cfg = [(0, 0, 0)] * nb + [(0, n - k, 0), (0, 0, 0)]
    u_eye = lax.pad(eye_like(batch + (n - k, n - k), dt), zero,
                    [(0, 0, 0)] * nb + [(k, 0, 0), (k, 0, 0)])
    u_mat = lax.add(lax.pad(triu(uk), zero, cfg), u_eye)
    perm_b = lax.broadcast_in_dim(perm, batch + (m, n), tuple(range(nb + 1)))
    pt = take_along_axis(t, perm_b, nb)
    la = tsolve(l_mat, pt, left_side=True, lower=True, unit_diagonal=True)
    lau = tsolve(u_mat, la, left_side=False, lower=False)
    l_dot = mm(l_mat, tril(lau, -1))
    u_dot = mm(triu(lau), u_mat)
    return outs, [lax.add(l_dot, u_dot), _zero_like_out(pivots), _zero_like_out(perm)]


jvp_rules[P.lu_p] = _lu_jvp


# --- qr ---------------------------------------------------------------------------------------


def _qr_jvp(primals, tangents, *, full_matrices=True, pivoting=False):
    (x,), (dx,) = primals, tangents
    *_, m, n = _shape(x)
    q, r = bind(P.qr_p, x, full_matrices=full_matrices, pivoting=False)
    if isinstance(dx, Zero):
        return [q, r], [_zero_like_out(q), _zero_like_out(r)]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError("Unimplemented case of QR decomposition derivative: it "
                                  "needs m >= n, and full_matrices=False unless m == n.")
    dt = _dt(x)
    dx_rinv = tsolve(r, dx, left_side=False, lower=False)
    qt_dx_rinv = mm(H(q), dx_rinv)
    low = tril(qt_dx_rinv, -1)
    do = lax.sub(low, H(low))
    if dtypes.is_complex(dt):
        eye = eye_like(_shape(qt_dx_rinv), dt)
        im = lax.sub(qt_dx_rinv, lax.convert_element_type(lax.real(qt_dx_rinv), dt))
        do = lax.add(do, lax.mul(eye, im))
    dq = lax.add(mm(q, lax.sub(do, qt_dx_rinv)), dx_rinv)
    dr = mm(lax.sub(qt_dx_rinv, do), r)
    return [q, r], [dq, dr]


jvp_rules[P.qr_p] = _qr_jvp


# --- eigh -------------------------------------------------------------------------------------


def _eigh_jvp(primals, tangents, *, lower=True, sort_eigenvalues=True, subset_by_index=None):
    (a,), (ta,) = primals, tangents
    v, w = bind(P.eigh_p, a, lower=lower, sort_eigenvalues=sort_eigenvalues,
                subset_by_index=subset_by_index)
    if isinstance(ta, Zero):
        return [v, w], [_zero_like_out(v), _zero_like_out(w)]
    dt = _dt(a)
    shape = _shape(a)
    nd = len(shape)
    ta = _hermitian_from_triangle(ta, lower)
    wc = lax.convert_element_type(w, dt)
    wj = lax.broadcast_in_dim(wc, shape, tuple(range(nd - 2)) + (nd - 1,))
    wi = lax.broadcast_in_dim(wc, shape, tuple(range(nd - 1)))
    eye = eye_like(shape, dt)
    f = lax.sub(lax.div(np.ones((), dt), lax.add(eye, lax.sub(wj, wi))), eye)
    vav = mm(mm(H(v), ta), v)
    dv = mm(v, lax.mul(f, vav))
    dw = diag_of(real_part(vav))
    return [v, w], [dv, dw]


jvp_rules[P.eigh_p] = _eigh_jvp


# --- svd --------------------------------------------------------------------------------------


def _svd_jvp(primals, tangents, *, full_matrices=True, compute_uv=True, subset_by_index=None,
             algorithm=None):
    (a,), (da,) = primals, tangents
    *batch, m, n = _shape(a)
    primal_out = bind(P.svd_p, a, full_matrices=full_matrices, compute_uv=compute_uv,
                      subset_by_index=subset_by_index, algorithm=algorithm)
    if isinstance(da, Zero):
        return primal_out, [_zero_like_out(o) for o in primal_out]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for "
                                  "full matrices")
    s, u, vt = bind(P.svd_p, a, full_matrices=False, compute_uv=True,
                    subset_by_index=subset_by_index, algorithm=algorithm)
    dt = _dt(a)
    rdt = _dt(s)
    k = _shape(s)[-1]
    nb = len(batch)
    kk = tuple(batch) + (k, k)
    ut, v = H(u), H(vt)
    ds_mat = mm(mm(ut, da), v)
    ds = diag_of(real_part(ds_mat))
    if not compute_uv:
        return primal_out, [ds]
    s_row = lax.broadcast_in_dim(s, kk, tuple(range(nb)) + (nb + 1,))   # s_j at (i, j)
    s_col = lax.broadcast_in_dim(s, kk, tuple(range(nb + 1)))          # s_i at (i, j)
    s_diffs = lax.mul(lax.add(s_row, s_col), lax.sub(s_row, s_col))
    eye_r = eye_like(kk, rdt)
    f = lax.sub(lax.div(np.ones((), rdt), lax.add(s_diffs, eye_r)), eye_r)
    fc = lax.convert_element_type(f, dt)
    s_row_c = lax.convert_element_type(s_row, dt)
    s_col_c = lax.convert_element_type(s_col, dt)
    dss = lax.mul(s_row_c, ds_mat)
    sds = lax.mul(s_col_c, ds_mat)
    s_zero = lax.convert_element_type(lax.eq(s, np.zeros((), rdt)), rdt)
    s_inv = lax.sub(lax.div(np.ones((), rdt), lax.add(s, s_zero)), s_zero)
    s_inv_mat = lax.mul(eye_r, lax.broadcast_in_dim(s_inv, kk, tuple(range(nb)) + (nb + 1,)))
    half = np.asarray(0.5, dt)
    dudv_diag = lax.mul(lax.mul(half, lax.sub(ds_mat, H(ds_mat))),
                        lax.convert_element_type(s_inv_mat, dt))
    du = mm(u, lax.add(lax.mul(fc, lax.add(dss, H(dss))), dudv_diag))
    dv = mm(v, lax.mul(fc, lax.add(sds, H(sds))))
    if m > n:
        dav = mm(da, v)
        sdim = lax.broadcast_in_dim(lax.convert_element_type(s, dt), tuple(batch) + (m, k),
                                    tuple(range(nb)) + (nb + 1,))
        du = lax.add(du, lax.div(lax.sub(dav, mm(u, mm(ut, dav))), sdim))
    if n > m:
        dahu = mm(H(da), u)
        sdim = lax.broadcast_in_dim(lax.convert_element_type(s, dt), tuple(batch) + (n, k),
                                    tuple(range(nb)) + (nb + 1,))
        dv = lax.add(dv, lax.div(lax.sub(dahu, mm(v, mm(vt, dahu))), sdim))
    return primal_out, [ds, du, H(dv)]


jvp_rules[P.svd_p] = _svd_jvp


# --- eig ------------------------------------------------------------------------------------


def _lu_solve(a, b):
    """``a^-1 b`` for square matrices `a` and matrices `b` with the same batch dimensions,
    by an LU factorization with partial pivoting."""
    lu, _, perm = bind(P.lu_p, a)
    *batch, m, n = _shape(b)
    nb = len(batch)
    perm_b = lax.broadcast_in_dim(perm, tuple(batch) + (m, n), tuple(range(nb + 1)))
    pb = take_along_axis(b, perm_b, nb)
    y = tsolve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return tsolve(lu, y, left_side=True, lower=False)


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors=True,
             compute_right_eigenvectors=True, use_magma=None):
    (a,), (ta,) = primals, tangents
    outs = bind(P.eig_p, a, compute_left_eigenvectors=compute_left_eigenvectors,
                compute_right_eigenvectors=compute_right_eigenvectors, use_magma=use_magma)
    if isinstance(ta, Zero):
        return outs, [_zero_like_out(o) for o in outs]
    if compute_left_eigenvectors:
        raise NotImplementedError(
            "The derivative of eig's left eigenvectors is not implemented: differentiate "
            "eig with compute_left_eigenvectors=False.")
    if compute_right_eigenvectors:
        w, v = outs
    else:
        w, v = bind(P.eig_p, a, compute_left_eigenvectors=False,
                    compute_right_eigenvectors=True, use_magma=use_magma)
    cdt = _dt(w)
    if _dt(ta) != cdt:
        ta = lax.convert_element_type(ta, cdt)
    m = _lu_solve(v, mm(ta, v))
    dw = diag_of(m)
    if not compute_right_eigenvectors:
        return outs, [dw]
    shape = _shape(v)
    nd = len(shape)
    wj = lax.broadcast_in_dim(w, shape, tuple(range(nd - 2)) + (nd - 1,))
    wi = lax.broadcast_in_dim(w, shape, tuple(range(nd - 1)))
    eye = eye_like(shape, cdt)
    f = lax.sub(lax.div(np.ones((), cdt), lax.add(eye, lax.sub(wj, wi))), eye)
    dv = mm(v, lax.mul(f, m))
    # keep every column at unit norm: remove the real part of its component along v_j
    along = lax.reduce_sum(lax.real(lax.mul(lax.conj(v), dv)), (nd - 2,))
    along = lax.broadcast_in_dim(lax.convert_element_type(along, cdt), shape,
                                 tuple(range(nd - 2)) + (nd - 1,))
    dv = lax.sub(dv, lax.mul(v, along))
    return outs, [dw, dv]


jvp_rules[P.eig_p] = _eig_jvp


# --- fft --------------------------------------------------------------------------------------


def _fft(x, fft_type, fft_lengths):
    return bind(P.fft_p, x, fft_type=FftType(fft_type), fft_lengths=tuple(fft_lengths))


def _fft_jvp(primals, tangents, *, fft_type, fft_lengths):
    (x,), (t,) = primals, tangents
    out = _fft(x, fft_type, fft_lengths)
    if isinstance(t, Zero):
        return out, _zero_like_out(out)
    return out, _fft(t, fft_type, fft_lengths)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    fft_type = FftType(fft_type)
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    lengths = tuple(fft_lengths)
    if fft_type == FftType.RFFT:
        shape = _shape(ct)
        n = lengths[-1]
        cfg = [(0, 0, 0)] * (len(shape) - 1) + [(0, n - shape[-1], 0)]
        full = lax.pad(ct, np.zeros((), _dt(ct)), cfg)
        return [lax.real(_fft(full, FftType.FFT, lengths))]
    if fft_type == FftType.IRFFT:
        y = _fft(ct, FftType.RFFT, lengths)
        nh = _shape(y)[-1]
        odd = lengths[-1] % 2
        mask = np.concatenate([np.ones(1), np.full(nh - 2 + odd, 2.0),
                               np.ones(1 - odd)]) / float(np.prod(lengths))
        mask = mask[:nh].astype(_dt(y))
        mb = lax.broadcast_in_dim(mask, _shape(y), (len(_shape(y)) - 1,))
        # conj: the transpose under the pairing Re(sum(a * b)) of complex cotangents.
        return [lax.conj(lax.mul(y, mb))]
    return [_fft(ct, fft_type, lengths)]


jvp_rules[P.fft_p] = _fft_jvp
transpose_rules[P.fft_p] = _fft_transpose


# --- top_k ------------------------------------------------------------------------------------


def take_along_last(x, idx):
    """``x[..., idx]`` along the last axis, where `idx` (int32) is ``batch + (k,)`` for `x`
    of shape ``batch + (n,)``: a gather (linear in `x`)."""
    return take_along_axis(x, idx, len(_shape(idx)) - 1)


def _top_k_jvp(primals, tangents, *, k):
    (x,), (t,) = primals, tangents
    vals, idx = bind(P.top_k_p, x, k=k)
    if isinstance(t, Zero) or _shape(vals)[-1] == 0:
        return [vals, idx], [_zero_like_out(vals), _zero_like_out(idx)]
    return [vals, idx], [take_along_last(t, idx), _zero_like_out(idx)]


jvp_rules[P.top_k_p] = _top_k_jvp


# --- tridiagonal_solve ------------------------------------------------------------------------


def _tridiagonal_product(dl, d, du, x):
    """``A @ x`` for the tridiagonal A of (`dl`, `d`, `du`) and `x` ``[..., m, n]``."""
    xa = get_aval(x)
    nd, m, n = xa.ndim, xa.shape[-2], xa.shape[-1]

    def col(v):  # [..., m] -> [..., m, n]
        return lax.broadcast_in_dim(v, xa.shape, tuple(range(nd - 1)))

    y = lax.mul(col(d), x)
    if m > 1:
        lead = xa.shape[:-2]
        zero_row = lax.broadcast_in_dim(np.zeros((), xa.dtype), lead + (1, n), ())
        start, stop = (0,) * (nd - 2), tuple(lead)
        above = lax.slice(x, start + (0, 0), stop + (m - 1, n))  # x[i-1] for rows 1..m-1
        below = lax.slice(x, start + (1, 0), stop + (m, n))  # x[i+1] for rows 0..m-2
        y = lax.add(y, lax.mul(col(dl), lax.concatenate([zero_row, above], nd - 2)))
        y = lax.add(y, lax.mul(col(du), lax.concatenate([below, zero_row], nd - 2)))
    return y


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular=False):
    """``X' = A^-1 (b' - A' X)``: A' is tridiagonal in the diagonals' tangents."""
    dl, d, du, b = primals
    *tdiags, tb = tangents
    x = bind(P.tridiagonal_solve_p, dl, d, du, b, perturb_singular=perturb_singular)
    if all(isinstance(t, Zero) for t in tdiags):
        if isinstance(tb, Zero):
            return x, _zero_like_out(x)
        rhs = tb
    else:
        zero = lax.broadcast_in_dim(np.zeros((), get_aval(d).dtype), get_aval(d).shape, ())
        tdl, td, tdu = (zero if isinstance(t, Zero) else t for t in tdiags)
        rhs = lax.neg(_tridiagonal_product(tdl, td, tdu, x))
        if not isinstance(tb, Zero):
            rhs = lax.add(tb, rhs)
    return x, bind(P.tridiagonal_solve_p, dl, d, du, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular=False):
    """Linear in b: the solve with A^T, whose sub-diagonal is `du` shifted down one row and
    super-diagonal `dl` shifted up one row."""
    if isinstance(ct, Zero):
        return [None, None, None, Zero(b.aval)]
    da = get_aval(dl)
    nd, m = da.ndim, da.shape[-1]
    lead = da.shape[:-1]
    zero = lax.broadcast_in_dim(np.zeros((), da.dtype), lead + (1,), ())
    start = (0,) * (nd - 1)
    if m > 1:
        dl_t = lax.concatenate([zero, lax.slice(du, start + (0,), lead + (m - 1,))], nd - 1)
        du_t = lax.concatenate([lax.slice(dl, start + (1,), lead + (m,)), zero], nd - 1)
    else:
        dl_t = du_t = zero
    out = bind(P.tridiagonal_solve_p, dl_t, d, du_t, ct, perturb_singular=perturb_singular)
    return [None, None, None, out]


jvp_rules[P.tridiagonal_solve_p] = _tridiagonal_solve_jvp
transpose_rules[P.tridiagonal_solve_p] = _tridiagonal_solve_transpose
