"""`olympus.numpy`: the NumPy API with JAX's semantics (immutable arrays, weak types,
32-bit defaults). Built on the NumPy-semantics layer of olympus-trace."""

from __future__ import annotations

import builtins
import operator

import numpy as _np
import olympus_runtime as _rt
from olympus_ir import dtypes as _dtypes
from olympus_trace import array_ops as _ops
from olympus_trace import lax_ops as _lax
from olympus_trace.core import Tracer as _Tracer

from ._scalar_types import (  # noqa: F401
    bfloat16, bool_, complex64, complex128, float16, float32, float64, int8, int16, int32,
    int64, uint8, uint16, uint32, uint64,
)

ndarray = _rt.Array
dtype = _np.dtype
result_type = _dtypes.result_type
promote_types = _dtypes.promote_types
issubdtype = _dtypes.issubdtype
finfo = _dtypes.finfo
iinfo = _dtypes.iinfo
newaxis = None
pi, e, inf, nan = _np.pi, _np.e, _np.inf, _np.nan
floating, integer, inexact, number = _np.floating, _np.integer, _np.inexact, _np.number
signedinteger, unsignedinteger = _np.signedinteger, _np.unsignedinteger
complexfloating, generic = _np.complexfloating, _np.generic
bool = bool_  # noqa: A001


def _canon(d):
    return None if d is None else _dtypes.canonicalize_dtype(d)


# --- creation ---------------------------------------------------------------------------------


def asarray(a, dtype=None, copy=None):
    if isinstance(a, (_Tracer, _rt.Array)):
        return a if dtype is None else _ops.astype(a, dtype)
    if type(a) in (builtins.bool, int, float, complex) and dtype is None:
        return _rt.device_put(a)
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(x, (_Tracer, _rt.Array)) for x in
                                             _flatten_seq(a)):
        return stack([asarray(x, dtype) for x in a]) if a else _rt.device_put(
            _np.zeros((0,), _canon(dtype) or _dtypes.default_float()))
    arr = _np.asarray(a)
    if arr.dtype == object:
        raise TypeError(f"Cannot convert {type(a).__name__} {a!r} to an array: unsupported "
                        "element types.")
    if dtype is not None:
        arr = arr.astype(_canon(dtype))
    elif arr.dtype.kind in "biufc" or arr.dtype == _dtypes.bfloat16:
        if type(a) in (list, tuple) and arr.dtype == _np.float64:
            arr = arr.astype(_dtypes.default_float())
        elif type(a) in (list, tuple) and arr.dtype == _np.int64:
            arr = arr.astype(_dtypes.default_int())
        arr = arr.astype(_dtypes.canonicalize_dtype(arr.dtype))
    else:
        raise TypeError(f"Cannot convert {type(a).__name__} with dtype {arr.dtype} to an array.")
    return _rt.device_put(arr)


def _flatten_seq(a):
    for x in a:
        if isinstance(x, (list, tuple)):
            yield from _flatten_seq(x)
        else:
            yield x


def array(object, dtype=None, copy=True, ndmin=0):  # noqa: A002
    out = asarray(object, dtype)
    if ndmin > out.ndim:
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def _canonicalize_shape(shape) -> tuple:
    """A shape argument as a tuple of Python ints, or JAX's TypeError for anything else
    (notably traced values: shapes must be known when tracing)."""
    if isinstance(shape, (_Tracer, _rt.Array, _np.ndarray)) and _np.ndim(shape) == 0:
        shape = (shape,)
    elif isinstance(shape, (int, _np.integer)):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    if dims is not None and not builtins.any(isinstance(d, _Tracer) for d in dims):
        try:
            return tuple(operator.index(d) for d in dims)
        except TypeError:
            pass
    got = shape if dims is None else dims
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {got}."
    if isinstance(shape, _Tracer) or (dims is not None and builtins.any(
            isinstance(d, _Tracer) for d in dims)):
        msg += (" If using `jit`, try using `static_argnums` or applying `jit` to smaller "
                "subfunctions.")
    raise TypeError(msg)


def full(shape, fill_value, dtype=None):
    shape = _canonicalize_shape(shape)
    if dtype is None:
        dt, weak = _dtypes.result_type(fill_value, return_weak_type_flag=True)
        dt = dt if not weak or type(fill_value) not in (int, float, complex) else dt
    else:
        dt = _canon(dtype)
    val = _lax.convert_element_type(
        fill_value if isinstance(fill_value, (_Tracer, _rt.Array)) else _np.asarray(
            fill_value, dt), dt)
    return _lax.broadcast_in_dim(val, shape, tuple(range(len(shape) - _np.ndim(fill_value),
                                                         len(shape))))


def zeros(shape, dtype=None):
    return full(shape, 0, _canon(dtype) or _dtypes.default_float())


