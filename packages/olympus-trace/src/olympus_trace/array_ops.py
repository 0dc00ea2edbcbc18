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
    # Squeeze size-1 dims that get expanded, then broadcast_in_dim (as JAX does).
    keep = [i for i, (d, s) in enumerate(zip(aval.shape, shape[nlead:])) if d == s]
    x = lax.squeeze(x, [i for i in range(aval.ndim) if i not in keep])
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


def _same_numeric_aval(x, y) -> bool:
    """Fast path test: both operands are arrays carrying an aval (tracers, device arrays;
    not Python scalars, lists or NumPy values) of the very same non-bool type, so promotion
    and broadcasting have nothing to do."""
    if not (hasattr(type(x), "aval") and hasattr(type(y), "aval")):
        return False
    a, b = x.aval, y.aval
    return (a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type
            and a.dtype != dtypes.bool_)


def _scalar_fits(x, y) -> bool:
    """Fast path test: one operand is an array carrying an aval, the other a Python scalar
    that promotion would simply cast to the array's dtype (float/int with a float array,
    int with a signed or unsigned integer array)."""
    arr, sc = (x, y) if type(y) in (int, float) else (y, x)
    if type(sc) not in (int, float) or not hasattr(type(arr), "aval"):
        return False
    dt = arr.aval.dtype
    if dtypes.is_float(dt):
        return True
    return type(sc) is int and dtypes.is_integer(dt)


def _fast(x, y) -> bool:
    return _same_numeric_aval(x, y) or _scalar_fits(x, y)


def add(x, y):
    if _fast(x, y):
        return lax.add(x, y)
    x, y = promote_dtypes(x, y)
    if aval_of(x).dtype == dtypes.bool_:
        return _elementwise(lax.bitwise_or, x, y)
    return _elementwise(lax.add, x, y)


def subtract(x, y):
    if _fast(x, y):
        return lax.sub(x, y)
    x, y = promote_dtypes(x, y)
    _check_not_bool("subtract", x, y)
    return _elementwise(lax.sub, x, y)


def multiply(x, y):
    if _fast(x, y):
        return lax.mul(x, y)
    x, y = promote_dtypes(x, y)
    if aval_of(x).dtype == dtypes.bool_:
        return _elementwise(lax.bitwise_and, x, y)
    return _elementwise(lax.mul, x, y)


def true_divide(x, y):
    if _fast(x, y) and dtypes.is_inexact(get_aval(x).dtype) and dtypes.is_inexact(
            get_aval(y).dtype):
        return lax.div(x, y)
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
        zero = lax.convert_element_type(0, dt)
        fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(y, zero)))
        return lax.select(fix, lax.sub(q, lax.convert_element_type(1, dt)), q)
    if dt == dtypes.bool_:
        raise TypeError("floor_divide does not accept dtype bool.")
    return lax.floor(true_divide(x, y))


def remainder(x, y):
    x, y = promote_dtypes(x, y)
    x, y = _promote_shapes(x, y)
    r = lax.rem(x, y)
    if dtypes.is_unsigned_int(aval_of(r).dtype):
        return r
    # Result takes the sign of the divisor, as in Python/NumPy. (The zero has the operands'
    # dtype: a divisor that is still a Python scalar must not meet a Python-int zero.)
    zero = lax.convert_element_type(0, aval_of(r).dtype)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(y, zero)))
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
    src = aval_of(x).dtype
    if dtypes.is_complex(src) and dt == dtypes.bool_:
        # convert_element_type(complex, bool) does not mean "nonzero"; compare instead.
        return lax.ne(x, lax.convert_element_type(0, src))
    return lax.convert_element_type(x, dt, False)


# --- shapes -------------------------------------------------------------------------------


def canonicalize_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def axes_tuple(axis, ndim: int) -> tuple:
    """axis (None, int or tuple) as a tuple of canonical axes, in the order given."""
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
        axes = axes_tuple(axis, len(shape))
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


def _upcast_f16(dt):
    return dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt


def _expand_dims_like_jax(x, axes, shape):
    """Re-insert the reduced `axes` as size-1 dims (JAX's lax.expand_dims: broadcast_in_dim)."""
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return lax.broadcast_in_dim(x, out_shape, kept)


