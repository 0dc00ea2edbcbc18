"""NumPy semantics on top of the lax layer: type promotion, broadcasting, reductions,
reshaping and indexing. Tracers (and the runtime's Array) get their methods from here, and
`olympus.numpy` builds on it."""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np
from olympus_ir import dtypes

from . import lax_ops as lax
from .core import Tracer, get_aval

_PY = (bool, int, float, complex)


def is_python_scalar(x) -> bool:
    return type(x) in _PY


def aval_of(x):
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    return get_aval(x)


def _to_array_operand(x):
    """Lists/tuples become numpy arrays; everything else must already be array-like."""
    if isinstance(x, (list, tuple)):
        arr = np.asarray(x)
        if arr.dtype == object:
            raise TypeError(f"Cannot convert {x!r} to an array: elements are not numbers.")
        return arr.astype(dtypes.canonicalize_dtype(arr.dtype))
    if isinstance(x, np.ndarray) and x.dtype != dtypes.canonicalize_dtype(x.dtype):
        return x.astype(dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, np.generic) and x.dtype != dtypes.canonicalize_dtype(x.dtype):
        return np.array(x, dtype=dtypes.canonicalize_dtype(x.dtype))[()]
    get_aval(x)  # raises a TypeError for non-arrays
    return x


def promote_dtypes(*args):
    """Convert `args` to their common (weak-aware) result type."""
    args = [_to_array_operand(a) for a in args]
    if len(args) < 2:
        return args
    dt, weak = dtypes.result_type(*[aval_of(a) if not is_python_scalar(a) else a for a in args],
                                  return_weak_type_flag=True)
    return [lax.convert_element_type(a, dt, weak) for a in args]


def promote_dtypes_inexact(*args):
    args = [_to_array_operand(a) for a in args]
    dt, weak = dtypes.result_type(*[aval_of(a) if not is_python_scalar(a) else a for a in args],
                                  return_weak_type_flag=True)
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    return [lax.convert_element_type(a, dt, weak) for a in args]


def broadcast_shapes(*shapes):
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError(
                "Incompatible shapes for broadcasting: shapes="
                + str([tuple(s) for s in shapes])
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(x, shape):
    shape = tuple(int(d) for d in shape)
    aval = aval_of(x)
    if aval.shape == shape:
        return x
    nlead = len(shape) - aval.ndim
    if nlead < 0 or builtins.any(d not in (1, s) for d, s in zip(aval.shape, shape[nlead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {aval.shape} and requested "
                         f"shape {shape}")
    # Squeeze size-1 dims that get expanded, then broadcast_in_dim.
    keep = [i for i, (d, s) in enumerate(zip(aval.shape, shape[nlead:])) if d == s]
    if len(keep) != aval.ndim:
        x = lax.reshape(x, tuple(aval.shape[i] for i in keep))
    return lax.broadcast_in_dim(x, shape, tuple(nlead + i for i in keep))


def _promote_shapes(*args):
    """Broadcast non-scalar operands to a common shape; rank-0 operands stay as they are."""
    shapes = [aval_of(a).shape for a in args]
    nonscalar = {s for s in shapes if s != ()}
    if len(nonscalar) <= 1:
        return list(args)
    shape = broadcast_shapes(*shapes)
    return [a if s == () or s == shape else broadcast_to(a, shape) for a, s in zip(args, shapes)]


def _elementwise(lax_fn, *args, inexact=False):
    args = promote_dtypes_inexact(*args) if inexact else promote_dtypes(*args)
    return lax_fn(*_promote_shapes(*args))


def _check_not_bool(name, *args):
    for a in args:
        if aval_of(a).dtype == dtypes.bool_:
            raise TypeError(f"{name} does not accept dtype bool.")


def add(x, y):
    x, y = promote_dtypes(x, y)
    if aval_of(x).dtype == dtypes.bool_:
        return _elementwise(lax.bitwise_or, x, y)
    return _elementwise(lax.add, x, y)


def subtract(x, y):
    _check_not_bool("subtract", *promote_dtypes(x, y))
    return _elementwise(lax.sub, x, y)


def multiply(x, y):
    x, y = promote_dtypes(x, y)
    if aval_of(x).dtype == dtypes.bool_:
        return _elementwise(lax.bitwise_and, x, y)
    return _elementwise(lax.mul, x, y)


def true_divide(x, y):
    return _elementwise(lax.div, x, y, inexact=True)


def floor_divide(x, y):
    x, y = promote_dtypes(x, y)
    dt = aval_of(x).dtype
    if dtypes.is_integer(dt):
        x, y = _promote_shapes(x, y)
        q = lax.div(x, y)
        if dtypes.is_unsigned_int(dt):
            return q
        # Round toward -inf: subtract one where the signs differ and there is a remainder.
        r = lax.rem(x, y)
        fix = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(y, 0)))
        return lax.select(fix, lax.sub(q, 1), q)
    if dt == dtypes.bool_:
        raise TypeError("floor_divide does not accept dtype bool.")
    return lax.floor(true_divide(x, y))


def remainder(x, y):
    x, y = promote_dtypes(x, y)
    x, y = _promote_shapes(x, y)
    r = lax.rem(x, y)
    if dtypes.is_unsigned_int(aval_of(r).dtype):
        return r
    # Result takes the sign of the divisor, as in Python/NumPy.
    fix = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(y, 0)))
    return lax.select(fix, lax.add(r, y), r)


