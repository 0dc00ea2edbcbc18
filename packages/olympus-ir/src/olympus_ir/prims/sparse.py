"""Sparse-array primitives (the buffers of `olympus.experimental.sparse`'s formats).

A BCOO array of shape ``batch + sparse + dense`` is two buffers: ``data`` of shape
``batch' + (nse,) + dense`` and ``indices`` of shape ``batch'' + (nse, n_sparse)``, where
each batch dimension of a buffer is the array's or 1 (broadcast). Index rows that are out
of bounds (JAX pads with the shape itself) are padding: dropped by ``todense``, read as
zero by ``extract``. BCSR keeps ``indices`` (columns) and ``indptr`` (row offsets) for
its two sparse dimensions; COO keeps ``row``/``col`` and CSR ``indices``/``indptr`` of a
matrix. The parameters are JAX's: ``spinfo`` is a `SparseInfo` (shape, and whether the
indices are sorted and unique) and ``dimension_numbers`` those of ``dot_general``.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..core import def_shape_rule, new_primitive
from ..pretty import def_pp_params

__all__ = [
    "SparseInfo", "COOInfo", "bcoo_todense_p", "bcoo_fromdense_p", "bcoo_extract_p",
    "bcoo_dot_general_p", "bcoo_dot_general_sampled_p", "bcoo_spdot_general_p",
    "bcoo_sort_indices_p", "bcoo_sum_duplicates_p", "bcoo_transpose_p",
    "bcsr_todense_p", "bcsr_fromdense_p", "bcsr_extract_p", "bcsr_dot_general_p",
    "coo_todense_p", "coo_fromdense_p", "coo_matvec_p", "coo_matmat_p",
    "csr_todense_p", "csr_fromdense_p", "csr_matvec_p", "csr_matmat_p",
    "todense_p", "todense_format", "bcoo_layout", "SPARSE_PRIMITIVES",
]


class SparseInfo(NamedTuple):
    """The static description of a sparse array a primitive needs (printed as JAX
    prints it in an olympuspr)."""

    shape: tuple[int, ...]
    indices_sorted: bool = False
    unique_indices: bool = False


class COOInfo(NamedTuple):
    """The static description of a COO matrix (its shape and which indices are sorted)."""

    shape: tuple[int, int]
    rows_sorted: bool = False
    cols_sorted: bool = False


class BCOOLayout(NamedTuple):
    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int


def bcoo_layout(data, indices, shape) -> BCOOLayout:
    """Check BCOO buffers against `shape` (JAX's messages) and return their layout."""
    shape = tuple(shape)
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"BCOO indices must have an integer dtype, got {indices.dtype}")
    if indices.ndim < 2:
        raise ValueError(f"BCOO indices must have at least 2 dimensions, got {indices.shape=}")
    nse, n_sparse = indices.shape[-2:]
    n_batch = indices.ndim - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(f"Invalid {indices.shape=} for {shape=}")
    if any(s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape[:n_batch])):
        raise ValueError(f"indices batch dimensions not compatible for {indices.shape=}, "
                         f"{shape=}")
    if data is not None:
        if data.ndim < n_batch or any(s1 not in (1, s2) for s1, s2 in
                                      zip(data.shape[:n_batch], shape[:n_batch])):
            raise ValueError(f"data batch dimensions not compatible for {data.shape=}, "
                             f"{shape=}")
        if tuple(data.shape[n_batch:]) != (nse,) + shape[n_batch + n_sparse:]:
            raise ValueError(f"Invalid {data.shape=} for {nse=}, {n_batch=}, {n_dense=}")
    return BCOOLayout(n_batch, n_sparse, n_dense, nse)