def _reduction(x, axis, keepdims, lax_fn, dtype=None, promote_integers=False,
               upcast_f16=False, bool_fn=None):
    """JAX's jnp reduction recipe: pick the result dtype (small ints and bools promoted to
    the default int for sum/prod), compute in float32 for 16-bit floats, reduce, re-insert
    kept dims, convert to the result dtype."""
    x = _to_array_operand(x)
    aval = aval_of(x)
    axes = axes_tuple(axis, aval.ndim)
    if dtype is not None:
        result_dtype = dtypes.canonicalize_dtype(dtype)
    else:
        result_dtype = aval.dtype
        if promote_integers:
            if result_dtype == dtypes.bool_:
                result_dtype = dtypes.default_int()
            elif dtypes.is_unsigned_int(result_dtype):
                uint = dtypes.canonicalize_dtype(np.uint64)
                if result_dtype.itemsize < uint.itemsize:
                    result_dtype = uint
            elif dtypes.is_integer(result_dtype):
                if result_dtype.itemsize < dtypes.default_int().itemsize:
                    result_dtype = dtypes.default_int()
    computation_dtype = _upcast_f16(result_dtype) if upcast_f16 else result_dtype
    x = lax.convert_element_type(x, computation_dtype)
    if computation_dtype == dtypes.bool_ and bool_fn is not None:
        lax_fn = bool_fn
    out = lax_fn(x, axes)
    if keepdims:
        out = _expand_dims_like_jax(out, axes, aval.shape)
    return lax.convert_element_type(out, result_dtype)


def sum(x, axis=None, dtype=None, keepdims=False):  # noqa: A001
    return _reduction(x, axis, keepdims, lax.reduce_sum, dtype, promote_integers=True,
                      upcast_f16=True, bool_fn=lax.reduce_or)


def prod(x, axis=None, dtype=None, keepdims=False):
    return _reduction(x, axis, keepdims, lax.reduce_prod, dtype, promote_integers=True,
                      upcast_f16=True, bool_fn=lax.reduce_and)


def max(x, axis=None, keepdims=False):  # noqa: A001
    return _reduction(x, axis, keepdims, lax.reduce_max, bool_fn=lax.reduce_or)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return _reduction(x, axis, keepdims, lax.reduce_min, bool_fn=lax.reduce_and)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _reduction(astype(x, bool), axis, keepdims, lax.reduce_and)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _reduction(astype(x, bool), axis, keepdims, lax.reduce_or)


def mean(x, axis=None, dtype=None, keepdims=False):
    x = _to_array_operand(x)
    aval = aval_of(x)
    axes = axes_tuple(axis, aval.ndim)
    n = int(np.prod([aval.shape[a] for a in axes]))
    if dtype is None:
        dtype = aval.dtype if dtypes.is_inexact(aval.dtype) else dtypes.default_float()
    dtype = dtypes.canonicalize_dtype(dtype)
    computation_dtype = _upcast_f16(dtype)
    s = sum(x, axis, computation_dtype, keepdims)
    out = lax.div(s, lax.convert_element_type(n, computation_dtype))
    return lax.convert_element_type(out, dtype)


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
    """JAX's jnp.matmul: one dot_general (batch dims where both operands have them, size-1
    batch dims squeezed), then a transpose into NumPy's output order if needed."""
    a, b = promote_dtypes(a, b)
    aa, ba = aval_of(a), aval_of(b)
    for i, av in enumerate((aa, ba)):
        if av.ndim < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             f"ndim {av.ndim}")
    out_dtype = aa.dtype
    out_weak = aa.weak_type and ba.weak_type
    a_is_mat, b_is_mat = aa.ndim > 1, ba.ndim > 1
    a_batch_dims = aa.shape[:-2] if a_is_mat else ()
    b_batch_dims = ba.shape[:-2] if b_is_mat else ()
    nbatch = builtins.max(len(a_batch_dims), len(b_batch_dims))
    a_batch_dims = (None,) * (nbatch - len(a_batch_dims)) + tuple(a_batch_dims)
    b_batch_dims = (None,) * (nbatch - len(b_batch_dims)) + tuple(b_batch_dims)
    a_squeeze, b_squeeze, a_batch, b_batch = [], [], [], []
    idx_batch, idx_a_other, idx_b_other = [], [], []
    for i, (da, db) in enumerate(zip(a_batch_dims, b_batch_dims)):
        if da is None:
            idx_b_other.append(i)
        elif db is None:
            idx_a_other.append(i)
        elif da == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif db == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif da == db:
            a_batch.append(len(idx_batch) + len(idx_a_other))
            b_batch.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible shapes for matmul arguments: {aa.shape} and "
                             f"{ba.shape}")
    if a_is_mat:
        idx_a_other.append(nbatch)
    if b_is_mat:
        idx_b_other.append(nbatch + a_is_mat)
    perm = np.argsort(np.array(idx_batch + idx_a_other + idx_b_other, dtype=np.int64))
    a = lax.squeeze(a, a_squeeze)
    b = lax.squeeze(b, b_squeeze)
    na, nb_ = aval_of(a).ndim, aval_of(b).ndim
    out = lax.dot_general(a, b, (((na - 1,), (nb_ - 1 - b_is_mat,)),
                                 (tuple(a_batch), tuple(b_batch))),
                          preferred_element_type=out_dtype)
    out = lax.transpose(out, tuple(int(p) for p in perm))
    return lax.convert_element_type(out, out_dtype, out_weak)


