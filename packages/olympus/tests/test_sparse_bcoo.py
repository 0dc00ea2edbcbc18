"""olympus.experimental.sparse: the BCOO format, its functions and primitives.

Values are checked against dense NumPy and scipy.sparse, gradients against the dense
computation and finite differences; reprs and olympusprs against reference JAX 0.10.2's
recorded output (said so where it applies)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

import olympus
import olympus.numpy as jnp
from olympus.experimental import sparse

M = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)


def _rand(shape, density=0.4, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    x[rng.random(shape) > density] = 0
    return x


# --- construction, buffers, repr ------------------------------------------------------------


def test_fromdense_buffers_and_repr():
    """Recorded from JAX 0.10.2: buffers, flags and repr of ``BCOO.fromdense(M)``."""
    A = sparse.BCOO.fromdense(M)
    assert repr(A) == "BCOO(float32[3, 4], nse=4)"
    np.testing.assert_array_equal(A.data, [1., 2., 3., 4.])
    np.testing.assert_array_equal(A.indices, [[0, 1], [0, 3], [1, 0], [2, 2]])
    assert A.indices.dtype == np.int32
    assert A.indices_sorted and A.unique_indices
    assert (A.ndim, A.shape, A.dtype, A.nse, A.size) == (2, (3, 4), np.float32, 4, 12)
    np.testing.assert_array_equal(A.todense(), M)


def test_fromdense_padding():
    """Recorded from JAX 0.10.2: extra stored elements are zeros at index == shape."""
    A = sparse.BCOO.fromdense(M, nse=6)
    np.testing.assert_array_equal(A.data, [1., 2., 3., 4., 0., 0.])
    np.testing.assert_array_equal(A.indices, [[0, 1], [0, 3], [1, 0], [2, 2], [3, 4], [3, 4]])
    np.testing.assert_array_equal(A.todense(), M)


@pytest.mark.parametrize("n_batch,n_dense", [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (0, 2)])
def test_fromdense_todense_roundtrip_layouts(n_batch, n_dense):
    x = _rand((2, 3, 4), seed=n_batch * 3 + n_dense)
    A = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    assert (A.n_batch, A.n_dense, A.n_sparse) == (n_batch, n_dense, 3 - n_batch - n_dense)
    np.testing.assert_array_equal(A.todense(), x)
    np.testing.assert_array_equal(olympus.jit(lambda a: a.todense())(A), x)


def test_batched_repr():
    """Recorded from JAX 0.10.2."""
    B = sparse.BCOO.fromdense(jnp.arange(24.).reshape(2, 3, 4), n_batch=1)
    assert repr(B) == "BCOO(float32[2, 3, 4], nse=12, n_batch=1)"
    assert B.indices.shape == (2, 12, 2)
    C = sparse.BCOO.fromdense(jnp.arange(24.).reshape(2, 3, 4), n_dense=1)
    assert repr(C) == "BCOO(float32[2, 3, 4], nse=6, n_dense=1)"
    assert (C.indices.shape, C.data.shape) == ((6, 2), (6, 4))
    D = sparse.BCOO.fromdense(jnp.ones((2, 3, 4)), n_batch=1, n_dense=1)
    assert repr(D) == "BCOO(float32[2, 3, 4], nse=3, n_batch=1, n_dense=1)"


def test_traced_repr_and_fromdense_needs_nse():
    A = sparse.BCOO.fromdense(M)
    seen = []
    olympus.jit(lambda a: seen.append(repr(a)) or a.data)(A)
    assert seen[0].endswith("[BCOO(float32[3, 4], nse=4)]")
    with pytest.raises(olympus.errors.ConcretizationTypeError):
        olympus.jit(lambda m: sparse.BCOO.fromdense(m).data)(M)
    out = olympus.jit(lambda m: sparse.BCOO.fromdense(m, nse=4).todense())(M)
    np.testing.assert_array_equal(out, M)


def test_constructor_validates():
    with pytest.raises(ValueError, match="Invalid"):
        sparse.BCOO((jnp.ones(3), jnp.zeros((4, 2), jnp.int32)), shape=(3, 4))


def test_from_scipy_sparse():
    s = sps.random(5, 6, density=0.3, random_state=1, format="csr", dtype=np.float32)
    A = sparse.BCOO.from_scipy_sparse(s)
    np.testing.assert_allclose(A.todense(), s.toarray())


def test_pytree():
    """Recorded from JAX 0.10.2: the treedef's aux data."""
    A = sparse.BCOO.fromdense(M)
    leaves, tree = olympus.tree_util.tree_flatten(A)
    assert len(leaves) == 2
    assert str(tree) == ("PyTreeDef(CustomNode(BCOO[{'shape': (3, 4), 'indices_sorted': True, "
                         "'unique_indices': True}], [*, *]))")
    B = olympus.tree_util.tree_unflatten(tree, leaves)
    np.testing.assert_array_equal(B.todense(), M)


