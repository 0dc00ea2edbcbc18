"""Sparse primitives lowered to dense compositions (as JAX lowers them on CPU).

Each rule is written with `_Emitter`, which binds other primitives' lowering rules at
the current insertion point (their shape rules give the intermediate types), so a sparse
rule reads like the NumPy it stands for: gathers read the stored elements, scatter-adds
write them, a sort orders index rows. One idea carries the batched formats: a BCOO
array's batch dimensions are folded into extra index columns (an iota per batch
dimension), after which every operation is the unbatched one.
"""

from __future__ import annotations

import math

import numpy as np

from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray
from olympus_ir.core import abstract_eval
from olympus_ir.prims.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from olympus_ir.prims.sparse import (
    SparseInfo,
    bcoo_layout,
    dot_general_shape,
    spdot_general_layout,
    todense_format,
    transpose_parts,
)

from .. import mlir_utils as mu
from ._registry import get_lowering_rule, register_lowering

_DROP = GatherScatterMode.FILL_OR_DROP


class _V:
    """An MLIR value with its aval."""

    __slots__ = ("v", "aval")

    def __init__(self, v, aval):
        self.v, self.aval = v, aval

    @property
    def shape(self):
        return tuple(self.aval.shape)

    @property
    def dtype(self):
        return np.dtype(self.aval.dtype)

    @property
    def ndim(self):
        return len(self.aval.shape)


class _Emitter:
    """Binds primitives' lowering rules inside another rule."""

    def __init__(self, ctx):
        from ..lowering import LoweringRuleContext
        self._ctx_type = LoweringRuleContext
        self.ctx = ctx

    def bind(self, prim, *xs, **params):
        avals_in = [x.aval for x in xs]
        out = abstract_eval(prim, *avals_in, **params)
        avals_out = list(out) if prim.multiple_results else [out]
        rctx = self._ctx_type(self.ctx._lowerer, prim, avals_in, avals_out,
                              self.ctx.source_info)
        vals = get_lowering_rule(prim)(rctx, *[x.v for x in xs], **params)
        vs = [_V(v, a) for v, a in zip(vals, avals_out, strict=True)]
        return vs if prim.multiple_results else vs[0]

    # --- small helpers in lax's terms ---------------------------------------------------------
    def const(self, x, dtype=None):
        a = np.asarray(x, dtype)
        return _V(mu.ir_constant(a), ShapedArray(a.shape, a.dtype))

    def full(self, shape, value, dtype):
        return self.bcast(self.const(value, dtype), shape, ())

    def convert(self, x, dtype):
        dtype = np.dtype(dtype)
        if x.dtype == dtype:
            return x
        return self.bind(P.convert_element_type_p, x, new_dtype=dtype, weak_type=False,
                         sharding=None)

    def bcast(self, x, shape, dims):
        shape, dims = tuple(int(s) for s in shape), tuple(int(d) for d in dims)
        if x.shape == shape and dims == tuple(range(len(shape))):
            return x
        return self.bind(P.broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=dims,
                         sharding=None)

    def reshape(self, x, shape):
        shape = tuple(int(s) for s in shape)
        if x.shape == shape:
            return x
        return self.bind(P.reshape_p, x, new_sizes=shape, dimensions=None, sharding=None)

    def transpose(self, x, perm):
        perm = tuple(int(p) for p in perm)
        if perm == tuple(range(x.ndim)):
            return x
        return self.bind(P.transpose_p, x, permutation=perm)

    def iota(self, dtype, shape, dim):
        return self.bind(P.iota_p, dtype=np.dtype(dtype), shape=tuple(shape), dimension=dim,
                         sharding=None)

    def slice_last(self, x, start, stop):
        lim = list(x.shape)
        lim[-1] = stop
        return self.bind(P.slice_p, x, start_indices=(0,) * (x.ndim - 1) + (start,),
                         limit_indices=tuple(lim), strides=None)

    def concat(self, xs, dim):
        if len(xs) == 1:
            return xs[0]
        return self.bind(P.concatenate_p, *xs, dimension=dim)

    def columns(self, idx, cols):
        """``idx[..., cols]`` by slices and a concatenation."""
        parts = [self.slice_last(idx, c, c + 1) for c in cols]
        if not parts:
            return self.full(idx.shape[:-1] + (0,), 0, idx.dtype)
        return self.concat(parts, idx.ndim - 1)

    def binary(self, prim, a, b):
        return self.bind(prim, a, b)

    def select(self, pred, on_true, on_false):
        return self.bind(P.select_n_p, pred, on_false, on_true)

    def reduce(self, prim, x, axes):
        axes = tuple(int(a) for a in axes)
        if not axes:
            return x
        return self.bind(prim, x, axes=axes, out_sharding=None)