def where(cond, x, y):
    cond = _to_array_operand(cond)
    cdt = aval_of(cond).dtype
    if cdt != dtypes.bool_:
        cond = lax.ne(cond, lax.convert_element_type(0, cdt))
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
    idx, new_axes = expand_bool_indices(idx, aval_of(x).shape)
    if new_axes:
        x = _insert_unit_axes(x, new_axes)
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
        k = next(j for j, i in enumerate(idx) if i is Ellipsis)
        idx = idx[:k] + (builtins.slice(None),) * (len(shape) - n_real) + idx[k + 1:]
    else:
        idx = idx + (builtins.slice(None),) * (len(shape) - n_real)

    array_idx = [i for i in idx if not (i is None or isinstance(i, builtins.slice)
                                        or _is_static_int(i))]
    if array_idx:
        if (builtins.all(_is_dynamic_scalar_int(i) for i in array_idx)
                and not builtins.any(i is None for i in idx)
                and builtins.all(i.step in (None, 1) or _is_simple_reverse(i)
                                 for i in idx if isinstance(i, builtins.slice))):
            return _dynamic_scalar_getitem(x, idx)
        return _advanced_getitem(x, idx)

    # Static basic indexing: one (strided) slice, squeeze the integer-indexed dims, then
    # insert the None dims with broadcast_in_dim (as JAX's expand_dims does).
    starts, limits, strides, out_shape, rev_dims, int_dims = [], [], [], [], [], []
    new_axes = []
    dim = 0
    for i in idx:
        if i is None:
            new_axes.append(len(out_shape))
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
            int_dims.append(dim)
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
    x = lax.squeeze(x, int_dims)
    if new_axes:
        x = lax.broadcast_in_dim(x, tuple(out_shape),
                                 tuple(k for k in range(len(out_shape)) if k not in new_axes))
    return x


def _bool_kind(i):
    """"array" for a boolean-mask index, "scalar" for a scalar boolean, else None."""
    if isinstance(i, (bool, np.bool_)):
        return "scalar"
    if isinstance(i, list):
        try:
            arr = np.asarray(i)
        except Exception:  # noqa: BLE001 (lists of tracers etc.: not a mask)
            return None
        return "array" if arr.dtype == np.bool_ and arr.ndim else None
    if i is None or isinstance(i, (builtins.slice, int, float, complex)) or i is Ellipsis:
        return None
    try:
        a = get_aval(i)
    except TypeError:
        return None
    if a.dtype != dtypes.bool_:
        return None
    return "array" if a.ndim else "scalar"