# --- products ---------------------------------------------------------------------------------


def test_matmul_both_sides():
    """Recorded from JAX 0.10.2 (and equal to the dense products)."""
    A = sparse.BCOO.fromdense(M)
    np.testing.assert_allclose(A @ jnp.ones(4), [3., 3., 4.])
    np.testing.assert_allclose(jnp.ones(3) @ A, [3., 1., 4., 2.])
    y = np.array([3., 6., 5.], np.float32)
    np.testing.assert_allclose(A.T @ y, M.T @ y)
    x = _rand((4, 5), density=1.0)
    np.testing.assert_allclose(A @ x, M @ x, rtol=1e-6)
    np.testing.assert_allclose(jnp.asarray(x.T) @ A.T, x.T @ M.T, rtol=1e-6)


@pytest.mark.parametrize("n_batch,n_dense", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("dn", [
    (((2,), (0,)), ((), ())),        # contract the last dim with a dense matrix
    (((1,), (1,)), ((0,), (0,))),    # batched matmul
    (((0, 1), (0, 1)), ((), ())),    # contract two dims
    (((1,), (0,)), ((), ())),        # a middle dim
])
def test_bcoo_dot_general_layouts(n_batch, n_dense, dn):
    x = _rand((2, 3, 4), seed=7)
    A = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    (lc, rc), (lb, rb) = dn
    rshape = [0] * (len(rc) + len(rb) + 1)
    for l_, r_ in zip(lc + lb, rc + rb):
        rshape[r_] = x.shape[l_]
    rshape[rshape.index(0)] = 5
    y = _rand(tuple(rshape), density=1.0, seed=3)
    expect = olympus.lax.dot_general(jnp.asarray(x), jnp.asarray(y), dn)
    got = sparse.bcoo_dot_general(A, y, dimension_numbers=dn)
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)
    got_jit = olympus.jit(lambda a, b: sparse.bcoo_dot_general(a, b, dimension_numbers=dn))(A, y)
    np.testing.assert_allclose(got_jit, expect, rtol=1e-5, atol=1e-5)


def test_sparse_sparse_product():
    """Recorded from JAX 0.10.2: ``A @ A.T`` is a BCOO of nse 9."""
    A = sparse.BCOO.fromdense(M)
    P = A @ A.T
    assert repr(P) == "BCOO(float32[3, 3], nse=9)"
    np.testing.assert_allclose(P.todense(), M @ M.T)
    v = sparse.BCOO.fromdense(np.array([0., 2., 0., 1.], np.float32))
    np.testing.assert_allclose((A @ v).todense(), M @ np.array([0., 2., 0., 1.]))


def test_dot_general_sampled():
    a, b = _rand((3, 2), 1.0, 1), _rand((2, 4), 1.0, 2)
    A = sparse.BCOO.fromdense(M)
    out = sparse.bcoo_dot_general_sampled(a, b, A.indices,
                                          dimension_numbers=(((1,), (0,)), ((), ())))
    full = a @ b
    np.testing.assert_allclose(out, full[A.indices[:, 0], A.indices[:, 1]], rtol=1e-6)


