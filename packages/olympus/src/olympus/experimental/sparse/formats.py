"""BCSR (batched compressed rows), COO and CSR/CSC matrices: their classes and functions
over the `olympus_ir.prims.sparse` primitives."""

from __future__ import annotations

import operator

import numpy as np

import olympus.numpy as jnp
from olympus.tree_util import register_pytree_node_class
from olympus_ir.prims.sparse import (
    COOInfo,
    SparseInfo,
    bcsr_dot_general_p,
    bcsr_extract_p,
    bcsr_fromdense_p,
    bcsr_todense_p,
    coo_fromdense_p,
    coo_matmat_p,
    coo_matvec_p,
    coo_todense_p,
    csr_fromdense_p,
    csr_matmat_p,
    csr_matvec_p,
    csr_todense_p,
)
from olympus_trace.lax_ops import sparse as S

from ._base import OLYMPUSSparse
from .bcoo import BCOO, _count_nonzero_rows, _promote, bcoo_sum_duplicates
from .bcoo_shape_ops import bcoo_broadcast_in_dim, bcoo_concatenate

__all__ = [
    "BCSR", "COO", "CSR", "CSC", "bcsr_todense", "bcsr_fromdense", "bcsr_extract",
    "bcsr_dot_general", "bcsr_sum_duplicates", "bcsr_concatenate", "bcsr_broadcast_in_dim",
    "coo_todense", "coo_fromdense", "coo_matvec", "coo_matmat",
    "csr_todense", "csr_fromdense", "csr_matvec", "csr_matmat",
    "bcsr_todense_p", "bcsr_fromdense_p", "bcsr_extract_p", "bcsr_dot_general_p",
    "coo_todense_p", "coo_fromdense_p", "coo_matvec_p", "coo_matmat_p", "csr_todense_p",
    "csr_fromdense_p", "csr_matvec_p", "csr_matmat_p",
]


def _nse(mat, nse, n_batch=0, n_dense=0):
    if nse is None:
        nse = _count_nonzero_rows(mat, n_batch, n_dense)
    return operator.index(nse)


# --- BCSR -------------------------------------------------------------------------------------


def bcsr_todense(mat):
    """The dense array of a BCSR array."""
    return S.bcsr_todense(mat.data, mat.indices, mat.indptr, spinfo=mat._info)


def bcsr_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=jnp.int32):
    """A BCSR array of a dense array's nonzeros (two sparse dimensions after `n_batch`).

    Args:
      mat: the dense array.
      nse: stored elements per batch (default: the largest count, needs a concrete mat).
      n_batch, n_dense: the layout.
      index_dtype: the dtype of ``indices`` and ``indptr``.
    """
    mat = jnp.asarray(mat)
    nse = _nse(mat, nse, n_batch, n_dense)
    data, indices, indptr = S.bcsr_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                             index_dtype=index_dtype)
    return BCSR((data, indices, indptr), shape=mat.shape, indices_sorted=True,
                unique_indices=True)


def bcsr_extract(indices, indptr, mat):
    """The elements of a dense array at BCSR positions (the data buffer)."""
    return S.bcsr_extract(jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(mat))


def bcsr_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """``dot_general`` of a BCSR lhs and a dense rhs; a dense array."""
    if not isinstance(lhs, BCSR):
        raise NotImplementedError("bcsr_dot_general: the lhs must be a BCSR array")
    ld, r = _promote(lhs.data, jnp.asarray(rhs))
    return S.bcsr_dot_general(ld, lhs.indices, lhs.indptr, r,
                              dimension_numbers=dimension_numbers, lhs_spinfo=lhs._info,
                              preferred_element_type=preferred_element_type)


def _bcsr_rows(indptr, nse):
    """The row of each stored element (the count of row ends at or before it)."""
    ends = indptr[..., 1:]
    k = jnp.arange(nse, dtype=indptr.dtype)
    return jnp.sum(ends[..., None, :] <= k[:, None], axis=-1).astype(indptr.dtype)


def _bcoo_to_bcsr_buffers(indices, n_rows):
    rows, cols = indices[..., 0], indices[..., 1]
    counts = jnp.sum(rows[..., None, :] < jnp.arange(n_rows + 1, dtype=rows.dtype)[:, None],
                     axis=-1)
    return cols, counts.astype(indices.dtype)


