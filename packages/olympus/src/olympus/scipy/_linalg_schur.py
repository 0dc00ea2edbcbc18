"""Hessenberg reduction and the Schur decomposition, written with `olympus.lax` control
flow (no LAPACK kernel is exposed for them).

The algorithms follow the ones LAPACK's ``?gees`` driver runs for matrices of moderate
size, so that the results agree with SciPy's (the Schur form is unique only up to the
order of the eigenvalues and the signs of the vectors, and both follow from these
choices): Householder reduction to Hessenberg form with LAPACK's reflector convention
(``?gehd2``/``?larfg``: a real ``beta`` on the subdiagonal), then the small-bulge
double-shift QR algorithm for real matrices (``dlahqr``: Francis shifts, exceptional
shifts every 10 iterations, the Ahues-Tisseur deflation test, 2x2 blocks standardized
as ``dlanv2`` does) and the single-shift QR algorithm for complex ones (``zlahqr``:
Wilkinson shifts, real subdiagonals). Every matrix is handled with full-size masked row
and column updates, one bulge-chasing step per loop iteration: O(n^2) work per sweep,
O(n^3) in all. Scalars are read and written with dynamic indexing."""

from __future__ import annotations

import numpy as np

import olympus.numpy as jnp
from olympus import lax

_KEXSH = 10  # iterations between exceptional shifts
_DAT1 = 0.75
_DAT2 = -0.4375


def _idx(starts):
    return tuple(jnp.asarray(s, np.int32) for s in starts)


def _ds(x, starts, sizes):
    """`lax.dynamic_slice` with the start indices as int32 (Python ints would be int64
    under x64, and all starts must share one type)."""
    return lax.dynamic_slice(x, _idx(starts), sizes)


def _dus(x, update, starts):
    return lax.dynamic_update_slice(x, update, _idx(starts))


def _real_dtype(dtype):
    return np.float64 if dtype in (np.float64, np.complex128) else np.float32


def _cabs1(z):
    """|Re z| + |Im z|, LAPACK's cheap modulus."""
    if np.issubdtype(z.dtype, np.complexfloating):
        return jnp.abs(jnp.real(z)) + jnp.abs(jnp.imag(z))
    return jnp.abs(z)


def _larfg(alpha, x):
    """LAPACK's elementary reflector: ``(beta, tau, v)`` with
    ``(I - tau [1; v] [1; v]^H)^H [alpha; x] = [beta; 0]`` and beta real."""
    real = not np.issubdtype(alpha.dtype, np.complexfloating)
    xnorm = jnp.sqrt(jnp.sum(jnp.abs(x) ** 2))
    alphr = jnp.real(alpha)
    alphi = jnp.zeros_like(alphr) if real else jnp.imag(alpha)
    trivial = (xnorm == 0) & (alphi == 0)
    norm = jnp.sqrt(alphr * alphr + alphi * alphi + xnorm * xnorm)
    beta = -jnp.copysign(norm, alphr)
    safe_beta = jnp.where(trivial, jnp.ones_like(beta), beta)
    if real:
        tau = (safe_beta - alphr) / safe_beta
    else:
        tau = lax.complex((safe_beta - alphr) / safe_beta, -alphi / safe_beta)
    denom = alpha - safe_beta.astype(alpha.dtype)
    denom = jnp.where(trivial, jnp.ones_like(denom), denom)
    v = x / denom
    zero = jnp.zeros_like(tau)
    return (jnp.where(trivial, alphr, beta).astype(alpha.dtype) if real else
            jnp.where(trivial, alpha, beta.astype(alpha.dtype)),
            jnp.where(trivial, zero, tau), jnp.where(trivial, jnp.zeros_like(v), v))


# --- Hessenberg reduction -------------------------------------------------------------------