def test_dot_general_olympuspr():
    """Recorded from JAX 0.10.2 (``jax.make_jaxpr`` of ``A @ x``)."""
    A = sparse.BCOO.fromdense(M)
    text = str(olympus.make_olympuspr(
        lambda d, x: sparse.BCOO((d, A.indices), shape=(3, 4)) @ x)(A.data, jnp.ones(4)))
    assert text == """{ lambda a:i32[4,2]; b:f32[4] c:f32[4]. let
    d:f32[3] = bcoo_dot_general[
      dimension_numbers=(((1,), (0,)), ((), ()))
      lhs_spinfo=SparseInfo(shape=(3, 4), indices_sorted=False, unique_indices=False)
      preferred_element_type=float32
    ] b a c
  in (d,) }"""


def test_transpose_and_sort_olympusprs():
    """Recorded from JAX 0.10.2."""
    A = sparse.BCOO.fromdense(M)
    assert str(olympus.make_olympuspr(lambda A: A.T)(A)) == """{ lambda ; a:f32[4] b:i32[4,2]. let
    c:f32[4] d:i32[4,2] = bcoo_transpose[
      permutation=(1, 0)
      spinfo=SparseInfo(shape=(3, 4), indices_sorted=True, unique_indices=True)
    ] a b
  in (c, d) }"""
    assert str(olympus.make_olympuspr(lambda A: A.sort_indices())(A)) == """{ lambda ; a:f32[4] b:i32[4,2]. let
    c:f32[4] d:i32[4,2] = bcoo_sort_indices[
      spinfo=SparseInfo(shape=(3, 4), indices_sorted=True, unique_indices=True)
    ] a b
  in (c, d) }"""
    assert str(olympus.make_olympuspr(lambda x: sparse.bcoo_extract(A, x))(M)) == \
        """{ lambda a:i32[4,2]; b:f32[3,4]. let
    c:f32[4] = bcoo_extract[assume_unique=True] a b
  in (c, a) }"""


# --- the other BCOO operations ----------------------------------------------------------------


def test_transpose_batched():
    x = _rand((2, 3, 4, 5), seed=4)
    A = sparse.BCOO.fromdense(x, n_batch=1, n_dense=1)
    T = sparse.bcoo_transpose(A, permutation=(0, 2, 1, 3))
    np.testing.assert_array_equal(T.todense(), x.transpose(0, 2, 1, 3))
    with pytest.raises(NotImplementedError, match="cannot permute batch axes"):
        sparse.bcoo_transpose(A, permutation=(1, 0, 2, 3))


def test_sum_duplicates_and_sort():
    """Recorded from JAX 0.10.2."""
    D = sparse.BCOO((jnp.array([1., 2., 3.]), jnp.array([[0, 0], [0, 0], [1, 1]])), shape=(2, 2))
    S = D.sum_duplicates()
    assert repr(S) == "BCOO(float32[2, 2], nse=2)"
    np.testing.assert_array_equal(S.data, [3., 3.])
    np.testing.assert_array_equal(S.indices, [[0, 0], [1, 1]])
    S3 = D.sum_duplicates(nse=3)
    np.testing.assert_array_equal(S3.data, [3., 3., 0.])
    np.testing.assert_array_equal(S3.indices, [[0, 0], [1, 1], [2, 2]])
    U = sparse.BCOO((jnp.array([1., 2., 3.]), jnp.array([[1, 1], [0, 1], [0, 0]])), shape=(2, 2))
    s = U.sort_indices()
    np.testing.assert_array_equal(s.indices, [[0, 0], [0, 1], [1, 1]])
    np.testing.assert_array_equal(s.data, [3., 2., 1.])
    with pytest.raises(ValueError, match="nse must be specified"):
        olympus.jit(lambda d: sparse.bcoo_sum_duplicates(d).data)(D)


