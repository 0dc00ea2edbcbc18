"""BCOO versions of lax's structural operations: slicing, dynamic slicing, reshaping,
broadcasting and concatenation. Batch and dense dimensions move with ordinary array ops
on the buffers; sparse dimensions are re-indexed, and elements that leave the result
become padding (index = shape, data zero), as JAX does."""

from __future__ import annotations

import math
import operator

import numpy as np

import olympus.numpy as jnp
from olympus import lax

from .bcoo import BCOO, bcoo_sum_duplicates

__all__ = ["bcoo_slice", "bcoo_dynamic_slice", "bcoo_reshape", "bcoo_broadcast_in_dim",
           "bcoo_concatenate", "bcoo_gather", "bcoo_conv_general_dilated"]


def _split(seq, n_batch, n_sparse):
    seq = list(seq)
    return seq[:n_batch], seq[n_batch:n_batch + n_sparse], seq[n_batch + n_sparse:]


def _check_bcoo(mat, what):
    if not isinstance(mat, BCOO):
        raise TypeError(f"{what}: input should be BCOO array, got type(mat)={type(mat)}")


def _mask_data(data, keep, n_batch, n_dense):
    k = keep.reshape(keep.shape + (1,) * n_dense)
    return jnp.where(k, data, jnp.zeros((), data.dtype))


