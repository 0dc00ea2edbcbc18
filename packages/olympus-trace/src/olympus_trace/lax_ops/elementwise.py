"""Wrappers of the elementwise primitives (`olympus_ir.prims.elementwise`): unary and binary
arithmetic, comparisons, conversions, selection and clamping.

Operands must already agree in dtype (no promotion here); Python scalars are accepted
and take the dtype of the other operands, as JAX's lax does.
"""

from __future__ import annotations

import builtins
import enum
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P

from .. import tree_util
from ..core import Tracer, bind, get_aval

__all__ = [
    "RoundingMethod", "AccuracyMode", "Tolerance", "neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p", "expm1",
    "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "square", "erf", "erfc", "erf_inv", "lgamma",
    "digamma", "abs", "real", "imag", "conj", "bitwise_not", "population_count", "clz",
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter",
    "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "complex", "eq", "ne", "lt", "le", "gt", "ge", "round",
    "integer_pow", "reciprocal", "mulhi", "convert_element_type", "bitcast_convert_type", "select_n", "select",
    "clamp", "stop_gradient", "reduce_precision", "copy",
]

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


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties (the values are the primitive's ``rounding_method``)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class AccuracyMode(enum.Enum):
    """An accuracy request for a transcendental function (``accuracy=``)."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """An accuracy request as tolerances: at most two of `atol`, `rtol`, `ulps`."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps


def _with_accuracy(prim):
    """A unary wrapper taking JAX's ``accuracy=``: recorded on the equation when given
    (the CPU backend has one implementation of each, so values do not change)."""

    def op(x, *, accuracy=None):
        if accuracy is None:
            return bind(prim, x)
        if not isinstance(accuracy, (AccuracyMode, Tolerance)):
            raise NotImplementedError(f"Accuracy {accuracy} not supported")
        return bind(prim, x, accuracy=accuracy)

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
exp = _with_accuracy(P.exp_p)
exp2 = _with_accuracy(P.exp2_p)
log = _with_accuracy(P.log_p)
log1p = _with_accuracy(P.log1p_p)
expm1 = _with_accuracy(P.expm1_p)
tanh = _with_accuracy(P.tanh_p)
logistic = _with_accuracy(P.logistic_p)
sin = _with_accuracy(P.sin_p)
cos = _with_accuracy(P.cos_p)
tan = _with_accuracy(P.tan_p)
asin = _unary(P.asin_p)
acos = _unary(P.acos_p)
atan = _unary(P.atan_p)
sinh = _unary(P.sinh_p)
cosh = _unary(P.cosh_p)
asinh = _unary(P.asinh_p)
acosh = _unary(P.acosh_p)
atanh = _unary(P.atanh_p)
sqrt = _with_accuracy(P.sqrt_p)
rsqrt = _with_accuracy(P.rsqrt_p)
cbrt = _with_accuracy(P.cbrt_p)
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
copy = _unary(P.copy_p)  # not in jax.lax: olympus.numpy's array(copy=True)

add = _binary(P.add_p)
sub = _binary(P.sub_p)
mulhi = _binary(P.mulhi_p)
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


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001
    return bind(P.round_p, x, rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    return bind(P.integer_pow_p, x, y=int(y))


def reciprocal(x):
    """``1 / x``, as JAX computes it: ``integer_pow(x, -1)``."""
    return integer_pow(x, -1)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    return bind(P.reduce_precision_p, operand, exponent_bits=int(exponent_bits),
                mantissa_bits=int(mantissa_bits))


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


def stop_gradient(x):
    """`x` (any pytree) with its floating-point leaves cut from differentiation; other
    leaves (integers, booleans, Python scalars) are returned as they are."""
    def stop(leaf):
        if isinstance(leaf, _PY_SCALARS) or not dtypes.is_inexact(get_aval(leaf).dtype):
            return leaf
        return bind(P.stop_gradient_p, leaf)

    return tree_util.tree_map(stop, x)