# --- BCOO with its batch dimensions folded into index columns ---------------------------------


def _batch_shape(shape, n_batch):
    return tuple(shape[:n_batch])


def _flat_indices(E, indices, n_batch, batch_shape):
    """(prod(batch) * nse, n_batch + n_sparse) indices, the batch position first."""
    nse, ns = indices.shape[-2:]
    full = batch_shape + (nse, ns)
    idx = E.bcast(indices, full, range(len(full)))
    if n_batch:
        cols = [E.iota(idx.dtype, batch_shape + (nse, 1), d) for d in range(n_batch)]
        idx = E.concat(cols + [idx], len(full) - 1)
    return E.reshape(idx, (math.prod(batch_shape) * nse, n_batch + ns))


def _flat_data(E, data, n_batch, batch_shape):
    rest = data.shape[n_batch:]
    x = E.bcast(data, batch_shape + rest, range(data.ndim))
    return E.reshape(x, (math.prod(batch_shape) * rest[0],) + rest[1:])


def _scatter_add(E, out_shape, dtype, idx, upd):
    """Add the rows of `upd` into zeros at the leading coordinates `idx` (dropping
    out-of-bounds rows)."""
    k = idx.shape[-1]
    zeros = E.full(out_shape, 0, dtype)
    if k == 0:
        return E.binary(P.add_p, zeros, E.reduce(P.reduce_sum_p, upd, (0,)))
    dn = ScatterDimensionNumbers(update_window_dims=tuple(range(1, upd.ndim)),
                                 inserted_window_dims=tuple(range(k)),
                                 scatter_dims_to_operand_dims=tuple(range(k)))
    return E.bind(P.scatter_add_p, zeros, idx, upd, dimension_numbers=dn,
                  indices_are_sorted=False, unique_indices=False, mode=_DROP)


def _gather_rows(E, mat, idx, dims=None):
    """``mat[idx[m, 0], idx[m, 1], ...]`` for each row m over the dims `dims` (default the
    leading ones), keeping the others whole; out-of-bounds rows read zero."""
    k = idx.shape[-1]
    dims = tuple(range(k)) if dims is None else tuple(dims)
    if k == 0:
        return E.bcast(mat, (idx.shape[0],) + mat.shape, range(1, mat.ndim + 1))
    sizes = tuple(1 if d in dims else s for d, s in enumerate(mat.shape))
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, mat.ndim - k + 1)),
                                collapsed_slice_dims=tuple(sorted(dims)),
                                start_index_map=dims)
    return E.bind(P.gather_p, mat, idx, dimension_numbers=dn, slice_sizes=sizes,
                  indices_are_sorted=False, unique_indices=False, mode=_DROP,
                  fill_value=0)


def bcoo_todense(E, data, indices, shape):
    nb, ns, nd, nse = bcoo_layout(data.aval, indices.aval, shape)
    bshape = _batch_shape(shape, nb)
    idx = _flat_indices(E, indices, nb, bshape)
    upd = _flat_data(E, data, nb, bshape)
    return _scatter_add(E, tuple(shape), data.dtype, idx, upd)


def _first_occurrence(E, idx):
    """A bool per row of `idx`: no earlier row equals it."""
    m, k = idx.shape
    a = E.bcast(idx, (m, m, k), (0, 2))
    b = E.bcast(idx, (m, m, k), (1, 2))
    same = E.reduce(P.reduce_and_p, E.binary(P.eq_p, a, b), (2,))
    earlier = E.binary(P.lt_p, E.iota(np.int32, (m, m), 1), E.iota(np.int32, (m, m), 0))
    dup = E.reduce(P.reduce_or_p, E.binary(P.and_p, same, earlier), (1,))
    return E.bind(P.not_p, dup)


