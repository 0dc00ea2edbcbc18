"""olympus.experimental.sparse: the BCSR, COO, CSR and CSC formats (values against dense
NumPy and scipy.sparse; reprs and buffers recorded from JAX 0.10.2 where stated)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

import olympus
import olympus.numpy as jnp
from olympus.experimental import sparse

M = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)


def _rand(shape, density=0.4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) > density] = 0
    return x


def test_bcsr_buffers_repr_and_products():
    """Recorded from JAX 0.10.2: repr, indices, indptr and ``@ ones(4)``."""
    B = sparse.BCSR.fromdense(M)
    assert repr(B) == "BCSR(float32[3, 4], nse=4)"
    np.testing.assert_array_equal(B.indices, [1, 3, 0, 2])
    np.testing.assert_array_equal(B.indptr, [0, 2, 3, 4])
    np.testing.assert_array_equal(B.todense(), M)
    np.testing.assert_allclose(B @ jnp.ones(4), [3., 3., 4.])
    x = _rand((4, 3), 1.0, 1)
    np.testing.assert_allclose(B @ x, M @ x, rtol=1e-6)
    np.testing.assert_allclose(
        sparse.bcsr_dot_general(B, x, dimension_numbers=(((1,), (0,)), ((), ()))), M @ x,
        rtol=1e-6)
    np.testing.assert_array_equal(sparse.bcsr_extract(B.indices, B.indptr, 2 * M), 2 * B.data)


def test_bcsr_batched_and_scipy():
    x = _rand((2, 3, 4), seed=2)
    B = sparse.bcsr_fromdense(x, n_batch=1)
    assert B.n_batch == 1 and B.indptr.shape == (2, 4)
    np.testing.assert_array_equal(sparse.bcsr_todense(B), x)
    np.testing.assert_array_equal(olympus.jit(lambda b: b.todense())(B), x)
    s = sps.random(4, 5, density=0.4, random_state=3, format="csr", dtype=np.float32)
    np.testing.assert_allclose(sparse.BCSR.from_scipy_sparse(s).todense(), s.toarray())
    np.testing.assert_allclose(olympus.vmap(lambda m: sparse.BCSR.fromdense(m, nse=12).todense())(x), x)


def test_bcsr_grad():
    x = _rand((3, 4), seed=4)
    B = sparse.BCSR.fromdense(x)
    v = jnp.arange(4.)

    def f(d):
        return jnp.sum(sparse.BCSR((d, B.indices, B.indptr), shape=(3, 4)) @ v)

    np.testing.assert_allclose(olympus.grad(f)(B.data), np.asarray(v)[np.asarray(B.indices)])
    g = olympus.grad(lambda m: jnp.sum(sparse.bcsr_fromdense(m, nse=B.nse).data ** 2))(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)


def test_coo():
    """Recorded from JAX 0.10.2: repr, row, col and ``@ ones(4)``."""
    C = sparse.COO.fromdense(M)
    assert repr(C) == "COO(float32[3, 4], nse=4)"
    np.testing.assert_array_equal(C.row, [0, 0, 1, 2])
    np.testing.assert_array_equal(C.col, [1, 3, 0, 2])
    np.testing.assert_allclose(C @ jnp.ones(4), [3., 3., 4.])
    np.testing.assert_array_equal(C.todense(), M)
    np.testing.assert_array_equal(C.T.todense(), M.T)
    B = _rand((4, 2), 1.0, 5)
    np.testing.assert_allclose(C @ B, M @ B, rtol=1e-6)
    np.testing.assert_allclose(sparse.coo_matvec(C, jnp.ones(3), transpose=True), M.T @ np.ones(3))
    np.testing.assert_allclose(sparse.coo_matmat(C, jnp.ones((3, 2)), transpose=True),
                               M.T @ np.ones((3, 2)))


def test_csr_csc():
    """Recorded from JAX 0.10.2: reprs, indptr and the products."""
    R = sparse.CSR.fromdense(M)
    assert repr(R) == "CSR(float32[3, 4], nse=4)"
    np.testing.assert_array_equal(R.indptr, [0, 2, 3, 4])
    np.testing.assert_allclose(R @ jnp.ones(4), [3., 3., 4.])
    np.testing.assert_allclose(R.T @ jnp.ones(3), [3., 1., 4., 2.])
    np.testing.assert_array_equal(R.todense(), M)
    Cc = sparse.CSC.fromdense(M)
    assert repr(Cc) == "CSC(float32[3, 4], nse=4)"
    np.testing.assert_allclose(Cc @ jnp.ones(4), [3., 3., 4.])
    np.testing.assert_array_equal(Cc.todense(), M)
    B = _rand((4, 3), 1.0, 6)
    np.testing.assert_allclose(sparse.csr_matmat(R, B), M @ B, rtol=1e-6)
    np.testing.assert_allclose(sparse.csr_matvec(R, jnp.ones(3), transpose=True), M.T @ np.ones(3))


def test_coo_csr_grads_match_dense():
    x = _rand((3, 4), seed=7)
    v = _rand((4,), 1.0, 8)
    C = sparse.COO.fromdense(x)
    R = sparse.CSR.fromdense(x)
    gd_dense = olympus.grad(lambda m: jnp.sum(jnp.sin(m @ v)))(x)
    gv_dense = olympus.grad(lambda w: jnp.sum(jnp.sin(x @ w)))(v)
    gc = olympus.grad(lambda d: jnp.sum(jnp.sin(sparse.COO((d, C.row, C.col), shape=(3, 4)) @ v)))(
        C.data)
    np.testing.assert_allclose(gc, np.asarray(gd_dense)[np.asarray(C.row), np.asarray(C.col)],
                               rtol=1e-5, atol=1e-6)
    gv = olympus.grad(lambda w: jnp.sum(jnp.sin(R @ w)))(v)
    np.testing.assert_allclose(gv, gv_dense, rtol=1e-5, atol=1e-6)
    g = olympus.grad(lambda m: jnp.sum(sparse.csr_fromdense(m, nse=R.nse).data ** 2))(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)
    g = olympus.grad(lambda m: jnp.sum(sparse.coo_fromdense(m, nse=C.nse).data ** 2))(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)
    g = olympus.grad(lambda d: jnp.sum(sparse.CSR((d, R.indices, R.indptr), shape=(3, 4))
                                       .todense() ** 2))(R.data)
    np.testing.assert_allclose(g, 2 * np.asarray(R.data), rtol=1e-6)


def test_coo_is_not_batchable():
    C = sparse.COO.fromdense(M)
    with pytest.raises(NotImplementedError, match="coo_matvec"):
        olympus.vmap(lambda v: C @ v)(jnp.ones((2, 4)))


@pytest.mark.parametrize("fmt", ["BCOO", "BCSR", "COO", "CSR", "CSC"])
def test_todense_p_every_format(fmt):
    """`sparse.todense` binds one `todense` equation for any format; it is linear in the
    data buffer (its gradient reads the cotangent at the stored positions)."""
    cls = getattr(sparse, fmt)
    A = cls.fromdense(M)
    np.testing.assert_array_equal(sparse.todense(A), M)
    np.testing.assert_array_equal(olympus.jit(sparse.todense)(A), M)
    text = str(olympus.make_olympuspr(sparse.todense)(A))
    assert "= todense[" in text and f"CustomNode({fmt}[" in text
    leaves, tree = olympus.tree_util.tree_flatten(A)
    w = jnp.arange(12.).reshape(3, 4)

    def f(d):
        return jnp.sum(sparse.todense(olympus.tree_util.tree_unflatten(tree, [d, *leaves[1:]])) * w)

    g = olympus.grad(f)(A.data)
    dense_positions = np.asarray(sparse.todense(
        olympus.tree_util.tree_unflatten(tree, [jnp.arange(1., A.nse + 1), *leaves[1:]])))
    expect = [float(np.asarray(w)[dense_positions == k + 1][0]) for k in range(A.nse)]
    np.testing.assert_allclose(g, expect)


def _loop(f, *xs):
    return np.stack([np.asarray(f(*(x[i] for x in xs))) for i in range(len(xs[0]))])


def test_batching_rules_against_a_loop():
    """vmap of each sparse primitive (over dense operands and data buffers) equals a
    Python loop over the batch."""
    A = sparse.BCOO.fromdense(M)
    idx, shape = A.indices, A.shape
    rng = np.random.default_rng(9)
    ds = rng.standard_normal((3, A.nse)).astype(np.float32)
    ms = rng.standard_normal((3, 3, 4)).astype(np.float32)
    dn = (((1,), (0,)), ((), ()))
    unsorted = jnp.array([[2, 2], [0, 3], [0, 1], [0, 3]])
    cases = [
        (lambda m: sparse.bcoo_extract(A, m).data, ms),
        (lambda d: sparse.bcoo_transpose(sparse.BCOO((d, idx), shape=shape),
                                         permutation=(1, 0)).todense(), ds),
        (lambda d: sparse.BCOO((d, unsorted), shape=shape).sort_indices().data, ds),
        (lambda d: sparse.bcoo_sum_duplicates(sparse.BCOO((d, unsorted), shape=shape),
                                              nse=3).data, ds),
        (lambda a: sparse.bcoo_dot_general_sampled(a, jnp.ones((2, 4)), idx,
                                                   dimension_numbers=dn),
         rng.standard_normal((3, 3, 2)).astype(np.float32)),
        (lambda d: (sparse.BCOO((d, idx), shape=shape) @ A.T).todense(), ds),
        (lambda d: sparse.todense(sparse.BCOO((d, idx), shape=shape)), ds),
        (lambda m: sparse.BCSR.fromdense(m, nse=12).todense(), ms),
        (lambda m: sparse.bcsr_extract(sparse.BCSR.fromdense(M).indices,
                                       sparse.BCSR.fromdense(M).indptr, m), ms),
        (lambda v: sparse.BCSR.fromdense(M) @ v, rng.standard_normal((3, 4)).astype(np.float32)),
    ]
    for f, xs in cases:
        np.testing.assert_allclose(olympus.vmap(f)(xs), _loop(f, xs), rtol=1e-5, atol=1e-6)