def _bcsr_layout(data, indices, indptr, shape) -> BCOOLayout:
    shape = tuple(shape)
    n_batch = indices.ndim - 1
    n_dense = len(shape) - n_batch - 2
    if n_dense < 0 or indptr.ndim != n_batch + 1:
        raise ValueError(f"Invalid {indices.shape=}, {indptr.shape=} for {shape=}")
    nse = indices.shape[-1]
    if indptr.shape[-1] != shape[n_batch] + 1:
        raise ValueError(f"indptr shape must match the matrix shape; got {indptr.shape=} "
                         f"for {shape=}")
    if data is not None and tuple(data.shape[n_batch:]) != (nse,) + shape[n_batch + 2:]:
        raise ValueError(f"Invalid {data.shape=} for {nse=}, {n_batch=}, {n_dense=}")
    return BCOOLayout(n_batch, 2, n_dense, nse)


def _index_dtype(index_dtype):
    dt = np.dtype(index_dtype)
    if not dtypes.is_integer(dt):
        raise TypeError(f"index_dtype must be an integer dtype, got {dt}")
    return dt


def _nse(nse, what):
    try:
        n = operator.index(nse)
    except TypeError:
        raise ValueError(f"{what}: nse must be specified when using the function within jit, "
                         "vmap, and other transformations requiring abstract evaluation."
                         ) from None
    if n < 0:
        raise ValueError(f"{what}: nse must be non-negative, got {n}")
    return n


def dot_general_shape(lhs_shape, rhs_shape, dimension_numbers) -> tuple[int, ...]:
    """The result shape of ``dot_general`` (batch, lhs free, rhs free), with its checks."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in x) for x in (lc, rc, lb, rb))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs and rhs contracting and "
                        f"batch dimensions, got {dimension_numbers}.")
    for a, b in zip(lc + lb, rc + rb):
        if lhs_shape[a] != rhs_shape[b]:
            raise TypeError("dot_general requires contracting and batch dimensions to have "
                            f"the same shape, got {lhs_shape[a]} and {rhs_shape[b]}.")
    lfree = [s for i, s in enumerate(lhs_shape) if i not in lc and i not in lb]
    rfree = [s for i, s in enumerate(rhs_shape) if i not in rc and i not in rb]
    return tuple(lhs_shape[d] for d in lb) + tuple(lfree) + tuple(rfree)


def _result_dtype(a, b, preferred_element_type):
    if preferred_element_type is not None:
        return np.dtype(preferred_element_type)
    return dtypes.promote_types(a, b)


# --- BCOO -------------------------------------------------------------------------------------

bcoo_todense_p = new_primitive("bcoo_todense")


@def_shape_rule(bcoo_todense_p)
def _bcoo_todense_rule(data, indices, *, spinfo):
    bcoo_layout(data, indices, spinfo.shape)
    return ShapedArray(tuple(spinfo.shape), data.dtype)


bcoo_fromdense_p = new_primitive("bcoo_fromdense", multiple_results=True)


@def_shape_rule(bcoo_fromdense_p)
def _bcoo_fromdense_rule(mat, *, nse, n_batch, n_dense, index_dtype):
    nse = _nse(nse, "bcoo_fromdense")
    n_sparse = mat.ndim - n_batch - n_dense
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for an array of "
                         f"shape {mat.shape}")
    data = ShapedArray(mat.shape[:n_batch] + (nse,) + mat.shape[n_batch + n_sparse:], mat.dtype)
    idx = ShapedArray(mat.shape[:n_batch] + (nse, n_sparse), _index_dtype(index_dtype))
    return [data, idx]


class _ScalarTypeText:
    """Prints a scalar type as Python prints the class (JAX keeps ``index_dtype`` as the
    NumPy scalar type there, where the printer shows other dtypes by name)."""

    def __init__(self, t):
        self.t = t

    def __str__(self):
        return str(np.dtype(self.t).type)


def _fromdense_printed(eqn):
    params = dict(eqn.params)
    params["index_dtype"] = _ScalarTypeText(params["index_dtype"])
    return params


bcoo_extract_p = new_primitive("bcoo_extract")


@def_shape_rule(bcoo_extract_p)
def _bcoo_extract_rule(indices, mat, *, assume_unique=True):
    n_batch, _, n_dense, nse = bcoo_layout(None, indices, mat.shape)
    return ShapedArray(mat.shape[:n_batch] + (nse,) + mat.shape[mat.ndim - n_dense:], mat.dtype)


bcoo_transpose_p = new_primitive("bcoo_transpose", multiple_results=True)


def transpose_parts(n_batch, n_sparse, n_dense, permutation, shape):
    """Split a BCOO permutation into its batch, sparse and dense parts (JAX's checks)."""
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError("transpose permutation must be a tuple/list/ndarray, got "
                        f"{type(permutation)}.")
    permutation = tuple(int(p) for p in permutation)
    if tuple(sorted(permutation)) != tuple(range(len(shape))):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                        f"got permutation {permutation} for shape {tuple(shape)}.")
    batch = permutation[:n_batch]
    sparse = tuple(p - n_batch for p in permutation[n_batch:n_batch + n_sparse])
    dense = tuple(p - n_batch - n_sparse for p in permutation[n_batch + n_sparse:])
    if n_batch and tuple(sorted(batch)) != tuple(range(n_batch)):
        raise NotImplementedError("transpose permutation cannot permute batch axes with "
                                  f"non-batch axes; got permutation {permutation}, with "
                                  f"{n_batch=}.")
    if n_dense and tuple(sorted(dense)) != tuple(range(n_dense)):
        raise NotImplementedError("transpose permutation cannot permute dense axes with "
                                  f"non-dense axes; got permutation {permutation}, with "
                                  f"{n_dense=}.")
    return batch, sparse, dense