def test_sum_duplicates_batched_matches_dense():
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 3, (2, 6, 2)).astype(np.int32)
    data = rng.standard_normal((2, 6)).astype(np.float32)
    A = sparse.BCOO((data, idx), shape=(2, 3, 3))
    S = sparse.bcoo_sum_duplicates(A)
    np.testing.assert_allclose(S.todense(), A.todense(), rtol=1e-6)
    for b in range(2):
        valid = S.indices[b][:, 0] < 3
        rows = [tuple(r) for r in np.asarray(S.indices[b])[np.asarray(valid)]]
        assert rows == sorted(set(rows))


def test_extract_and_multiply():
    """Recorded from JAX 0.10.2: ``bcoo_extract(A, 10 * M).data``."""
    A = sparse.BCOO.fromdense(M)
    np.testing.assert_array_equal(sparse.bcoo_extract(A, M * 10).data, [10., 20., 30., 40.])
    assert repr(A * 2) == "BCOO(float32[3, 4], nse=4)"
    np.testing.assert_array_equal((A * jnp.arange(4.)).todense(), M * np.arange(4.))
    np.testing.assert_array_equal((A * A).todense(), M * M)
    np.testing.assert_array_equal((-A).todense(), -M)


def test_reduce_sum():
    """Recorded from JAX 0.10.2: ``A.sum(0)`` is sparse, ``A.sum()`` a dense scalar."""
    A = sparse.BCOO.fromdense(M)
    s0 = A.sum(0)
    assert repr(s0) == "BCOO(float32[4], nse=4)"
    np.testing.assert_array_equal(s0.todense(), [3., 1., 4., 2.])
    np.testing.assert_array_equal(A.sum(1).todense(), M.sum(1))
    assert float(A.sum()) == 10.0
    x = _rand((2, 3, 4), seed=9)
    B = sparse.BCOO.fromdense(x, n_batch=1, n_dense=1)
    for axes in [(0,), (1,), (2,), (0, 2), (1, 2)]:
        np.testing.assert_allclose(sparse.bcoo_reduce_sum(B, axes=axes).todense(),
                                   x.sum(axes), rtol=1e-5, atol=1e-6)


def test_squeeze_rev_update_layout_astype():
    x = _rand((1, 3, 4), seed=2)
    A = sparse.BCOO.fromdense(x)
    sq = sparse.bcoo_squeeze(A, dimensions=(0,))
    assert repr(sq) == f"BCOO(float32[3, 4], nse={A.nse})"
    np.testing.assert_array_equal(sq.todense(), x[0])
    y = _rand((2, 3, 4), seed=3)
    B = sparse.BCOO.fromdense(y, n_batch=1, n_dense=1)
    np.testing.assert_array_equal(sparse.bcoo_rev(B, (0, 1, 2)).todense(), y[::-1, ::-1, ::-1])
    C = sparse.bcoo_update_layout(sparse.BCOO.fromdense(y, n_batch=1), n_batch=0)
    assert (C.n_batch, C.n_sparse) == (0, 3)
    np.testing.assert_array_equal(C.todense(), y)
    with pytest.raises(sparse.SparseEfficiencyError):
        sparse.BCOO.fromdense(y).update_layout(n_dense=1)
    with pytest.warns(sparse.SparseEfficiencyWarning):
        D = sparse.BCOO.fromdense(y).update_layout(n_dense=1, on_inefficient="warn")
    np.testing.assert_array_equal(D.todense(), y)
    assert repr(A.astype(jnp.int32)) == f"BCOO(int32[1, 3, 4], nse={A.nse})"


def test_empty_eye():
    """Recorded from JAX 0.10.2."""
    assert repr(sparse.eye(3)) == "BCOO(float32[3, 3], nse=3)"
    np.testing.assert_array_equal(sparse.eye(3, 4, k=1).todense(), np.eye(3, 4, 1))
    np.testing.assert_array_equal(sparse.eye(4, 3, k=-2).todense(), np.eye(4, 3, -2))
    e = sparse.empty((2, 3))
    assert repr(e) == "BCOO(float32[2, 3], nse=0)"
    np.testing.assert_array_equal(e.todense(), np.zeros((2, 3)))
    np.testing.assert_array_equal(sparse.todense(sparse.eye(2)), np.eye(2))
    np.testing.assert_array_equal(sparse.todense(M), M)