def bcoo_extract(E, indices, mat, assume_unique=True):
    nb, ns, nd, nse = bcoo_layout(None, indices.aval, mat.shape)
    bshape = _batch_shape(mat.shape, nb)
    dense = mat.shape[mat.ndim - nd:]
    out_shape = bshape + (nse,) + dense
    if ns == 0:
        x = E.bcast(mat, out_shape, tuple(range(nb)) + tuple(range(nb + 1, len(out_shape))))
        if not assume_unique and nse > 1:
            first = E.binary(P.lt_p, E.iota(np.int32, out_shape, nb),
                             E.full(out_shape, 1, np.int32))
            x = E.select(first, x, E.full(out_shape, 0, mat.dtype))
        return x
    idx = _flat_indices(E, indices, nb, bshape)
    rows = _gather_rows(E, mat, idx)
    if not assume_unique:
        keep = _first_occurrence(E, idx)
        keep = E.bcast(keep, rows.shape, (0,))
        rows = E.select(keep, rows, E.full(rows.shape, 0, rows.dtype))
    return E.reshape(rows, out_shape)


def _unravel(E, key, sizes, valid, dtype):
    """Coordinates (last axis) of flat positions `key` in an array of `sizes`; the sizes
    themselves where not `valid`."""
    cols = []
    strides = [math.prod(sizes[i + 1:]) for i in range(len(sizes))]
    for s, st in zip(sizes, strides):
        c = E.binary(P.div_p, key, E.full(key.shape, st, key.dtype))
        c = E.binary(P.rem_p, c, E.full(key.shape, s, key.dtype))
        c = E.select(valid, c, E.full(key.shape, s, key.dtype))
        cols.append(E.reshape(E.convert(c, dtype), key.shape + (1,)))
    return E.concat(cols, key.ndim)


def bcoo_fromdense(E, mat, nse, n_batch, n_dense, index_dtype):
    nb, nd = n_batch, n_dense
    ns = mat.ndim - nb - nd
    bshape = tuple(mat.shape[:nb])
    sshape = tuple(mat.shape[nb:nb + ns])
    dense = tuple(mat.shape[nb + ns:])
    mask = E.binary(P.ne_p, mat, E.full(mat.shape, 0, mat.dtype))
    mask = E.reduce(P.reduce_or_p, mask, range(nb + ns, mat.ndim))
    nbatch = math.prod(bshape)
    if ns == 0:
        idx = E.full(bshape + (nse, 0), 0, index_dtype)
        data = E.bcast(mat, bshape + (nse,) + dense,
                       tuple(range(nb)) + tuple(range(nb + 1, nb + 1 + nd)))
        first = E.binary(P.lt_p, E.iota(np.int32, bshape + (nse,), nb),
                         E.convert(E.bcast(mask, bshape + (nse,), range(nb)), np.int32))
        first = E.bcast(first, data.shape, range(nb + 1))
        return [E.select(first, data, E.full(data.shape, 0, mat.dtype)), idx]
    n = math.prod(sshape)
    kdt = np.int64 if 2 * n + 2 >= 2 ** 31 else np.int32
    m = E.reshape(mask, (nbatch, n))
    pos = E.iota(kdt, (nbatch, n), 1)
    key = E.select(m, pos, E.binary(P.add_p, pos, E.full(pos.shape, n, kdt)))
    (key,) = E.bind(P.sort_p, key, dimension=1, is_stable=True, num_keys=1)
    if nse <= n:
        key = E.slice_last(key, 0, nse)
    else:
        key = E.concat([key, E.full((nbatch, nse - n), 2 * n, kdt)], 1)
    valid = E.binary(P.lt_p, key, E.full(key.shape, n, kdt))
    idx = _unravel(E, key, sshape, valid, index_dtype)
    idx = E.reshape(idx, bshape + (nse, ns))
    data = bcoo_extract(E, idx, mat)
    return [data, idx]


def _broadcast_batch(E, data, indices, nb):
    bshape = tuple(max(a, b) for a, b in zip(data.shape[:nb], indices.shape[:nb]))
    data = E.bcast(data, bshape + data.shape[nb:], range(data.ndim))
    indices = E.bcast(indices, bshape + indices.shape[nb:], range(indices.ndim))
    return data, indices, bshape


def _sorted_rows(E, idx):
    """Sort each row of `idx` (rows, n, k) lexicographically; returns (sorted, perm)."""
    rows, n, k = idx.shape
    perm = E.iota(np.int32, (rows, n), 1)
    if k == 0:
        return idx, perm
    cols = [E.reshape(E.slice_last(idx, c, c + 1), (rows, n)) for c in range(k)]
    outs = E.bind(P.sort_p, *cols, perm, dimension=1, is_stable=True, num_keys=k)
    cols = [E.reshape(c, (rows, n, 1)) for c in outs[:-1]]
    return E.concat(cols, 2), outs[-1]


