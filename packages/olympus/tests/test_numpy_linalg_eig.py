"""olympus.numpy.linalg.eig / eigvals and olympus.lax.linalg.eig against NumPy (float32,
float64, complex64, complex128; batched, empty and 1x1), eager, under jit and vmap; the
derivatives of eigenvalues and eigenvectors against finite differences; errors. Then the
rest of the jax.numpy.linalg namespace: tensorinv, tensorsolve and the array-API forms of
diagonal, trace, outer and cross."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _transform_checks import check_grads, check_vmap, x64

import olympus
import olympus.numpy as jnp
from olympus import lax

rng = np.random.default_rng(42)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 3e-4, np.complex64: 3e-4, np.float64: 1e-9, np.complex128: 1e-9}
COMPLEX = {np.float32: np.complex64, np.float64: np.complex128, np.complex64: np.complex64,
           np.complex128: np.complex128}


def _randn(*shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _wide(dt):
    """x64 on for the 64-bit dtypes."""
    return x64() if dt in (np.float64, np.complex128) else _null()


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def match_order(w, ref):
    """`ref` reordered per batch member to pair each entry with the nearest one of `w`.
    NumPy runs single-precision eig in double precision, so LAPACK may order near-ties
    differently there; in double precision the orders agree exactly (checked below)."""
    w, ref = np.asarray(w), np.asarray(ref)
    out = np.empty(ref.shape, np.complex128)
    for idx in np.ndindex(w.shape[:-1]):
        left = list(ref[idx])
        for k, z in enumerate(w[idx]):
            j = int(np.argmin([abs(z - r) for r in left]))
            out[idx + (k,)] = left.pop(j)
    return out


def _check_eigpairs(a, w, v, tol):
    a, w, v = np.asarray(a), np.asarray(w), np.asarray(v)
    scale = max(1.0, float(np.abs(a).max(initial=0.0)))
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=20 * tol * scale)
    if v.size:
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=10 * tol)


# --- values against numpy ----------------------------------------------------------------------


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (3, 3), (2, 4, 4), (2, 3, 5, 5), (0, 2, 2)],
                         ids=str)
def test_eig_and_eigvals_match_numpy(dt, shape):
    with _wide(dt):
        a = _randn(*shape, dtype=dt)
        w, v = jnp.linalg.eig(a)
        wv = jnp.linalg.eigvals(a)
        cdt = np.dtype(COMPLEX[dt])
        assert w.dtype == v.dtype == wv.dtype == cdt
        assert w.shape == wv.shape == shape[:-1] and v.shape == shape
        tol = TOL[dt]
        if a.size == 0:
            return
        ref = np.linalg.eigvals(a)
        if dt in (np.float64, np.complex128):
            # float64 / complex128: the very LAPACK routine numpy calls, the same order
            np.testing.assert_allclose(np.asarray(w), ref, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(w), match_order(w, ref), rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(wv), np.asarray(w), rtol=tol, atol=tol)
        _check_eigpairs(a, w, v, tol)


def test_eig_by_hand():
    # upper triangular: the eigenvalues are the diagonal; a rotation: +-i
    t = np.array([[2.0, 1.0, 5.0], [0.0, -1.0, 3.0], [0.0, 0.0, 0.5]], np.float32)
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.linalg.eigvals(t))),
                               [-1.0, 0.5, 2.0], atol=1e-6)
    r = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)
    w, v = jnp.linalg.eig(r)
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)), [-1j, 1j], atol=1e-6)
    _check_eigpairs(r, w, v, 1e-6)
    # eigenvector of the 1x1 matrix is a unit scalar
    w1, v1 = jnp.linalg.eig(np.array([[7.0]], np.float32))
    np.testing.assert_allclose(np.asarray(w1), [7.0])
    np.testing.assert_allclose(np.abs(np.asarray(v1)), [[1.0]])


def test_integer_and_list_like_inputs_promote():
    a = np.array([[2, 1], [1, 3]], np.int32)
    w = jnp.linalg.eigvals(a)
    assert w.dtype == np.complex64
    np.testing.assert_allclose(np.sort(np.asarray(w).real), np.sort(np.linalg.eigvalsh(a)),
                               rtol=1e-5)
    with x64():
        w64 = jnp.linalg.eigvals(a.astype(np.int64))
        assert w64.dtype == np.complex128


def test_jit_matches_eager_and_eig_result_fields():
    a = _randn(3, 4, 4)
    res = jnp.linalg.eig(a)
    assert isinstance(res, jnp.linalg.EigResult)
    assert res.eigenvalues is res[0] and res.eigenvectors is res[1]
    jw, jv = olympus.jit(lambda x: tuple(jnp.linalg.eig(x)))(a)
    np.testing.assert_allclose(np.asarray(jw), np.asarray(res.eigenvalues), rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(jv), np.asarray(res.eigenvectors), rtol=1e-5,
                               atol=1e-5)
    jwv = olympus.jit(jnp.linalg.eigvals)(a)
    np.testing.assert_allclose(np.asarray(jwv), np.asarray(res.eigenvalues), rtol=1e-6,
                               atol=1e-6)


def test_lax_linalg_eig_outputs():
    a = _randn(2, 4, 4, dtype=np.complex64)
    w, vl, vr = lax.linalg.eig(a)
    _check_eigpairs(a, w, vr, 3e-4)
    vlh = np.conj(np.swapaxes(np.asarray(vl), -1, -2))
    np.testing.assert_allclose(vlh @ a, np.asarray(w)[..., :, None] * vlh, atol=3e-3)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(vl), axis=-2), 1.0, rtol=1e-4)
    outs = lax.linalg.eig(a, compute_left_eigenvectors=False)
    assert len(outs) == 2
    outs = lax.linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    assert len(outs) == 1
    np.testing.assert_allclose(np.asarray(outs[0]), np.asarray(w), rtol=1e-5, atol=1e-5)
    (wl, vl_only) = lax.linalg.eig(a, compute_right_eigenvectors=False)
    np.testing.assert_allclose(np.asarray(vl_only), np.asarray(vl), rtol=1e-5, atol=1e-5)


# --- vmap -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_vmap_eigvals_matches_loop(in_axes):
    a = np.moveaxis(_randn(3, 4, 4), 0, in_axes).copy()
    check_vmap(jnp.linalg.eigvals, [a], in_axes)


def test_vmap_eig_matches_loop_batched_members():
    check_vmap(lambda x: tuple(jnp.linalg.eig(x)), [_randn(3, 2, 3, 3, dtype=np.complex64)], 0,
               rtol=1e-4, atol=1e-4)


# --- derivatives --------------------------------------------------------------------------------


def _real_spectrum(n, seed):
    """A nonsymmetric real matrix with distinct real eigenvalues 1..n."""
    r = np.random.default_rng(seed)
    s = np.eye(n) + 0.3 * r.standard_normal((n, n))
    return s @ np.diag(np.arange(1.0, n + 1.0)) @ np.linalg.inv(s)


@pytest.mark.parametrize("kind", ["real", "real_complex_pairs", "complex"])
def test_eigvals_jvp_and_vjp_against_finite_differences(kind):
    with x64():
        if kind == "real":
            a = _real_spectrum(4, 0)
        elif kind == "real_complex_pairs":
            a = np.array([[1.0, -2.0, 0.3], [2.0, 0.5, -0.4], [0.1, 0.2, 3.0]])
        else:
            a = _randn(3, 3, dtype=np.complex128)
        check_grads(jnp.linalg.eigvals, [a], rtol=1e-5, atol=1e-6)


def test_eigvals_jvp_batched():
    with x64():
        a = np.stack([_real_spectrum(3, 1), _real_spectrum(3, 2)])
        check_grads(jnp.linalg.eigvals, [a], rtol=1e-5, atol=1e-6)


def test_eigenvalue_jvp_is_diag_of_v_inverse_da_v():
    with x64():
        a = _randn(4, 4, dtype=np.float64)
        t = _randn(4, 4, dtype=np.float64)
        (w, v), (dw, _) = olympus.jvp(jnp.linalg.eig, (a,), (t,))
        v = np.asarray(v)
        want = np.diagonal(np.linalg.solve(v, t @ v))
        np.testing.assert_allclose(np.asarray(dw), want, rtol=1e-9, atol=1e-10)


def test_grad_of_eigenvalues_against_finite_differences():
    with x64():
        a = _randn(4, 4, dtype=np.float64)

        def f_np(x):
            return np.sum(np.abs(np.linalg.eigvals(x)) ** 2) + np.sum(
                np.linalg.eigvals(x).real ** 3)

        g = olympus.grad(lambda x: jnp.sum(jnp.abs(jnp.linalg.eigvals(x)) ** 2)
                         + jnp.sum(jnp.real(jnp.linalg.eigvals(x)) ** 3))(a)
        eps = 1e-6
        fd = np.zeros_like(a)
        for i in range(4):
            for j in range(4):
                e = np.zeros_like(a)
                e[i, j] = eps
                fd[i, j] = (f_np(a + e) - f_np(a - e)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-7)
        # sum of eigenvalues = trace: its gradient is the identity
        gt = olympus.grad(lambda x: jnp.real(jnp.sum(jnp.linalg.eigvals(x))))(a)
        np.testing.assert_allclose(np.asarray(gt), np.eye(4), atol=1e-10)


def test_eigenvector_jvp_real_spectrum_against_finite_differences():
    # real eigenvectors: unique up to a sign that is locally constant, so the derivative is
    # well defined and must match finite differences
    with x64():
        check_grads(lambda x: tuple(jnp.linalg.eig(x)), [_real_spectrum(4, 3)], rtol=1e-5,
                    atol=1e-6)


@pytest.mark.parametrize("dt", [np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_eigenvector_jvp_satisfies_differentiated_eigen_equation(dt):
    # complex eigenvectors are unique only up to a phase, so check what every gauge must
    # satisfy: dA V + A dV = dV W + V dW, and dV keeps the columns at unit norm
    with x64():
        a = _randn(2, 4, 4, dtype=dt)
        t = _randn(2, 4, 4, dtype=dt)
        (w, v), (dw, dv) = olympus.jvp(jnp.linalg.eig, (a,), (t,))
        w, v, dw, dv = (np.asarray(z) for z in (w, v, dw, dv))
        lhs = t @ v + a @ dv
        rhs = dv * w[..., None, :] + v * dw[..., None, :]
        np.testing.assert_allclose(lhs, rhs, atol=1e-9)
        np.testing.assert_allclose(np.sum(np.real(np.conj(v) * dv), axis=-2), 0.0, atol=1e-10)


def test_left_eigenvector_derivative_is_not_implemented():
    a = _randn(3, 3)
    with pytest.raises(NotImplementedError, match="left eigenvectors"):
        olympus.jvp(lambda x: lax.linalg.eig(x)[1], (a,), (a,))
    # only eigenvalues with left eigenvectors requested: still the left vectors' rule
    with pytest.raises(NotImplementedError, match="compute_left_eigenvectors=False"):
        olympus.jvp(lambda x: lax.linalg.eig(x, compute_right_eigenvectors=False)[0], (a,),
                    (a,))


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", ["eig", "eigvals"])
@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (3,)], ids=str)
def test_non_square_input_names_argument_and_shape(fn, shape):
    """JAX 0.10.2's words (recorded): the trailing matrix shape, or the rank for a vector."""
    a = np.ones(shape, np.float32)
    if len(shape) < 2:
        with pytest.raises(TypeError, match=re.escape(
                f"Input 0 to eig must have rank at least 2, but got shape={shape}")):
            getattr(jnp.linalg, fn)(a)
        return
    with pytest.raises(ValueError, match=re.escape(
            f"The input to eig must be a square matrix. Got shape {shape[-2:]}.")):
        getattr(jnp.linalg, fn)(a)


