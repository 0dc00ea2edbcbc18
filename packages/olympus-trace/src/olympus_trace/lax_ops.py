"""Thin, strict wrappers over `bind`: the `lax` layer.

Operands must already agree in dtype (no promotion here); Python scalars are accepted
and take the dtype of the other operands, as JAX's lax does.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P

from .core import Tracer, bind, get_aval

_PY_SCALARS = (bool, int, float, builtins.complex)


def _scalar_like(x: Any, dt: np.dtype, weak: bool):
    """A Python scalar `x` as a constant of dtype `dt` (kept as a Python scalar if weak).
    An int converted to a narrower integer type wraps around, as XLA's conversion (and so
    JAX: ``uint8_array + 300``) does."""
    if weak:
        if dtypes.is_bool(dt):
            return bool(x)
        if dtypes.is_complex(dt):
            return builtins.complex(x)
        if dtypes.is_inexact(dt):
            return float(x)
        return int(x)
    if type(x) is int and dt.kind in "iu":
        return np.array(x).astype(dt)[()]
    return np.array(x, dtype=dt)[()]


def _lax_args(*args):
    """Give Python scalars the dtype of the array operands (weak stays weak)."""
    arrays = [a for a in args if not isinstance(a, _PY_SCALARS)]
    if len(arrays) == len(args):
        return args
    if not arrays:
        return args
    dt = get_aval(arrays[0]).dtype
    weak = all(get_aval(a).weak_type for a in arrays)
    return tuple(
        _scalar_like(a, dt, weak) if isinstance(a, _PY_SCALARS) else a
        for a in args
    )


def _unary(prim):
    def op(x, **params):
        return bind(prim, x, **params)

    op.__name__ = prim.name
    return op


def _binary(prim):
    def op(x, y):
        return bind(prim, *_lax_args(x, y))

    op.__name__ = prim.name
    return op


neg = _unary(P.neg_p)
sign = _unary(P.sign_p)
floor = _unary(P.floor_p)
ceil = _unary(P.ceil_p)
is_finite = _unary(P.is_finite_p)
exp = _unary(P.exp_p)
exp2 = _unary(P.exp2_p)
log = _unary(P.log_p)
log1p = _unary(P.log1p_p)
expm1 = _unary(P.expm1_p)
tanh = _unary(P.tanh_p)
logistic = _unary(P.logistic_p)
sin = _unary(P.sin_p)
cos = _unary(P.cos_p)
tan = _unary(P.tan_p)
asin = _unary(P.asin_p)
acos = _unary(P.acos_p)
atan = _unary(P.atan_p)
sinh = _unary(P.sinh_p)
cosh = _unary(P.cosh_p)
asinh = _unary(P.asinh_p)
acosh = _unary(P.acosh_p)
atanh = _unary(P.atanh_p)
sqrt = _unary(P.sqrt_p)
rsqrt = _unary(P.rsqrt_p)
cbrt = _unary(P.cbrt_p)
square = _unary(P.square_p)
erf = _unary(P.erf_p)
erfc = _unary(P.erfc_p)
erf_inv = _unary(P.erf_inv_p)
lgamma = _unary(P.lgamma_p)
digamma = _unary(P.digamma_p)
abs = _unary(P.abs_p)  # noqa: A001
real = _unary(P.real_p)
imag = _unary(P.imag_p)
conj = _unary(P.conj_p)
bitwise_not = _unary(P.not_p)
population_count = _unary(P.population_count_p)
clz = _unary(P.clz_p)
stop_gradient_p_bind = _unary(P.stop_gradient_p)

add = _binary(P.add_p)
sub = _binary(P.sub_p)
mul = _binary(P.mul_p)
div = _binary(P.div_p)
rem = _binary(P.rem_p)
pow = _binary(P.pow_p)  # noqa: A001
max = _binary(P.max_p)  # noqa: A001
min = _binary(P.min_p)  # noqa: A001
atan2 = _binary(P.atan2_p)
nextafter = _binary(P.nextafter_p)
bitwise_and = _binary(P.and_p)
bitwise_or = _binary(P.or_p)
bitwise_xor = _binary(P.xor_p)
shift_left = _binary(P.shift_left_p)
shift_right_arithmetic = _binary(P.shift_right_arithmetic_p)
shift_right_logical = _binary(P.shift_right_logical_p)
complex = _binary(P.complex_p)  # noqa: A001
eq = _binary(P.eq_p)
ne = _binary(P.ne_p)
lt = _binary(P.lt_p)
le = _binary(P.le_p)
gt = _binary(P.gt_p)
ge = _binary(P.ge_p)


def round(x, rounding_method=0):  # noqa: A001
    return bind(P.round_p, x, rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    return bind(P.integer_pow_p, x, y=int(y))


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Convert `x` to `new_dtype`; a no-op (no equation) when nothing changes."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if isinstance(x, _PY_SCALARS) and not isinstance(x, Tracer):
        return _scalar_like(x, new_dtype, weak_type)
    aval = get_aval(x)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    if not isinstance(x, Tracer) and isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x, dtype=new_dtype)
    return bind(P.convert_element_type_p, x, new_dtype=new_dtype, weak_type=bool(weak_type))


def bitcast_convert_type(x, new_dtype):
    return bind(P.bitcast_convert_type_p, x, new_dtype=dtypes.dtype(new_dtype))


def select_n(which, *cases):
    return bind(P.select_n_p, which, *cases)


def select(pred, on_true, on_false):
    """`on_true` where `pred` else `on_false` (lax.select's argument order)."""
    return bind(P.select_n_p, pred, on_false, on_true)


def clamp(lo, x, hi):
    lo, x, hi = _lax_args(lo, x, hi)
    return bind(P.clamp_p, lo, x, hi)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    shape = tuple(int(d) for d in shape)
    if get_aval(x).shape == shape and tuple(broadcast_dimensions) == tuple(range(len(shape))):
        return x
    return bind(P.broadcast_in_dim_p, x, shape=shape,
                broadcast_dimensions=tuple(broadcast_dimensions), sharding=None)


def broadcast(x, sizes):
    """Add leading dimensions `sizes` to `x`."""
    aval = get_aval(x)
    sizes = tuple(sizes)
    return broadcast_in_dim(x, sizes + aval.shape,
                            tuple(range(len(sizes), len(sizes) + aval.ndim)))


def reshape(x, new_sizes, dimensions=None):
    new_sizes = tuple(int(d) for d in new_sizes)
    aval = get_aval(x)
    if aval.shape == new_sizes and dimensions is None:
        return x
    return bind(P.reshape_p, x, new_sizes=new_sizes,
                dimensions=None if dimensions is None else tuple(dimensions), sharding=None)


def transpose(x, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return bind(P.transpose_p, x, permutation=permutation)


def squeeze(x, dimensions):
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return bind(P.squeeze_p, x, dimensions=dimensions)


def expand_dims(x, dimensions):
    return bind(P.expand_dims_p, x, dimensions=tuple(int(d) for d in dimensions))


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return bind(P.concatenate_p, *operands, dimension=int(dimension))


def pad(x, padding_value, padding_config):
    return bind(P.pad_p, x, padding_value,
                padding_config=tuple(tuple(int(v) for v in c) for c in padding_config))


def rev(x, dimensions):
    return bind(P.rev_p, x, dimensions=tuple(int(d) for d in dimensions))


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001
    return bind(P.slice_p, x, start_indices=tuple(int(i) for i in start_indices),
                limit_indices=tuple(int(i) for i in limit_indices),
                strides=None if strides is None else tuple(int(s) for s in strides))


def iota(dtype, size: int):
    return bind(P.iota_p, dtype=dtypes.canonicalize_dtype(dtype), shape=(int(size),),
                dimension=0, sharding=None)


def broadcasted_iota(dtype, shape, dimension: int):
    return bind(P.iota_p, dtype=dtypes.canonicalize_dtype(dtype),
                shape=tuple(int(s) for s in shape), dimension=int(dimension), sharding=None)


def _reduce(prim):
    def op(x, axes):
        axes = tuple(sorted(int(a) for a in axes))
        return bind(prim, x, axes=axes, out_sharding=None)

    op.__name__ = prim.name
    return op


reduce_sum = _reduce(P.reduce_sum_p)
reduce_prod = _reduce(P.reduce_prod_p)
reduce_max = _reduce(P.reduce_max_p)
reduce_min = _reduce(P.reduce_min_p)
reduce_and = _reduce(P.reduce_and_p)
reduce_or = _reduce(P.reduce_or_p)
reduce_xor = _reduce(P.reduce_xor_p)


def argmax(x, axis: int, index_dtype):
    return bind(P.argmax_p, x, axes=(int(axis),),
                index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(x, axis: int, index_dtype):
    return bind(P.argmin_p, x, axes=(int(axis),),
                index_dtype=dtypes.canonicalize_dtype(index_dtype))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
          (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    return bind(P.dot_general_p, lhs, rhs, dimension_numbers=dn, precision=precision,
                preferred_element_type=pet, out_sharding=None)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    la, ra = get_aval(lhs), get_aval(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(
            f"lax.dot requires 1-D or 2-D operands, got shapes {la.shape} and {ra.shape}."
        )
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def dynamic_slice(x, start_indices, slice_sizes):
    return bind(P.dynamic_slice_p, x, *start_indices,
                slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(x, update, start_indices):
    return bind(P.dynamic_update_slice_p, x, update, *start_indices)


def stop_gradient(x):
    if isinstance(x, _PY_SCALARS):
        return x
    return bind(P.stop_gradient_p, x)
