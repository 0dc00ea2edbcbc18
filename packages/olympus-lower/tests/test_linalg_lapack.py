"""The linalg_lapack family: the LAPACK decompositions (eig included), fft and top_k,
lowered (and verified), executed on the CPU and compared against numpy references."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _lower_util import Builder, assert_close, run, run_one

from olympus_ir import primitives as P
from olympus_ir.prims.linalg_lapack import FftType

rng = np.random.default_rng(7)
F32, C64 = np.dtype(np.float32), np.dtype(np.complex64)
LAPACK_TOL = {np.dtype(np.float32): dict(rtol=2e-4, atol=2e-4),
              np.dtype(np.complex64): dict(rtol=2e-4, atol=2e-4),
              np.dtype(np.float64): dict(rtol=1e-10, atol=1e-10)}


pytestmark = pytest.mark.usefixtures("lapack_targets")  # conftest.py


def _rand(shape, dt=F32):
    dt = np.dtype(dt)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


# --- fft ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,shape,lengths,ref", [
    (FftType.FFT, (3, 8), (8,), lambda x: np.fft.fft(x)),
    (FftType.IFFT, (2, 4, 6), (4, 6), lambda x: np.fft.ifft2(x)),
    (FftType.RFFT, (3, 8), (8,), lambda x: np.fft.rfft(x)),
    (FftType.RFFT, (2, 4, 6), (4, 6), lambda x: np.fft.rfft2(x)),
    (FftType.IRFFT, (3, 5), (8,), lambda x: np.fft.irfft(x, n=8)),
    (FftType.IRFFT, (2, 4, 4), (4, 7), lambda x: np.fft.irfft2(x, s=(4, 7))),
])
def test_fft(kind, shape, lengths, ref):
    x = _rand(shape, F32 if kind == FftType.RFFT else C64)
    text, (out,) = run_one(P.fft_p, x, fft_type=kind, fft_lengths=lengths)
    assert f"stablehlo.fft %arg0, type = {kind.name}" in text
    want = ref(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    assert out.shape == want.shape
    assert_close(out, want, rtol=1e-4, atol=1e-4)


# --- top_k ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [F32, np.dtype(np.int32)], ids=str)
def test_top_k(dt):
    x = rng.integers(-5, 5, (4, 9)).astype(dt)  # many ties: the lower index comes first
    text, (vals, idx) = run_one(P.top_k_p, x, k=4)
    assert "chlo.top_k" in text
    order = np.argsort(-x.astype(np.int64), axis=-1, kind="stable")[:, :4]
    np.testing.assert_array_equal(vals, -np.sort(-x, axis=-1)[:, :4])
    np.testing.assert_array_equal(idx, order)
    assert idx.dtype == np.int32


# --- LAPACK ---------------------------------------------------------------------------------

def _spd(shape, dt):
    a = _rand(shape, dt)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dt)


@pytest.mark.parametrize("dt", [F32, C64], ids=str)
def test_cholesky(dt):
    x = _spd((2, 4, 4), dt)
    text, (l,) = run_one(P.cholesky_p, x)
    assert "lapack_" in text and "potrf_ffi" in text
    assert_close(l, np.linalg.cholesky(x), **LAPACK_TOL[dt])
    # not positive definite: NaNs
    _, (bad,) = run_one(P.cholesky_p, -np.eye(3, dtype=np.float32))
    assert np.isnan(bad).all()


@pytest.mark.parametrize("left_side,lower,transpose_a,unit", [
    (True, True, False, False), (True, False, True, False), (False, True, False, True),
    (False, False, True, False),
])
def test_triangular_solve(left_side, lower, transpose_a, unit):
    a = _rand((2, 4, 4)) + 4 * np.eye(4, dtype=np.float32)
    b = _rand((2, 4, 3) if left_side else (2, 3, 4))
    text, (out,) = run_one(P.triangular_solve_p, a, b, left_side=left_side, lower=lower,
                        transpose_a=transpose_a, conjugate_a=False, unit_diagonal=unit)
    assert "lapack_strsm_ffi" in text
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = np.where(np.eye(4, dtype=bool), 1, t)
    op = np.swapaxes(t, -1, -2) if transpose_a else t
    a64 = op.astype(np.float64)
    if left_side:
        want = np.linalg.solve(a64, b)
    else:  # x op(a) = b  <=>  op(a)^T x^T = b^T
        want = np.swapaxes(np.linalg.solve(np.swapaxes(a64, -1, -2), np.swapaxes(b, -1, -2)),
                           -1, -2)
    assert_close(out, want, **LAPACK_TOL[F32])


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5)])
def test_lu(shape):
    x = _rand(shape)
    text, (lu, piv, perm) = run_one(P.lu_p, x)
    assert "lapack_sgetrf_ffi" in text
    *_, m, n = shape
    k = min(m, n)
    l = np.tril(lu, -1)[..., :, :k] + np.eye(m, k, dtype=np.float32)
    u = np.triu(lu)[..., :k, :]
    # the permutation is the row swaps applied to iota
    for bi in np.ndindex(*shape[:-2]):
        p = np.arange(m)
        for i, j in enumerate(piv[bi]):
            p[[i, j]] = p[[j, i]]
        np.testing.assert_array_equal(perm[bi], p)
        assert_close(x[bi][perm[bi]], l[bi] @ u[bi], **LAPACK_TOL[F32])
    assert piv.dtype == perm.dtype == np.int32
    assert piv.shape == shape[:-2] + (k,) and perm.shape == shape[:-2] + (m,)


@pytest.mark.parametrize("shape,full,dt", [
    ((5, 3), True, F32), ((5, 3), False, F32), ((3, 5), True, F32), ((2, 4, 3), True, C64),
])
def test_qr(shape, full, dt):
    x = _rand(shape, dt)
    text, (q, r) = run_one(P.qr_p, x, full_matrices=full)
    assert "geqrf_ffi" in text and "gqr_ffi" in text
    nq, nr = np.linalg.qr(x, mode="complete" if full else "reduced")
    assert (q.shape, r.shape) == (nq.shape, nr.shape)
    tol = LAPACK_TOL[dt]
    assert_close(q @ r, x, **tol)
    eye = np.eye(q.shape[-1])
    assert_close(np.conj(np.swapaxes(q, -1, -2)) @ q, np.broadcast_to(eye, q.shape[:-2]
                                                                      + eye.shape), **tol)
    np.testing.assert_array_equal(r, np.triu(r))
    # unique up to the phase of each column of Q / row of R
    assert_close(np.abs(r), np.abs(nr), **tol)


@pytest.mark.parametrize("dt,lower", [(F32, True), (F32, False), (C64, True)], ids=str)
def test_eigh(dt, lower):
    x = _spd((2, 4, 4), dt) - 3 * np.eye(4, dtype=dt)
    # only the `lower` (or upper) triangle is read: garbage in the other one
    junk = np.triu(_rand((2, 4, 4), dt), 1)
    xin = x + (junk if lower else np.conj(np.swapaxes(junk, -1, -2)))
    text, (v, w) = run_one(P.eigh_p, xin, lower=lower, sort_eigenvalues=True)
    assert "evd_ffi" in text
    tol = LAPACK_TOL[dt]
    assert_close(w, np.linalg.eigvalsh(x), **tol)
    assert w.dtype == np.float32
    assert_close(x @ v, v * w[..., None, :], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("shape,full,dt", [
    ((4, 6), True, F32), ((6, 4), False, F32), ((2, 3, 5), False, C64),
])
def test_svd(shape, full, dt):
    x = _rand(shape, dt)
    text, (s, u, vt) = run_one(P.svd_p, x, full_matrices=full, compute_uv=True)
    assert "gesdd_ffi" in text
    nu, ns, nvt = np.linalg.svd(x, full_matrices=full)
    assert (s.shape, u.shape, vt.shape) == (ns.shape, nu.shape, nvt.shape)
    tol = LAPACK_TOL[dt]
    assert_close(s, ns, **tol)
    k = s.shape[-1]
    assert_close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], x, **tol)
    _, (s_only,) = run_one(P.svd_p, x, full_matrices=full, compute_uv=False)
    assert_close(s_only, ns, **tol)


def test_lapack_float64(x64):
    x = _spd((3, 3), np.float64)
    _, (l,) = run_one(P.cholesky_p, x)
    assert_close(l, np.linalg.cholesky(x), **LAPACK_TOL[np.dtype(np.float64)])
    _, (s, u, vt) = run_one(P.svd_p, x)
    assert_close(s, np.linalg.svd(x, compute_uv=False), **LAPACK_TOL[np.dtype(np.float64)])


# --- eig: jaxlib's LAPACK geev FFI kernel (``lapack_<s|d|c|z>geev_ffi``); the executed
# results satisfy the eigen-equations and match numpy's eigenvalues -----------------------

EIG_TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4,
       np.dtype(np.float64): 1e-10, np.dtype(np.complex128): 1e-10}
PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
          np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def _eig(x, left=True, right=True, x64=None):
    b = Builder()
    v = b.arg(x.shape, x.dtype)
    out = b.eqn(P.eig_p, v, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    lowered, outs = run(b.build(out), x, name="eig", x64=x64)
    return lowered.as_text(), outs


def match_order(w, ref):
    """`ref` reordered (per batch member) to pair each of its entries with the nearest
    entry of `w`. numpy computes single-precision eig in double precision, so near-ties
    may come out of LAPACK in another order than in float32."""
    w, ref = np.asarray(w), np.asarray(ref)
    out = np.empty_like(ref)
    for idx in np.ndindex(w.shape[:-1]):
        left = list(ref[idx])
        for k, z in enumerate(w[idx]):
            j = int(np.argmin([abs(z - r) for r in left]))
            out[idx + (k,)] = left.pop(j)
    return out


def _H(v):
    return np.conj(np.swapaxes(v, -1, -2))


@pytest.mark.parametrize("dt", [np.float32, np.complex64, np.float64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5)], ids=str)
def test_eig_matches_numpy_and_satisfies_eigen_equations(dt, shape, request):
    dt = np.dtype(dt)
    if dt in (np.float64, np.complex128):
        request.getfixturevalue("x64")
    x = _rand(shape, dt)
    text, (w, vl, vr) = _eig(x)
    assert f"stablehlo.custom_call @lapack_{PREFIX[dt]}geev_ffi(%arg0)" in text
    assert "compute_left = 86 : ui8" in text and "compute_right = 86 : ui8" in text
    cdt = np.result_type(dt, np.complex64)
    assert w.dtype == vl.dtype == vr.dtype == cdt
    assert w.shape == shape[:-1] and vl.shape == vr.shape == shape
    tol = EIG_TOL[dt]
    ref = np.linalg.eigvals(x)
    if dt in (np.float64, np.complex128):
        # the same LAPACK routine as numpy's in the same precision: the same order
        np.testing.assert_allclose(w, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(w, match_order(w, ref), rtol=tol, atol=tol)
    scale = np.abs(x).max()
    np.testing.assert_allclose(x @ vr, vr * w[..., None, :], atol=tol * 10 * scale)
    np.testing.assert_allclose(_H(vl) @ x, w[..., :, None] * _H(vl), atol=tol * 10 * scale)
    np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), 1.0, rtol=tol)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=-2), 1.0, rtol=tol)


def test_real_input_with_complex_eigenvalues():
    # a rotation by 90 degrees scaled by 2: eigenvalues +-2i, joined from the real and
    # imaginary parts geev returns
    x = np.array([[0.0, -2.0], [2.0, 0.0]], np.float32)
    text, (w, vr) = _eig(x, left=False)
    assert "stablehlo.complex" in text
    np.testing.assert_allclose(sorted(w, key=lambda z: z.imag), [-2j, 2j], atol=1e-6)
    np.testing.assert_allclose(x @ vr, vr * w[None, :], atol=1e-5)


@pytest.mark.parametrize("left,right", [(False, False), (True, False), (False, True)])
def test_optional_eigenvectors(left, right):
    x = _rand((3, 4, 4), np.float32)
    text, outs = _eig(x, left=left, right=right)
    assert f"compute_left = {ord('V' if left else 'N')} : ui8" in text
    assert f"compute_right = {ord('V' if right else 'N')} : ui8" in text
    assert len(outs) == 1 + left + right
    w = outs[0]
    np.testing.assert_allclose(w, match_order(w, np.linalg.eigvals(x)), rtol=2e-4, atol=2e-4)
    if right:
        vr = outs[-1]
        np.testing.assert_allclose(x @ vr, vr * outs[0][..., None, :], atol=2e-4 * 20)
    if left:
        vl = outs[1]
        np.testing.assert_allclose(_H(vl) @ x, outs[0][..., :, None] * _H(vl), atol=2e-4 * 20)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 2, 2)], ids=str)
def test_empty_operands_need_no_kernel(shape):
    x = np.zeros(shape, np.float32)
    text, (w, vl, vr) = _eig(x)
    assert "geev" not in text
    assert w.shape == shape[:-1] and vr.shape == vl.shape == shape
    assert w.dtype == np.complex64


def test_one_by_one():
    x = np.array([[[-3.5]], [[2.0]]], np.float32)
    _, (w, vl, vr) = _eig(x)
    np.testing.assert_allclose(w, [[-3.5], [2.0]])
    np.testing.assert_allclose(np.abs(vr), 1.0)
    np.testing.assert_allclose(np.abs(vl), 1.0)


def test_failed_factorization_gives_nan():
    # geev cannot converge on NaN input: info != 0 and the outputs are NaN
    x = np.full((2, 3, 3), np.nan, np.float32)
    x[1] = np.diag([1.0, 2.0, 3.0])
    _, (w, _, vr) = _eig(x)
    assert np.isnan(w[0]).all() and np.isnan(vr[0]).all()
    np.testing.assert_allclose(sorted(w[1].real), [1.0, 2.0, 3.0])


def test_matrix_layouts_are_column_major():
    text, _ = _eig(_rand((2, 3, 3), np.float32))
    call = next(line for line in text.splitlines() if "geev_ffi" in line)
    assert re.search(r"operand_layouts = \[dense<\[1, 2, 0\]>", call)
    assert "result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : " \
           "tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : " \
           "tensor<3xindex>, dense<0> : tensor<1xindex>]" in call


# --- hessenberg, tridiagonal, schur, ormqr, householder_product, tridiagonal_solve ---------


@pytest.mark.parametrize("dt", [F32, C64])
def test_condensed_forms_against_scipy(dt):
    """Batches (leading dimension 2) through gehrd, sytrd/hetrd and gees, against SciPy's
    wrappers of the same LAPACK routines."""
    import scipy.linalg as sl

    a = _rand((2, 4, 4), dt)
    _, (h, taus) = run_one(P.hessenberg_p, a)
    for i in range(2):
        assert_close(np.triu(h[i], -1), sl.hessenberg(a[i]), dt, **LAPACK_TOL[dt])
    herm = a + np.conj(np.swapaxes(a, 1, 2))
    _, (_, d, e, _) = run_one(P.tridiagonal_p, herm, lower=True)
    for i in range(2):
        t = np.diag(d[i]) + np.diag(e[i], 1) + np.diag(e[i], -1)
        np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(herm[i]),
                                   rtol=1e-3, atol=1e-3)
    _, (t, q) = run_one(P.schur_p, a, compute_schur_vectors=True, sort_eig_vals=False,
                        select_callable=None)
    for i in range(2):
        assert_close(t[i], sl.schur(a[i])[0], dt, **LAPACK_TOL[dt])
        assert_close(q[i] @ t[i] @ np.conj(q[i].T), a[i], dt, **LAPACK_TOL[dt])


def test_reflector_products_and_solves():
    """ormqr and orgqr on geqrf's reflectors (SciPy's LAPACK) against numpy's complete Q;
    gtsv against a dense solve; the pivot permutation; alpha a a^T + beta c."""
    import scipy.linalg.lapack as lapack

    a = _rand((5, 3), F32)
    refl, taus = lapack.sgeqrf(a)[:2]
    q = np.linalg.qr(a, mode="complete")[0]
    c = _rand((5, 2), F32)
    _, (got,) = run_one(P.ormqr_p, refl, taus, c, left=True, transpose=True)
    assert_close(got, q.T @ c, F32, **LAPACK_TOL[F32])
    _, (qq,) = run_one(P.householder_product_p, refl, taus)
    assert_close(qq, q[:, :3], F32, **LAPACK_TOL[F32])
    dl, du = _rand((4,)), _rand((4,))
    d = (4 + rng.random(4)).astype(np.float32)
    dl[0] = du[-1] = 0
    b = _rand((4, 2))
    _, (x,) = run_one(P.tridiagonal_solve_p, dl, d, du, b, perturb_singular=False)
    dense = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    assert_close(x, np.linalg.solve(dense, b), F32, **LAPACK_TOL[F32])
    _, (perm,) = run_one(P.lu_pivots_to_permutation_p, np.array([2, 2, 2], np.int32),
                         permutation_size=5)
    assert perm.tolist() == [2, 0, 1, 3, 4]
    m, cc = _rand((3, 2)), _rand((3, 3))
    _, (sp,) = run_one(P.symmetric_product_p, m, cc, alpha=2.0, beta=0.5)
    assert_close(sp, 2 * m @ m.T + 0.5 * cc, F32, rtol=1e-5, atol=1e-5)


def test_rng_uniform_bounds():
    _, (r,) = run_one(P.rng_uniform_p, np.float32(-1), np.float32(1), shape=(500,))
    assert r.shape == (500,) and r.dtype == np.float32
    assert r.min() >= -1 and r.max() < 1 and r.std() > 0.2