def power(x, y):
    if is_python_scalar(y) and type(y) is int and not isinstance(x, (bool, int)):
        x = _to_array_operand(x)
        if 0 <= y <= 64 or dtypes.is_inexact(aval_of(x).dtype):
            return lax.integer_pow(x, y) if y != 1 else x
    x, y = promote_dtypes(x, y)
    dt = aval_of(x).dtype
    if dtypes.is_integer(dt):
        raise TypeError(
            "Integers to array integer powers are only supported for static (Python int) "
            "exponents in this version of Olympus."
        )
    return _elementwise(lax.pow, x, y)


def maximum(x, y):
    return _elementwise(lax.max, x, y)


def minimum(x, y):
    return _elementwise(lax.min, x, y)


def _compare(lax_fn):
    def op(x, y):
        return _elementwise(lax_fn, x, y)

    op.__name__ = lax_fn.__name__
    return op


equal, not_equal = _compare(lax.eq), _compare(lax.ne)
less, less_equal = _compare(lax.lt), _compare(lax.le)
greater, greater_equal = _compare(lax.gt), _compare(lax.ge)


def _bitwise(lax_fn, name):
    def op(x, y):
        x, y = promote_dtypes(x, y)
        dt = aval_of(x).dtype
        if not (dtypes.is_integer(dt) or dt == dtypes.bool_):
            raise TypeError(f"{name} is only defined for integer and boolean dtypes, got {dt}.")
        return lax_fn(*_promote_shapes(x, y))

    op.__name__ = name
    return op


