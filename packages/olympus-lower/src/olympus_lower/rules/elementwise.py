"""Elementwise primitives: unary and binary arithmetic, comparisons; the conversions
(convert_element_type, bitcast_convert_type), select_n and clamp.

Operands whose shape is not the result's (rank-0 ones, size-1 dimensions) are broadcast
with ``broadcast_in_dim``.
StableHLO ops are used where StableHLO has one; CHLO (``jaxlib.mlir.dialects.chlo``)
provides asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf, erfc, erf_inv, lgamma,
digamma, nextafter and mulhi, which XLA legalizes when compiling. The CHLO module is imported
by the first rule that uses it (it costs ~6 ms to import and most programs never need it).
"""

from __future__ import annotations

import math

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir import dtypes

from .. import mlir_utils as mu
from ._registry import register_lowering


def _out_shape(ctx):
    return ctx.avals_out[0].shape


def _bcast(ctx, args):
    return mu.broadcast_scalar_operands(args, ctx.avals_in, _out_shape(ctx))


def _nary(name, fn):
    """Register `name` as ``fn(*broadcast operands)``."""

    def rule(ctx, *args, **params):
        return [fn(*_bcast(ctx, args))]

    rule.__name__ = f"_{name}_lowering"
    register_lowering(name)(rule)
    return rule


def _chlo(op_name):
    """The CHLO op builder `op_name`, with jaxlib's chlo module imported on first use."""

    def build(*operands):
        from jaxlib.mlir.dialects import chlo

        return getattr(chlo, op_name)(*operands)

    build.__name__ = f"chlo_{op_name}"
    return build


# --- plain one-to-one ops ------------------------------------------------------------

for _name, _fn in {
    "neg": hlo.negate, "floor": hlo.floor, "ceil": hlo.ceil, "is_finite": hlo.is_finite,
    "exp": hlo.exponential, "log": hlo.log, "log1p": hlo.log_plus_one,
    "expm1": hlo.exponential_minus_one, "tanh": hlo.tanh, "logistic": hlo.logistic,
    "sin": hlo.sine, "cos": hlo.cosine, "tan": hlo.tan, "sqrt": hlo.sqrt, "rsqrt": hlo.rsqrt,
    "cbrt": hlo.cbrt, "real": hlo.real, "imag": hlo.imag, "not": hlo.not_,
    "population_count": hlo.popcnt, "clz": hlo.count_leading_zeros,
    **{name: _chlo(name) for name in (
        "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc",
        "erf_inv", "lgamma", "digamma")},
    "add": hlo.add, "add_any": hlo.add, "sub": hlo.subtract, "mul": hlo.multiply, "div": hlo.divide,
    "rem": hlo.remainder, "max": hlo.maximum, "min": hlo.minimum,
    "atan2": hlo.atan2, "nextafter": _chlo("next_after"), "mulhi": _chlo("mulhi"),
    "and": hlo.and_, "or": hlo.or_,
    "xor": hlo.xor, "shift_left": hlo.shift_left,
    "shift_right_arithmetic": hlo.shift_right_arithmetic,
    "shift_right_logical": hlo.shift_right_logical,
}.items():
    _nary(_name, _fn)


@register_lowering("pow")
def _pow_lowering(ctx, x, y):
    """An integer exponent is converted to the base's type (stablehlo.power takes one)."""
    x, y = _bcast(ctx, (x, y))
    xa, ya = ctx.avals_in
    if ya.dtype != xa.dtype:
        y = mu.convert(y, ya.dtype, xa.dtype, _out_shape(ctx))
    return [hlo.power(x, y)]


@register_lowering("complex")
def _complex_lowering(ctx, x, y):
    x, y = _bcast(ctx, (x, y))
    # complex(f16, f16) is complex64: widen the parts to the result's part type.
    part = dtypes.finfo(ctx.avals_out[0].dtype).dtype
    shape = _out_shape(ctx)
    x = mu.convert(x, ctx.avals_in[0].dtype, part, shape)
    y = mu.convert(y, ctx.avals_in[1].dtype, part, shape)
    return [hlo.complex(x, y)]


@register_lowering("sign")
def _sign_lowering(ctx, x):
    aval = ctx.avals_in[0]
    if dtypes.is_unsigned_int(aval.dtype):
        # stablehlo.sign has no unsigned form: 0 -> 0, anything else -> 1.
        is_zero = mu.compare(x, mu.zeros_like(aval), "EQ", aval.dtype)
        return [hlo.select(is_zero, x, mu.ones_like(aval))]
    return [hlo.sign(x)]


@register_lowering("abs")
def _abs_lowering(ctx, x):
    if dtypes.is_unsigned_int(ctx.avals_in[0].dtype):
        return [x]
    return [hlo.abs(x)]


@register_lowering("round")
def _round_lowering(ctx, x, *, rounding_method=0):
    rm = rounding_method
    name = getattr(rm, "name", "")
    to_even = ("EVEN" in str(name).upper()) if name else int(rm) == 1
    return [hlo.round_nearest_even(x) if to_even else hlo.round_nearest_afz(x)]