def test_random_bcoo():
    key = olympus.random.key(0)
    A = sparse.random_bcoo(key, (5, 6), nse=0.3)
    assert A.nse == 9 and A.shape == (5, 6)
    rows = {tuple(r) for r in np.asarray(A.indices)}
    assert len(rows) == 9
    B = sparse.random_bcoo(key, (2, 5, 6), nse=4, n_batch=1, sorted_indices=True)
    assert B.indices.shape == (2, 4, 2)


# --- transformations -------------------------------------------------------------------------


def test_vmap_of_products_and_layout():
    """Recorded from JAX 0.10.2: ``vmap(lambda x: A @ x)``."""
    A = sparse.BCOO.fromdense(M)
    np.testing.assert_allclose(olympus.vmap(lambda x: A @ x)(jnp.ones((2, 4))),
                               [[3., 3., 4.], [3., 3., 4.]])
    xs = _rand((3, 4, 5), seed=1)
    out = olympus.vmap(lambda x: sparse.BCOO.fromdense(x, nse=20).todense())(xs)
    np.testing.assert_array_equal(out, xs)
    y = _rand((3, 5), 1.0, seed=2)
    got = olympus.vmap(lambda x, v: sparse.BCOO.fromdense(x, nse=20) @ v)(xs, y)
    np.testing.assert_allclose(got, np.einsum("bij,bj->bi", xs, y), rtol=1e-5, atol=1e-6)


def test_grad_through_dot_general():
    """Recorded from JAX 0.10.2: the gradient with respect to the stored data."""
    A = sparse.BCOO.fromdense(M)

    def f(d):
        return (sparse.BCOO((d, A.indices), shape=(3, 4)) @ jnp.arange(4.)).sum()

    np.testing.assert_allclose(olympus.grad(f)(A.data), [1., 3., 0., 2.])
    y = jnp.array([3., 6., 5.])
    np.testing.assert_allclose(olympus.jit(olympus.grad(lambda y: (A.T @ y).sum()))(y),
                               [3., 3., 4.])


def test_grad_matches_dense_and_finite_differences():
    x = _rand((3, 4), seed=11)
    A = sparse.BCOO.fromdense(x)
    w = _rand((4, 2), 1.0, seed=12)

    def f_sparse(d, w):
        return jnp.sum(jnp.sin(sparse.BCOO((d, A.indices), shape=(3, 4)) @ w))

    def f_dense(m, w):
        return jnp.sum(jnp.sin(m @ w))

    gd, gw = olympus.grad(f_sparse, argnums=(0, 1))(A.data, w)
    gm, gw_dense = olympus.grad(f_dense, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gw, gw_dense, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gd, np.asarray(gm)[tuple(np.asarray(A.indices).T)], rtol=1e-5,
                               atol=1e-6)
    eps = 1e-3
    d0 = np.asarray(A.data, np.float64)
    for k in range(len(d0)):
        e = np.zeros_like(d0)
        e[k] = eps
        fd = (f_sparse((d0 + e).astype(np.float32), w) - f_sparse((d0 - e).astype(np.float32),
                                                                    w)) / (2 * eps)
        np.testing.assert_allclose(gd[k], fd, rtol=2e-2, atol=2e-3)


