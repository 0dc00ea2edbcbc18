"""Tests for `olympus.scipy.linalg` against `scipy.linalg` in float32 and float64: the
factorizations and solvers (several shapes, batches), the Hessenberg and Schur forms
(SciPy's values where they are unique: Hessenberg form, eigenvalue order, rsf2csf; the
defining properties otherwise), the matrix functions, the constructors, gradients
against finite differences, jit and vmap, and error messages recorded from reference JAX
0.10.2."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus.scipy.linalg as L

sl = pytest.importorskip("scipy.linalg")

x64 = olympus.enable_x64
DTYPES = [np.float32, np.float64]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _tol(dtype):
    return 3e-5 if dtype in (np.float32, np.complex64) else 1e-11


def _close(got, want, dtype, scale=1.0):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=scale * _tol(dtype), atol=scale * _tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_factorizations_and_solvers(dtype):
    r = _rng(1)
    with x64(dtype == np.float64):
        a = r.normal(size=(5, 5)).astype(dtype)
        spd = (a @ a.T + 5 * np.eye(5)).astype(dtype)
        b = r.normal(size=(5, 3)).astype(dtype)
        bv = r.normal(size=5).astype(dtype)
        _close(L.cholesky(spd), sl.cholesky(spd), dtype)
        _close(L.cholesky(spd, lower=True), sl.cholesky(spd, lower=True), dtype)
        for lower in (False, True):
            _close(L.cho_solve(L.cho_factor(spd, lower=lower), b),
                   sl.cho_solve(sl.cho_factor(spd, lower=lower), b), dtype)
        _close(L.cho_solve(L.cho_factor(spd), bv), sl.cho_solve(sl.cho_factor(spd), bv), dtype)
        _close(L.svd(a, compute_uv=False), sl.svd(a, compute_uv=False), dtype)
        u, s, vh = L.svd(a[:, :3], full_matrices=False)
        _close(np.asarray(u) * np.asarray(s) @ np.asarray(vh), a[:, :3], dtype)
        _close(L.det(a), sl.det(a), dtype, 10)
        _close(L.inv(a), sl.inv(a), dtype, 10)
        _close(L.eigh(spd, eigvals_only=True), sl.eigh(spd, eigvals_only=True), dtype, 10)
        w, v = L.eigh(spd)
        _close(np.asarray(spd) @ np.asarray(v), np.asarray(v) * np.asarray(w), dtype, 30)
        lu_piv = L.lu_factor(a)
        ref = sl.lu_factor(a)
        _close(lu_piv, ref, dtype)
        assert lu_piv[1].dtype == np.int32
        for trans in (0, 1, 2):
            _close(L.lu_solve(lu_piv, b, trans=trans), sl.lu_solve(ref, b, trans=trans), dtype,
                   10)
        _close(L.lu_solve(lu_piv, bv), sl.lu_solve(ref, bv), dtype, 10)
        _close(L.solve(a, b), sl.solve(a, b), dtype, 10)
        for assume_a in ("sym", "her", "pos"):
            _close(L.solve(spd, b, assume_a=assume_a), sl.solve(spd, b, assume_a=assume_a),
                   dtype)
        _close(L.solve(spd, bv, assume_a="pos", lower=True), sl.solve(spd, bv, assume_a="pos"),
               dtype)
        tri = (np.triu(a) + 4 * np.eye(5)).astype(dtype)
        for trans in (0, 1, 2, "N", "T", "C"):
            _close(L.solve_triangular(tri, b, trans=trans),
                   sl.solve_triangular(tri, b, trans=trans), dtype)
        _close(L.solve_triangular(tri.T, bv, lower=True, unit_diagonal=True),
               sl.solve_triangular(tri.T, bv, lower=True, unit_diagonal=True), dtype)


@pytest.mark.parametrize("shape", [(5, 5), (6, 4), (4, 6)])
def test_lu_qr_shapes(shape):
    r = _rng(2)
    m = r.normal(size=shape).astype(np.float32)
    _close(L.lu(m), sl.lu(m), np.float32)
    _close(L.lu(m, permute_l=True), sl.lu(m, permute_l=True), np.float32)
    for mode in ("full", "economic", "r"):
        _close(L.qr(m, mode=mode), sl.qr(m, mode=mode), np.float32)
        got = L.qr(m, mode=mode, pivoting=True)
        want = sl.qr(m, mode=mode, pivoting=True)
        _close(got[:-1], want[:-1], np.float32)
        np.testing.assert_array_equal(got[-1], want[-1])
        assert got[-1].dtype == np.int32
    k = min(shape)
    c_right = r.normal(size=(3, shape[0])).astype(np.float32)
    c_left = r.normal(size=(k, 2)).astype(np.float32)
    _close(L.qr_multiply(m, c_right), sl.qr_multiply(m, c_right), np.float32)
    _close(L.qr_multiply(m, c_left, mode="left"), sl.qr_multiply(m, c_left, mode="left"),
           np.float32)
    _close(L.qr_multiply(m, c_right[0]), sl.qr_multiply(m, c_right[0]), np.float32)
    got = L.qr_multiply(m, c_right, pivoting=True, conjugate=True)
    want = sl.qr_multiply(m, c_right, pivoting=True, conjugate=True)
    _close(got[:2], want[:2], np.float32)


def test_batched_factorizations():
    r = _rng(3)
    a = r.normal(size=(2, 4, 4)).astype(np.float32)
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4, dtype=np.float32)
    b = r.normal(size=(2, 4, 3)).astype(np.float32)
    got = L.cholesky(spd)
    for i in range(2):
        _close(got[i], sl.cholesky(spd[i]), np.float32)
    p, lo, up = L.lu(a)
    for i in range(2):
        _close((p[i], lo[i], up[i]), sl.lu(a[i]), np.float32)
    x = L.cho_solve(L.cho_factor(spd), b)
    np.testing.assert_allclose(spd @ np.asarray(x), b, rtol=1e-4, atol=1e-4)
    x = L.solve_triangular(np.triu(a) + 3 * np.eye(4, dtype=np.float32), b)
    np.testing.assert_allclose((np.triu(a) + 3 * np.eye(4)) @ np.asarray(x), b, rtol=1e-4,
                               atol=1e-4)
    with pytest.warns(FutureWarning, match="batched 1D solves with b.ndim > 1 are deprecated"):
        L.solve_triangular(np.triu(a) + 3 * np.eye(4, dtype=np.float32), b[..., 0])


@pytest.mark.parametrize("dtype,n", [(np.float32, 1), (np.float32, 6), (np.float64, 6)])
def test_hessenberg_and_schur(dtype, n):
    r = _rng(4 + n)
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    with x64(dtype == np.float64):
        a = r.normal(size=(n, n)).astype(dtype)
        ac = (a + 1j * r.normal(size=(n, n))).astype(cdt)
        _close(L.hessenberg(a, calc_q=True), sl.hessenberg(a, calc_q=True), dtype, 10)
        _close(L.hessenberg(a), sl.hessenberg(a), dtype, 10)
        if n > 2:  # (SciPy leaves 2x2 matrices as they are; LAPACK, like JAX, does not)
            _close(L.hessenberg(ac, calc_q=True), sl.hessenberg(ac, calc_q=True), dtype, 10)
        for x, output in ((a, "real"), (ac, "complex"), (a, "complex")):
            t, z = (np.asarray(v) for v in L.schur(x, output=output))
            tr, _ = sl.schur(x, output=output)
            assert t.dtype == tr.dtype
            # The eigenvalues in LAPACK's order; Z unitary; A = Z T Z^H; T (quasi-)triangular.
            _close(np.diag(t), np.diag(tr), dtype, 30)
            _close(z @ t @ z.conj().T, x, dtype, 30)
            _close(z.conj().T @ z, np.eye(n), dtype, 30)
            assert np.all(np.tril(t, -2) == 0)
            if output == "complex":
                assert np.all(np.tril(t, -1) == 0)
            else:  # standardized 2x2 blocks: equal diagonal, opposite-signed off-diagonal
                for i in np.nonzero(np.diag(t, -1))[0]:
                    assert t[i, i] == t[i + 1, i + 1] and t[i, i + 1] * t[i + 1, i] < 0
        tr, zr = sl.schur(a)
        _close(L.rsf2csf(tr, zr), sl.rsf2csf(tr, zr), dtype, 10)


def test_schur_vmap_and_rsf2csf_random():
    r = _rng(5)
    a = r.normal(size=(2, 6, 6)).astype(np.float32)
    t, z = olympus.vmap(L.schur)(a)
    for i in range(2):
        np.testing.assert_allclose(np.diag(t[i]), np.diag(sl.schur(a[i])[0]), atol=1e-5)
        np.testing.assert_allclose(np.asarray(z[i]) @ np.asarray(t[i]) @ np.asarray(z[i]).T,
                                   a[i], atol=1e-5)
    # rsf2csf on arbitrary (not quasi-triangular) inputs follows SciPy's rotations.
    tm, zm = r.normal(size=(2, 6, 6)), r.normal(size=(6, 6))
    got = L.rsf2csf(tm.astype(np.float32), zm.astype(np.float32))
    for i in range(2):
        _close((got[0][i], got[1][i]), sl.rsf2csf(tm[i], zm), np.float32, 30)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_functions(dtype):
    r = _rng(6)
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    with x64(dtype == np.float64):
        a = r.normal(size=(6, 6)).astype(dtype)
        e = r.normal(size=(6, 6)).astype(dtype)
        for scale in (0.001, 0.1, 1.0, 20.0):  # different Pade degrees and squarings
            _close(L.expm(scale * a), sl.expm(scale * a), dtype, 30)
        ac = (a + 1j * e).astype(cdt)
        _close(L.expm(ac), sl.expm(ac), dtype, 30)
        _close(L.expm(np.triu(a), upper_triangular=True), sl.expm(np.triu(a)), dtype, 30)
        _close(L.expm(np.stack([a, e])), np.stack([sl.expm(a), sl.expm(e)]), dtype, 30)
        _close(L.expm_frechet(a, e), sl.expm_frechet(a, e), dtype, 30)
        assert np.isnan(np.asarray(L.expm(1e5 * a, max_squarings=2))).all()
        for shape, side in (((6, 4), "right"), ((4, 6), "left"))[:2 if dtype == np.float64
                                                                 else 1]:
            m = r.normal(size=shape).astype(dtype)
            want = sl.polar(m, side=side)
            _close(L.polar(m, side=side), want, dtype, 100)
            _close(L.polar(m, side=side, method="svd"), want, dtype, 100)
        if dtype == np.float32:  # (the Schur-based functions: float64 below)
            return
        _close(L.funm(a, jnp.sin), sl.funm(a, np.sin), dtype, 100)
        f, err = L.funm(a, jnp.exp, disp=False)
        _close(f, sl.expm(a), dtype, 100)
        assert 0 < float(err) <= 1
        psd = (a @ a.T + np.eye(6)).astype(dtype)
        _close(L.sqrtm(psd), sl.sqrtm(psd), dtype, 100)
        root = np.asarray(L.sqrtm(a))
        _close(root @ root, a, dtype, 300)
        np.testing.assert_allclose(L.sqrtm(np.diag([0, 0, 9.0, 0, 4, 1]).astype(dtype)),
                                   np.diag([0, 0, 3.0, 0, 2, 1]), atol=1e-6)
        b = r.normal(size=(6, 6)).astype(dtype)
        c = r.normal(size=(6, 6)).astype(dtype)
        for method in ("schur", "eigen"):
            _close(L.solve_sylvester(a, b, c, method=method), sl.solve_sylvester(a, b, c),
                   dtype, 3000)
        assert np.isnan(np.asarray(L.solve_sylvester(np.eye(6), -np.eye(6),
                                                     np.ones((6, 6))))).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_tridiagonal(dtype):
    r = _rng(7)
    with x64(dtype == np.float64):
        d = r.normal(size=8).astype(dtype)
        e = r.normal(size=7).astype(dtype)
        want = sl.eigh_tridiagonal(d, e, eigvals_only=True)
        _close(L.eigh_tridiagonal(d, e, eigvals_only=True), want, dtype, 10)
        _close(L.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(2, 5)),
               want[2:6], dtype, 10)
        w, v = (np.asarray(x) for x in L.eigh_tridiagonal(d, e))
        t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
        _close(t @ v, v * w, dtype, 30)
        _close(v.T @ v, np.eye(8), dtype, 30)


def test_constructors():
    r = _rng(8)
    v = r.normal(size=5).astype(np.float32)
    cases = [
        (L.block_diag(v[:4].reshape(2, 2), v[:2], 3.0), sl.block_diag(v[:4].reshape(2, 2),
                                                                      v[:2], 3.0)),
        (L.toeplitz(v, v[:3] + 1), sl.toeplitz(v, v[:3] + 1)),
        (L.toeplitz(v + 1j), sl.toeplitz(v + 1j)),
        (L.hankel(v, v[:3] + 1), sl.hankel(v, v[:3] + 1)), (L.hankel(v), sl.hankel(v)),
        (L.circulant(v), sl.circulant(v)), (L.leslie(v, v[:4]), sl.leslie(v, v[:4])),
        (L.companion(v), sl.companion(v)), (L.fiedler(v), sl.fiedler(v)),
        (L.fiedler_companion(v), sl.fiedler_companion(v)),
        (L.fiedler_companion(v[:2]), sl.fiedler_companion(v[:2])),
        (L.hilbert(5), sl.hilbert(5)), (L.invhilbert(5), sl.invhilbert(5)),
        (L.helmert(5), sl.helmert(5)), (L.helmert(5, full=True), sl.helmert(5, full=True)),
        (L.hadamard(8), sl.hadamard(8)), (L.dft(6), sl.dft(6)),
        (L.dft(6, scale="sqrtn"), sl.dft(6, scale="sqrtn")), (L.dft(6, "n"), sl.dft(6, "n")),
    ]
    for mode in ("full", "same", "valid"):
        cases.append((L.convolution_matrix(v[:3], 5, mode), sl.convolution_matrix(v[:3], 5,
                                                                                    mode)))
    for kind in ("symmetric", "lower", "upper"):
        cases.append((L.pascal(5, kind), sl.pascal(5, kind)))
        cases.append((L.invpascal(5, kind), sl.invpascal(5, kind)))
    for got, want in cases:
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)
    # Batches and dtypes as reference JAX 0.10.2 gives them (recorded).
    assert L.toeplitz(np.ones((2, 1, 3)), np.ones((4, 2))).shape == (2, 4, 3, 2)
    assert L.circulant(np.ones((2, 3), np.int32)).dtype == np.int32
    assert L.hankel(np.array([1, 2, 3])).dtype == np.int32
    assert L.block_diag(np.ones((2, 2), np.int32), 3).dtype == np.int32
    assert L.block_diag().shape == (1, 0)
    assert L.hadamard(4).dtype == np.int32 and L.hadamard(4, np.float32).dtype == np.float32
    assert L.dft(4).dtype == np.complex64 and L.hilbert(3).dtype == np.float32
    assert L.fiedler_companion(np.array([2.0])).shape == (0, 0)


GRADS = {
    "expm": lambda a: L.expm(a),
    "expm_frechet": lambda a: L.expm_frechet(a, jnp.ones_like(a), compute_expm=False),
    "solve": lambda a: L.solve(a, jnp.arange(8.0).reshape(4, 2)),
    "solve_pos": lambda a: L.solve(a @ a.T + 4 * jnp.eye(4), jnp.arange(4.0),
                                   assume_a="pos"),
    "cho_solve": lambda a: L.cho_solve(L.cho_factor(a @ a.T + 4 * jnp.eye(4)), jnp.ones(4)),
    "lu_solve": lambda a: L.lu_solve(L.lu_factor(a), jnp.ones((4, 2)), trans=1),
    "solve_triangular": lambda a: L.solve_triangular(a + 5 * jnp.eye(4), jnp.ones(4)),
    "det": lambda a: L.det(a),
    "polar_svd": lambda a: L.polar(a, method="svd")[1],
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name):
    f = GRADS[name]
    with x64():
        a = _rng(9).normal(size=(4, 4))
        w = _rng(10).normal(size=np.shape(f(a)))
        loss = lambda a: jnp.sum(f(a) * w)  # noqa: E731
        g = np.asarray(olympus.grad(loss)(a))
        eps = 1e-6
        fd = np.zeros_like(a)
        for i in range(4):
            for j in range(4):
                d = np.zeros_like(a)
                d[i, j] = eps
                fd[i, j] = (float(loss(a + d)) - float(loss(a - d))) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_jit_and_vmap():
    r = _rng(11)
    a = r.normal(size=(3, 4, 4)).astype(np.float32)
    batched = np.asarray(L.expm(a))
    np.testing.assert_allclose(olympus.jit(L.expm)(a), batched, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(olympus.vmap(L.expm)(a), batched, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(olympus.vmap(L.hessenberg)(a), L.hessenberg(a), rtol=1e-5,
                               atol=1e-5)
    d = r.normal(size=(2, 6)).astype(np.float32)
    e = r.normal(size=(2, 5)).astype(np.float32)
    got = olympus.vmap(lambda d, e: L.eigh_tridiagonal(d, e, eigvals_only=True))(d, e)
    for i in range(2):
        np.testing.assert_allclose(got[i], sl.eigh_tridiagonal(d[i], e[i], eigvals_only=True),
                                   rtol=1e-5, atol=1e-5)


def test_errors():
    """Messages recorded from reference JAX 0.10.2."""
    a = np.eye(3, dtype=np.float32)
    cases = [
        (lambda: L.schur(a, output="foo"), ValueError,
         "Expected 'output' to be either 'real' or 'complex', got output='foo'."),
        (lambda: L.schur(np.eye(3, dtype=np.int32)), TypeError,
         "schur does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
         "subtypes of floating, complexfloating."),
        (lambda: L.schur(np.ones((2, 3))), ValueError,
         "The input to schur must be a square matrix. Got shape (2, 3)."),
        (lambda: L.schur(np.ones(3)), TypeError,
         "Input 0 to schur must have rank at least 2, but got shape=(3,)"),
        (lambda: L.hessenberg(np.ones((2, 3))), ValueError,
         "Argument to Hessenberg reduction must have shape [..., n, n], got shape (2, 3)"),
        (lambda: L.qr(a, mode="foo"), ValueError, "Unsupported QR decomposition mode 'foo'"),
        (lambda: L.qr_multiply(np.ones((4, 2)), np.ones((3, 3))), ValueError,
         "Array shapes are not compatible for c @ Q operation: a has shape (4, 2) so Q has 4 "
         "rows, but c has 3 columns (expected 4)."),
        (lambda: L.qr_multiply(np.ones((4, 2)), np.ones((3, 3)), mode="left"), ValueError,
         "Array shapes are not compatible for Q @ c operation: a has shape (4, 2) so Q has 2 "
         "columns, but c has 3 rows (expected 2)."),
        (lambda: L.qr_multiply(a, a, mode="x"), ValueError,
         "mode must be 'right' or 'left', got 'x'"),
        (lambda: L.solve(a, a, assume_a="foo"), ValueError,
         "Expected assume_a to be one of ['gen', 'sym', 'her', 'pos']; got 'foo'"),
        (lambda: L.solve_triangular(a, a, trans=5), ValueError, "Invalid 'trans' value 5"),
        (lambda: L.lu_solve(L.lu_factor(a), a, trans=4), ValueError,
         "'trans' value must be 0, 1, or 2, got 4"),
        (lambda: L.eigh(a, a), NotImplementedError,
         "Only the b=None case of eigh is implemented"),
        (lambda: L.eigh(a, type=2), NotImplementedError,
         "Only the type=1 case of eigh is implemented."),
        (lambda: L.expm(np.ones((2, 3))), ValueError,
         "Expected A to be a (batched) square matrix, got A.shape=(2, 3)."),
        (lambda: L.expm(np.eye(2, dtype=np.float16)), TypeError,
         "A.dtype=float16 is not supported."),
        (lambda: L.expm_frechet(a, np.ones((2, 2))), ValueError,
         "expected A and E to be the same shape, got A.shape=(3, 3) E.shape=(2, 2)"),
        (lambda: L.funm(np.ones((2, 3)), jnp.exp), ValueError,
         "expected square array_like input"),
        (lambda: L.sqrtm(a, blocksize=2), NotImplementedError,
         "Blocked version is not implemented yet."),
        (lambda: L.polar(np.ones((4, 2)), side="left"), NotImplementedError,
         "method='qdwh' only supports mxn matrices where m < n where side='right' and m >= n "
         "side='left', got (4, 2) with side='left'"),
        (lambda: L.polar(a, side="x"), ValueError,
         "The argument `side` must be either 'right' or 'left'."),
        (lambda: L.polar(np.ones(3)), ValueError, "The input `a` must be at least a 2-D array."),
        (lambda: L.polar(a, method="x"), ValueError, "Unknown polar decomposition method x."),
        (lambda: L.eigh_tridiagonal(np.ones(4), np.ones(3, np.int32)), TypeError,
         "diagonal and off-diagonal values must have same dtype, got float32 and int32"),
        (lambda: L.eigh_tridiagonal(np.ones(4, np.int32), np.ones(3, np.int32)), TypeError,
         "Only float32 and float64 inputs are supported as inputs to "
         "olympus.scipy.linalg.eigh_tridiagonal, got int32 and int32"),
        (lambda: L.eigh_tridiagonal(np.ones(4), np.ones(3), select="v",
                                    select_range=(1, 2)), NotImplementedError,
         "eigh_tridiagonal(..., select='v') is not implemented"),
        (lambda: L.eigh_tridiagonal(np.ones(4), np.ones(3), select="i"), ValueError,
         "for select='i', select_range must be specified."),
        (lambda: L.rsf2csf(np.ones((2, 3)), a), ValueError, "Input 'T' must be square."),
        (lambda: L.rsf2csf(a, np.ones((2, 2))), ValueError,
         "Input array shapes must match: Z: (2, 2) vs. T: (3, 3)"),
        (lambda: L.solve_sylvester(a, np.ones((2, 2)), a), ValueError,
         "Incompatible shapes for Sylvester equation:\nA: (3, 3)\nB: (2, 2)\nC: (3, 3)"),
        (lambda: L.solve_sylvester(a, a, a, method="x"), ValueError,
         'Unrecognized method x. The two valid methods are either "schur" or "eigen".'),
        (lambda: L.block_diag(np.ones((2, 2, 2))), ValueError,
         "Arguments to olympus.scipy.linalg.block_diag must have at most 2 dimensions"),
        (lambda: L.toeplitz([1, 2]), TypeError,
         "toeplitz requires ndarray or scalar arguments, got <class 'list'> at position 0."),
        (lambda: L.hankel(3.0), ValueError,
         "hankel: c must be at least 1-dimensional, got a scalar."),
        (lambda: L.leslie(np.array([1.0]), np.array([0.5])), ValueError,
         "The length of f along the last axis must be at least 2; got shape (1,)."),
        (lambda: L.companion(np.array([1.0])), ValueError,
         "The length of `a` along the last axis must be at least 2; got shape (1,)."),
        (lambda: L.fiedler_companion(np.array([])), ValueError,
         "fiedler_companion requires the last axis of 'a' to have nonzero length, but got an "
         "array of shape (0,)."),
        (lambda: L.convolution_matrix(np.ones(3), 0), ValueError,
         "n must be a positive integer; got 0."),
        (lambda: L.convolution_matrix(np.ones(3), 2, "x"), ValueError,
         "mode must be one of 'full', 'valid', 'same'; got 'x'."),
        (lambda: L.pascal(4, "x"), ValueError,
         "Expected kind to be on of: ['symmetric', 'lower', 'upper']; got x"),
        (lambda: L.helmert(0), ValueError, "n must be a positive integer; got 0."),
        (lambda: L.hadamard(3), ValueError, "n must be a positive power of 2; got 3."),
        (lambda: L.dft(4, scale="x"), ValueError,
         "scale must be None, 'sqrtn', or 'n'; got 'x'."),
        (lambda: L.dft(4, dtype=np.float32), ValueError,
         "dtype must be a complex floating-point type; got float32."),
    ]
    for fn, exc, msg in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(exc) as info:
                fn()
        assert msg in str(info.value), (msg, str(info.value))