def hessenberg_2d(a, calc_q: bool):
    """``(H, Q)`` with ``A = Q H Q^H`` for one square matrix (Q is None unless asked)."""
    n = a.shape[-1]
    dt = a.dtype
    idx = jnp.arange(n, dtype=np.int32)
    q = jnp.eye(n, dtype=dt)

    def step(k, carry):
        a, q = carry
        col = a[:, k]
        below = idx > k + 1
        alpha = col[k + 1]
        x = jnp.where(below, col, jnp.zeros_like(col))
        beta, tau, v_part = _larfg(alpha, x)
        v = jnp.where(below, v_part, jnp.zeros_like(v_part))
        v = jnp.where(idx == k + 1, jnp.ones_like(v), v)
        # Right: A(:, k+1:) = A(:, k+1:) (I - tau v v^H).
        av = a @ v
        a = a - tau * av[:, None] * jnp.conj(v)[None, :]
        # Left: A(k+1:, k+1:) = (I - tau v v^H)^H A(k+1:, k+1:) (columns k+1 on).
        vha = jnp.conj(v) @ a
        vha = jnp.where(idx > k, vha, jnp.zeros_like(vha))
        a = a - jnp.conj(tau) * v[:, None] * vha[None, :]
        # Column k: beta on the subdiagonal, zeros below.
        newcol = jnp.where(idx == k + 1, beta, jnp.where(below, jnp.zeros_like(col), a[:, k]))
        a = a.at[:, k].set(newcol)
        if calc_q:
            qv = q @ v
            q = q - tau * qv[:, None] * jnp.conj(v)[None, :]
        return a, q

    # n - 1 reflectors, as LAPACK: for complex matrices the last one (of length 1) makes
    # the last subdiagonal entry real.
    if n > 1:
        a, q = lax.fori_loop(0, n - 1, step, (a, q))
    h = jnp.triu(a, -1)
    return h, (q if calc_q else None)


# --- real Schur form: the double-shift QR algorithm ---------------------------------------


def _lanv2(a, b, c, d, eps):
    """LAPACK's standardization of a real 2x2 block [[a, b], [c, d]] = G [[a', b'],
    [c', d']] G^T with G = [[cs, -sn], [sn, cs]]: c' = 0 for real eigenvalues, else
    a' = d' and b' c' < 0. Returns (a', b', c', d', cs, sn)."""
    one = jnp.ones_like(a)
    zero = jnp.zeros_like(a)
    sign = lambda x: jnp.copysign(one, x)  # noqa: E731
    c_zero = c == 0
    b_zero = (b == 0) & ~c_zero
    std = ((a - d) == 0) & (sign(b) != sign(c)) & ~c_zero & ~b_zero
    general = ~(c_zero | b_zero | std)

    temp = a - d
    p = 0.5 * temp
    bcmax = jnp.maximum(jnp.abs(b), jnp.abs(c))
    bcmis = jnp.minimum(jnp.abs(b), jnp.abs(c)) * sign(b) * sign(c)
    scale = jnp.maximum(jnp.abs(p), bcmax)
    scale_s = jnp.where(scale == 0, one, scale)
    z = (p / scale_s) * p + (bcmax / scale_s) * bcmis
    real_ev = z >= 4 * eps
    # Real eigenvalues.
    zr = p + jnp.copysign(jnp.sqrt(scale) * jnp.sqrt(jnp.maximum(z, zero)), p)
    zr_s = jnp.where(zr == 0, one, zr)
    a_r = d + zr
    d_r = d - (bcmax / zr_s) * bcmis
    tau_r = jnp.hypot(c, zr)
    tau_r_s = jnp.where(tau_r == 0, one, tau_r)
    cs_r = zr / tau_r_s
    sn_r = c / tau_r_s
    b_r = b - c
    # Complex (or nearly equal real) eigenvalues: make the diagonal equal.
    sigma = b + c
    tau = jnp.hypot(sigma, temp)
    tau_s = jnp.where(tau == 0, one, tau)
    cs = jnp.sqrt(0.5 * (one + jnp.abs(sigma) / tau_s))
    sn = -(p / (tau_s * cs)) * sign(sigma)
    aa = a * cs + b * sn
    bb = -a * sn + b * cs
    cc = c * cs + d * sn
    dd = -c * sn + d * cs
    a2 = aa * cs + cc * sn
    b2 = bb * cs + dd * sn
    c2 = -aa * sn + cc * cs
    d2 = -bb * sn + dd * cs
    mid = 0.5 * (a2 + d2)
    # Equal signs of b2, c2: real after all, split to triangular form.
    split = (c2 != 0) & (b2 != 0) & (sign(b2) == sign(c2))
    flip = (c2 != 0) & (b2 == 0)
    sab = jnp.sqrt(jnp.abs(b2))
    sac = jnp.sqrt(jnp.abs(c2))
    pp = jnp.copysign(sab * sac, c2)
    tau2 = one / jnp.sqrt(jnp.where(split, jnp.abs(b2 + c2), one))
    cs1 = sab * tau2
    sn1 = sac * tau2
    a_c = jnp.where(split, mid + pp, mid)
    d_c = jnp.where(split, mid - pp, mid)
    b_c = jnp.where(split, b2 - c2, jnp.where(flip, -c2, b2))
    c_c = jnp.where(split | flip, zero, c2)
    cs_c = jnp.where(split, cs * cs1 - sn * sn1, jnp.where(flip, -sn, cs))
    sn_c = jnp.where(split, cs * sn1 + sn * cs1, jnp.where(flip, cs, sn))

    def pick(v_czero, v_bzero, v_std, v_real, v_cplx):
        return jnp.where(c_zero, v_czero, jnp.where(b_zero, v_bzero, jnp.where(
            std, v_std, jnp.where(real_ev, v_real, v_cplx))))

    del general
    return (pick(a, d, a, a_r, a_c), pick(b, -c, b, b_r, b_c), pick(c, zero, c, zero, c_c),
            pick(d, a, d, d_r, d_c), pick(one, zero, one, cs_r, cs_c),
            pick(zero, one, zero, sn_r, sn_c))