bitwise_and = _bitwise(lax.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(lax.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(lax.bitwise_xor, "bitwise_xor")
left_shift = _bitwise(lax.shift_left, "left_shift")


def right_shift(x, y):
    x, y = promote_dtypes(x, y)
    fn = lax.shift_right_logical if dtypes.is_unsigned_int(aval_of(x).dtype) else \
        lax.shift_right_arithmetic
    return fn(*_promote_shapes(x, y))


def negative(x):
    x = _to_array_operand(x)
    if is_python_scalar(x):
        return -x
    return lax.neg(x)


def positive(x):
    return _to_array_operand(x)


def absolute(x):
    x = _to_array_operand(x)
    dt = aval_of(x).dtype
    return x if dtypes.is_unsigned_int(dt) or dt == dtypes.bool_ else lax.abs(x)


def invert(x):
    x = _to_array_operand(x)
    return lax.bitwise_not(x)


def astype(x, dtype):
    x = _to_array_operand(x)
    dt = dtypes.canonicalize_dtype(dtype)
    if aval_of(x).dtype != dtypes.bool_ and dt == dtypes.bool_:
        return not_equal(x, lax.convert_element_type(0, aval_of(x).dtype))
    return lax.convert_element_type(x, dt, False)


# --- shapes -------------------------------------------------------------------------------


def canonicalize_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {axis}")
        return axes
    return (canonicalize_axis(axis, ndim),)


def reshape(x, *shape, order="C"):
    if order != "C":
        raise NotImplementedError("reshape only supports order='C'")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    x = _to_array_operand(x)
    aval = aval_of(x)
    shape = [operator.index(d) for d in shape]
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        if known == 0 or aval.size % known:
            raise TypeError(f"cannot reshape array of shape {aval.shape} (size {aval.size}) "
                            f"into shape {tuple(shape)}")
        shape[shape.index(-1)] = aval.size // known
    if int(np.prod(shape)) != aval.size:
        raise TypeError(f"cannot reshape array of shape {aval.shape} (size {aval.size}) into "
                        f"shape {tuple(shape)} (size {int(np.prod(shape))})")
    return lax.reshape(x, tuple(shape))


def ravel(x):
    return reshape(x, (aval_of(x).size,))


def transpose(x, axes=None):
    x = _to_array_operand(x)
    nd = aval_of(x).ndim
    perm = tuple(range(nd))[::-1] if axes is None else tuple(canonicalize_axis(a, nd)
                                                             for a in axes)
    return lax.transpose(x, perm)


def swapaxes(x, a, b):
    nd = aval_of(x).ndim
    perm = list(range(nd))
    a, b = canonicalize_axis(a, nd), canonicalize_axis(b, nd)
    perm[a], perm[b] = perm[b], perm[a]
    return lax.transpose(x, perm)


def squeeze(x, axis=None):
    x = _to_array_operand(x)
    shape = aval_of(x).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = _axes(axis, len(shape))
        for a in axes:
            if shape[a] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 "equal to one")
    return lax.squeeze(x, axes)


def expand_dims(x, axis):
    x = _to_array_operand(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = aval_of(x).ndim + len(axes)
    return lax.expand_dims(x, tuple(sorted(canonicalize_axis(a, nd) for a in axes)))


# --- reductions ---------------------------------------------------------------------------


def _reduction(x, axis, keepdims, lax_fn, dtype=None, upcast_bool=True):
    x = _to_array_operand(x)
    aval = aval_of(x)
    axes = _axes(axis, aval.ndim)
    if dtype is not None:
        x = lax.convert_element_type(x, dtype)
    elif upcast_bool and (aval.dtype == dtypes.bool_ or (
            dtypes.is_integer(aval.dtype) and aval.dtype.itemsize < 4)):
        x = lax.convert_element_type(
            x, dtypes.default_int() if not dtypes.is_unsigned_int(aval.dtype)
            else dtypes.canonicalize_dtype(np.uint64))
    out = lax_fn(x, axes)
    if keepdims:
        out = lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(aval.shape)))
    return out


def sum(x, axis=None, dtype=None, keepdims=False):  # noqa: A001
    return _reduction(x, axis, keepdims, lax.reduce_sum, dtype)


def prod(x, axis=None, dtype=None, keepdims=False):
    return _reduction(x, axis, keepdims, lax.reduce_prod, dtype)


def max(x, axis=None, keepdims=False):  # noqa: A001
    return _reduction(x, axis, keepdims, lax.reduce_max, upcast_bool=False)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return _reduction(x, axis, keepdims, lax.reduce_min, upcast_bool=False)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _reduction(astype(x, bool), axis, keepdims, lax.reduce_and, upcast_bool=False)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _reduction(astype(x, bool), axis, keepdims, lax.reduce_or, upcast_bool=False)


def mean(x, axis=None, dtype=None, keepdims=False):
    x = _to_array_operand(x)
    aval = aval_of(x)
    axes = _axes(axis, aval.ndim)
    n = int(np.prod([aval.shape[a] for a in axes]))
    if dtype is None:
        dtype = aval.dtype if dtypes.is_inexact(aval.dtype) else dtypes.default_float()
    s = sum(lax.convert_element_type(x, dtype, aval.weak_type), axis, None, keepdims)
    return true_divide(s, n)


def _arg_reduction(x, axis, keepdims, lax_fn):
    x = _to_array_operand(x)
    aval = aval_of(x)
    if axis is None:
        x = ravel(x)
        axis_ = 0
    else:
        axis_ = canonicalize_axis(axis, aval.ndim)
    if aval_of(x).shape[axis_] == 0:
        raise ValueError("attempt to get argmax of an empty sequence")
    out = lax_fn(x, axis_, dtypes.default_int())
    if keepdims:
        shape = (1,) * aval.ndim if axis is None else tuple(
            1 if i == axis_ else d for i, d in enumerate(aval.shape))
        out = lax.reshape(out, shape)
    return out


def argmax(x, axis=None, keepdims=False):
    return _arg_reduction(x, axis, keepdims, lax.argmax)


def argmin(x, axis=None, keepdims=False):
    return _arg_reduction(x, axis, keepdims, lax.argmin)


# --- linear algebra -------------------------------------------------------------------------