@def_shape_rule(bcoo_transpose_p)
def _bcoo_transpose_rule(data, indices, *, permutation, spinfo):
    nb, ns, nd, _ = bcoo_layout(data, indices, spinfo.shape)
    batch, _, dense = transpose_parts(nb, ns, nd, permutation, spinfo.shape)
    ishape = tuple(indices.shape[p] for p in batch) + indices.shape[nb:]
    dshape = (tuple(data.shape[p] for p in batch) + (data.shape[nb],)
              + tuple(data.shape[nb + 1 + d] for d in dense))
    return [ShapedArray(dshape, data.dtype), ShapedArray(ishape, indices.dtype)]


bcoo_sort_indices_p = new_primitive("bcoo_sort_indices", multiple_results=True)


@def_shape_rule(bcoo_sort_indices_p)
def _bcoo_sort_indices_rule(data, indices, *, spinfo):
    nb = bcoo_layout(data, indices, spinfo.shape).n_batch
    batch = tuple(max(a, b) for a, b in zip(data.shape[:nb], indices.shape[:nb]))
    return [ShapedArray(batch + data.shape[nb:], data.dtype),
            ShapedArray(batch + indices.shape[nb:], indices.dtype)]


bcoo_sum_duplicates_p = new_primitive("bcoo_sum_duplicates", multiple_results=True)


@def_shape_rule(bcoo_sum_duplicates_p)
def _bcoo_sum_duplicates_rule(data, indices, *, spinfo, nse):
    nse = _nse(nse, "bcoo_sum_duplicates")
    nb, ns, _, _ = bcoo_layout(data, indices, spinfo.shape)
    batch = tuple(max(a, b) for a, b in zip(data.shape[:nb], indices.shape[:nb]))
    return [ShapedArray(batch + (nse,) + data.shape[nb + 1:], data.dtype),
            ShapedArray(batch + (nse, ns), indices.dtype)]


bcoo_dot_general_p = new_primitive("bcoo_dot_general")


@def_shape_rule(bcoo_dot_general_p)
def _bcoo_dot_general_rule(lhs_data, lhs_indices, rhs, *, dimension_numbers, lhs_spinfo,
                           preferred_element_type=None):
    bcoo_layout(lhs_data, lhs_indices, lhs_spinfo.shape)
    shape = dot_general_shape(tuple(lhs_spinfo.shape), rhs.shape, dimension_numbers)
    return ShapedArray(shape, _result_dtype(lhs_data.dtype, rhs.dtype, preferred_element_type))


bcoo_dot_general_sampled_p = new_primitive("bcoo_dot_general_sampled")


