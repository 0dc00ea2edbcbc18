"""olympus.experimental.sparse: `sparsify` and the BCOO structural operations (slice,
dynamic_slice, reshape, broadcast_in_dim, concatenate) and their BCSR counterparts.

Values are checked against the dense computation; reprs (which carry nse and the
layout) and error messages were recorded from JAX 0.10.2 where stated."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.experimental import sparse

M = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)
_rng = np.random.default_rng(0)
X = _rng.standard_normal((2, 5, 6)).astype(np.float32)
X[_rng.random(X.shape) > 0.4] = 0


def test_docs_example():
    """The module docstring's example, recorded from JAX 0.10.2."""
    A = sparse.BCOO.fromdense(M)
    y = jnp.array([3., 6., 5.])

    def f(M, v):
        return 2 * jnp.dot(jnp.log1p(M.T), v) + 1

    np.testing.assert_allclose(sparse.sparsify(f)(A, y), f(M, y), rtol=1e-6)
    np.testing.assert_allclose(sparse.sparsify(f)(A, y),
                               [17.635532, 5.158883, 17.09438, 7.591674], rtol=1e-6)


def test_elementwise_and_reductions_keep_sparsity():
    """Recorded from JAX 0.10.2: reprs of the sparse results."""
    A = sparse.BCOO.fromdense(M)
    assert repr(sparse.sparsify(lambda x: x * 2)(A)) == "BCOO(float32[3, 4], nse=4)"
    out = sparse.sparsify(lambda x: jnp.abs(-x))(A)
    assert repr(out) == "BCOO(float32[3, 4], nse=4)"
    np.testing.assert_array_equal(out.todense(), np.abs(M))
    s0 = sparse.sparsify(lambda x: x.sum(0))(A)
    assert repr(s0) == "BCOO(float32[4], nse=4)"
    np.testing.assert_array_equal(s0.todense(), M.sum(0))
    assert float(sparse.sparsify(lambda x: x.sum())(A)) == 10.0
    both = sparse.sparsify(lambda x, y: x + y)(A, A)
    assert repr(both) == "BCOO(float32[3, 4], nse=8)"
    np.testing.assert_array_equal(both.todense(), 2 * M)


def test_structural_primitives():
    """Recorded from JAX 0.10.2: reprs of slicing, reshaping, concatenating and adding an
    axis under sparsify."""
    A = sparse.BCOO.fromdense(M)
    s = sparse.sparsify(lambda x: x[1:, :3])(A)
    assert repr(s) == "BCOO(float32[2, 3], nse=4)"
    np.testing.assert_array_equal(s.todense(), M[1:, :3])
    assert repr(sparse.sparsify(lambda x: x.reshape(12))(A)) == "BCOO(float32[12], nse=4)"
    c = sparse.sparsify(lambda x: jnp.concatenate([x, x]))(A)
    assert repr(c) == "BCOO(float32[6, 4], nse=8)"
    np.testing.assert_array_equal(c.todense(), np.concatenate([M, M]))
    assert repr(sparse.sparsify(lambda x: x[None])(A)) == "BCOO(float32[1, 3, 4], nse=4, n_batch=1)"


def test_control_flow_and_jit():
    """Recorded from JAX 0.10.2 (fori_loop, cond, jit inside sparsify)."""
    A = sparse.BCOO.fromdense(M)

    def loop(x, v):
        return lax.fori_loop(0, 3, lambda i, c: c * 2 + (x.T @ c[:3]).sum(), v)

    got = sparse.sparsify(loop)(A, jnp.ones(4))
    np.testing.assert_allclose(got, loop(M, jnp.ones(4)))
    got = sparse.sparsify(lambda x, v: lax.cond(v.sum() > 0, lambda: x @ v,
                                                lambda: -(x @ v)))(A, jnp.ones(4))
    np.testing.assert_allclose(got, [3., 3., 4.])
    np.testing.assert_allclose(sparse.sparsify(olympus.jit(lambda x, v: x @ v))(A, jnp.ones(4)),
                               [3., 3., 4.])
    carry, ys = sparse.sparsify(
        lambda x, vs: lax.scan(lambda c, v: (c + (x @ v).sum(), x @ v), 0., vs))(
        A, jnp.ones((2, 4)))
    assert float(carry) == 20.0
    np.testing.assert_allclose(ys, [[3., 3., 4.]] * 2)