def bcsr_sum_duplicates(mat, nse=None):
    """Sum a BCSR array's elements stored at the same position (see
    `bcoo_sum_duplicates`); a BCSR array."""
    return BCSR.from_bcoo(bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_concatenate(operands, *, dimension):
    """``lax.concatenate`` of BCSR arrays along a batch or sparse dimension."""
    return BCSR.from_bcoo(bcoo_concatenate([op.to_bcoo() for op in operands],
                                           dimension=dimension))


def bcsr_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """``lax.broadcast_in_dim`` of a BCSR array (new leading dimensions are batch
    dimensions)."""
    return BCSR.from_bcoo(bcoo_broadcast_in_dim(mat.to_bcoo(), shape=shape,
                                                broadcast_dimensions=broadcast_dimensions))


@register_pytree_node_class
class BCSR(OLYMPUSSparse):
    """An array in batched compressed-sparse-row format: ``data``, column ``indices``
    and row offsets ``indptr``, with leading batch and trailing dense dimensions."""

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        self.data, self.indices, self.indptr = (jnp.asarray(a) for a in args)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        super().__init__(args, shape=shape)

    @property
    def _info(self):
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def nse(self):
        """Stored elements per batch."""
        return self.indices.shape[-1]

    @property
    def n_batch(self):
        """The number of batch dimensions."""
        return self.indices.ndim - 1

    @property
    def n_sparse(self):
        """Always 2."""
        return 2

    @property
    def n_dense(self):
        """The number of dense dimensions."""
        return self.data.ndim - 1 - self.n_batch

    def _repr_extra(self):
        extra = f", n_batch={self.n_batch}" if self.n_batch else ""
        return extra + (f", n_dense={self.n_dense}" if self.n_dense else "")

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        """A BCSR array of a dense array (see `bcsr_fromdense`)."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        """A BCSR array of a ``scipy.sparse`` matrix."""
        if n_dense or n_batch:
            raise NotImplementedError("BCSR from_scipy_sparse with nonzero n_dense/n_batch")
        mat = mat.tocsr()
        dt = index_dtype or np.int32
        return cls((jnp.asarray(mat.data), jnp.asarray(mat.indices.astype(dt)),
                    jnp.asarray(mat.indptr.astype(dt))), shape=mat.shape)

    def todense(self):
        """The dense array."""
        return bcsr_todense(self)

    def to_bcoo(self):
        """The same array in BCOO format."""
        nb = self.n_batch
        rows = _bcsr_rows(self.indptr, self.nse)
        cols = self.indices.astype(self.indptr.dtype)
        indices = jnp.stack([jnp.broadcast_to(rows, cols.shape), cols], axis=nb + 1)
        return BCOO((self.data, indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    @classmethod
    def from_bcoo(cls, arr):
        """A BCSR array of a BCOO array with two sparse dimensions."""
        if arr.n_sparse != 2:
            raise NotImplementedError(f"BSCR.from_bcoo requires n_sparse=2; got "
                                      f"arr.n_sparse={arr.n_sparse}")
        if not arr.indices_sorted:
            arr = arr.sort_indices()
        nb = arr.n_batch
        indices = jnp.broadcast_to(arr.indices, arr.shape[:nb] + arr.indices.shape[nb:])
        data = jnp.broadcast_to(arr.data, arr.shape[:nb] + arr.data.shape[nb:])
        cols, indptr = _bcoo_to_bcsr_buffers(indices, arr.shape[nb])
        return cls((data, cols, indptr), shape=arr.shape, indices_sorted=True,
                   unique_indices=arr.unique_indices)

    def transpose(self, axes=None):
        """Not supported for BCSR (as in JAX)."""
        raise NotImplementedError("Tranpose is not implemented.")

    def __matmul__(self, other):
        other = jnp.asarray(other)
        dn = (((self.ndim - 1,), (0,)), ((), ()))
        return bcsr_dot_general(self, other, dimension_numbers=dn)

    def tree_flatten(self):
        """Buffers ``(data, indices, indptr)`` and the static info."""
        return (self.data, self.indices, self.indptr), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuild from buffers and info."""
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.__dict__.update(**aux_data)
        return obj


# --- COO --------------------------------------------------------------------------------------


def coo_todense(mat):
    """The dense matrix of a COO matrix."""
    return S.coo_todense(mat.data, mat.row, mat.col, spinfo=mat._info)


def coo_fromdense(mat, *, nse=None, index_dtype=jnp.int32):
    """A COO matrix of a dense matrix's nonzeros."""
    mat = jnp.asarray(mat)
    nse = _nse(mat, nse)
    data, row, col = S.coo_fromdense(mat, nse=nse, index_dtype=index_dtype)
    return COO((data, row, col), shape=mat.shape, rows_sorted=True)


def coo_matvec(mat, v, transpose=False):
    """A COO matrix (or its transpose) times a vector."""
    d, x = _promote(mat.data, jnp.asarray(v))
    return S.coo_matvec(d, mat.row, mat.col, x, spinfo=mat._info, transpose=transpose)


def coo_matmat(mat, B, *, transpose=False):
    """A COO matrix (or its transpose) times a matrix."""
    d, x = _promote(mat.data, jnp.asarray(B))
    return S.coo_matmat(d, mat.row, mat.col, x, spinfo=mat._info, transpose=transpose)


@register_pytree_node_class
class COO(OLYMPUSSparse):
    """A matrix in coordinate format: ``data``, ``row`` and ``col`` buffers."""

    def __init__(self, args, *, shape, rows_sorted=False, cols_sorted=False):
        self.data, self.row, self.col = (jnp.asarray(a) for a in args)
        self._rows_sorted = bool(rows_sorted)
        self._cols_sorted = bool(cols_sorted)
        super().__init__(args, shape=shape)

    @property
    def _info(self):
        return COOInfo(self.shape, self._rows_sorted, self._cols_sorted)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32):
        """A COO matrix of a dense matrix (see `coo_fromdense`)."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self):
        """The dense matrix."""
        return coo_todense(self)

    def transpose(self, axes=None):
        """The transposed matrix (row and col swapped)."""
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return COO((self.data, self.col, self.row), shape=self.shape[::-1],
                   rows_sorted=self._cols_sorted, cols_sorted=self._rows_sorted)

    def __matmul__(self, other):
        other = jnp.asarray(other)
        if other.ndim == 1:
            return coo_matvec(self, other)
        if other.ndim == 2:
            return coo_matmat(self, other)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")

    def tree_flatten(self):
        """Buffers ``(data, row, col)`` and the static info."""
        return (self.data, self.row, self.col), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuild from buffers and info."""
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        obj.shape = aux_data["shape"]
        obj._rows_sorted = aux_data["rows_sorted"]
        obj._cols_sorted = aux_data["cols_sorted"]
        return obj