def _take_rows(E, data, perm):
    """``data[r, perm[r, j]]`` for (rows, n, ...) data."""
    rows, n = perm.shape
    off = E.binary(P.mul_p, E.iota(np.int32, (rows, n), 0), E.full((rows, n), n, np.int32))
    flat = E.reshape(E.binary(P.add_p, perm, off), (rows * n, 1))
    d = E.reshape(data, (rows * n,) + data.shape[2:])
    return E.reshape(_gather_rows(E, d, flat), data.shape)


def bcoo_sort_indices(E, data, indices, spinfo):
    nb, ns, nd, nse = bcoo_layout(data.aval, indices.aval, spinfo.shape)
    data, indices, bshape = _broadcast_batch(E, data, indices, nb)
    rows = math.prod(bshape)
    idx = E.reshape(indices, (rows, nse, ns))
    s, perm = _sorted_rows(E, idx)
    d = _take_rows(E, E.reshape(data, (rows,) + data.shape[nb:]), perm)
    return [E.reshape(d, data.shape), E.reshape(s, indices.shape)]


def bcoo_sum_duplicates(E, data, indices, spinfo, nse):
    nb, ns, nd, nse_in = bcoo_layout(data.aval, indices.aval, spinfo.shape)
    data, indices, bshape = _broadcast_batch(E, data, indices, nb)
    rows = math.prod(bshape)
    sshape = tuple(spinfo.shape[nb:nb + ns])
    idx = E.reshape(indices, (rows, nse_in, ns))
    limit = E.bcast(E.const(np.array(sshape, indices.dtype)), idx.shape, (2,))
    zero = E.full(idx.shape, 0, idx.dtype)
    inb = E.binary(P.and_p, E.binary(P.lt_p, idx, limit), E.binary(P.ge_p, idx, zero))
    valid = E.reduce(P.reduce_and_p, inb, (2,))
    idx = E.select(E.bcast(valid, idx.shape, (0, 1)), idx, limit)
    s, perm = _sorted_rows(E, idx)
    d = _take_rows(E, E.reshape(data, (rows,) + data.shape[nb:]), perm)
    valid = _take_rows(E, valid, perm)
    d = E.select(E.bcast(valid, d.shape, (0, 1)), d, E.full(d.shape, 0, d.dtype))
    # A new segment starts at each row that differs from the previous one.
    if nse_in > 1 and ns > 0:
        prev = E.bind(P.slice_p, s, start_indices=(0, 0, 0),
                      limit_indices=(rows, nse_in - 1, ns), strides=None)
        cur = E.bind(P.slice_p, s, start_indices=(0, 1, 0), limit_indices=(rows, nse_in, ns),
                     strides=None)
        diff = E.reduce(P.reduce_or_p, E.binary(P.ne_p, prev, cur), (2,))
        new = E.concat([E.full((rows, 1), True, np.bool_), diff], 1)
    else:
        new = E.binary(P.lt_p, E.iota(np.int32, (rows, nse_in), 1),
                       E.full((rows, nse_in), 1, np.int32))
    seg = E.bind(P.cumsum_p, E.convert(new, np.int32), axis=1, reverse=False)
    seg = E.binary(P.sub_p, seg, E.full(seg.shape, 1, np.int32))
    where = E.concat([E.reshape(E.iota(np.int32, (rows, nse_in), 0), (rows, nse_in, 1)),
                      E.reshape(seg, (rows, nse_in, 1))], 2)
    where = E.reshape(where, (rows * nse_in, 2))
    upd = E.reshape(d, (rows * nse_in,) + d.shape[2:])
    out_data = _scatter_add(E, (rows, nse) + d.shape[2:], d.dtype, where, upd)
    fill = E.bcast(E.const(np.array(sshape, indices.dtype)), (rows, nse, ns), (2,))
    dn = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0, 1),
                                 scatter_dims_to_operand_dims=(0, 1))
    out_idx = E.bind(P.scatter_p, fill, where, E.reshape(s, (rows * nse_in, ns)),
                     dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                     mode=_DROP)
    return [E.reshape(out_data, bshape + (nse,) + data.shape[nb + 1:]),
            E.reshape(out_idx, bshape + (nse, ns))]