def _small_subdiagonal(h, l, i, ulp, smlnum):
    """The largest k in [l+1, i] whose subdiagonal H[k, k-1] is negligible (LAPACK's
    test, with Ahues and Tisseur's refinement), or l."""
    n = h.shape[0]
    k = jnp.arange(1, n, dtype=np.int32)
    d = jnp.diagonal(h)
    sub = jnp.diagonal(h, -1)  # sub[k-1] = H[k, k-1]
    sup = jnp.diagonal(h, 1)  # sup[k-1] = H[k-1, k]
    hk = _cabs1(sub)
    dkm1, dk = d[:-1], d[1:]
    tst = _cabs1(dkm1) + _cabs1(dk)
    extra = (jnp.where(k - 2 >= 0, _cabs1(jnp.concatenate([jnp.zeros_like(sub[:1]),
                                                           sub[:-1]])), 0.0)
             + jnp.where(k + 1 <= n - 1, _cabs1(jnp.concatenate([sub[1:],
                                                                 jnp.zeros_like(sub[:1])])),
                         0.0))
    tst = jnp.where(tst == 0, tst + extra, tst)
    ab = jnp.maximum(hk, _cabs1(sup))
    ba = jnp.minimum(hk, _cabs1(sup))
    aa = jnp.maximum(_cabs1(dk), _cabs1(dkm1 - dk))
    bb = jnp.minimum(_cabs1(dk), _cabs1(dkm1 - dk))
    s = aa + ab
    s = jnp.where(s == 0, jnp.ones_like(s), s)
    fine = (hk <= ulp * tst) & (ba * (ab / s) <= jnp.maximum(smlnum, ulp * (bb * (aa / s))))
    small = (hk <= smlnum) | fine
    cand = small & (k >= l + 1) & (k <= i)
    return jnp.max(jnp.where(cand, k, l))


