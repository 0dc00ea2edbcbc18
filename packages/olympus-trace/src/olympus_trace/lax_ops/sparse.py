"""Wrappers of the sparse primitives (`olympus_ir.prims.sparse`): one per primitive, over
the raw buffers, with the parameters canonicalized (tuples of ints, a `SparseInfo`).
`olympus.experimental.sparse` builds its array classes on these."""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P
from olympus_ir.prims.sparse import COOInfo, SparseInfo

from ..core import bind

__all__ = [
    "bcoo_todense", "bcoo_fromdense", "bcoo_extract", "bcoo_transpose", "bcoo_sort_indices",
    "bcoo_sum_duplicates", "bcoo_dot_general", "bcoo_dot_general_sampled",
    "bcoo_spdot_general", "bcsr_todense", "bcsr_fromdense", "bcsr_extract",
    "bcsr_dot_general", "coo_todense", "coo_fromdense", "coo_matvec", "coo_matmat",
    "csr_todense", "csr_fromdense", "csr_matvec", "csr_matmat", "spinfo", "todense",
]


def spinfo(shape, indices_sorted=False, unique_indices=False) -> SparseInfo:
    """A `SparseInfo` with a tuple-of-ints shape and bool flags."""
    return SparseInfo(tuple(int(s) for s in shape), bool(indices_sorted), bool(unique_indices))


def _dnums(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    return ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
            (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))


def _pet(preferred_element_type):
    return None if preferred_element_type is None else np.dtype(preferred_element_type)


def bcoo_todense(data, indices, *, spinfo):
    """The dense array of BCOO buffers."""
    return bind(P.bcoo_todense_p, data, indices, spinfo=spinfo)


def bcoo_fromdense(mat, *, nse, n_batch=0, n_dense=0, index_dtype=np.int32):
    """BCOO buffers ``(data, indices)`` of the first `nse` nonzeros of `mat`."""
    return tuple(bind(P.bcoo_fromdense_p, mat, nse=int(nse), n_batch=int(n_batch),
                      n_dense=int(n_dense), index_dtype=np.dtype(index_dtype).type))


def bcoo_extract(indices, mat, *, assume_unique=True):
    """The elements of `mat` at `indices` (BCOO data)."""
    return bind(P.bcoo_extract_p, indices, mat, assume_unique=bool(assume_unique))


def bcoo_transpose(data, indices, *, permutation, spinfo):
    """BCOO buffers of the transposed array."""
    return tuple(bind(P.bcoo_transpose_p, data, indices,
                      permutation=tuple(int(p) for p in permutation), spinfo=spinfo))


def bcoo_sort_indices(data, indices, *, spinfo):
    """BCOO buffers with each batch's index rows sorted lexicographically."""
    return tuple(bind(P.bcoo_sort_indices_p, data, indices, spinfo=spinfo))


def bcoo_sum_duplicates(data, indices, *, spinfo, nse):
    """BCOO buffers with repeated index rows summed (sorted, `nse` rows per batch)."""
    return tuple(bind(P.bcoo_sum_duplicates_p, data, indices, spinfo=spinfo, nse=nse))


def bcoo_dot_general(lhs_data, lhs_indices, rhs, *, dimension_numbers, lhs_spinfo,
                     preferred_element_type=None):
    """``dot_general`` of a BCOO lhs and a dense rhs."""
    return bind(P.bcoo_dot_general_p, lhs_data, lhs_indices, rhs,
                dimension_numbers=_dnums(dimension_numbers), lhs_spinfo=lhs_spinfo,
                preferred_element_type=_pet(preferred_element_type))


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """``dot_general(A, B)`` read at `indices` (BCOO data)."""
    return bind(P.bcoo_dot_general_sampled_p, A, B, indices,
                dimension_numbers=_dnums(dimension_numbers))