def bcoo_transpose(E, data, indices, permutation, spinfo):
    nb, ns, nd, _ = bcoo_layout(data.aval, indices.aval, spinfo.shape)
    batch, sparse, dense = transpose_parts(nb, ns, nd, permutation, spinfo.shape)
    idx = E.transpose(indices, tuple(batch) + (nb, nb + 1))
    if tuple(sparse) != tuple(range(ns)):
        idx = E.columns(idx, sparse)
    d = E.transpose(data, tuple(batch) + (nb,) + tuple(nb + 1 + x for x in dense))
    return [d, idx]


def bcoo_dot_general(E, data, indices, rhs, dimension_numbers, shape, out_dtype):
    """The product of a BCOO array and a dense one; see the module docstring."""
    nb, ns, nd, nse = bcoo_layout(data.aval, indices.aval, shape)
    k = nb + ns
    bshape = _batch_shape(shape, nb)
    idx = _flat_indices(E, indices, nb, bshape)
    lhs = _flat_data(E, data, nb, bshape)   # (M, dense...)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in x) for x in (lc, rc, lb, rb))
    pairs = list(zip(lc, rc)) + list(zip(lb, rb))
    sparse_pairs = [(l_, r_) for l_, r_ in pairs if l_ < k]
    fixed_rhs = tuple(r_ for _, r_ in sparse_pairs)
    if fixed_rhs:
        g = _gather_rows(E, rhs, E.columns(idx, [l_ for l_, _ in sparse_pairs]), fixed_rhs)
    else:
        g = E.bcast(rhs, (idx.shape[0],) + rhs.shape, range(1, rhs.ndim + 1))
    kept = [r for r in range(rhs.ndim) if r not in fixed_rhs]   # g's dims after the first

    def gpos(r):
        return 1 + kept.index(r)

    dense_batch = [(l_, r_) for l_, r_ in zip(lb, rb) if l_ >= k]
    dense_contract = [(l_, r_) for l_, r_ in zip(lc, rc) if l_ >= k]
    dn = (((tuple(l_ - k + 1 for l_, _ in dense_contract)),
           tuple(gpos(r_) for _, r_ in dense_contract)),
          ((0,) + tuple(l_ - k + 1 for l_, _ in dense_batch),
           (0,) + tuple(gpos(r_) for _, r_ in dense_batch)))
    lhs, g = E.convert(lhs, out_dtype), E.convert(g, out_dtype)
    prod = E.bind(P.dot_general_p, lhs, g, dimension_numbers=dn, precision=None,
                  preferred_element_type=None, out_sharding=None)
    # Scatter the per-element products to the output positions of the lhs's sparse
    # batch and free dimensions.
    out_shape = dot_general_shape(tuple(shape), rhs.shape, dimension_numbers)
    lfree = [d for d in range(len(shape)) if d not in lc and d not in lb]
    cols, targets = [], []
    for i, l_ in enumerate(lb):
        if l_ < k:
            cols.append(l_)
            targets.append(i)
    for j, l_ in enumerate(lfree):
        if l_ < k:
            cols.append(l_)
            targets.append(len(lb) + j)
    if not cols:
        return E.reduce(P.reduce_sum_p, prod, (0,))
    zeros = E.full(out_shape, 0, out_dtype)
    sdn = ScatterDimensionNumbers(update_window_dims=tuple(range(1, prod.ndim)),
                                  inserted_window_dims=tuple(sorted(targets)),
                                  scatter_dims_to_operand_dims=tuple(targets))
    return E.bind(P.scatter_add_p, zeros, E.columns(idx, cols), prod, dimension_numbers=sdn,
                  indices_are_sorted=False, unique_indices=False, mode=_DROP)