def test_grad_of_todense_fromdense_transpose_sum_duplicates():
    x = _rand((3, 4), seed=13)
    A = sparse.BCOO.fromdense(x)
    g = olympus.grad(lambda d: jnp.sum(sparse.BCOO((d, A.indices), shape=(3, 4)).todense() ** 2))(
        A.data)
    np.testing.assert_allclose(g, 2 * np.asarray(A.data), rtol=1e-6)
    g = olympus.grad(lambda m: jnp.sum(sparse.BCOO.fromdense(m, nse=A.nse).data ** 2))(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)
    g = olympus.grad(lambda d: jnp.sum(sparse.BCOO((d, A.indices), shape=(3, 4)).T.todense()
                                       * jnp.arange(12.).reshape(4, 3)))(A.data)
    np.testing.assert_allclose(g, np.arange(12.).reshape(4, 3).T[tuple(np.asarray(A.indices).T)])
    D = sparse.BCOO((jnp.array([1., 2., 3.]), jnp.array([[0, 0], [0, 0], [1, 1]])), shape=(2, 2))
    g = olympus.grad(lambda d: jnp.sum(sparse.bcoo_sum_duplicates(
        sparse.BCOO((d, D.indices), shape=(2, 2)), nse=2).data * jnp.array([5., 7.])))(D.data)
    np.testing.assert_allclose(g, [5., 5., 7.])
    g = olympus.grad(lambda d: jnp.sum(sparse.bcoo_sort_indices(
        sparse.BCOO((d, D.indices[::-1]), shape=(2, 2))).data * jnp.array([1., 2., 3.])))(D.data)
    np.testing.assert_allclose(g, [3., 1., 2.])


def test_sparse_grad_api():
    """Recorded from JAX 0.10.2: ``sparse.grad`` returns a BCOO gradient."""
    A = sparse.BCOO.fromdense(M)
    g = sparse.grad(lambda X: (X @ jnp.arange(4.)).sum())(A)
    assert repr(g) == "BCOO(float32[3, 4], nse=4)"
    np.testing.assert_array_equal(g.data, [1., 3., 0., 2.])
    np.testing.assert_array_equal(g.indices, A.indices)
    (v, aux), g2 = sparse.value_and_grad(lambda X: ((X @ jnp.ones(4)).sum(), 7),
                                         has_aux=True)(A)
    assert float(v) == 10.0 and aux == 7
    np.testing.assert_array_equal(g2.data, np.ones(4))
    J = sparse.jacfwd(lambda X: X @ jnp.ones(4))(A)
    assert J.shape == (3, 3, 4)
    np.testing.assert_allclose(J.todense(),
                               olympus.jacfwd(lambda m: m @ jnp.ones(4))(M) * (M != 0))


def test_extract_errors():
    """Messages recorded from JAX 0.10.2."""
    A = sparse.BCOO.fromdense(M)
    with pytest.raises(TypeError, match="First argument to bcoo_extract should be a BCOO array"):
        sparse.bcoo_extract(A.indices, M)
    with pytest.raises(ValueError, match=r"shape mismatch: sparr.shape=\(3, 4\) a.shape=\(3,\)"):
        sparse.bcoo_extract(A, np.ones(3))


def test_fromdense_olympusprs():
    """Recorded from JAX 0.10.2: ``index_dtype`` prints as the scalar type's class for
    bcoo/bcsr/coo_fromdense and as the dtype for csr_fromdense."""
    text = str(olympus.make_olympuspr(lambda m: sparse.BCOO.fromdense(m, nse=4).todense())(M))
    assert text == """{ lambda ; a:f32[3,4]. let
    b:f32[4] c:i32[4,2] = bcoo_fromdense[
      index_dtype=<class 'numpy.int32'>
      n_batch=0
      n_dense=0
      nse=4
    ] a
    d:f32[3,4] = bcoo_todense[
      spinfo=SparseInfo(shape=(3, 4), indices_sorted=True, unique_indices=True)
    ] b c
  in (d,) }"""
    text = str(olympus.make_olympuspr(lambda x: sparse.COO.fromdense(x, nse=4))(M))
    assert text == """{ lambda ; a:f32[3,4]. let
    b:f32[4] c:i32[4] d:i32[4] = coo_fromdense[
      index_dtype=<class 'numpy.int32'>
      nse=4
    ] a
  in (b, c, d) }"""
    text = str(olympus.make_olympuspr(lambda x: sparse.CSR.fromdense(x, nse=4))(M))
    assert text == """{ lambda ; a:f32[3,4]. let
    b:f32[4] c:i32[4] d:i32[4] = csr_fromdense[index_dtype=int32 nse=4] a
  in (b, c, d) }"""