def expand_bool_indices(idx: tuple, shape) -> tuple[tuple, tuple]:
    """Rewrite the boolean entries of an index tuple, NumPy's way: a mask becomes the
    integer arrays of its true positions (so it must be concrete: the result's shape
    depends on its values), and a scalar boolean becomes a new size-1 axis indexed with
    ``[0]`` (True) or ``[]`` (False). Returns ``(idx, new_axes)``: the rewritten index and
    the positions at which `x` needs a new size-1 axis first."""
    from .errors import NonConcreteBooleanIndexError

    kinds = [_bool_kind(i) for i in idx]
    if not builtins.any(kinds):
        return idx, ()
    # Dims consumed before an Ellipsis, and how many it stands for.
    consumed = builtins.sum(
        0 if i is None or i is Ellipsis or k == "scalar" else
        (np.ndim(i) if k == "array" and isinstance(i, list) else aval_of(i).ndim)
        if k == "array" else 1 for i, k in zip(idx, kinds))
    fill = builtins.max(len(shape) - consumed, 0)
    idt = dtypes.default_int()
    out, new_axes = [], []
    pos = 0  # position in the original shape
    nnew = 0
    for n, (i, k) in enumerate(zip(idx, kinds)):
        if i is Ellipsis:
            out.append(i)
            pos += fill
            continue
        if i is None:
            out.append(i)
            continue
        if k is None:
            out.append(i)
            pos += 1
            continue
        if isinstance(i, Tracer) and i.to_concrete_value() is None:
            raise NonConcreteBooleanIndexError(i.aval)
        val = np.asarray(i.to_concrete_value() if isinstance(i, Tracer) else i)
        if k == "scalar":
            new_axes.append(pos + nnew)
            nnew += 1
            out.append(np.zeros((1 if bool(val) else 0,), idt))
            continue
        want = tuple(shape[pos:pos + val.ndim])
        if want != val.shape:
            raise IndexError("boolean index did not match shape of indexed array in index "
                             f"{n}: got {val.shape}, expected {want}")
        out.extend(nz.astype(idt) for nz in np.nonzero(val))
        pos += val.ndim
    return tuple(out), tuple(new_axes)


def _insert_unit_axes(x, positions):
    shape = list(aval_of(x).shape)
    for p in sorted(positions):
        shape.insert(p, 1)
    kept = tuple(d for d in range(len(shape)) if d not in positions)
    return lax.broadcast_in_dim(x, tuple(shape), kept)


def _is_simple_reverse(i) -> bool:
    return i.start is None and i.stop is None and i.step == -1


def _is_dynamic_scalar_int(i) -> bool:
    """A scalar integer index that is not a Python/NumPy int (e.g. a traced integer)."""
    if i is None or isinstance(i, (builtins.slice, list, tuple)) or _is_static_int(i):
        return False
    try:
        a = get_aval(i)
    except TypeError:
        return False
    return a.shape == () and dtypes.is_integer(a.dtype)


def _dynamic_scalar_getitem(x, idx):
    """Ints, unit-stride or reversing slices and scalar integer arrays (e.g. tracers): one
    dynamic_slice, then squeeze the integer-indexed dims (JAX's rewriting of such indexing).
    Negative dynamic indices wrap once; out-of-range ones are clamped like XLA."""
    shape = aval_of(x).shape
    rev_dims = [d for d, i in enumerate(idx) if isinstance(i, builtins.slice)
                and _is_simple_reverse(i)]
    if rev_dims:
        x = lax.rev(x, rev_dims)
    idt = dtypes.default_int()
    starts, sizes, int_dims = [], [], []
    for d, (i, n) in enumerate(zip(idx, shape)):
        if isinstance(i, builtins.slice):
            start, stop, _ = (0, n, 1) if d in rev_dims else i.indices(n)
            starts.append(np.array(start, idt)[()])
            sizes.append(builtins.max(0, stop - start))
            continue
        if _is_static_int(i):
            j = int(i)
            if not -n <= j < n:
                raise IndexError(f"index {j} is out of bounds for axis {d} with size {n}")
            starts.append(np.array(j % n, idt)[()])
        else:
            j = lax.convert_element_type(i, idt)
            starts.append(lax.select(lax.lt(j, 0), lax.add(j, n), j))
        sizes.append(1)
        int_dims.append(d)
    x = lax.dynamic_slice(x, starts, sizes)
    return lax.squeeze(x, int_dims)