def bcoo_spdot_general(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_spinfo,
                       rhs_spinfo, dimension_numbers, preferred_element_type=None):
    """``dot_general`` of two BCOO arrays, as BCOO buffers."""
    return tuple(bind(P.bcoo_spdot_general_p, lhs_data, lhs_indices, rhs_data, rhs_indices,
                      lhs_spinfo=lhs_spinfo, rhs_spinfo=rhs_spinfo,
                      dimension_numbers=_dnums(dimension_numbers),
                      preferred_element_type=_pet(preferred_element_type)))


def bcsr_todense(data, indices, indptr, *, spinfo):
    """The dense array of BCSR buffers."""
    return bind(P.bcsr_todense_p, data, indices, indptr, spinfo=spinfo)


def bcsr_fromdense(mat, *, nse, n_batch=0, n_dense=0, index_dtype=np.int32):
    """BCSR buffers ``(data, indices, indptr)`` of `mat`."""
    return tuple(bind(P.bcsr_fromdense_p, mat, nse=int(nse), n_batch=int(n_batch),
                      n_dense=int(n_dense), index_dtype=np.dtype(index_dtype).type))


def bcsr_extract(indices, indptr, mat):
    """The elements of `mat` at BCSR positions."""
    return bind(P.bcsr_extract_p, indices, indptr, mat)


def bcsr_dot_general(lhs_data, lhs_indices, lhs_indptr, rhs, *, dimension_numbers,
                     lhs_spinfo, preferred_element_type=None):
    """``dot_general`` of a BCSR lhs and a dense rhs."""
    return bind(P.bcsr_dot_general_p, lhs_data, lhs_indices, lhs_indptr, rhs,
                dimension_numbers=_dnums(dimension_numbers), lhs_spinfo=lhs_spinfo,
                preferred_element_type=_pet(preferred_element_type))


def coo_todense(data, row, col, *, spinfo: COOInfo):
    """The dense matrix of COO buffers."""
    return bind(P.coo_todense_p, data, row, col, spinfo=spinfo)


def coo_fromdense(mat, *, nse, index_dtype=np.int32):
    """COO buffers ``(data, row, col)`` of a matrix."""
    return tuple(bind(P.coo_fromdense_p, mat, nse=int(nse),
                      index_dtype=np.dtype(index_dtype).type))


def coo_matvec(data, row, col, v, *, spinfo: COOInfo, transpose=False):
    """A COO matrix (or its transpose) times a vector."""
    return bind(P.coo_matvec_p, data, row, col, v, spinfo=spinfo, transpose=bool(transpose))


def coo_matmat(data, row, col, B, *, spinfo: COOInfo, transpose=False):
    """A COO matrix (or its transpose) times a matrix."""
    return bind(P.coo_matmat_p, data, row, col, B, spinfo=spinfo, transpose=bool(transpose))


def csr_todense(data, indices, indptr, *, shape):
    """The dense matrix of CSR buffers."""
    return bind(P.csr_todense_p, data, indices, indptr, shape=tuple(int(s) for s in shape))


def csr_fromdense(mat, *, nse, index_dtype=np.int32):
    """CSR buffers ``(data, indices, indptr)`` of a matrix."""
    return tuple(bind(P.csr_fromdense_p, mat, nse=int(nse),
                      index_dtype=np.dtype(index_dtype).type))


def csr_matvec(data, indices, indptr, v, *, shape, transpose=False):
    """A CSR matrix (or its transpose) times a vector."""
    return bind(P.csr_matvec_p, data, indices, indptr, v, shape=tuple(int(s) for s in shape),
                transpose=bool(transpose))


def csr_matmat(data, indices, indptr, B, *, shape, transpose=False):
    """A CSR matrix (or its transpose) times a matrix."""
    return bind(P.csr_matmat_p, data, indices, indptr, B, shape=tuple(int(s) for s in shape),
                transpose=bool(transpose))


def todense(*bufs, tree):
    """The dense array of a sparse object given as its pytree leaves and treedef (a plain
    array, a one-leaf tree, is returned as it is)."""
    return bind(P.todense_p, *bufs, tree=tree)