def test_lax_eig_non_square_and_bad_dtype():
    with pytest.raises(ValueError, match=r"eig: argument x must be .*square.*\(3, 2\)"):
        lax.linalg.eig(np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="eig requires a float32, float64, complex64 or "
                                        "complex128 operand, got int32"):
        lax.linalg.eig(np.ones((2, 2), np.int32))


def test_non_array_argument_is_rejected():
    with pytest.raises(TypeError, match="eigvals"):
        jnp.linalg.eigvals([[1.0, 2.0], [3.0, 4.0]])


# --- the rest of the jax.numpy.linalg namespace -------------------------------------------------

JAX_NUMPY_LINALG = [
    "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
    "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
    "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
    "vector_norm", "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
]


def test_namespace_has_everything_jax_numpy_linalg_has():
    missing = [n for n in JAX_NUMPY_LINALG if not hasattr(jnp.linalg, n)]
    assert not missing, missing
    assert set(JAX_NUMPY_LINALG) <= set(jnp.linalg.__all__)


@pytest.mark.parametrize("shape,ind", [((6, 2, 3), 1), ((2, 3, 6), 2), ((4, 4), 1)],
                         ids=str)
def test_tensorinv_matches_numpy(shape, ind):
    a = _randn(*shape) + 0.0
    a = a + 3 * np.eye(int(np.prod(shape[:ind]))).reshape(shape).astype(np.float32)
    got = jnp.linalg.tensorinv(a, ind=ind)
    want = np.linalg.tensorinv(a, ind=ind)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    # tensordot(tensorinv(a), a, ind) is the identity on a's trailing dims
    ident = np.tensordot(np.asarray(got), a, ind)
    np.testing.assert_allclose(ident.reshape(int(np.prod(shape[ind:])), -1),
                               np.eye(int(np.prod(shape[ind:]))), atol=1e-4)