def _advanced_getitem(x, idx):
    """Integer-array indexing (NumPy's advanced indexing) with one gather.

    `idx` has one entry per dimension plus Nones. Once any integer array is present,
    static integers count as (scalar) advanced indices too, as in NumPy/JAX. The advanced
    indices broadcast together; their result dims replace the indexed dims if the advanced
    entries are adjacent in `idx`, and go first otherwise. Out-of-range indices are clamped
    (JAX's default gather mode for reads); negative ones wrap once.
    """
    from olympus_ir.primitives import gather_p
    from olympus_ir.prims.indexing import GatherDimensionNumbers, GatherScatterMode

    from .core import bind

    idt = dtypes.default_int()
    # Entries by position in idx: kind is "none", "slice" or "adv".
    kinds = []
    arrays, array_dims = [], []
    dim = 0
    for i in idx:
        if i is None:
            kinds.append("none")
            continue
        if isinstance(i, builtins.slice):
            kinds.append("slice")
        else:
            kinds.append("adv")
            if _is_static_int(i):
                n = aval_of(x).shape[dim]
                j = int(i)
                if not -n <= j < n:
                    raise IndexError(f"index {j} is out of bounds for axis {dim} with size {n}")
                i = np.array(j % n, idt)
            else:
                i = _to_array_operand(i)
                a = aval_of(i)
                if a.dtype == dtypes.bool_:
                    raise IndexError(
                        "Array boolean indices must be concrete; got a traced boolean index. "
                        "Use olympus.numpy.where instead."
                    )
                if not dtypes.is_integer(a.dtype):
                    raise IndexError("Indexer must have integer or boolean type, got indexer "
                                     f"with type {a.dtype}")
                i = lax.convert_element_type(i, idt)
                i = where(less(i, 0), add(i, aval_of(x).shape[dim]), i)
            arrays.append(i)
            array_dims.append(dim)
        dim += 1
    adv_pos = [k for k, kind in enumerate(kinds) if kind == "adv"]
    contiguous = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    # Apply the slices first (the advanced dims are kept whole).
    full = tuple(builtins.slice(None) if kind == "adv" else i
                 for i, kind in zip(idx, kinds) if kind != "none")
    if builtins.any(s_ != builtins.slice(None) for s_ in full):
        x = getitem(x, full)
    shape = aval_of(x).shape
    ishape = broadcast_shapes(*(aval_of(a).shape for a in arrays))
    cols = [lax.reshape(broadcast_to(a, ishape), ishape + (1,)) for a in arrays]
    indices = lax.concatenate(cols, len(ishape)) if len(cols) > 1 else cols[0]
    slice_dims = [d for d in range(len(shape)) if d not in array_dims]
    nb = len(ishape)
    if contiguous:
        batch_pos = builtins.sum(1 for k in range(adv_pos[0]) if kinds[k] == "slice")
    else:
        batch_pos = 0
    offset_dims = tuple(k if k < batch_pos else k + nb for k in range(len(slice_dims)))
    dn = GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=tuple(array_dims),
        start_index_map=tuple(array_dims))
    slice_sizes = tuple(1 if d in array_dims else shape[d] for d in range(len(shape)))
    out = bind(gather_p, x, indices, dimension_numbers=dn, slice_sizes=slice_sizes,
               indices_are_sorted=False, unique_indices=False, mode=GatherScatterMode.CLIP,
               fill_value=None)
    if "none" not in kinds:
        return out
    # Insert the None dims (JAX's expand_dims: broadcast_in_dim).
    out_shape, kept = [], []
    ndone = 0
    oshape = aval_of(out).shape
    if not contiguous:
        out_shape.extend(oshape[:nb])
        kept.extend(range(nb))
        ndone = nb
    batch_done = not contiguous
    for kind in kinds:
        if kind == "none":
            out_shape.append(1)
        elif kind == "slice" or not batch_done:
            n = 1 if kind == "slice" else nb
            kept.extend(range(len(out_shape), len(out_shape) + n))
            out_shape.extend(oshape[ndone:ndone + n])
            ndone += n
            batch_done = batch_done or kind == "adv"
    return lax.broadcast_in_dim(out, tuple(out_shape), tuple(kept))


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
