"""Batching rules of the sparse primitives.

A mapped axis becomes a new leading batch dimension of the sparse layout (an unmapped
index or data buffer gets a size-1 batch dimension, which the formats broadcast), and a
new leading batch-dimension pair of the product for the dense operand of a product.
"""

from __future__ import annotations

from olympus_ir import primitives as P
from olympus_ir.prims.sparse import SparseInfo, todense_format

from .. import lax_ops as lax
from ..batching import batching_rules, moveaxis
from ..lax_ops import sparse as S
from ._util import to_front


def _front1(x, d):
    """`x` with its mapped axis first, or a size-1 leading axis when unmapped."""
    if d is None:
        return lax.expand_dims(x, (0,))
    return moveaxis(x, d, 0)


def _info(spinfo, size):
    return SparseInfo((size,) + tuple(spinfo.shape), spinfo.indices_sorted,
                      spinfo.unique_indices)


def _shift_dn(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    inc = lambda ds: tuple(d + 1 for d in ds)  # noqa: E731
    return ((inc(lc), inc(rc)), ((0,) + inc(lb), (0,) + inc(rb)))


def _todense_rule(axis_data, vals, dims, *, spinfo):
    data, indices = (_front1(v, d) for v, d in zip(vals, dims))
    return S.bcoo_todense(data, indices, spinfo=_info(spinfo, axis_data.size)), 0


def _fromdense_rule(axis_data, vals, dims, *, nse, n_batch, n_dense, index_dtype):
    (mat,), (d,) = vals, dims
    outs = S.bcoo_fromdense(moveaxis(mat, d, 0), nse=nse, n_batch=n_batch + 1,
                            n_dense=n_dense, index_dtype=index_dtype)
    return list(outs), [0, 0]


def _extract_rule(axis_data, vals, dims, *, assume_unique=True):
    (indices, mat), (di, dm) = vals, dims
    indices = _front1(indices, di)
    mat = to_front(mat, dm, axis_data.size)
    return S.bcoo_extract(indices, mat, assume_unique=assume_unique), 0


def _pair_rule(fn):
    def rule(axis_data, vals, dims, *, spinfo, **params):
        data, indices = (_front1(v, d) for v, d in zip(vals, dims))
        outs = fn(data, indices, spinfo=_info(spinfo, axis_data.size), **params)
        return list(outs), [0, 0]

    return rule


def _transpose_rule(axis_data, vals, dims, *, permutation, spinfo):
    data, indices = (_front1(v, d) for v, d in zip(vals, dims))
    perm = (0,) + tuple(p + 1 for p in permutation)
    outs = S.bcoo_transpose(data, indices, permutation=perm,
                            spinfo=_info(spinfo, axis_data.size))
    return list(outs), [0, 0]


def _dot_rule(axis_data, vals, dims, *, dimension_numbers, lhs_spinfo,
              preferred_element_type=None):
    (data, indices, rhs), (dd, di, dr) = vals, dims
    data, indices = _front1(data, dd), _front1(indices, di)
    rhs = to_front(rhs, dr, axis_data.size)
    out = S.bcoo_dot_general(data, indices, rhs, dimension_numbers=_shift_dn(dimension_numbers),
                             lhs_spinfo=_info(lhs_spinfo, axis_data.size),
                             preferred_element_type=preferred_element_type)
    return out, 0


def _sampled_rule(axis_data, vals, dims, *, dimension_numbers):
    (A, B, indices), (da, db, di) = vals, dims
    A, B = to_front(A, da, axis_data.size), to_front(B, db, axis_data.size)
    indices = _front1(indices, di)
    return S.bcoo_dot_general_sampled(A, B, indices,
                                      dimension_numbers=_shift_dn(dimension_numbers)), 0


def _spdot_rule(axis_data, vals, dims, *, lhs_spinfo, rhs_spinfo, dimension_numbers,
                preferred_element_type=None):
    ld, li, rd, ri = (_front1(v, d) for v, d in zip(vals, dims))
    outs = S.bcoo_spdot_general(ld, li, rd, ri, lhs_spinfo=_info(lhs_spinfo, axis_data.size),
                                rhs_spinfo=_info(rhs_spinfo, axis_data.size),
                                dimension_numbers=_shift_dn(dimension_numbers),
                                preferred_element_type=preferred_element_type)
    return list(outs), [0, 0]


def _bcsr_front(vals, dims, size):
    """BCSR buffers need full batch dims (indptr cannot broadcast)."""
    return [to_front(v, d, size) for v, d in zip(vals, dims)]


def _bcsr_todense_rule(axis_data, vals, dims, *, spinfo):
    data, indices, indptr = _bcsr_front(vals, dims, axis_data.size)
    return S.bcsr_todense(data, indices, indptr, spinfo=_info(spinfo, axis_data.size)), 0


def _bcsr_fromdense_rule(axis_data, vals, dims, *, nse, n_batch, n_dense, index_dtype):
    (mat,), (d,) = vals, dims
    outs = S.bcsr_fromdense(moveaxis(mat, d, 0), nse=nse, n_batch=n_batch + 1,
                            n_dense=n_dense, index_dtype=index_dtype)
    return list(outs), [0, 0, 0]


def _bcsr_extract_rule(axis_data, vals, dims):
    indices, indptr, mat = _bcsr_front(vals, dims, axis_data.size)
    return S.bcsr_extract(indices, indptr, mat), 0


def _bcsr_dot_rule(axis_data, vals, dims, *, dimension_numbers, lhs_spinfo,
                   preferred_element_type=None):
    data, indices, indptr, rhs = _bcsr_front(vals, dims, axis_data.size)
    out = S.bcsr_dot_general(data, indices, indptr, rhs,
                             dimension_numbers=_shift_dn(dimension_numbers),
                             lhs_spinfo=_info(lhs_spinfo, axis_data.size),
                             preferred_element_type=preferred_element_type)
    return out, 0


batching_rules[P.bcoo_todense_p] = _todense_rule
batching_rules[P.bcoo_fromdense_p] = _fromdense_rule
batching_rules[P.bcoo_extract_p] = _extract_rule
batching_rules[P.bcoo_transpose_p] = _transpose_rule
batching_rules[P.bcoo_sort_indices_p] = _pair_rule(S.bcoo_sort_indices)
batching_rules[P.bcoo_sum_duplicates_p] = _pair_rule(S.bcoo_sum_duplicates)
batching_rules[P.bcoo_dot_general_p] = _dot_rule
batching_rules[P.bcoo_dot_general_sampled_p] = _sampled_rule
batching_rules[P.bcoo_spdot_general_p] = _spdot_rule
batching_rules[P.bcsr_todense_p] = _bcsr_todense_rule
batching_rules[P.bcsr_fromdense_p] = _bcsr_fromdense_rule
batching_rules[P.bcsr_extract_p] = _bcsr_extract_rule
batching_rules[P.bcsr_dot_general_p] = _bcsr_dot_rule



_TODENSE = {"BCOO": P.bcoo_todense_p, "BCSR": P.bcsr_todense_p}


def _any_todense_rule(axis_data, vals, dims, *, tree):
    name, params = todense_format(tree)
    if name is None:
        return vals[0], dims[0]
    prim = _TODENSE.get(name)
    if prim is None:
        raise NotImplementedError(f"Batching rule for 'todense' of a {name} array not "
                                  "implemented (only BCOO and BCSR are batchable)")
    return batching_rules[prim](axis_data, vals, dims, **params)


batching_rules[P.todense_p] = _any_todense_rule