def test_tensorinv_errors():
    """JAX 0.10.2's words (recorded)."""
    with pytest.raises(ValueError, match=re.escape(
            "tensorinv is only possible when the product of the first `ind` dimensions "
            "equals that of the remaining dimensions. got arr.shape=(2, 3, 4) with ind=1.")):
        jnp.linalg.tensorinv(np.ones((2, 3, 4), np.float32), ind=1)
    with pytest.raises(ValueError, match="ind must be a positive integer; got ind=0"):
        jnp.linalg.tensorinv(np.ones((2, 2), np.float32), ind=0)


@pytest.mark.parametrize("a_shape,b_shape,axes", [((6, 2, 3), (6,), None),
                                                  ((2, 3, 6), (2, 3), None),
                                                  ((2, 6, 3), (6,), (0,)),
                                                  ((2, 3, 3, 2), (2, 3), (1,))], ids=str)
def test_tensorsolve_matches_numpy(a_shape, b_shape, axes):
    a = _randn(*a_shape).astype(np.float64)
    b = _randn(*b_shape).astype(np.float64)
    with x64():
        got = jnp.linalg.tensorsolve(a, b, axes=axes)
        want = np.linalg.tensorsolve(a, b, axes=axes)
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-8, atol=1e-8)


def test_tensorsolve_errors():
    with pytest.raises(ValueError, match=r"tensorsolve: the leading dimensions \(6,\) of a "
                                         r"\(shape \(6, 2, 3\)\) must hold as many elements "
                                         r"as b \(shape \(5,\)\)"):
        jnp.linalg.tensorsolve(np.ones((6, 2, 3), np.float32), np.ones(5, np.float32))
    with pytest.raises(ValueError, match=r"6 unknowns but 4 equations"):
        jnp.linalg.tensorsolve(np.ones((4, 2, 3), np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"at least as many dimensions as b"):
        jnp.linalg.tensorsolve(np.ones((4,), np.float32), np.ones((2, 2), np.float32))


def test_array_api_forms_act_on_last_axes():
    x = _randn(2, 3, 4)
    for off in (0, 1, -1):
        np.testing.assert_allclose(np.asarray(jnp.linalg.diagonal(x, offset=off)),
                                   np.linalg.diagonal(x, offset=off))
        np.testing.assert_allclose(np.asarray(jnp.linalg.trace(x, offset=off)),
                                   np.linalg.trace(x, offset=off), rtol=1e-5, atol=1e-6)
    a, b = _randn(4, 3), _randn(3)
    np.testing.assert_allclose(np.asarray(jnp.linalg.cross(a, b)), np.linalg.cross(a, b),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.linalg.cross(a.T, a.T[:, ::-1], axis=0)),
                               np.linalg.cross(a.T, a.T[:, ::-1], axis=0), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.linalg.outer(b, a[:, 0])),
                               np.linalg.outer(b, a[:, 0]), rtol=1e-6)
    with pytest.raises(ValueError, match=r"outer: argument x1 must be one-dimensional, got "
                                         r"shape \(4, 3\)"):
        jnp.linalg.outer(a, b)
    with pytest.raises(ValueError, match=r"cross: argument x2 must have size 3 along axis "
                                         r"-1, got shape \(2,\)"):
        jnp.linalg.cross(b, b[:2])
    with pytest.raises(ValueError, match=r"diagonal: argument x must have at least two "
                                         r"dimensions, got shape \(3,\)"):
        jnp.linalg.diagonal(b)