@def_shape_rule(bcoo_dot_general_sampled_p)
def _bcoo_dot_general_sampled_rule(A, B, indices, *, dimension_numbers):
    shape = dot_general_shape(A.shape, B.shape, dimension_numbers)
    n_batch, _, n_dense, nse = bcoo_layout(None, indices, shape)
    return ShapedArray(shape[:n_batch] + (nse,) + shape[len(shape) - n_dense:],
                       dtypes.promote_types(A.dtype, B.dtype))


bcoo_spdot_general_p = new_primitive("bcoo_spdot_general", multiple_results=True)


def spdot_general_layout(lhs_spinfo, rhs_spinfo, lhs_indices, rhs_indices, dimension_numbers):
    """The result of a sparse-sparse dot_general: (shape, n_batch, n_sparse, nse).

    As JAX: the operands have no dense dimensions, the batch dimensions of the
    product are the leading batch dimensions of both, and every pair of stored elements
    makes one stored element of the result."""
    (lc, rc), (lb, rb) = dimension_numbers
    lnb, rnb = lhs_indices.ndim - 2, rhs_indices.ndim - 2
    lns, rns = lhs_indices.shape[-1], rhs_indices.shape[-1]
    if lnb + lns != len(lhs_spinfo.shape) or rnb + rns != len(rhs_spinfo.shape):
        raise NotImplementedError("bcoo_spdot_general: operands with dense dimensions are not "
                                  "supported.")
    if tuple(lb) != tuple(range(len(lb))) or tuple(rb) != tuple(range(len(rb))):
        raise NotImplementedError("bcoo_spdot_general: batch dimensions must be the leading "
                                  "dimensions.")
    if any(d >= lnb for d in lb) or any(d >= rnb for d in rb):
        raise NotImplementedError("bcoo_spdot_general: batch dimensions must be batch "
                                  "dimensions of both operands.")
    if any(d < lnb for d in lc) or any(d < rnb for d in rc):
        raise NotImplementedError("bcoo_spdot_general: contracting dimensions must be sparse.")
    if lnb != len(lb) or rnb != len(rb):
        raise NotImplementedError("bcoo_spdot_general: every batch dimension must be a batch "
                                  "dimension of the product.")
    shape = dot_general_shape(tuple(lhs_spinfo.shape), tuple(rhs_spinfo.shape),
                              dimension_numbers)
    n_batch = len(lb)
    n_sparse = len(shape) - n_batch
    # As JAX: a side whose sparse dims are all contracted contributes one element, and
    # the result never stores more elements than its sparse shape holds.
    nse = ((lhs_indices.shape[-2] if lns > len(lc) else 1)
           * (rhs_indices.shape[-2] if rns > len(rc) else 1))
    nse = min(nse, math.prod(shape[n_batch:]))
    return shape, n_batch, n_sparse, nse


@def_shape_rule(bcoo_spdot_general_p)
def _bcoo_spdot_general_rule(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_spinfo,
                             rhs_spinfo, dimension_numbers, preferred_element_type=None):
    bcoo_layout(lhs_data, lhs_indices, lhs_spinfo.shape)
    bcoo_layout(rhs_data, rhs_indices, rhs_spinfo.shape)
    shape, nb, ns, nse = spdot_general_layout(lhs_spinfo, rhs_spinfo, lhs_indices,
                                              rhs_indices, dimension_numbers)
    dt = _result_dtype(lhs_data.dtype, rhs_data.dtype, preferred_element_type)
    return [ShapedArray(shape[:nb] + (nse,), dt),
            ShapedArray(shape[:nb] + (nse, ns), lhs_indices.dtype)]


# --- BCSR -------------------------------------------------------------------------------------

bcsr_todense_p = new_primitive("bcsr_todense")


@def_shape_rule(bcsr_todense_p)
def _bcsr_todense_rule(data, indices, indptr, *, spinfo):
    _bcsr_layout(data, indices, indptr, spinfo.shape)
    return ShapedArray(tuple(spinfo.shape), data.dtype)


bcsr_fromdense_p = new_primitive("bcsr_fromdense", multiple_results=True)