def matmul(a, b):
    a, b = promote_dtypes(a, b)
    aa, ba = aval_of(a), aval_of(b)
    if aa.ndim == 0 or ba.ndim == 0:
        raise ValueError("matmul: inputs must be at least 1-D, got shapes "
                         f"{aa.shape} and {ba.shape}")
    a_vec, b_vec = aa.ndim == 1, ba.ndim == 1
    if a_vec:
        a = lax.reshape(a, (1, aa.shape[0]))
    if b_vec:
        b = lax.reshape(b, (ba.shape[0], 1))
    aa, ba = aval_of(a), aval_of(b)
    if aa.shape[-1] != ba.shape[-2]:
        raise ValueError(
            f"matmul: size mismatch in contracted dimension: shapes {aa.shape} and {ba.shape}"
        )
    batch = broadcast_shapes(aa.shape[:-2], ba.shape[:-2])
    a = broadcast_to(a, batch + aa.shape[-2:])
    b = broadcast_to(b, batch + ba.shape[-2:])
    nb = len(batch)
    out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))
    oshape = aval_of(out).shape
    if a_vec and b_vec:
        return lax.reshape(out, oshape[:-2])
    if a_vec:
        return lax.reshape(out, oshape[:-2] + oshape[-1:])
    if b_vec:
        return lax.reshape(out, oshape[:-1])
    return out


def where(cond, x, y):
    cond = astype(cond, bool)
    x, y = promote_dtypes(x, y)
    shape = broadcast_shapes(aval_of(cond).shape, aval_of(x).shape, aval_of(y).shape)
    cond, x, y = (broadcast_to(v, shape) for v in (cond, x, y))
    return lax.select(cond, x, y)


def clip(x, min=None, max=None):  # noqa: A002
    if min is not None:
        x = maximum(x, min)
    if max is not None:
        x = minimum(x, max)
    return x


# --- indexing --------------------------------------------------------------------------------