# --- CSR / CSC --------------------------------------------------------------------------------


def csr_todense(mat):
    """The dense matrix of a CSR matrix."""
    return S.csr_todense(mat.data, mat.indices, mat.indptr, shape=mat.shape)


def csr_fromdense(mat, *, nse=None, index_dtype=np.int32):
    """A CSR matrix of a dense matrix's nonzeros."""
    mat = jnp.asarray(mat)
    nse = _nse(mat, nse)
    data, indices, indptr = S.csr_fromdense(mat, nse=nse, index_dtype=index_dtype)
    return CSR((data, indices, indptr), shape=mat.shape)


def csr_matvec(mat, v, transpose=False):
    """A CSR matrix (or its transpose) times a vector."""
    d, x = _promote(mat.data, jnp.asarray(v))
    return S.csr_matvec(d, mat.indices, mat.indptr, x, shape=mat.shape, transpose=transpose)


def csr_matmat(mat, B, *, transpose=False):
    """A CSR matrix (or its transpose) times a matrix."""
    d, x = _promote(mat.data, jnp.asarray(B))
    return S.csr_matmat(d, mat.indices, mat.indptr, x, shape=mat.shape, transpose=transpose)


@register_pytree_node_class
class CSR(OLYMPUSSparse):
    """A matrix in compressed-sparse-row format: ``data``, ``indices``, ``indptr``."""

    def __init__(self, args, *, shape):
        self.data, self.indices, self.indptr = (jnp.asarray(a) for a in args)
        super().__init__(args, shape=shape)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32):
        """A CSR matrix of a dense matrix."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self):
        """The dense matrix."""
        return csr_todense(self)

    def transpose(self, axes=None):
        """The transpose, as a CSC matrix over the same buffers."""
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        other = jnp.asarray(other)
        if other.ndim == 1:
            return csr_matvec(self, other)
        if other.ndim == 2:
            return csr_matmat(self, other)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")

    def tree_flatten(self):
        """Buffers and the shape."""
        return (self.data, self.indices, self.indptr), {"shape": self.shape}

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuild from buffers and shape."""
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = aux_data["shape"]
        return obj


@register_pytree_node_class
class CSC(OLYMPUSSparse):
    """A matrix in compressed-sparse-column format (the buffers of its transpose's CSR)."""

    def __init__(self, args, *, shape):
        self.data, self.indices, self.indptr = (jnp.asarray(a) for a in args)
        super().__init__(args, shape=shape)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32):
        """A CSC matrix of a dense matrix."""
        return csr_fromdense(jnp.asarray(mat).T, nse=nse, index_dtype=index_dtype).T

    def todense(self):
        """The dense matrix."""
        return S.csr_todense(self.data, self.indices, self.indptr, shape=self.shape[::-1]).T

    def transpose(self, axes=None):
        """The transpose, as a CSR matrix over the same buffers."""
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        other = jnp.asarray(other)
        d, x = _promote(self.data, other)
        shape = self.shape[::-1]
        if other.ndim == 1:
            return S.csr_matvec(d, self.indices, self.indptr, x, shape=shape, transpose=True)
        if other.ndim == 2:
            return S.csr_matmat(d, self.indices, self.indptr, x, shape=shape, transpose=True)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")

    def tree_flatten(self):
        """Buffers and the shape."""
        return (self.data, self.indices, self.indptr), {"shape": self.shape}

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuild from buffers and shape."""
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = aux_data["shape"]
        return obj