def ones(shape, dtype=None):
    return full(shape, 1, _canon(dtype) or _dtypes.default_float())


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    return full(a.shape if shape is None else shape, fill_value, dtype or a.dtype)


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    for v in (start, stop, step):
        if isinstance(v, _Tracer):
            raise _concretization_error(v, "arange")
    if stop is None and step is None:
        n = operator.index(start) if not isinstance(start, float) else start
        dt = _canon(dtype) or (_dtypes.default_float() if isinstance(n, float)
                               else _dtypes.default_int())
        if isinstance(n, int) and not _dtypes.is_complex(dt):
            return _lax.iota(dt, builtins.max(n, 0))
        return _rt.device_put(_np.arange(n, dtype=dt))
    vals = [v for v in (start, stop, step) if v is not None]
    dt = _canon(dtype) or (_dtypes.default_float() if builtins.any(isinstance(v, float) for v in vals)
                           else _dtypes.default_int())
    return _rt.device_put(_np.arange(start, stop, step, dtype=dt))


def _concretization_error(v, name):
    from olympus_trace.errors import ConcretizationTypeError

    return ConcretizationTypeError(v, f"It arose in the olympus.numpy.{name} argument.")


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """`num` evenly spaced values from `start` to `stop` (inclusive when `endpoint`).

    Concrete Python/NumPy bounds are computed by NumPy; array or traced bounds are computed
    with Olympus operations (so linspace works under `jit`), in float32 or the bounds'
    inexact dtype, then cast to `dtype` (integers are floored, as in JAX)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    traced = builtins.any(isinstance(v, (_Tracer, _rt.Array)) for v in (start, stop))
    if not traced:
        dt = _canon(dtype) or _dtypes.default_float()
        return _rt.device_put(_np.linspace(start, stop, num, endpoint=endpoint).astype(dt))
    start, stop = _ops.promote_dtypes_inexact(start, stop)
    ct = _ops.aval_of(start).dtype
    dt = _canon(dtype) or ct
    if num == 0:
        return zeros((0,) + tuple(_ops.aval_of(start).shape), dt)
    div = (num - 1) if endpoint else num
    idx = _lax.convert_element_type(_lax.iota(_np.dtype("int32"), num), ct)
    if div > 0:
        step = _ops.true_divide(_ops.subtract(stop, start), div)
        out = _ops.add(start, _ops.multiply(idx, step))
        if endpoint and num > 1:
            out = concatenate([out[:-1], _lax.reshape(_ops.astype(stop, ct), (1,))])
    else:
        out = _ops.add(_ops.multiply(idx, 0), start)
    if _dtypes.is_integer(dt):
        out = _lax.floor(out)
    return _lax.convert_element_type(out, dt, False)


def eye(N, M=None, k=0, dtype=None):
    dt = _canon(dtype) or _dtypes.default_float()
    return _rt.device_put(_np.eye(N, M, k, dtype=dt))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


# --- elementwise ------------------------------------------------------------------------------


def _unary_inexact(lax_fn, name):
    def f(x):
        (x,) = _ops.promote_dtypes_inexact(x)
        return lax_fn(x)

    f.__name__ = name
    return f


exp = _unary_inexact(_lax.exp, "exp")
exp2 = _unary_inexact(_lax.exp2, "exp2")
log = _unary_inexact(_lax.log, "log")
log1p = _unary_inexact(_lax.log1p, "log1p")
expm1 = _unary_inexact(_lax.expm1, "expm1")
sin = _unary_inexact(_lax.sin, "sin")
cos = _unary_inexact(_lax.cos, "cos")
tan = _unary_inexact(_lax.tan, "tan")
arcsin = _unary_inexact(_lax.asin, "arcsin")
arccos = _unary_inexact(_lax.acos, "arccos")
arctan = _unary_inexact(_lax.atan, "arctan")
sinh = _unary_inexact(_lax.sinh, "sinh")
cosh = _unary_inexact(_lax.cosh, "cosh")
tanh = _unary_inexact(_lax.tanh, "tanh")
arcsinh = _unary_inexact(_lax.asinh, "arcsinh")
arccosh = _unary_inexact(_lax.acosh, "arccosh")
arctanh = _unary_inexact(_lax.atanh, "arctanh")
sqrt = _unary_inexact(_lax.sqrt, "sqrt")
cbrt = _unary_inexact(_lax.cbrt, "cbrt")


def log2(x):
    (x,) = _ops.promote_dtypes_inexact(x)
    return _ops.true_divide(_lax.log(x), _lax.log(_lax.convert_element_type(2, x.dtype)))


def log10(x):
    (x,) = _ops.promote_dtypes_inexact(x)
    return _ops.true_divide(_lax.log(x), _lax.log(_lax.convert_element_type(10, x.dtype)))


add, subtract, multiply = _ops.add, _ops.subtract, _ops.multiply
divide = true_divide = _ops.true_divide
floor_divide, remainder, mod = _ops.floor_divide, _ops.remainder, _ops.remainder
power, pow = _ops.power, _ops.power  # noqa: A001
maximum, minimum = _ops.maximum, _ops.minimum
equal, not_equal, less, less_equal = _ops.equal, _ops.not_equal, _ops.less, _ops.less_equal
greater, greater_equal = _ops.greater, _ops.greater_equal
bitwise_and, bitwise_or, bitwise_xor = _ops.bitwise_and, _ops.bitwise_or, _ops.bitwise_xor
left_shift, right_shift = _ops.left_shift, _ops.right_shift
negative, positive, absolute, abs = (_ops.negative, _ops.positive,  # noqa: A001
                                     _ops.absolute, _ops.absolute)
invert = bitwise_not = _ops.invert
where = _ops.where
clip = _ops.clip
matmul = _ops.matmul


def logical_and(x, y):
    return _ops.bitwise_and(_ops.astype(x, bool_), _ops.astype(y, bool_))


def logical_or(x, y):
    return _ops.bitwise_or(_ops.astype(x, bool_), _ops.astype(y, bool_))


def logical_not(x):
    return _ops.invert(_ops.astype(x, bool_))


def square(x):
    return _ops.multiply(x, x)


def sign(x):
    x = _ops._to_array_operand(x)
    return _lax.sign(x)


def floor(x):
    (x,) = _ops.promote_dtypes_inexact(x)
    return _lax.floor(x)


def ceil(x):
    (x,) = _ops.promote_dtypes_inexact(x)
    return _lax.ceil(x)


def round(x, decimals=0):  # noqa: A001
    (x,) = _ops.promote_dtypes_inexact(x)
    if decimals:
        f = 10.0 ** decimals
        return _ops.true_divide(_lax.round(_ops.multiply(x, f), 1), f)
    return _lax.round(x, 1)


def isfinite(x):
    (x,) = _ops.promote_dtypes_inexact(x)
    return _lax.is_finite(x)


def dot(a, b):
    """NumPy's dot: a product with scalars; otherwise a contraction of the last axis of `a`
    with the only axis of a 1-D `b` or the second-to-last axis of an N-D `b` (the result's
    shape is ``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]``)."""
    a, b = _ops.promote_dtypes(a, b)
    aa, ba = _ops.aval_of(a), _ops.aval_of(b)
    if aa.ndim == 0 or ba.ndim == 0:
        return _ops.multiply(a, b)
    b_axis = 0 if ba.ndim == 1 else ba.ndim - 2
    if aa.shape[-1] != ba.shape[b_axis]:
        raise TypeError(f"Incompatible shapes for dot: {aa.shape} and {ba.shape}: the last "
                        f"axis of the first ({aa.shape[-1]}) must match axis {b_axis} of the "
                        f"second ({ba.shape[b_axis]}).")
    out = _lax.dot_general(a, b, (((aa.ndim - 1,), (b_axis,)), ((), ())),
                           preferred_element_type=aa.dtype)
    return _lax.convert_element_type(out, aa.dtype, aa.weak_type and ba.weak_type)


# --- shapes and reductions --------------------------------------------------------------------

reshape = _ops.reshape
ravel = _ops.ravel
transpose = _ops.transpose
swapaxes = _ops.swapaxes
squeeze = _ops.squeeze
expand_dims = _ops.expand_dims
broadcast_to = _ops.broadcast_to
broadcast_shapes = _ops.broadcast_shapes
sum, prod, max, min = _ops.sum, _ops.prod, _ops.max, _ops.min  # noqa: A001
amax, amin = _ops.max, _ops.min
mean, all, any = _ops.mean, _ops.all, _ops.any  # noqa: A001
argmax, argmin = _ops.argmax, _ops.argmin


def shape(a):
    return _np.shape(a) if not hasattr(a, "shape") else tuple(a.shape)


def ndim(a):
    return len(shape(a))


def size(a):
    return int(_np.prod(shape(a)))


def concatenate(arrays, axis=0):
    arrays = [_ops._to_array_operand(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = _ops.promote_dtypes(*arrays)
    arrays = [a if _np.ndim(a) else _lax.reshape(a, (1,)) for a in arrays]
    axis = _ops.canonicalize_axis(axis, _ops.aval_of(arrays[0]).ndim)
    return _lax.concatenate(arrays, axis)


def stack(arrays, axis=0):
    arrays = [_ops._to_array_operand(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    nd = _ops.aval_of(arrays[0]).ndim + 1
    axis = _ops.canonicalize_axis(axis, nd)
    return concatenate([_lax.expand_dims(a, (axis,)) for a in _ops.promote_dtypes(*arrays)],
                       axis)


def var(x, axis=None, ddof=0, keepdims=False):
    m = mean(x, axis, keepdims=True)
    d = _ops.subtract(x, m)
    n = size(x) // size(m)
    return _ops.true_divide(sum(_ops.multiply(d, d), axis, keepdims=keepdims), n - ddof)


def std(x, axis=None, ddof=0, keepdims=False):
    return sqrt(var(x, axis, ddof, keepdims))


def astype(x, dtype):
    return _ops.astype(x, dtype)
