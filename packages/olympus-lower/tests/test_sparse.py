"""The sparse family's lowerings, executed and checked against dense NumPy: BCOO
(todense, fromdense, extract, transpose, sort, sum_duplicates, the products), BCSR, COO
and CSR."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import assert_close, run_one

from olympus_ir import primitives as P

SP = P.SparseInfo
M = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)
IDX = np.array([[0, 1], [0, 3], [1, 0], [2, 2], [3, 4]], np.int32)   # last row: padding
DATA = np.array([1., 2., 3., 4., 9.], np.float32)
DN = (((1,), (0,)), ((), ()))
rng = np.random.default_rng(0)


def _dense(data, idx, shape):
    out = np.zeros(shape, data.dtype)
    for d, i in zip(data, idx):
        if all(0 <= c < s for c, s in zip(i, shape)):
            out[tuple(i)] += d
    return out


def test_bcoo_todense_drops_padding_and_sums_duplicates():
    _, (out,) = run_one(P.bcoo_todense_p, DATA, IDX, spinfo=SP((3, 4)))
    assert_close(out, M)
    dup = np.array([[0, 0], [0, 0]], np.int32)
    _, (out,) = run_one(P.bcoo_todense_p, np.array([1., 2.], np.float32), dup,
                        spinfo=SP((1, 1)))
    assert_close(out, [[3.]])


def test_bcoo_todense_batched_with_broadcast_indices():
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)      # batch 2, nse 3, dense 4
    idx = np.array([[[0], [2], [1]]], np.int32)                    # batch 1 (broadcast)
    _, (out,) = run_one(P.bcoo_todense_p, data, idx, spinfo=SP((2, 3, 4)))
    expect = np.zeros((2, 3, 4), np.float32)
    for b in range(2):
        for k in range(3):
            expect[b, idx[0, k, 0]] += data[b, k]
    assert_close(out, expect)


@pytest.mark.parametrize("nse", [3, 4, 6])
def test_bcoo_fromdense(nse):
    _, (data, idx) = run_one(P.bcoo_fromdense_p, M, nse=nse, n_batch=0, n_dense=0,
                             index_dtype=np.int32)
    nz = np.argwhere(M != 0)
    k = min(nse, len(nz))
    np.testing.assert_array_equal(idx[:k], nz[:k])
    np.testing.assert_array_equal(idx[k:], np.full((nse - k, 2), [3, 4]))
    assert_close(data[:k], M[tuple(nz[:k].T)])
    assert_close(data[k:], np.zeros(nse - k))


def test_bcoo_extract_fill_and_duplicates():
    _, (out,) = run_one(P.bcoo_extract_p, IDX, M, assume_unique=True)
    assert_close(out, [1., 2., 3., 4., 0.])
    dup = np.array([[0, 1], [0, 1], [2, 2]], np.int32)
    _, (out,) = run_one(P.bcoo_extract_p, dup, M, assume_unique=False)
    assert_close(out, [1., 0., 4.])


def test_bcoo_transpose_sort_sum_duplicates():
    _, (d, i) = run_one(P.bcoo_transpose_p, DATA, IDX, permutation=(1, 0), spinfo=SP((3, 4)))
    assert_close(_dense(d, i, (4, 3)), M.T)
    unsorted = np.array([[2, 2], [0, 3], [0, 1], [0, 3]], np.int32)
    vals = np.array([1., 2., 3., 4.], np.float32)
    _, (d, i) = run_one(P.bcoo_sort_indices_p, vals, unsorted, spinfo=SP((3, 4)))
    np.testing.assert_array_equal(i, [[0, 1], [0, 3], [0, 3], [2, 2]])
    assert_close(d, [3., 2., 4., 1.])
    _, (d, i) = run_one(P.bcoo_sum_duplicates_p, vals, unsorted, spinfo=SP((3, 4)), nse=4)
    np.testing.assert_array_equal(i, [[0, 1], [0, 3], [2, 2], [3, 4]])
    assert_close(d, [3., 6., 1., 0.])


@pytest.mark.parametrize("dn,rshape", [
    (DN, (4, 2)), ((((0,), (0,)), ((), ())), (3, 2)), ((((0, 1), (1, 0)), ((), ())), (4, 3)),
])
def test_bcoo_dot_general(dn, rshape):
    rhs = rng.standard_normal(rshape).astype(np.float32)
    _, (out,) = run_one(P.bcoo_dot_general_p, DATA, IDX, rhs, dimension_numbers=dn,
                        lhs_spinfo=SP((3, 4)), preferred_element_type=None)
    (lc, rc), _ = dn
    assert_close(out, np.tensordot(M, rhs, (lc, rc)), rtol=1e-5, atol=1e-6)


def test_bcoo_dot_general_sampled_and_spdot():
    a = rng.standard_normal((3, 2)).astype(np.float32)
    b = rng.standard_normal((2, 4)).astype(np.float32)
    _, (out,) = run_one(P.bcoo_dot_general_sampled_p, a, b, IDX, dimension_numbers=DN)
    full = a @ b
    assert_close(out[:4], full[tuple(IDX[:4].T)], rtol=1e-5)
    assert_close(out[4], 0.)
    idx_t = IDX[:4, ::-1].copy()
    _, (d, i) = run_one(P.bcoo_spdot_general_p, DATA[:4], IDX[:4], DATA[:4], idx_t,
                        lhs_spinfo=SP((3, 4)), rhs_spinfo=SP((4, 3)), dimension_numbers=DN,
                        preferred_element_type=None)
    assert d.shape == (9,)
    assert_close(_dense(d, i, (3, 3)), M @ M.T)


def test_bcsr():
    _, (d, i, p) = run_one(P.bcsr_fromdense_p, M, nse=5, n_batch=0, n_dense=0,
                           index_dtype=np.int32)
    np.testing.assert_array_equal(i, [1, 3, 0, 2, 4])
    np.testing.assert_array_equal(p, [0, 2, 3, 4])
    _, (dense,) = run_one(P.bcsr_todense_p, d, i, p, spinfo=SP((3, 4)))
    assert_close(dense, M)
    _, (ex,) = run_one(P.bcsr_extract_p, i, p, 10 * M)
    assert_close(ex, 10 * d)
    v = rng.standard_normal(4).astype(np.float32)
    _, (out,) = run_one(P.bcsr_dot_general_p, d, i, p, v, dimension_numbers=DN,
                        lhs_spinfo=SP((3, 4)), preferred_element_type=None)
    assert_close(out, M @ v, rtol=1e-5)


def test_coo_and_csr():
    _, (d, r, c) = run_one(P.coo_fromdense_p, M, nse=4, index_dtype=np.int32)
    np.testing.assert_array_equal(r, [0, 0, 1, 2])
    np.testing.assert_array_equal(c, [1, 3, 0, 2])
    coo = P.COOInfo((3, 4))
    _, (dense,) = run_one(P.coo_todense_p, d, r, c, spinfo=coo)
    assert_close(dense, M)
    v4, v3 = np.arange(4, dtype=np.float32), np.arange(3, dtype=np.float32)
    _, (out,) = run_one(P.coo_matvec_p, d, r, c, v4, spinfo=coo, transpose=False)
    assert_close(out, M @ v4)
    B = rng.standard_normal((3, 2)).astype(np.float32)
    _, (out,) = run_one(P.coo_matmat_p, d, r, c, B, spinfo=coo, transpose=True)
    assert_close(out, M.T @ B, rtol=1e-5)
    _, (d, i, p) = run_one(P.csr_fromdense_p, M, nse=4, index_dtype=np.int32)
    np.testing.assert_array_equal(p, [0, 2, 3, 4])
    _, (dense,) = run_one(P.csr_todense_p, d, i, p, shape=(3, 4))
    assert_close(dense, M)
    _, (out,) = run_one(P.csr_matvec_p, d, i, p, v3, shape=(3, 4), transpose=True)
    assert_close(out, M.T @ v3)
    B = rng.standard_normal((4, 2)).astype(np.float32)
    _, (out,) = run_one(P.csr_matmat_p, d, i, p, B, shape=(3, 4), transpose=False)
    assert_close(out, M @ B, rtol=1e-5)


def test_todense_of_a_pytree_of_buffers():
    """`todense` reads the format from the treedef (here a BCOO stand-in) and lowers as
    that format's todense."""
    from test_coverage import _BCOOTree

    _, (out,) = run_one(P.todense_p, DATA[:4], IDX[:4], tree=_BCOOTree())
    assert_close(out, M)