def bcoo_spdot_general(E, ld, li, rd, ri, lhs_spinfo, rhs_spinfo, dimension_numbers,
                       out_dtype):
    shape, nb, ns, nse = spdot_general_layout(lhs_spinfo, rhs_spinfo, li.aval, ri.aval,
                                              dimension_numbers)
    (lc, rc), _ = dimension_numbers
    bshape = tuple(shape[:nb])
    n1, n2 = li.shape[-2], ri.shape[-2]
    lns, rns = li.shape[-1], ri.shape[-1]
    full = bshape + (n1, n2)
    ax = tuple(range(nb))
    ld = E.bcast(E.convert(ld, out_dtype), full, ax + (nb,))
    rd = E.bcast(E.convert(rd, out_dtype), full, ax + (nb + 1,))
    li_ = E.bcast(li, bshape + (n1, n2, lns), ax + (nb, nb + 2))
    ri_ = E.bcast(ri, bshape + (n1, n2, rns), ax + (nb + 1, nb + 2))
    lcols = [d - nb for d in lc]
    rcols = [d - nb for d in rc]
    data = E.binary(P.mul_p, ld, rd)
    if lcols:
        eq = E.binary(P.eq_p, E.columns(li_, lcols), E.convert(E.columns(ri_, rcols), li.dtype))
        match = E.reduce(P.reduce_and_p, eq, (len(full),))
        data = E.select(match, data, E.full(full, 0, out_dtype))
    lfree = [d - nb for d in range(nb, len(lhs_spinfo.shape)) if d not in lc]
    rfree = [d - nb for d in range(nb, len(rhs_spinfo.shape)) if d not in rc]
    idx = E.concat([E.columns(li_, lfree), E.convert(E.columns(ri_, rfree), li.dtype)],
                   len(full))
    pairs = n1 * n2
    data = E.reshape(data, bshape + (pairs,))
    idx = E.reshape(idx, bshape + (pairs, ns))
    if pairs == nse:
        return [data, idx]
    # Fewer stored elements than pairs: merge the pairs that land on one position.
    return bcoo_sum_duplicates(E, data, idx, SparseInfo(tuple(shape)), nse)


# --- BCSR: row indices from the row offsets ---------------------------------------------------


def _bcsr_rows(E, indptr, nse):
    """The row of each stored element (the number of rows it lies past); padding
    elements get the number of rows."""
    nrows = indptr.shape[-1] - 1
    bshape = indptr.shape[:-1]
    nb = len(bshape)
    ends = E.slice_last(indptr, 1, nrows + 1)
    full = bshape + (nse, nrows)
    k = E.iota(indptr.dtype, full, nb)
    past = E.binary(P.le_p, E.bcast(ends, full, tuple(range(nb)) + (nb + 1,)), k)
    return E.reduce(P.reduce_sum_p, E.convert(past, indptr.dtype), (nb + 1,))


def _bcsr_to_bcoo_indices(E, indices, indptr):
    nse = indices.shape[-1]
    rows = _bcsr_rows(E, indptr, nse)
    bshape = indices.shape[:-1]
    rows = E.reshape(rows, bshape + (nse, 1))
    cols = E.reshape(E.convert(indices, indptr.dtype), bshape + (nse, 1))
    return E.concat([rows, cols], len(bshape) + 1)


def _bcoo_to_bcsr(E, idx, nrows):
    """(indices, indptr) from BCOO indices (..., nse, 2) whose rows are sorted."""
    bshape = idx.shape[:-2]
    nb = len(bshape)
    nse = idx.shape[-2]
    rows = E.reshape(E.slice_last(idx, 0, 1), bshape + (nse,))
    cols = E.reshape(E.slice_last(idx, 1, 2), bshape + (nse,))
    full = bshape + (nrows + 1, nse)
    below = E.binary(P.lt_p, E.bcast(rows, full, tuple(range(nb)) + (nb + 1,)),
                     E.iota(idx.dtype, full, nb))
    indptr = E.reduce(P.reduce_sum_p, E.convert(below, idx.dtype), (nb + 1,))
    return cols, indptr


# --- the rules ---------------------------------------------------------------------------------


@register_lowering(P.bcoo_todense_p)
def _bcoo_todense_lowering(ctx, data, indices, *, spinfo):
    E = _Emitter(ctx)
    d, i = (_V(v, a) for v, a in zip((data, indices), ctx.avals_in))
    return [bcoo_todense(E, d, i, tuple(spinfo.shape)).v]


@register_lowering(P.bcoo_fromdense_p)
def _bcoo_fromdense_lowering(ctx, mat, *, nse, n_batch, n_dense, index_dtype):
    E = _Emitter(ctx)
    outs = bcoo_fromdense(E, _V(mat, ctx.avals_in[0]), nse, n_batch, n_dense,
                          np.dtype(index_dtype))
    return [o.v for o in outs]


@register_lowering(P.bcoo_extract_p)
def _bcoo_extract_lowering(ctx, indices, mat, *, assume_unique=True):
    E = _Emitter(ctx)
    i, m = (_V(v, a) for v, a in zip((indices, mat), ctx.avals_in))
    return [bcoo_extract(E, i, m, assume_unique).v]


@register_lowering(P.bcoo_transpose_p)
def _bcoo_transpose_lowering(ctx, data, indices, *, permutation, spinfo):
    E = _Emitter(ctx)
    d, i = (_V(v, a) for v, a in zip((data, indices), ctx.avals_in))
    return [o.v for o in bcoo_transpose(E, d, i, permutation, spinfo)]