def test_unsupported_primitives_raise():
    """Messages recorded from JAX 0.10.2."""
    A = sparse.BCOO.fromdense(M)
    with pytest.raises(NotImplementedError, match="sparse rule for exp is not implemented "
                       "because it would result in dense output"):
        sparse.sparsify(jnp.exp)(A)
    with pytest.raises(NotImplementedError, match="Division by a sparse array"):
        sparse.sparsify(lambda x: 1 / x)(A)
    with pytest.raises(NotImplementedError, match="sparse rule for cumsum is not implemented"):
        sparse.sparsify(lambda x: jnp.cumsum(x, 0))(A)


@pytest.mark.parametrize("n_batch,n_dense", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_bcoo_shape_ops_match_jax(n_batch, n_dense):
    """nse of each result recorded from JAX 0.10.2; values against NumPy."""
    expected_nse = {(0, 0): (16, 6, 12, 32, 16), (1, 0): (8, 6, 6, 18, 9),
                    (0, 1): (4, 3, 4, 16, 8), (1, 1): (2, 3, 2, 10, 5)}[(n_batch, n_dense)]
    A = sparse.BCOO.fromdense(X, n_batch=n_batch, n_dense=n_dense)
    s = sparse.bcoo_slice(A, start_indices=(0, 1, 2), limit_indices=(2, 5, 6), strides=(1, 2, 1))
    np.testing.assert_array_equal(s.todense(), X[:, 1:5:2, 2:6])
    d = sparse.bcoo_dynamic_slice(A, (1, 2, 3), (1, 3, 2))
    np.testing.assert_array_equal(d.todense(), X[1:2, 2:5, 3:5])
    d2 = olympus.jit(lambda a, i: sparse.bcoo_dynamic_slice(a, (0, i, 1), (2, 2, 3)))(A, 4)
    np.testing.assert_array_equal(d2.todense(), X[:, 3:5, 1:4])   # start clamped to 3
    c = sparse.bcoo_concatenate([A, A], dimension=n_batch)
    np.testing.assert_array_equal(c.todense(), np.concatenate([X, X], n_batch))
    b = sparse.bcoo_broadcast_in_dim(A, shape=(3, 2, 5, 6), broadcast_dimensions=(1, 2, 3))
    np.testing.assert_array_equal(b.todense(), np.broadcast_to(X, (3, 2, 5, 6)))
    assert (s.nse, d.nse, d2.nse, c.nse, b.nse) == expected_nse
    if n_dense == 0:
        shape = (2, 30) if n_batch else (60,)
        r = sparse.bcoo_reshape(A, new_sizes=shape)
        np.testing.assert_array_equal(r.todense(), X.reshape(shape))


def test_bcsr_structural():
    """Recorded from JAX 0.10.2: reprs and buffers."""
    B = sparse.BCSR.fromdense(X[0])
    c = sparse.bcsr_concatenate([B, B], dimension=0)
    assert repr(c) == "BCSR(float32[10, 6], nse=14)"
    np.testing.assert_array_equal(c.todense(), np.concatenate([X[0], X[0]]))
    b = sparse.bcsr_broadcast_in_dim(B, shape=(3, 5, 6), broadcast_dimensions=(1, 2))
    assert repr(b) == "BCSR(float32[3, 5, 6], nse=7, n_batch=1)"
    np.testing.assert_array_equal(b.todense(), np.broadcast_to(X[0], (3, 5, 6)))
    D = sparse.BCSR((jnp.array([1., 2., 3.]), jnp.array([0, 0, 1]), jnp.array([0, 2, 3])),
                    shape=(2, 2))
    S = sparse.bcsr_sum_duplicates(D)
    assert repr(S) == "BCSR(float32[2, 2], nse=2)"
    np.testing.assert_array_equal(S.data, [3., 3.])
    np.testing.assert_array_equal(S.indices, [0, 1])
    np.testing.assert_array_equal(S.indptr, [0, 1, 2])
    assert repr(B.to_bcoo()) == "BCOO(float32[5, 6], nse=7)"
    assert repr(sparse.BCSR.from_bcoo(sparse.BCOO.fromdense(X[0]))) == "BCSR(float32[5, 6], nse=7)"


def test_shape_op_errors():
    A = sparse.BCOO.fromdense(M)
    with pytest.raises(ValueError, match="bcoo_slice: invalid indices"):
        sparse.bcoo_slice(A, start_indices=(0, 0), limit_indices=(4, 4))
    with pytest.raises(TypeError, match="input should be BCOO array"):
        sparse.bcoo_slice(M, start_indices=(0, 0), limit_indices=(1, 1))
    with pytest.raises(NotImplementedError, match="dense dimensions"):
        sparse.bcoo_concatenate([sparse.BCOO.fromdense(M, n_dense=1)] * 2, dimension=1)


def test_gather_and_indexing():
    """Recorded from JAX 0.10.2: reprs (nse, layout) of gathers and of BCOO indexing."""
    A3 = sparse.BCOO.fromdense(X)
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(1,),
                                    start_index_map=(1,))
    g = sparse.bcoo_gather(A3, jnp.array([[1], [3], [4]]), dn, (2, 1, 6))
    assert repr(g) == "BCOO(float32[3, 2, 6], nse=12, n_batch=1)"
    np.testing.assert_array_equal(g.todense(), X[:, [1, 3, 4], :].transpose(1, 0, 2))
    f = sparse.sparsify(lambda m: m[:, jnp.array([0, 2])])
    assert repr(f(A3)) == "BCOO(float32[2, 2, 6], nse=24)"
    np.testing.assert_array_equal(f(A3).todense(), X[:, [0, 2]])
    A = sparse.BCOO.fromdense(M)
    assert repr(A[1]) == "BCOO(float32[4], nse=4)"
    np.testing.assert_array_equal(A[1].todense(), M[1])
    assert repr(A[:, 1:3]) == "BCOO(float32[3, 2], nse=4)"
    assert repr(A[jnp.array([0, 2])]) == "BCOO(float32[2, 4], nse=4, n_batch=1)"
    np.testing.assert_array_equal(A[jnp.array([0, 2])].todense(), M[[0, 2]])
    assert repr(A[1, 0]) == "BCOO(float32[], nse=1)"