def _is_static_int(i) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def getitem(x, idx):
    """Basic indexing (ints, slices, None, Ellipsis, traced integer scalars) and integer-array
    indexing along one or more axes (clamped like JAX's default gather mode)."""
    x = _to_array_operand(x)
    if not isinstance(idx, tuple):
        idx = (idx,)
    shape = aval_of(x).shape
    # Expand Ellipsis.
    n_ell = builtins.sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"Too many indices: {len(shape)}-dimensional array, but {n_real} were "
                         "indexed")
    if n_ell:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (builtins.slice(None),) * (len(shape) - n_real) + idx[k + 1:]
    else:
        idx = idx + (builtins.slice(None),) * (len(shape) - n_real)

    array_idx = [i for i in idx if not (i is None or isinstance(i, builtins.slice)
                                        or _is_static_int(i))]
    if array_idx:
        return _advanced_getitem(x, idx)

    # Static basic indexing: one slice, then reshape for ints/None.
    starts, limits, strides, out_shape, rev_dims = [], [], [], [], []
    dim = 0
    for i in idx:
        if i is None:
            out_shape.append(1)
            continue
        d = shape[dim]
        if _is_static_int(i):
            j = int(i)
            if not -d <= j < d:
                raise IndexError(f"index {j} is out of bounds for axis {dim} with size {d}")
            j %= d
            starts.append(j)
            limits.append(j + 1)
            strides.append(1)
        else:
            start, stop, step = i.indices(d)
            if step < 0:
                # Reverse, then slice with a positive step.
                rev_dims.append(dim)
                start, stop = d - 1 - start, d - 1 - stop
                step = -step
            n = builtins.max(0, (stop - start + step - 1) // step)
            starts.append(start if n else 0)
            limits.append(start + (n - 1) * step + 1 if n else 0)
            strides.append(step)
            out_shape.append(n)
        dim += 1
    if rev_dims:
        x = lax.rev(x, rev_dims)
    if starts != [0] * len(shape) or limits != list(shape) or builtins.any(s != 1 for s in
                                                                         strides):
        x = lax.slice(x, starts, limits, strides if builtins.any(s != 1 for s in strides)
                      else None)
    return lax.reshape(x, tuple(out_shape))


def _advanced_getitem(x, idx):
    """Traced scalar ints use dynamic_slice; integer arrays use gather."""
    from olympus_ir.prims.indexing import GatherDimensionNumbers, GatherScatterMode

    from .core import bind

    shape = aval_of(x).shape
    # Normalize: expand None first as reshape at the end is complex; handle only
    # index tuples without None here.
    if builtins.any(i is None for i in idx):
        no_none = tuple(i for i in idx if i is not None)
        out = _advanced_getitem(x, no_none)
        return _insert_new_axes(out, idx)
    arrays, array_dims = [], []
    basic = []
    for dim, i in enumerate(idx):
        if isinstance(i, builtins.slice) or _is_static_int(i):
            basic.append((dim, i))
        else:
            i = _to_array_operand(i)
            a = aval_of(i)
            if a.dtype == dtypes.bool_:
                raise IndexError(
                    "Array boolean indices must be concrete; got a traced boolean index. Use "
                    "olympus.numpy.where instead."
                )
            if not dtypes.is_integer(a.dtype):
                raise IndexError(f"Indexer must have integer or boolean type, got indexer with "
                                 f"type {a.dtype}")
            arrays.append(i)
            array_dims.append(dim)
    # Apply basic slices first on the other dims (keep dims so positions stay valid).
    sl = tuple(i if not _is_static_int(i) else builtins.slice(int(i) % shape[d],
                                                              int(i) % shape[d] + 1)
               for d, i in basic)
    full = [builtins.slice(None)] * len(shape)
    for (d, _), s in zip(basic, sl):
        full[d] = s
    if builtins.any(s != builtins.slice(None) for s in full):
        x = getitem(x, tuple(full))
    shape = aval_of(x).shape
    # Broadcast the index arrays, wrap negatives, and stack them as gather indices.
    ishape = broadcast_shapes(*(aval_of(a).shape for a in arrays))
    cols = []
    for a, d in zip(arrays, array_dims):
        a = lax.convert_element_type(a, dtypes.default_int())
        a = where(less(a, 0), add(a, shape[d]), a)
        a = broadcast_to(a, ishape)
        cols.append(lax.reshape(a, ishape + (1,)))
    indices = lax.concatenate(cols, len(ishape)) if len(cols) > 1 else cols[0]
    offset_dims_src = [d for d in range(len(shape)) if d not in array_dims]
    contiguous = array_dims == list(range(array_dims[0], array_dims[0] + len(array_dims)))
    batch_pos = array_dims[0] if contiguous else 0
    nb = len(ishape)
    offset_dims = tuple(
        (k if k < batch_pos else k + nb) for k, _ in enumerate(offset_dims_src)
    )
    dn = GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=tuple(array_dims),
        start_index_map=tuple(array_dims))
    slice_sizes = tuple(1 if d in array_dims else shape[d] for d in range(len(shape)))
    out = bind(
        __import__("olympus_ir.primitives", fromlist=["gather_p"]).gather_p, x, indices,
        dimension_numbers=dn, slice_sizes=slice_sizes, indices_are_sorted=False,
        unique_indices=False, mode=GatherScatterMode.CLIP, fill_value=None)
    # Drop the kept size-1 dims that came from static integer indices.
    int_dims = [d for d, i in basic if _is_static_int(i)]
    if int_dims:
        # Position of original dim d in the output.
        pos = {}
        for k, d in enumerate(offset_dims_src):
            pos[d] = offset_dims[k]
        out = lax.reshape(out, tuple(s for k, s in enumerate(aval_of(out).shape)
                                     if k not in {pos[d] for d in int_dims}))
    return out


def _insert_new_axes(out, idx):
    # Only supports None at positions relative to the non-None indices when no advanced
    # index moves axes; adequate for common `x[:, None]`-style uses.
    shape = list(aval_of(out).shape)
    pos = 0
    for i in idx:
        if i is None:
            shape.insert(pos, 1)
            pos += 1
        elif not _is_static_int(i):
            pos += 1
    return lax.reshape(out, tuple(shape))


def dynamic_index(x, i, axis=0):
    """x[i] along `axis` for a traced integer scalar `i` (clamped like XLA)."""
    shape = aval_of(x).shape
    i = lax.convert_element_type(i, dtypes.default_int())
    i = where(less(i, 0), add(i, shape[axis]), i)
    zero = np.zeros((), dtypes.default_int())
    starts = [zero] * len(shape)
    starts[axis] = i
    sizes = list(shape)
    sizes[axis] = 1
    out = lax.dynamic_slice(x, starts, sizes)
    return lax.squeeze(out, (axis,))


def is_tracer(x: Any) -> bool:
    return isinstance(x, Tracer)