@register_lowering(P.bcoo_sort_indices_p)
def _bcoo_sort_indices_lowering(ctx, data, indices, *, spinfo):
    E = _Emitter(ctx)
    d, i = (_V(v, a) for v, a in zip((data, indices), ctx.avals_in))
    return [o.v for o in bcoo_sort_indices(E, d, i, spinfo)]


@register_lowering(P.bcoo_sum_duplicates_p)
def _bcoo_sum_duplicates_lowering(ctx, data, indices, *, spinfo, nse):
    E = _Emitter(ctx)
    d, i = (_V(v, a) for v, a in zip((data, indices), ctx.avals_in))
    return [o.v for o in bcoo_sum_duplicates(E, d, i, spinfo, nse)]


@register_lowering(P.bcoo_dot_general_p)
def _bcoo_dot_general_lowering(ctx, lhs_data, lhs_indices, rhs, *, dimension_numbers,
                               lhs_spinfo, preferred_element_type=None):
    E = _Emitter(ctx)
    d, i, r = (_V(v, a) for v, a in zip((lhs_data, lhs_indices, rhs), ctx.avals_in))
    out = bcoo_dot_general(E, d, i, r, dimension_numbers, tuple(lhs_spinfo.shape),
                           ctx.avals_out[0].dtype)
    return [out.v]


@register_lowering(P.bcoo_dot_general_sampled_p)
def _bcoo_dot_general_sampled_lowering(ctx, A, B, indices, *, dimension_numbers):
    E = _Emitter(ctx)
    a, b, i = (_V(v, av) for v, av in zip((A, B, indices), ctx.avals_in))
    dt = ctx.avals_out[0].dtype
    prod = E.bind(P.dot_general_p, E.convert(a, dt), E.convert(b, dt),
                  dimension_numbers=dimension_numbers, precision=None,
                  preferred_element_type=None, out_sharding=None)
    return [bcoo_extract(E, i, prod).v]


@register_lowering(P.bcoo_spdot_general_p)
def _bcoo_spdot_general_lowering(ctx, lhs_data, lhs_indices, rhs_data, rhs_indices, *,
                                 lhs_spinfo, rhs_spinfo, dimension_numbers,
                                 preferred_element_type=None):
    E = _Emitter(ctx)
    vs = [_V(v, a) for v, a in zip((lhs_data, lhs_indices, rhs_data, rhs_indices),
                                   ctx.avals_in)]
    outs = bcoo_spdot_general(E, *vs, lhs_spinfo, rhs_spinfo, dimension_numbers,
                              ctx.avals_out[0].dtype)
    return [o.v for o in outs]


@register_lowering(P.bcsr_todense_p)
def _bcsr_todense_lowering(ctx, data, indices, indptr, *, spinfo):
    E = _Emitter(ctx)
    d, i, p = (_V(v, a) for v, a in zip((data, indices, indptr), ctx.avals_in))
    return [bcoo_todense(E, d, _bcsr_to_bcoo_indices(E, i, p), tuple(spinfo.shape)).v]


@register_lowering(P.bcsr_fromdense_p)
def _bcsr_fromdense_lowering(ctx, mat, *, nse, n_batch, n_dense, index_dtype):
    E = _Emitter(ctx)
    m = _V(mat, ctx.avals_in[0])
    data, idx = bcoo_fromdense(E, m, nse, n_batch, n_dense, np.dtype(index_dtype))
    cols, indptr = _bcoo_to_bcsr(E, idx, m.shape[n_batch])
    return [data.v, cols.v, indptr.v]


@register_lowering(P.bcsr_extract_p)
def _bcsr_extract_lowering(ctx, indices, indptr, mat):
    E = _Emitter(ctx)
    i, p, m = (_V(v, a) for v, a in zip((indices, indptr, mat), ctx.avals_in))
    return [bcoo_extract(E, _bcsr_to_bcoo_indices(E, i, p), m).v]


@register_lowering(P.bcsr_dot_general_p)
def _bcsr_dot_general_lowering(ctx, lhs_data, lhs_indices, lhs_indptr, rhs, *,
                               dimension_numbers, lhs_spinfo, preferred_element_type=None):
    E = _Emitter(ctx)
    d, i, p, r = (_V(v, a) for v, a in zip((lhs_data, lhs_indices, lhs_indptr, rhs),
                                           ctx.avals_in))
    out = bcoo_dot_general(E, d, _bcsr_to_bcoo_indices(E, i, p), r, dimension_numbers,
                           tuple(lhs_spinfo.shape), ctx.avals_out[0].dtype)
    return [out.v]