def test_other_linalg_functions_match_numpy():
    a, b, c = _randn(3, 4), _randn(4, 5), _randn(5, 2)
    np.testing.assert_allclose(np.asarray(jnp.linalg.multi_dot([a, b, c])),
                               np.linalg.multi_dot([a, b, c]), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.vecdot(a, a)), np.linalg.vecdot(a, a),
                               rtol=1e-5)
    x = _randn(2, 3, 4)
    np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_transpose(x)),
                               np.linalg.matrix_transpose(x))
    s = _randn(3, 3)
    s = s @ s.T + 3 * np.eye(3, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(jnp.linalg.eigvalsh(s)), np.linalg.eigvalsh(s),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(jnp.linalg.svdvals(a)), np.linalg.svdvals(a),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.cholesky(s, upper=True)),
                               np.linalg.cholesky(s, upper=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.vector_norm(x, ord=3, axis=(0, 2))),
                               np.linalg.vector_norm(x, ord=3, axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_norm(x, ord="nuc")),
                               np.linalg.matrix_norm(x, ord="nuc"), rtol=1e-4)
    assert int(jnp.linalg.matrix_rank(np.outer(a[0], b[:, 0]))) == 1
    np.testing.assert_allclose(float(jnp.linalg.cond(s)), np.linalg.cond(s), rtol=1e-4)