def test_operators():
    """Recorded from JAX 0.10.2: results and messages of BCOO's arithmetic operators."""
    A = sparse.BCOO.fromdense(M)
    assert repr(abs(A)) == "BCOO(float32[3, 4], nse=4)"
    np.testing.assert_array_equal((A / 2).todense(), M / 2)
    assert repr(A + A) == "BCOO(float32[3, 4], nse=8)"
    np.testing.assert_array_equal((A - A).todense(), np.zeros((3, 4)))
    np.testing.assert_array_equal(A + M, 2 * M)       # dense operand of full shape: dense
    np.testing.assert_array_equal(jnp.asarray(M) + A, 2 * M)
    with pytest.raises(NotImplementedError, match="Subtraction between sparse and dense"):
        A - M
    with pytest.raises(NotImplementedError, match="output shape is larger than Y.shape"):
        A + 1.


@pytest.mark.parametrize("padding", ["VALID", "SAME", [(1, 2)]])
def test_conv_1d(padding):
    """Values against the dense convolution; reprs recorded from JAX 0.10.2."""
    x = jnp.array([[[0., 1., 0., 0., 2., 0., 3., 0.]]])
    k = jnp.array([[[1., -1., 2.]]])
    X = sparse.BCOO.fromdense(x)
    r = sparse.bcoo_conv_general_dilated(X, k, window_strides=(1,), padding=padding)
    size = {"VALID": 6, "SAME": 8}.get(padding if isinstance(padding, str) else "", 9)
    assert repr(r) == f"BCOO(float32[1, 1, {size}], nse=9, n_batch=2)"
    np.testing.assert_allclose(r.todense(), lax.conv_general_dilated(x, k, (1,), padding))
    r2 = sparse.bcoo_conv_general_dilated(X, sparse.BCOO.fromdense(k), window_strides=(1,),
                                          padding=padding)
    np.testing.assert_allclose(r2.todense(), lax.conv_general_dilated(x, k, (1,), padding))
    f = sparse.sparsify(lambda a, b: lax.conv_general_dilated(a, b, (1,), padding))
    np.testing.assert_allclose(f(X, k).todense(), lax.conv_general_dilated(x, k, (1,), padding))
    with pytest.raises(NotImplementedError, match="non-unit window_strides"):
        sparse.bcoo_conv_general_dilated(X, k, window_strides=(2,), padding=padding)