def _coo_indices(E, row, col):
    n = row.shape[0]
    return E.concat([E.reshape(row, (n, 1)), E.reshape(E.convert(col, row.dtype), (n, 1))], 1)


@register_lowering(P.coo_todense_p)
def _coo_todense_lowering(ctx, data, row, col, *, spinfo):
    E = _Emitter(ctx)
    d, r, c = (_V(v, a) for v, a in zip((data, row, col), ctx.avals_in))
    return [bcoo_todense(E, d, _coo_indices(E, r, c), tuple(spinfo.shape)).v]


@register_lowering(P.coo_fromdense_p)
def _coo_fromdense_lowering(ctx, mat, *, nse, index_dtype):
    E = _Emitter(ctx)
    data, idx = bcoo_fromdense(E, _V(mat, ctx.avals_in[0]), nse, 0, 0, np.dtype(index_dtype))
    row = E.reshape(E.slice_last(idx, 0, 1), (nse,))
    col = E.reshape(E.slice_last(idx, 1, 2), (nse,))
    return [data.v, row.v, col.v]


def _matprod(E, data, idx, v, shape, transpose, out_dtype):
    if transpose:
        idx = E.columns(idx, (1, 0))
        shape = (shape[1], shape[0])
    dn = (((1,), (0,)), ((), ()))
    return bcoo_dot_general(E, data, idx, v, dn, tuple(shape), out_dtype)


def _coo_matprod_lowering(ctx, data, row, col, v, *, spinfo, transpose):
    E = _Emitter(ctx)
    d, r, c, x = (_V(val, a) for val, a in zip((data, row, col, v), ctx.avals_in))
    return [_matprod(E, d, _coo_indices(E, r, c), x, tuple(spinfo.shape), transpose,
                     ctx.avals_out[0].dtype).v]


register_lowering(P.coo_matvec_p)(_coo_matprod_lowering)
register_lowering(P.coo_matmat_p)(_coo_matprod_lowering)


@register_lowering(P.csr_todense_p)
def _csr_todense_lowering(ctx, data, indices, indptr, *, shape):
    E = _Emitter(ctx)
    d, i, p = (_V(v, a) for v, a in zip((data, indices, indptr), ctx.avals_in))
    return [bcoo_todense(E, d, _bcsr_to_bcoo_indices(E, i, p), tuple(shape)).v]


@register_lowering(P.csr_fromdense_p)
def _csr_fromdense_lowering(ctx, mat, *, nse, index_dtype):
    E = _Emitter(ctx)
    m = _V(mat, ctx.avals_in[0])
    data, idx = bcoo_fromdense(E, m, nse, 0, 0, np.dtype(index_dtype))
    cols, indptr = _bcoo_to_bcsr(E, idx, m.shape[0])
    return [data.v, cols.v, indptr.v]


def _csr_matprod_lowering(ctx, data, indices, indptr, v, *, shape, transpose):
    E = _Emitter(ctx)
    d, i, p, x = (_V(val, a) for val, a in zip((data, indices, indptr, v), ctx.avals_in))
    return [_matprod(E, d, _bcsr_to_bcoo_indices(E, i, p), x, tuple(shape), transpose,
                     ctx.avals_out[0].dtype).v]


register_lowering(P.csr_matvec_p)(_csr_matprod_lowering)
register_lowering(P.csr_matmat_p)(_csr_matprod_lowering)


_TODENSE = {"BCOO": P.bcoo_todense_p, "BCSR": P.bcsr_todense_p, "COO": P.coo_todense_p,
            "CSR": P.csr_todense_p}


@register_lowering(P.todense_p)
def _todense_lowering(ctx, *bufs, tree):
    name, params = todense_format(tree)
    if name is None:
        return [bufs[0]]
    if name == "CSC":
        E = _Emitter(ctx)
        d, i, p = (_V(v, a) for v, a in zip(bufs, ctx.avals_in))
        shape = tuple(params["shape"])
        dense_t = bcoo_todense(E, d, _bcsr_to_bcoo_indices(E, i, p), shape[::-1])
        return [E.transpose(dense_t, (1, 0)).v]
    return get_lowering_rule(_TODENSE[name])(ctx, *bufs, **params)