@def_shape_rule(bcsr_fromdense_p)
def _bcsr_fromdense_rule(mat, *, nse, n_batch, n_dense, index_dtype):
    nse = _nse(nse, "bcsr_fromdense")
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    idt = _index_dtype(index_dtype)
    return [ShapedArray(mat.shape[:n_batch] + (nse,) + mat.shape[n_batch + 2:], mat.dtype),
            ShapedArray(mat.shape[:n_batch] + (nse,), idt),
            ShapedArray(mat.shape[:n_batch] + (mat.shape[n_batch] + 1,), idt)]


bcsr_extract_p = new_primitive("bcsr_extract")


@def_shape_rule(bcsr_extract_p)
def _bcsr_extract_rule(indices, indptr, mat):
    n_batch, _, n_dense, nse = _bcsr_layout(None, indices, indptr, mat.shape)
    return ShapedArray(mat.shape[:n_batch] + (nse,) + mat.shape[mat.ndim - n_dense:], mat.dtype)


bcsr_dot_general_p = new_primitive("bcsr_dot_general")


@def_shape_rule(bcsr_dot_general_p)
def _bcsr_dot_general_rule(lhs_data, lhs_indices, lhs_indptr, rhs, *, dimension_numbers,
                           lhs_spinfo, preferred_element_type=None):
    _bcsr_layout(lhs_data, lhs_indices, lhs_indptr, lhs_spinfo.shape)
    shape = dot_general_shape(tuple(lhs_spinfo.shape), rhs.shape, dimension_numbers)
    return ShapedArray(shape, _result_dtype(lhs_data.dtype, rhs.dtype, preferred_element_type))


# --- COO and CSR matrices ---------------------------------------------------------------------


def _check_matrix_buffers(what, data, a, b, nse_of_b=True):
    if data.ndim != 1 or a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"{what}: buffers must be 1-dimensional, got {data.shape}, "
                         f"{a.shape}, {b.shape}")
    if data.shape != a.shape or (nse_of_b and b.shape != data.shape):
        raise ValueError(f"{what}: buffer shapes must match, got {data.shape}, {a.shape}, "
                         f"{b.shape}")


def _matvec_shape(what, shape, v, transpose, ndim):
    if v.ndim != ndim:
        raise ValueError(f"{what}: expected a {ndim}-dimensional operand, got shape {v.shape}")
    rows, cols = shape
    if v.shape[0] != (rows if transpose else cols):
        raise ValueError(f"{what}: shape mismatch: matrix of shape {tuple(shape)}"
                         f"{' (transposed)' if transpose else ''} and operand of shape "
                         f"{v.shape}")
    return ((cols if transpose else rows),) + v.shape[1:]


coo_todense_p = new_primitive("coo_todense")


@def_shape_rule(coo_todense_p)
def _coo_todense_rule(data, row, col, *, spinfo):
    _check_matrix_buffers("coo_todense", data, row, col)
    return ShapedArray(tuple(spinfo.shape), data.dtype)


coo_fromdense_p = new_primitive("coo_fromdense", multiple_results=True)


@def_shape_rule(coo_fromdense_p)
def _coo_fromdense_rule(mat, *, nse, index_dtype):
    nse = _nse(nse, "coo_fromdense")
    if mat.ndim != 2:
        raise ValueError(f"coo_fromdense: expected a matrix, got shape {mat.shape}")
    idt = _index_dtype(index_dtype)
    return [ShapedArray((nse,), mat.dtype), ShapedArray((nse,), idt), ShapedArray((nse,), idt)]


def _matprod(name, ndim):
    p = new_primitive(name)

    @def_shape_rule(p)
    def rule(data, row, col, v, *, spinfo, transpose):
        _check_matrix_buffers(name, data, row, col)
        shape = _matvec_shape(name, spinfo.shape, v, transpose, ndim)
        return ShapedArray(shape, dtypes.promote_types(data.dtype, v.dtype))

    rule.__name__ = f"_{name}_rule"
    return p


coo_matvec_p = _matprod("coo_matvec", 1)
coo_matmat_p = _matprod("coo_matmat", 2)

csr_todense_p = new_primitive("csr_todense")