def bcoo_slice(mat, *, start_indices, limit_indices, strides=None):
    """``lax.slice`` of a BCOO array.

    Args:
      mat: a BCOO array.
      start_indices, limit_indices: per-dimension bounds.
      strides: per-dimension steps (default 1).

    Returns:
      A BCOO array; stored elements outside the slice become padding.
    """
    _check_bcoo(mat, "bcoo_slice")
    start = [operator.index(i) for i in start_indices]
    limit = [operator.index(i) for i in limit_indices]
    strides = [1] * mat.ndim if strides is None else [operator.index(s) for s in strides]
    if not len(start) == len(limit) == mat.ndim:
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={mat.ndim}")
    if len(strides) != mat.ndim:
        raise ValueError(f"len(strides) = {len(strides)}; expected {mat.ndim}")
    if any(s <= 0 for s in strides):
        raise ValueError(f"strides must be a sequence of positive integers; got {strides}")
    if not all(0 <= a <= b <= n for a, b, n in zip(start, limit, mat.shape)):
        raise ValueError(f"bcoo_slice: invalid indices. Got start_indices={start}, "
                         f"limit_indices={limit} and shape={mat.shape}")
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    sb, ss, sd = _split(start, nb, ns)
    lb, ls, ld = _split(limit, nb, ns)
    tb, ts, td = _split(strides, nb, ns)
    dsl, isl = [], []
    for i, (a, b, t) in enumerate(zip(sb, lb, tb)):
        dsl.append(slice(None) if mat.data.shape[i] != mat.shape[i] else slice(a, b, t))
        isl.append(slice(None) if mat.indices.shape[i] != mat.shape[i] else slice(a, b, t))
    dsl.append(slice(None))
    isl += [slice(None), slice(None)]
    dsl += [slice(a, b, t) for a, b, t in zip(sd, ld, td)]
    data, indices = mat.data[tuple(dsl)], mat.indices[tuple(isl)]
    shape = tuple((b - a + t - 1) // t for a, b, t in zip(start, limit, strides))
    if ns:
        dt = indices.dtype
        a_, b_, t_ = (jnp.array(v, dt) for v in (ss, ls, ts))
        keep = jnp.all((indices >= a_) & (indices < b_) & ((indices - a_) % t_ == 0), axis=-1)
        new_sparse = jnp.array(shape[nb:nb + ns], dt)
        indices = jnp.where(keep[..., None], (indices - a_) // t_, new_sparse)
        data = _mask_data(data, jnp.broadcast_to(keep, data.shape[:nb + 1]) if nb else keep,
                          nb, nd)
        limit_nse = math.prod(shape[nb:nb + ns])
        if mat.nse > limit_nse:
            return bcoo_sum_duplicates(BCOO((data, indices), shape=shape), nse=limit_nse)
    return BCOO((data, indices), shape=shape)


def bcoo_dynamic_slice(mat, start_indices, slice_sizes):
    """``lax.dynamic_slice`` of a BCOO array (start indices may be traced; they are
    clamped into range as lax clamps them).

    Args:
      mat: a BCOO array.
      start_indices: one scalar per dimension.
      slice_sizes: the static size of the slice per dimension.
    """
    _check_bcoo(mat, "bcoo_dynamic_slice")
    sizes = tuple(operator.index(s) for s in slice_sizes)
    starts = [jnp.asarray(i) for i in start_indices]
    if not len(starts) == len(sizes) == mat.ndim:
        raise ValueError(f"bcoo_dynamic_slice: indices must have size mat.ndim={mat.ndim}")
    if not all(0 <= s <= n for s, n in zip(sizes, mat.shape)):
        raise TypeError("slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {sizes} for operand shape {mat.shape}.")
    nb, ns = mat.n_batch, mat.n_sparse
    sb, ss, sd = _split(starts, nb, ns)
    zb, zs, zd = _split(sizes, nb, ns)
    zero = jnp.zeros((), np.int32)
    dstart, dsize, istart, isize = [], [], [], []
    for i, (a, z) in enumerate(zip(sb, zb)):
        dbc, ibc = mat.data.shape[i] != mat.shape[i], mat.indices.shape[i] != mat.shape[i]
        dstart.append(zero if dbc else a)
        dsize.append(1 if dbc else z)
        istart.append(zero if ibc else a)
        isize.append(1 if ibc else z)
    dstart += [zero, *sd]
    dsize += [mat.nse, *zd]
    istart += [zero, zero]
    isize += [mat.nse, ns]
    data = lax.dynamic_slice(mat.data, dstart, dsize)
    indices = lax.dynamic_slice(mat.indices, istart, isize)
    if ns:
        dt = indices.dtype
        full = jnp.array(mat.shape[nb:nb + ns], dt)
        z = jnp.array(zs, dt)
        a = jnp.stack([jnp.asarray(s).astype(dt) for s in ss])
        a = jnp.clip(jnp.where(a < 0, a + full, a), 0, full - z)
        keep = jnp.all((indices >= a) & (indices < a + z), axis=-1)
        indices = jnp.where(keep[..., None], indices - a, z)
        data = _mask_data(data, jnp.broadcast_to(keep, data.shape[:nb + 1]) if nb else keep,
                          nb, mat.n_dense)
        limit_nse = math.prod(zs)
        if mat.nse > limit_nse:
            return bcoo_sum_duplicates(BCOO((data, indices), shape=sizes), nse=limit_nse)
    return BCOO((data, indices), shape=sizes)


def bcoo_reshape(mat, *, new_sizes, dimensions=None, sharding=None):
    """``lax.reshape`` of a BCOO array: batch, sparse and dense dimensions each reshape
    within their own group.

    Args:
      mat: a BCOO array.
      new_sizes: the new shape.
      dimensions: must be None or the identity (no transposition).
      sharding: unused.
    """
    _check_bcoo(mat, "bcoo_reshape")
    new_sizes = tuple(operator.index(s) for s in new_sizes)
    if dimensions is not None and tuple(dimensions) != tuple(range(mat.ndim)):
        raise NotImplementedError("bcoo_reshape with a transposing `dimensions`")
    if math.prod(new_sizes) != mat.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"for shape {mat.shape}.")
    nb, ns = mat.n_batch, mat.n_sparse
    bshape, sshape, _ = _split(mat.shape, nb, ns)
    if mat.indices.shape[:nb] != tuple(bshape) or mat.data.shape[:nb] != tuple(bshape):
        raise NotImplementedError("reshape of arrays with broadcasted batch dimensions.")
    bsize, ssize = math.prod(bshape), math.prod(sshape)
    cum = np.cumprod(new_sizes)
    if bsize != 1 and bsize not in cum:
        raise ValueError("bcoo_reshape: new shape cannot mix batch and sparse dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with n_batch={nb}")
    if ssize != 1 and bsize * ssize not in cum:
        raise ValueError("bcoo_reshape: new shape cannot mix sparse and dense dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with n_batch={nb}, "
                         f"n_dense={mat.n_dense}")
    i1 = int(cum.searchsorted(bsize, side="right"))
    i2 = int(cum.searchsorted(bsize * ssize, side="right"))
    nbs, nss, nds = new_sizes[:i1], new_sizes[i1:i2], new_sizes[i2:]
    data = mat.data.reshape(tuple(nbs) + (mat.nse,) + tuple(nds))
    indices = mat.indices.reshape(tuple(nbs) + (mat.nse, ns))
    if not nss:
        indices = jnp.zeros(tuple(nbs) + (mat.nse, 0), indices.dtype)
    elif sshape:
        dt = indices.dtype
        strides = np.array([math.prod(sshape[i + 1:]) for i in range(ns)], np.int64)
        oob = jnp.any(indices >= jnp.array(sshape, dt), axis=-1)
        flat = jnp.sum(indices.astype(np.int64) * jnp.array(strides), axis=-1) if ns else 0
        nstr = [math.prod(nss[i + 1:]) for i in range(len(nss))]
        cols = [((flat // st) % s).astype(dt) for s, st in zip(nss, nstr)]
        indices = jnp.stack(cols, axis=-1)
        indices = jnp.where(oob[..., None], jnp.array(nss, dt), indices)
    else:
        indices = jnp.zeros(tuple(nbs) + (mat.nse, len(nss)), indices.dtype)
    return BCOO((data, indices), shape=new_sizes)


def bcoo_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """``lax.broadcast_in_dim`` of a BCOO array: new leading dimensions become batch
    dimensions, new trailing ones (with dense dimensions present) dense; new sparse
    dimensions must have size 1.

    Args:
      mat: a BCOO array.
      shape: the result shape.
      broadcast_dimensions: where each of `mat`'s dimensions goes.
      sharding: unused.
    """
    _check_bcoo(mat, "bcoo_broadcast_in_dim")
    shape = tuple(operator.index(s) for s in shape)
    bdims = tuple(operator.index(d) for d in broadcast_dimensions)
    if mat.ndim != len(bdims):
        raise ValueError(f"spinfo.shape={mat.shape} and broadcast_dimensions={bdims} must "
                         "have the same length")
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    batch_d, sparse_d, dense_d = _split(bdims, nb, ns)
    if max(batch_d, default=0) > min(sparse_d, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(sparse_d, default=0) > min(dense_d, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_nb = min(bdims[nb:], default=len(shape))
    new_nd = nd and len(shape) - min(bdims[len(bdims) - nd:])
    new_ns = len(shape) - new_nb - new_nd
    if math.prod(mat.shape[nb:nb + ns]) != math.prod(shape[new_nb:new_nb + new_ns]):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    data, indices = mat.data, mat.indices
    if (new_nb, new_nd) != (nb, nd):
        dshape = shape[:new_nb] + (mat.nse,) + shape[new_nb + new_ns:]
        ddims = tuple(batch_d) + (new_nb,) + tuple(d - new_ns + 1 for d in dense_d)
        data = lax.broadcast_in_dim(data, dshape, ddims)
        ishape = shape[:new_nb] + (mat.nse, ns)
        indices = lax.broadcast_in_dim(indices, ishape, tuple(batch_d) + (new_nb, new_nb + 1))
    if new_ns != ns:
        cols = [jnp.zeros(indices.shape[:-1] + (1,), indices.dtype)] * new_ns
        for j, d in enumerate(sparse_d):
            cols[d - new_nb] = indices[..., j:j + 1]
        indices = jnp.concatenate(cols, axis=-1) if cols else \
            jnp.zeros(indices.shape[:-1] + (0,), indices.dtype)
    return BCOO((data, indices), shape=shape)


def bcoo_concatenate(operands, *, dimension):
    """``lax.concatenate`` of BCOO arrays along a batch or sparse dimension.

    Args:
      operands: BCOO arrays of one layout.
      dimension: the axis to join along.
    """
    dimension = operator.index(dimension)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError("bcoo_concatenate: expected operands to be a sequence of BCOO arrays. "
                         f"Got {operands}")
    shapes = [op.shape for op in operands]
    nd = operands[0].ndim
    if any(len(s) != nd for s in shapes) or any(
            s[:dimension] + s[dimension + 1:] != shapes[0][:dimension] + shapes[0][dimension + 1:]
            for s in shapes):
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions "
                        f"other than the one being concatenated: concatenating along dimension "
                        f"{dimension} for shapes {', '.join(map(str, shapes))}.")
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    if len({op.n_batch for op in operands}) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch dimensions.")
    nb, ns = operands[0].n_batch, operands[0].n_sparse
    out_shape = list(shapes[0])
    out_shape[dimension] = sum(s[dimension] for s in shapes)
    if dimension < nb:
        if len({op.nse for op in operands}) != 1:
            nse = max(op.nse for op in operands)
            operands = [_pad_nse(op, nse) for op in operands]
        full = [BCOO((jnp.broadcast_to(op.data, op.shape[:nb] + op.data.shape[nb:]),
                      jnp.broadcast_to(op.indices, op.shape[:nb] + op.indices.shape[nb:])),
                     shape=op.shape) for op in operands]
        data = jnp.concatenate([op.data for op in full], axis=dimension)
        indices = jnp.concatenate([op.indices for op in full], axis=dimension)
    elif dimension < nb + ns:
        bshape = tuple(out_shape[:nb])
        offsets = np.cumsum([0] + [op.shape[dimension] for op in operands[:-1]])
        col = dimension - nb
        datas, idxs = [], []
        for op, off in zip(operands, offsets):
            datas.append(jnp.broadcast_to(op.data, bshape + op.data.shape[nb:]))
            i = jnp.broadcast_to(op.indices, bshape + op.indices.shape[nb:])
            shift = np.zeros(ns, np.int64)
            shift[col] = off
            # Padding rows must stay out of bounds in the joined array.
            oob = jnp.any(i >= jnp.array(op.shape[nb:nb + ns], i.dtype), axis=-1, keepdims=True)
            moved = i + jnp.array(shift, i.dtype)
            idxs.append(jnp.where(oob, jnp.array(out_shape[nb:nb + ns], i.dtype), moved))
        data = jnp.concatenate(datas, axis=nb)
        indices = jnp.concatenate(idxs, axis=nb)
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((data, indices), shape=tuple(out_shape))


def _pad_nse(mat, nse):
    if mat.nse == nse:
        return mat
    nb = mat.n_batch
    pad_d = [(0, 0)] * nb + [(0, nse - mat.nse)] + [(0, 0)] * mat.n_dense
    data = jnp.pad(mat.data, pad_d)
    fill = jnp.broadcast_to(jnp.array(mat.shape[nb:nb + mat.n_sparse], mat.indices.dtype),
                            mat.indices.shape[:nb] + (nse - mat.nse, mat.n_sparse))
    indices = jnp.concatenate([mat.indices, fill], axis=nb)
    return BCOO((data, indices), shape=mat.shape)


def bcoo_gather(operand, start_indices, dimension_numbers, slice_sizes, *,
                unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None):
    """``lax.gather`` of a BCOO array: one dynamic slice per start index, stacked along
    new leading batch dimensions (only ``mode=PROMISE_IN_BOUNDS``, as in JAX).

    Args:
      operand: a BCOO array.
      start_indices: integer array, the index vector along its last axis.
      dimension_numbers: a ``GatherDimensionNumbers``.
      slice_sizes: the slice size per operand dimension.
      unique_indices, indices_are_sorted, fill_value: accepted for lax's signature.
      mode: None or ``PROMISE_IN_BOUNDS``.
    """
    import olympus
    from olympus.lax import GatherScatterMode

    _check_bcoo(operand, "bcoo_gather")
    parsed = GatherScatterMode.from_any(mode if mode is not None else "promise_in_bounds")
    if parsed != GatherScatterMode.PROMISE_IN_BOUNDS:
        raise NotImplementedError(f"bcoo_gather: mode={mode!r} not yet supported.")
    start_indices = jnp.asarray(start_indices)
    slice_sizes = tuple(operator.index(s) for s in slice_sizes)
    out = olympus.eval_shape(
        lambda x, i: lax.gather(x, i, dimension_numbers, slice_sizes,
                                mode=GatherScatterMode.PROMISE_IN_BOUNDS),
        olympus.ShapeDtypeStruct(operand.shape, operand.dtype), start_indices)
    offset_dims = tuple(dimension_numbers.offset_dims)
    collapsed = tuple(dimension_numbers.collapsed_slice_dims)
    start_map = tuple(dimension_numbers.start_index_map)
    full_sizes = list(operand.shape)
    for j in start_map:
        full_sizes[j] = slice_sizes[j]
    batch_shape = start_indices.shape[:-1]
    n = math.prod(batch_shape)
    flat = start_indices.reshape((n, start_indices.shape[-1]))

    def buffers(idx):
        starts = [jnp.zeros((), idx.dtype)] * operand.ndim
        for i, j in enumerate(start_map):
            starts[j] = idx[i]
        s = bcoo_dynamic_slice(operand, starts, full_sizes)
        return s.data, s.indices

    data, indices = olympus.vmap(buffers)(flat)
    result = BCOO((data, indices), shape=(n, *full_sizes))
    if collapsed:
        from .bcoo import bcoo_squeeze
        result = bcoo_squeeze(result, dimensions=tuple(d + 1 for d in collapsed))
    result = bcoo_reshape(result, new_sizes=(*batch_shape, *result.shape[1:]))
    if result.shape:
        batch_dims = tuple(d for d in range(len(out.shape)) if d not in offset_dims)
        perm = np.zeros(result.ndim, dtype=int)
        perm[np.array(batch_dims + offset_dims, dtype=int)] = np.arange(result.ndim)
        perm = tuple(int(p) for p in perm)
        if set(perm[:len(batch_dims)]) != set(range(len(batch_dims))):
            # The gather's batch dims interleave with the operand's: fold them into
            # sparse dims first (as JAX does).
            from .bcoo import bcoo_update_layout
            result = bcoo_update_layout(result, n_batch=0)
        if perm != tuple(range(result.ndim)):
            from .bcoo import bcoo_transpose
            result = bcoo_transpose(result, permutation=perm)
    return result


def _conv_1d_operand(mat, index_dtype):
    """A (1, 1, n) operand as a 1-D BCOO array (a dense one stores every element)."""
    if isinstance(mat, BCOO):
        mat = mat.update_layout(n_batch=2, n_dense=0)
        data, indices = mat.data[0, 0], mat.indices[0, 0]
        data = jnp.where(indices[:, 0] < mat.shape[-1], data, jnp.zeros((), data.dtype))
        return BCOO((data, indices), shape=mat.shape[2:])
    data = jnp.asarray(mat)[0, 0]
    indices = jnp.arange(data.shape[0], dtype=index_dtype)[:, None]
    return BCOO((data, indices), shape=data.shape)


def bcoo_conv_general_dilated(lhs, rhs, *, window_strides, padding, lhs_dilation=None,
                              rhs_dilation=None, dimension_numbers=None,
                              feature_group_count=1, batch_group_count=1, precision=None,
                              preferred_element_type=None):
    """``lax.conv_general_dilated`` with BCOO operands, for the case JAX supports: a 1-D
    convolution of a (1, 1, n) input with a (1, 1, k) kernel, unit strides and dilations.

    Every pair of stored input and kernel elements makes one stored output element.
    """
    import olympus

    for x in (lhs, rhs):
        if not isinstance(x, BCOO) and not hasattr(x, "shape"):
            raise TypeError(f"bcoo_conv_general_dilated: input of type {type(x)} not "
                            "recognized.")
    out = olympus.eval_shape(
        lambda a, b: lax.conv_general_dilated(
            a, b, window_strides, padding, lhs_dilation=lhs_dilation,
            rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
            feature_group_count=feature_group_count, batch_group_count=batch_group_count,
            precision=precision, preferred_element_type=preferred_element_type),
        olympus.ShapeDtypeStruct(lhs.shape, lhs.dtype),
        olympus.ShapeDtypeStruct(rhs.shape, rhs.dtype))
    nsp = len(lhs.shape) - 2
    if lhs_dilation is not None and tuple(lhs_dilation) != (1,) * nsp:
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if rhs_dilation is not None and tuple(rhs_dilation) != (1,) * nsp:
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if tuple(window_strides) != (1,) * nsp:
        raise NotImplementedError("bcoo convolution with non-unit window_strides.")
    if batch_group_count != 1 or feature_group_count != 1:
        raise NotImplementedError("bcoo convolution with non-unit group counts.")
    if tuple(lhs.shape[:2]) != (1, 1) or tuple(rhs.shape[:2]) != (1, 1) or nsp != 1:
        raise NotImplementedError("bcoo convolution with leading dimensions other than (1, 1)")
    k = rhs.shape[2]
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            pad = (0, 0)
        else:
            total = max(k - 1, 0)
            pad = (total // 2, total - total // 2) if padding.upper() == "SAME" else \
                (total - total // 2, total // 2)
    else:
        (pad,) = padding
        pad = tuple(int(p) for p in pad)
    index_dtype = lhs.indices.dtype if isinstance(lhs, BCOO) else \
        (rhs.indices.dtype if isinstance(rhs, BCOO) else np.dtype(np.int32))
    a, b = _conv_1d_operand(lhs, index_dtype), _conv_1d_operand(rhs, index_dtype)
    dt = np.dtype(out.dtype)
    data = (a.data.astype(dt)[:, None] * b.data.astype(dt)[None, :]).ravel()
    offset = pad[0] - b.indices[:, 0]
    idx = (a.indices[:, 0][:, None] + offset[None, :]).ravel()
    neg = idx < 0
    idx = jnp.where(neg, jnp.zeros((), idx.dtype), idx)
    data = jnp.where(neg, jnp.zeros((), dt), data)
    size = max(0, lhs.shape[2] + pad[0] + pad[1] - k + 1)
    return BCOO((data[None, None], idx[None, None, :, None]), shape=(1, 1, size))