def _schur_real_2d(a):
    """The real Schur form ``(T, Z)`` of one real square matrix, or NaNs if the QR
    iteration does not converge."""
    n = a.shape[0]
    dt = a.dtype
    h, z = hessenberg_2d(a, True)
    if n < 2:
        return h, z
    eps = float(np.finfo(dt).eps)
    ulp = eps
    smlnum = float(np.finfo(dt).tiny) * (n / ulp)
    itmax = 30 * max(10, n)
    idx = jnp.arange(n, dtype=np.int32)

    def apply_left(h, k, w, tau, nr, col_from):
        rows = _ds(h, (k, 0), (nr, n))
        s = w @ rows
        s = jnp.where(idx >= col_from, s, jnp.zeros_like(s))
        return _dus(h, rows - tau * w[:, None] * s[None, :], (k, 0))

    def apply_right(h, k, w, tau, nr, row_to):
        cols = _ds(h, (0, k), (n, nr))
        s = cols @ w
        if row_to is not None:
            s = jnp.where(idx <= row_to, s, jnp.zeros_like(s))
        return _dus(h, cols - tau * s[:, None] * w[None, :], (0, k))

    def qr_sweep(state):
        h, z, i, l, its, kdefl = state
        kdefl = kdefl + 1
        # Shifts: the trailing 2x2 block's eigenvalues, or exceptional ones.
        hii, hi1i1 = h[i, i], h[i - 1, i - 1]
        bottom = jnp.abs(h[i, i - 1]) + jnp.abs(h[i - 1, jnp.maximum(i - 2, 0)])
        top = jnp.abs(h[l + 1, l]) + jnp.abs(h[jnp.minimum(l + 2, n - 1), l + 1])
        exc_bottom = kdefl % (2 * _KEXSH) == 0
        exc_top = (kdefl % _KEXSH == 0) & ~exc_bottom
        s_exc = jnp.where(exc_bottom, bottom, top)
        base = jnp.where(exc_bottom, hii, h[l, l])
        h11 = jnp.where(exc_bottom | exc_top, _DAT1 * s_exc + base, hi1i1)
        h12 = jnp.where(exc_bottom | exc_top, _DAT2 * s_exc, h[i - 1, i])
        h21 = jnp.where(exc_bottom | exc_top, s_exc, h[i, i - 1])
        h22 = jnp.where(exc_bottom | exc_top, h11, hii)
        s = jnp.abs(h11) + jnp.abs(h12) + jnp.abs(h21) + jnp.abs(h22)
        ss = jnp.where(s == 0, jnp.ones_like(s), s)
        h11, h12, h21, h22 = h11 / ss, h12 / ss, h21 / ss, h22 / ss
        tr = (h11 + h22) / 2
        det = (h11 - tr) * (h22 - tr) - h12 * h21
        rtdisc = jnp.sqrt(jnp.abs(det))
        cplx = det >= 0
        r1 = tr + rtdisc
        r2 = tr - rtdisc
        use1 = jnp.abs(r1 - h22) <= jnp.abs(r2 - h22)
        real_shift = jnp.where(use1, r1, r2) * s
        rt1r = jnp.where(cplx, tr * s, real_shift)
        rt2r = rt1r
        rt1i = jnp.where(cplx, rtdisc * s, jnp.zeros_like(s))
        rt2i = -rt1i
        zero_s = s == 0
        rt1r, rt2r, rt1i, rt2i = (jnp.where(zero_s, jnp.zeros_like(v), v)
                                  for v in (rt1r, rt2r, rt1i, rt2i))
        # Where to start: the lowest m in [l, i-2] after two small subdiagonals.
        d = jnp.diagonal(h)
        sub = jnp.concatenate([jnp.diagonal(h, -1), jnp.zeros((1,), dt)])  # sub[m] = H[m+1, m]
        sup = jnp.concatenate([jnp.diagonal(h, 1), jnp.zeros((1,), dt)])  # sup[m] = H[m, m+1]
        m_all = idx
        dm = d
        dm1 = jnp.concatenate([d[1:], jnp.zeros((1,), dt)])
        dmm1 = jnp.concatenate([jnp.zeros((1,), dt), d[:-1]])
        h21s = sub
        sc = jnp.abs(dm - rt2r) + jnp.abs(rt2i) + jnp.abs(h21s)
        sc = jnp.where(sc == 0, jnp.ones_like(sc), sc)
        h21s = h21s / sc
        v1 = h21s * sup + (dm - rt1r) * ((dm - rt2r) / sc) - rt1i * (rt2i / sc)
        v2 = h21s * (dm + dm1 - rt1r - rt2r)
        v3 = h21s * jnp.concatenate([sub[1:], jnp.zeros((1,), dt)])
        sv = jnp.abs(v1) + jnp.abs(v2) + jnp.abs(v3)
        sv = jnp.where(sv == 0, jnp.ones_like(sv), sv)
        v1, v2, v3 = v1 / sv, v2 / sv, v3 / sv
        subm1 = jnp.concatenate([jnp.zeros((1,), dt), sub[:-1]])  # H[m, m-1]
        h00 = jnp.abs(subm1) * (jnp.abs(v2) + jnp.abs(v3))
        h01 = jnp.abs(v1) * (jnp.abs(dmm1) + jnp.abs(dm) + jnp.abs(dm1))
        ok = (m_all == l) | (h00 <= ulp * h01)
        m = jnp.max(jnp.where(ok & (m_all >= l) & (m_all <= i - 2), m_all, l))
        v0 = jnp.stack([v1[m], v2[m], v3[m]])

        def chase(k, carry):
            h, z, v = carry
            first = k == m
            v = jnp.where(first, v, _ds(h, (k, k - 1), (3, 1))[:, 0])
            beta, tau, w23 = _larfg(v[0], v[1:])
            w = jnp.concatenate([jnp.ones((1,), dt), w23])
            km1 = jnp.maximum(k - 1, 0)
            col = _ds(h, (k, km1), (3, 1))[:, 0]
            col_later = jnp.stack([beta, jnp.zeros_like(beta), jnp.zeros_like(beta)])
            col_first = jnp.stack([col[0] * (1 - tau), col[1], col[2]])
            newcol = jnp.where(first, jnp.where(m > l, col_first, col), col_later)
            h = jnp.where(k > 0, _dus(h, newcol[:, None], (k, km1)), h)
            h = apply_left(h, k, w, tau, 3, k)
            h = apply_right(h, k, w, tau, 3, jnp.minimum(k + 3, i))
            z = apply_right(z, k, w, tau, 3, None)
            return h, z, v

        h, z, _ = lax.fori_loop(m, i - 1, chase, (h, z, v0))
        # The last step acts on rows and columns i-1, i only.
        k = i - 1
        v2v = _ds(h, (k, k - 1), (2, 1))[:, 0]  # k > m: m <= i - 2
        beta, tau, wv = _larfg(v2v[0], v2v[1:])
        w = jnp.concatenate([jnp.ones((1,), dt), wv])
        h = h.at[k, k - 1].set(beta).at[k + 1, k - 1].set(0)
        h = apply_left(h, k, w, tau, 2, k)
        h = apply_right(h, k, w, tau, 2, i)
        z = apply_right(z, k, w, tau, 2, None)
        return h, z, i, l, its + 1, kdefl

    def deflate(state):
        h, z, i, l, its, kdefl = state
        pair = l == i - 1
        im1 = jnp.maximum(i - 1, 0)
        a_, b_, c_, d_ = h[im1, im1], h[im1, i], h[i, im1], h[i, i]
        na, nb, nc, nd, cs, sn = _lanv2(a_, b_, c_, d_, eps)
        cs = jnp.where(pair, cs, jnp.ones_like(cs))
        sn = jnp.where(pair, sn, jnp.zeros_like(sn))
        blk = jnp.stack([jnp.stack([na, nb]), jnp.stack([nc, nd])])
        old = _ds(h, (im1, im1), (2, 2))
        h = _dus(h, jnp.where(pair, blk, old), (im1, im1))
        # The rotation on the rest of rows i-1, i (columns past i) and of columns
        # i-1, i (rows above i-1), and on Z.
        rows = _ds(h, (im1, 0), (2, n))
        r0 = cs * rows[0] + sn * rows[1]
        r1 = cs * rows[1] - sn * rows[0]
        right = idx > i
        rows = jnp.stack([jnp.where(right, r0, rows[0]), jnp.where(right, r1, rows[1])])
        h = _dus(h, rows, (im1, 0))
        cols = _ds(h, (0, im1), (n, 2))
        c0 = cs * cols[:, 0] + sn * cols[:, 1]
        c1 = cs * cols[:, 1] - sn * cols[:, 0]
        above = idx < i - 1
        cols = jnp.stack([jnp.where(above, c0, cols[:, 0]), jnp.where(above, c1, cols[:, 1])],
                         axis=1)
        h = _dus(h, cols, (0, im1))
        zc = _ds(z, (0, im1), (n, 2))
        zc = jnp.stack([cs * zc[:, 0] + sn * zc[:, 1], cs * zc[:, 1] - sn * zc[:, 0]], axis=1)
        z = _dus(z, zc, (0, im1))
        return h, z, l - 1, jnp.zeros_like(l), jnp.zeros_like(its), jnp.zeros_like(kdefl)

    def cond(state):
        h, z, i, l, its, kdefl = state
        return (i >= 0) & (its <= itmax)

    def body(state):
        h, z, i, l, its, kdefl = state
        l = _small_subdiagonal(h, l, i, ulp, smlnum)
        h = jnp.where(l > 0, h.at[l, jnp.maximum(l - 1, 0)].set(0), h)
        state = (h, z, i, l, its, kdefl)
        if n < 3:  # the whole matrix is one 2x2 block at most: no QR sweep
            return deflate(state)
        return lax.cond(l >= i - 1, deflate, qr_sweep, state)

    zero = jnp.asarray(0, np.int32)
    init = (h, z, jnp.asarray(n - 1, np.int32), zero, zero, zero)
    h, z, i, _, its, _ = lax.while_loop(cond, body, init)
    failed = i >= 0
    t = jnp.triu(h, -1)
    # A standardized 2x2 block has equal diagonal entries; XLA may evaluate the one value
    # twice with different rounding (fused differently), so copy it from the materialized
    # result.
    d = jnp.diagonal(t)
    in_block = jnp.concatenate([jnp.zeros((1,), bool), jnp.diagonal(t, -1) != 0])
    d = jnp.where(in_block, jnp.concatenate([d[:1], d[:-1]]), d)
    t = jnp.where(jnp.eye(n, dtype=bool), jnp.diag(d), t)
    nan = jnp.full_like(t, np.nan)
    return jnp.where(failed, nan, t), jnp.where(failed, nan, z)