@def_shape_rule(csr_todense_p)
def _csr_todense_rule(data, indices, indptr, *, shape):
    _check_matrix_buffers("csr_todense", data, indices, indptr, nse_of_b=False)
    if indptr.shape[0] != shape[0] + 1:
        raise ValueError(f"csr_todense: indptr of shape {indptr.shape} for a matrix of shape "
                         f"{tuple(shape)}")
    return ShapedArray(tuple(shape), data.dtype)


csr_fromdense_p = new_primitive("csr_fromdense", multiple_results=True)


@def_shape_rule(csr_fromdense_p)
def _csr_fromdense_rule(mat, *, nse, index_dtype):
    nse = _nse(nse, "csr_fromdense")
    if mat.ndim != 2:
        raise ValueError(f"csr_fromdense: expected a matrix, got shape {mat.shape}")
    idt = _index_dtype(index_dtype)
    return [ShapedArray((nse,), mat.dtype), ShapedArray((nse,), idt),
            ShapedArray((mat.shape[0] + 1,), idt)]


def _csr_matprod(name, ndim):
    p = new_primitive(name)

    @def_shape_rule(p)
    def rule(data, indices, indptr, v, *, shape, transpose):
        _check_matrix_buffers(name, data, indices, indptr, nse_of_b=False)
        out = _matvec_shape(name, shape, v, transpose, ndim)
        return ShapedArray(out, dtypes.promote_types(data.dtype, v.dtype))

    rule.__name__ = f"_{name}_rule"
    return p


csr_matvec_p = _csr_matprod("csr_matvec", 1)
csr_matmat_p = _csr_matprod("csr_matmat", 2)

# --- todense of any format (a pytree of buffers) ---------------------------------------------

todense_p = new_primitive("todense")


def todense_format(tree):
    """Which format the pytree `tree` describes, as (class name, the params of that
    format's own todense primitive); ``(None, {})`` for a plain array. The classes live in
    `olympus.experimental.sparse`; their pytree nodes are read by attribute, so the layers
    below need not import them."""
    obj = tree.unflatten(list(range(tree.num_leaves)))
    if isinstance(obj, int):
        return None, {}
    name = type(obj).__name__
    shape = tuple(obj.shape)
    if name in ("BCOO", "BCSR"):
        return name, dict(spinfo=SparseInfo(shape, obj.indices_sorted, obj.unique_indices))
    if name == "COO":
        return name, dict(spinfo=COOInfo(shape, obj._rows_sorted, obj._cols_sorted))
    if name in ("CSR", "CSC"):
        return name, dict(shape=shape)
    raise NotImplementedError(f"todense for {type(obj)}")


@def_shape_rule(todense_p)
def _todense_rule(*bufs, tree):
    name, params = todense_format(tree)
    if name is None:
        return bufs[0]
    shape = tuple(params["spinfo"].shape if "spinfo" in params else params["shape"])
    if name == "BCOO":
        bcoo_layout(bufs[0], bufs[1], shape)
    elif name == "BCSR":
        _bcsr_layout(bufs[0], bufs[1], bufs[2], shape)
    else:
        _check_matrix_buffers(f"todense of a {name} matrix", *bufs, nse_of_b=name == "COO")
    return ShapedArray(shape, bufs[0].dtype)


def_pp_params(bcoo_fromdense_p, bcsr_fromdense_p, coo_fromdense_p)(_fromdense_printed)

SPARSE_PRIMITIVES = (
    bcoo_todense_p, bcoo_fromdense_p, bcoo_extract_p, bcoo_dot_general_p,
    bcoo_dot_general_sampled_p, bcoo_spdot_general_p, bcoo_sort_indices_p,
    bcoo_sum_duplicates_p, bcoo_transpose_p, bcsr_todense_p, bcsr_fromdense_p,
    bcsr_extract_p, bcsr_dot_general_p, coo_todense_p, coo_fromdense_p, coo_matvec_p,
    coo_matmat_p, csr_todense_p, csr_fromdense_p, csr_matvec_p, csr_matmat_p, todense_p,
)