@register_lowering("exp2")
def _exp2_lowering(ctx, x, accuracy=None):
    aval = ctx.avals_in[0]
    return [hlo.exponential(hlo.multiply(mu.full_like(aval, math.log(2)), x))]


@register_lowering("square")
def _square_lowering(ctx, x):
    return [hlo.multiply(x, x)]


@register_lowering("conj")
def _conj_lowering(ctx, x, **params):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if dtypes.is_complex(aval_in.dtype):
        return [hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))]
    # conj of a real array is that array as a complex one.
    rdt = dtypes.finfo(aval_out.dtype).dtype
    xr = mu.convert(x, aval_in.dtype, rdt, aval_in.shape)
    return [hlo.complex(xr, mu.full(aval_in.shape, 0, rdt))]


def _identity(ctx, x, **params):
    return [x]


register_lowering("copy")(_identity)
register_lowering("stage")(_identity)
register_lowering("stop_gradient")(_identity)


@register_lowering("reduce_precision")
def _reduce_precision_lowering(ctx, x, *, exponent_bits, mantissa_bits):
    return [hlo.reduce_precision(x, int(exponent_bits), int(mantissa_bits))]


@register_lowering("integer_pow")
def _integer_pow_lowering(ctx, x, *, y):
    """x ** y for a Python int y, by repeated squaring (1 / x**-y for negative y)."""
    aval = ctx.avals_in[0]
    y = int(y)
    if y == 0:
        return [mu.ones_like(aval)]
    n = abs(y)
    acc = None
    while True:
        if n & 1:
            acc = x if acc is None else hlo.multiply(acc, x)
        n >>= 1
        if not n:
            break
        x = hlo.multiply(x, x)
    if y < 0:
        acc = hlo.divide(mu.ones_like(aval), acc)
    return [acc]


# --- comparisons ----------------------------------------------------------------------

_DIRECTIONS = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
#: the total-order comparisons: floats compare with comparison_type TOTALORDER
_TOTAL_ORDER_DIRECTIONS = {"eq_to": "EQ", "le_to": "LE", "lt_to": "LT"}


def _compare_rule(name, direction, total_order):
    def rule(ctx, x, y):
        x, y = _bcast(ctx, (x, y))
        dt = ctx.avals_in[0].dtype
        ctype = "TOTALORDER" if total_order and dtypes.is_inexact(dt) else None
        return [mu.compare(x, y, direction, dt, ctype)]

    rule.__name__ = f"_compare_{name}_lowering"
    return rule


for _name, _dir in _DIRECTIONS.items():
    register_lowering(_name)(_compare_rule(_name, _dir, False))
for _name, _dir in _TOTAL_ORDER_DIRECTIONS.items():
    register_lowering(_name)(_compare_rule(_name, _dir, True))

del _name, _fn, _dir


# --- conversions and selection ---------------------------------------------------------


@register_lowering("convert_element_type")
def _convert_element_type_lowering(ctx, x, *, new_dtype, weak_type=False, sharding=None):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    # complex -> real takes the real part; anything -> bool is `x != 0`. As JAX's, the
    # rule always ends in a `stablehlo.convert`, even to the same type (e.g. a weak
    # scalar made strong), so the lowered text is JAX's; XLA removes it.
    y = mu.convert(x, aval_in.dtype, aval_out.dtype, aval_in.shape)
    if y.type == x.type or np.dtype(aval_out.dtype) == np.bool_ or (
            dtypes.is_complex(aval_in.dtype) and not dtypes.is_complex(aval_out.dtype)
            and np.dtype(dtypes.finfo(aval_in.dtype).dtype) == np.dtype(aval_out.dtype)):
        y = hlo.convert(y.type, y)
    return [y]


@register_lowering("bitcast_convert_type")
def _bitcast_convert_type_lowering(ctx, x, *, new_dtype):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if aval_in.dtype == aval_out.dtype:
        return [x]
    return [hlo.bitcast_convert(mu.aval_to_ir_type(aval_out), x)]


@register_lowering("select_n")
def _select_n_lowering(ctx, which, *cases):
    """``cases[which]``: one ``stablehlo.select`` for a bool predicate, a balanced tree
    of selects on ``which < mid`` for an int32 one."""
    which_aval = ctx.avals_in[0]
    if len(cases) == 1:
        return [cases[0]]
    if which_aval.dtype == np.bool_:
        assert len(cases) == 2
        return [hlo.select(which, cases[1], cases[0])]

    def tree(offset, cs):
        if len(cs) == 1:
            return cs[0]
        mid = len(cs) // 2
        pivot = mu.full(which_aval.shape, offset + mid, which_aval.dtype)
        pred = mu.compare(which, pivot, "LT", which_aval.dtype)
        return hlo.select(pred, tree(offset, cs[:mid]), tree(offset + mid, cs[mid:]))

    return [tree(0, list(cases))]


@register_lowering("clamp")
def _clamp_lowering(ctx, lo, x, hi):
    return [hlo.clamp(lo, x, hi)]