# --- complex Schur form: the single-shift QR algorithm ------------------------------------


def _schur_complex_2d(a):
    """The complex Schur form ``(T, Z)`` of one complex square matrix."""
    n = a.shape[0]
    dt = a.dtype
    rdt = _real_dtype(dt)
    h, z = hessenberg_2d(a, True)
    if n < 2:
        return h, z
    eps = float(np.finfo(rdt).eps)
    ulp = eps
    smlnum = float(np.finfo(rdt).tiny) * (n / ulp)
    itmax = 30 * max(10, n)
    idx = jnp.arange(n, dtype=np.int32)

    def scale_row(h, j, f, col_from):
        row = h[j]
        return h.at[j].set(jnp.where(idx >= col_from, row * f, row))

    def scale_col(h, j, f, row_to):
        col = h[:, j]
        return h.at[:, j].set(jnp.where(idx <= row_to, col * f, col))

    def qr_sweep(state):
        h, z, i, l, its, kdefl = state
        kdefl = kdefl + 1
        hii = h[i, i]
        exc_bottom = kdefl % (2 * _KEXSH) == 0
        exc_top = (kdefl % _KEXSH == 0) & ~exc_bottom
        t_bottom = _DAT1 * jnp.abs(jnp.real(h[i, i - 1])) + hii
        t_top = _DAT1 * jnp.abs(jnp.real(h[l + 1, l])) + h[l, l]
        # Wilkinson's shift: the eigenvalue of the trailing 2x2 block nearer H[i, i].
        u = jnp.sqrt(h[i - 1, i]) * jnp.sqrt(h[i, i - 1])
        su = _cabs1(u)
        x = 0.5 * (h[i - 1, i - 1] - hii)
        sx = _cabs1(x)
        sm = jnp.maximum(su, sx)
        sm_s = jnp.where(sm == 0, jnp.ones_like(sm), sm)
        y = sm * jnp.sqrt((x / sm_s) ** 2 + (u / sm_s) ** 2)
        sx_s = jnp.where(sx == 0, jnp.ones_like(sx), sx)
        flip = (sx > 0) & (jnp.real(x / sx_s) * jnp.real(y) + jnp.imag(x / sx_s) * jnp.imag(y)
                           < 0)
        y = jnp.where(flip, -y, y)
        xy = x + y
        xy_s = jnp.where(xy == 0, jnp.ones_like(xy), xy)
        t_wilk = jnp.where(su != 0, hii - u * (u / xy_s), hii)
        t = jnp.where(exc_bottom, t_bottom, jnp.where(exc_top, t_top, t_wilk))
        # Where to start: the lowest m in [l+1, i-1] after two small subdiagonals, else l.
        d = jnp.diagonal(h)
        subr = jnp.real(jnp.concatenate([jnp.diagonal(h, -1), jnp.zeros((1,), dt)]))
        d1 = jnp.concatenate([d[1:], jnp.zeros((1,), dt)])
        h11s = d - t
        h21 = subr
        sc = _cabs1(h11s) + jnp.abs(h21)
        sc = jnp.where(sc == 0, jnp.ones_like(sc), sc)
        h11s = h11s / sc
        h21 = h21 / sc
        h10 = jnp.concatenate([jnp.zeros((1,), rdt), subr[:-1]])
        ok = jnp.abs(h10) * jnp.abs(h21) <= ulp * (_cabs1(h11s) * (_cabs1(d) + _cabs1(d1)))
        cand = ok & (idx >= l + 1) & (idx <= i - 1)
        m = jnp.max(jnp.where(cand, idx, l))
        v0 = jnp.stack([h11s[m], h21[m].astype(dt)])

        def chase(k, carry):
            h, z, v = carry
            first = k == m
            km1 = jnp.maximum(k - 1, 0)
            v = jnp.where(first, v, _ds(h, (k, km1), (2, 1))[:, 0])
            beta, tau, wv = _larfg(v[0], v[1:])
            later = ~first
            col = _ds(h, (k, km1), (2, 1))[:, 0]
            newcol = jnp.where(later, jnp.stack([beta, jnp.zeros_like(beta)]), col)
            h = jnp.where(k > 0, _dus(h, newcol[:, None], (k, km1)), h)
            # LAPACK's update with t2 = Re(tau v2) (tau v2 is real in exact arithmetic;
            # rounding it keeps the bulge real). Left: rows k, k+1 from column k on.
            v2 = wv[0]
            t2 = jnp.real(tau * v2).astype(dt)
            rows = _ds(h, (k, 0), (2, n))
            s = jnp.conj(tau) * rows[0] + t2 * rows[1]
            s = jnp.where(idx >= k, s, jnp.zeros_like(s))
            h = _dus(h, jnp.stack([rows[0] - s, rows[1] - s * v2]), (k, 0))
            # Right: columns k, k+1 down to row min(k+2, i); and Z.
            cols = _ds(h, (0, k), (n, 2))
            s = tau * cols[:, 0] + t2 * cols[:, 1]
            s = jnp.where(idx <= jnp.minimum(k + 2, i), s, jnp.zeros_like(s))
            h = _dus(
                h, jnp.stack([cols[:, 0] - s, cols[:, 1] - s * jnp.conj(v2)], axis=1), (0, k))
            zc = _ds(z, (0, k), (n, 2))
            s = tau * zc[:, 0] + t2 * zc[:, 1]
            z = _dus(
                z, jnp.stack([zc[:, 0] - s, zc[:, 1] - s * jnp.conj(v2)], axis=1), (0, k))

            # Started below l: rescale so that H[m, m-1] stays real.
            def rescale(hz):
                h, z = hz
                temp = 1 - tau
                temp = temp / jnp.abs(temp)
                h = h.at[m + 1, m].multiply(jnp.conj(temp))
                h = jnp.where(m + 2 <= i, h.at[jnp.minimum(m + 2, n - 1), m + 1].multiply(temp),
                              h)

                def per_j(j, hz):
                    h, z = hz
                    skip = j == m + 1
                    h2 = scale_row(h, j, temp, j + 1)
                    h2 = scale_col(h2, j, jnp.conj(temp), j - 1)
                    z2 = z.at[:, j].multiply(jnp.conj(temp))
                    return jnp.where(skip, h, h2), jnp.where(skip, z, z2)

                return lax.fori_loop(m, i + 1, per_j, (h, z))

            h, z = lax.cond(first & (m > l), rescale, lambda hz: hz, (h, z))
            return h, z, v

        h, z, _ = lax.fori_loop(m, i, chase, (h, z, v0))
        # Make H[i, i-1] real.
        temp = h[i, i - 1]
        rtemp = jnp.abs(temp)
        fix = jnp.imag(temp) != 0
        ph = jnp.where(fix, temp / jnp.where(rtemp == 0, 1.0, rtemp).astype(dt),
                       jnp.ones_like(temp))
        h = h.at[i, i - 1].set(jnp.where(fix, rtemp.astype(dt), temp))
        h = scale_row(h, i, jnp.conj(ph), i + 1)
        h = scale_col(h, i, ph, i - 1)
        z = z.at[:, i].multiply(ph)
        return h, z, i, l, its + 1, kdefl

    def deflate(state):
        h, z, i, l, its, kdefl = state
        return h, z, l - 1, jnp.zeros_like(l), jnp.zeros_like(its), jnp.zeros_like(kdefl)

    def cond(state):
        h, z, i, l, its, kdefl = state
        return (i >= 0) & (its <= itmax)

    def body(state):
        h, z, i, l, its, kdefl = state
        l = _small_subdiagonal(h, l, i, ulp, smlnum)
        h = jnp.where(l > 0, h.at[l, jnp.maximum(l - 1, 0)].set(0), h)
        state = (h, z, i, l, its, kdefl)
        return lax.cond(l >= i, deflate, qr_sweep, state)

    # Subdiagonals real to begin with (they are, after the reduction), then iterate.
    zero = jnp.asarray(0, np.int32)
    init = (h, z, jnp.asarray(n - 1, np.int32), zero, zero, zero)
    h, z, i, _, _, _ = lax.while_loop(cond, body, init)
    failed = i >= 0
    t = jnp.triu(h, -1)
    t = jnp.triu(t)
    nan = jnp.full_like(t, complex(np.nan, np.nan))
    return jnp.where(failed, nan, t), jnp.where(failed, nan, z)


def schur_2d(a):
    """``(T, Z)``: the real Schur form for real `a`, the complex one for complex `a`."""
    if np.issubdtype(a.dtype, np.complexfloating):
        return _schur_complex_2d(a)
    return _schur_real_2d(a)