def test_update_layout_adds_unit_batch_dims():
    """Recorded from JAX 0.10.2: size-1 batch dims keep nse."""
    X = sparse.BCOO.fromdense(jnp.array([[[0., 1., 0., 0., 2., 0., 3., 0.]]]))
    Y = X.update_layout(n_batch=2)
    assert repr(Y) == "BCOO(float32[1, 1, 8], nse=3, n_batch=2)"
    assert Y.indices.shape == (1, 1, 3, 1)
    np.testing.assert_array_equal(Y.todense(), X.todense())


def test_sparsify_with_tracer():
    """``use_tracer=True``: the function sees `SparseTracer`s (recorded from JAX 0.10.2:
    the type name and the results)."""
    A = sparse.BCOO.fromdense(M)
    y = jnp.array([3., 6., 5.])

    def f(M, v):
        return 2 * jnp.dot(jnp.log1p(M.T), v) + 1

    np.testing.assert_allclose(sparse.sparsify(f, use_tracer=True)(A, y), f(M, y), rtol=1e-6)
    assert repr(sparse.sparsify(lambda x: x * 2, use_tracer=True)(A)) == \
        "BCOO(float32[3, 4], nse=4)"
    s = sparse.sparsify(lambda x: x[1:, :3].sum(0), use_tracer=True)(A)
    np.testing.assert_array_equal(s.todense(), M[1:, :3].sum(0))
    np.testing.assert_allclose(sparse.sparsify(
        lambda x, v: olympus.jit(lambda a, b: a @ b)(x, v), use_tracer=True)(A, jnp.ones(4)),
        [3., 3., 4.])
    np.testing.assert_allclose(
        olympus.jit(sparse.sparsify(lambda x, v: x @ v, use_tracer=True))(A, jnp.ones(4)),
        [3., 3., 4.])
    seen = []

    def g(x):
        seen.append(type(x))
        return x.sum()

    assert float(sparse.sparsify(g, use_tracer=True)(A)) == 10.0
    assert seen == [sparse.SparseTracer]


def test_bcoo_reshape_and_sum_methods():
    """Recorded from JAX 0.10.2: reprs of ``BCOO.reshape`` and ``BCOO.sum``."""
    A = sparse.BCOO.fromdense(M)
    assert repr(A.reshape(4, 3)) == "BCOO(float32[4, 3], nse=4)"
    np.testing.assert_array_equal(A.reshape(4, 3).todense(), M.reshape(4, 3))
    assert repr(A.reshape(-1)) == "BCOO(float32[12], nse=4)"
    assert repr(A.sum(axis=1)) == "BCOO(float32[3], nse=4)"
    B = sparse.BCOO.fromdense(jnp.arange(24.).reshape(2, 3, 4), n_batch=1)
    assert repr(B.reshape(2, 12)) == "BCOO(float32[2, 12], nse=12, n_batch=1)"
    assert repr(B.sum(0)) == "BCOO(float32[3, 4], nse=24)"
    np.testing.assert_array_equal(B.sum(0).todense(), np.arange(24.).reshape(2, 3, 4).sum(0))
    assert repr(B.sum((1, 2))) == "BCOO(float32[2], nse=12, n_batch=1)"
