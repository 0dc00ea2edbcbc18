"""More of `olympus.lax`: convolutions, windowed and general reductions with a Python
combining function, top_k, multi-operand sort, cumulative reductions, fft and a few
elementwise operations.

`reduce` and `reduce_window` accept any Python `computation`; it is traced once on two
scalars and must be a single add, mul, max, min, and, or or xor of its two arguments (the
common monoids). Anything else raises NotImplementedError.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray
from olympus_ir.prims.convolution import ConvDimensionNumbers
from olympus_ir.prims.linalg_lapack import FftType
from olympus_trace import lax_ops as _lax
from olympus_trace.core import Tracer, bind, get_aval
from olympus_trace.lax_ops import (  # noqa: F401  (re-exported)
    bitcast_convert_type,
    clz,
    digamma,
    erf,
    erf_inv,
    erfc,
    integer_pow,
    lgamma,
    population_count,
    rsqrt,
    shift_left,
    shift_right_arithmetic,
    shift_right_logical,
)
from olympus_trace.staging import trace_to_olympuspr

__all__ = [
    "ConvDimensionNumbers", "conv_dimension_numbers", "padtype_to_pads",
    "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
    "reduce_window", "reduce", "top_k", "sort", "sort_key_val", "cumsum", "cumprod",
    "cummax", "cummin", "cumlogsumexp", "reduce_precision", "fft", "FftType",
    "bitcast_convert_type", "clz", "digamma", "erf", "erf_inv", "erfc", "integer_pow",
    "lgamma", "population_count", "rsqrt", "shift_left", "shift_right_arithmetic",
    "shift_right_logical",
]


def _shape(x):
    return get_aval(x).shape


# --- convolution ------------------------------------------------------------------------------


def _spec_from_string(spec: str, kind: str) -> tuple[int, ...]:
    """'NHWC' -> (batch, feature, spatial...) positions; kernel 'HWIO' -> (O, I, spatial)."""
    if kind == "rhs":
        first, second = "O", "I"
    else:
        first, second = "N", "C"
    if first not in spec or second not in spec:
        raise ValueError(f"conv dimension spec {spec!r} must contain {first!r} and "
                         f"{second!r}.")
    spatial = [i for i, c in enumerate(spec) if c not in (first, second)]
    return (spec.index(first), spec.index(second)) + tuple(spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """A `ConvDimensionNumbers` from None (NC..., OI..., NC...), a ConvDimensionNumbers, or
    three strings like ``('NHWC', 'HWIO', 'NHWC')``."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers must be a ConvDimensionNumbers or a "
                        f"tuple of three specs, got {dimension_numbers!r}.")
    lhs, rhs, out = dimension_numbers
    if all(isinstance(s, str) for s in (lhs, rhs, out)):
        for s in (lhs, rhs, out):
            if len(s) != nd:
                raise TypeError(f"convolution dimension spec {s!r} must have {nd} letters.")
        lhs_spec = _spec_from_string(lhs, "lhs")
        rhs_spec = _spec_from_string(rhs, "rhs")
        out_spec = _spec_from_string(out, "out")
        # Spatial dimensions pair up in the order the rhs spec lists them.
        rhs_sp = [c for c in rhs if c not in "OI"]
        lhs_spec = lhs_spec[:2] + tuple(lhs.index(c) for c in rhs_sp)
        out_spec = out_spec[:2] + tuple(out.index(c) for c in rhs_sp)
        return ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)
    return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (low, high) pairs for 'VALID', 'SAME' or 'SAME_LOWER' padding."""
    if not isinstance(padding, str):
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    kind = padding.upper()
    if kind == "VALID":
        return ((0, 0),) * len(in_shape)
    if kind in ("SAME", "SAME_LOWER"):
        out = []
        for n, k, s in zip(in_shape, window_shape, window_strides, strict=False):
            out_n = -(-n // s)
            total = builtins.max((out_n - 1) * s + k - n, 0)
            small, big = total // 2, total - total // 2
            out.append((small, big) if kind == "SAME" else (big, small))
        return tuple(out)
    raise ValueError(f"Unknown padding type: {padding!r}.")


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """XLA's general convolution (JAX's `lax.conv_general_dilated`)."""
    ls, rs = _shape(lhs), _shape(rhs)
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    nsp = len(ls) - 2
    lhs_dilation = (1,) * nsp if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    window_strides = tuple(int(s) for s in window_strides)
    if isinstance(padding, str):
        lhs_sp = [ls[d] for d in dn.lhs_spec[2:]]
        k = [(rs[d] - 1) * r + 1 for d, r in zip(dn.rhs_spec[2:], rhs_dilation, strict=False)]
        padding = padtype_to_pads(lhs_sp, k, window_strides, padding)
    else:
        padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    return bind(P.conv_general_dilated_p, lhs, rhs, window_strides=window_strides,
                padding=padding, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                dimension_numbers=dn, feature_group_count=int(feature_group_count),
                batch_group_count=int(batch_group_count), precision=precision,
                preferred_element_type=pet)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution in NCHW / OIHW layout, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """A transposed ("deconvolution") convolution: the lhs is dilated by `strides`.

    `padding` is 'SAME', 'VALID' or explicit pairs (applied to the dilated input, as in
    JAX). With `transpose_kernel`, the kernel is flipped spatially and its I/O swapped
    (the gradient of a forward convolution)."""
    ls, rs = _shape(lhs), _shape(rhs)
    nd = len(ls)
    if dimension_numbers is None:
        dimension_numbers = {3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                             5: ("NHWDC", "HWDIO", "NHWDC")}.get(nd)
        if dimension_numbers is None:
            raise ValueError("conv_transpose: give dimension_numbers for this rank.")
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    k_sdims = dn.rhs_spec[2:]
    k_shape = [rs[d] for d in k_sdims]
    rhs_dilation = (1,) * (nd - 2) if rhs_dilation is None else tuple(rhs_dilation)
    eff_k = [(k - 1) * r + 1 for k, r in zip(k_shape, rhs_dilation, strict=False)]
    if isinstance(padding, str):
        pads = []
        for k, s in zip(eff_k, strides, strict=False):
            kind = padding.upper()
            if kind == "SAME":
                pad_len = k + s - 2
                lo = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
            elif kind == "VALID":
                pad_len = k + s - 2 + builtins.max(k - s, 0)
                lo = k - 1
            else:
                raise ValueError(f"Unknown padding type: {padding!r}.")
            pads.append((lo, pad_len - lo))
        padding = tuple(pads)
    if transpose_kernel:
        rhs = _lax.rev(rhs, k_sdims)
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = _lax.transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), padding, lhs_dilation=strides,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# --- recognizing a Python combining function --------------------------------------------------

_MONOIDS = {
    "add": (lambda dt: np.zeros((), dt)),
    "mul": (lambda dt: np.ones((), dt)),
    "max": (lambda dt: _extreme(dt, low=True)),
    "min": (lambda dt: _extreme(dt, low=False)),
    "and": (lambda dt: np.array(True) if dt == np.bool_ else np.array(-1).astype(dt)),
    "or": (lambda dt: np.zeros((), dt)),
    "xor": (lambda dt: np.zeros((), dt)),
}


def _extreme(dt, low):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.array(not low)
    if dtypes.is_inexact(dt):
        return np.array(-np.inf if low else np.inf, dt)
    info = np.iinfo(dt)
    return np.array(info.min if low else info.max, dt)


_KNOWN = {operator.add: "add", operator.mul: "mul", _lax.add: "add", _lax.mul: "mul",
          _lax.max: "max", _lax.min: "min", builtins.max: "max", builtins.min: "min"}


def _monoid_of(computation: Callable, dt) -> str:
    """The name of the monoid `computation` computes on two scalars of dtype `dt`."""
    try:
        name = _KNOWN.get(computation)
    except TypeError:
        name = None
    if name is not None:
        return name
    aval = ShapedArray((), np.dtype(dt))
    try:
        closed, _ = trace_to_olympuspr(lambda a, b: [computation(a, b)], [aval, aval])
    except Exception as e:  # noqa: BLE001
        raise NotImplementedError(
            f"reduction computation {computation!r} could not be traced on scalars: {e}"
        ) from e
    j = closed.olympuspr
    if len(j.eqns) == 1 and not closed.consts:
        e = j.eqns[0]
        if (e.primitive.name in _MONOIDS and len(e.invars) == 2 and not e.params
                and set(map(id, e.invars)) == set(map(id, j.invars))
                and j.outvars[0] is e.outvars[0]):
            return e.primitive.name
    raise NotImplementedError(
        "olympus.lax reductions support computations that are a single add, mul, max, min, "
        f"and, or or xor of their two arguments; got {computation!r}:\n{j}")


def _combine(name, a, b):
    return {"add": _lax.add, "mul": _lax.mul, "max": _lax.max, "min": _lax.min,
            "and": _lax.bitwise_and, "or": _lax.bitwise_or, "xor": _lax.bitwise_xor}[name](a, b)


def _is_identity(init, name, dt) -> bool:
    if isinstance(init, Tracer):
        return False
    try:
        v = np.asarray(init)
    except Exception:  # noqa: BLE001
        return False
    if v.shape != ():
        return False
    ident = _MONOIDS[name](np.dtype(dt))
    with np.errstate(invalid="ignore"):
        return bool(np.asarray(v.astype(dt) == ident)) and (
            np.signbit(v.astype(dt)) == np.signbit(ident) if dtypes.is_float(dt) else True)


def _as_scalar(init, dt):
    if isinstance(init, Tracer) or hasattr(init, "aval"):
        return _lax.convert_element_type(init, dt)
    return np.asarray(init, dt)


# --- reduce_window ----------------------------------------------------------------------------

_WINDOW_PRIMS = {"add": P.reduce_window_sum_p, "max": P.reduce_window_max_p,
                 "min": P.reduce_window_min_p}


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None):
    """Reduce each window of `operand` with `computation` (add, max or min)."""
    if isinstance(operand, (list, tuple)):
        if len(operand) != 1:
            raise NotImplementedError("reduce_window over several operands is not supported.")
        return [reduce_window(operand[0], init_value[0], computation, window_dimensions,
                              window_strides, padding, base_dilation, window_dilation)]
    shape = _shape(operand)
    dt = get_aval(operand).dtype
    nd = len(shape)
    window_dimensions = tuple(int(w) for w in window_dimensions)
    window_strides = tuple(int(s) for s in window_strides)
    base_dilation = (1,) * nd if base_dilation is None else tuple(int(d) for d in base_dilation)
    window_dilation = ((1,) * nd if window_dilation is None
                       else tuple(int(d) for d in window_dilation))
    if isinstance(padding, str):
        padding = padtype_to_pads(shape, window_dimensions, window_strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    name = _monoid_of(computation, dt)
    prim = _WINDOW_PRIMS.get(name)
    if prim is None:
        raise NotImplementedError(f"reduce_window with a {name} computation is not supported "
                                  "(only add, max and min).")
    params = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  padding=padding, base_dilation=base_dilation, window_dilation=window_dilation)
    if _is_identity(init_value, name, dt):
        return bind(prim, operand, **params)
    init = _as_scalar(init_value, dt)
    if name == "add":
        # Padding and dilation holes hold the init value: pad explicitly with it.
        cfg = [(lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation, strict=False)]
        x = _lax.pad(operand, init, cfg)
        out = bind(prim, x, **dict(params, padding=((0, 0),) * nd, base_dilation=(1,) * nd))
        return _lax.add(out, init)
    return _combine(name, bind(prim, operand, **params), init)


# --- reduce -----------------------------------------------------------------------------------

_REDUCE_PRIMS = {"add": _lax.reduce_sum, "mul": _lax.reduce_prod, "max": _lax.reduce_max,
                 "min": _lax.reduce_min, "and": _lax.reduce_and, "or": _lax.reduce_or,
                 "xor": _lax.reduce_xor}


def reduce(operands, init_values, computation, dimensions):
    """Reduce `operands` over `dimensions` with the monoid `computation`."""
    if isinstance(operands, (list, tuple)):
        if len(operands) != 1:
            raise NotImplementedError("reduce over several operands is not supported.")
        return [reduce(operands[0], init_values[0], computation, dimensions)]
    x = operands
    dt = get_aval(x).dtype
    nd = len(_shape(x))
    dims = tuple(sorted(int(d) % nd if nd else int(d) for d in dimensions))
    name = _monoid_of(computation, dt)
    if name in ("add", "mul") and dt == np.bool_:
        name = "or" if name == "add" else "and"
    out = _REDUCE_PRIMS[name](x, dims)
    if _is_identity(init_values, name, dt):
        return out
    return _combine(name, out, _as_scalar(init_values, dt))


# --- sorting and top_k ------------------------------------------------------------------------


def top_k(operand, k: int):
    """The `k` largest entries along the last axis (descending) and their int32 indices."""
    k = int(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    return list(bind(P.top_k_p, operand, k=k))


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort one array, or several together (lexicographically by the first `num_keys`)."""
    single = not isinstance(operand, (list, tuple))
    ops = [operand] if single else list(operand)
    nd = len(_shape(ops[0]))
    if nd == 0:
        raise TypeError("sort requires operands of rank >= 1")
    dimension = int(dimension) % nd
    outs = bind(P.sort_p, *ops, dimension=dimension, is_stable=bool(is_stable),
                num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    k, v = sort((keys, values), dimension, is_stable, 1)
    return k, v


# --- cumulative reductions --------------------------------------------------------------------


def _cumulative(prim):
    def f(operand, axis: int = 0, reverse: bool = False):
        nd = len(_shape(operand))
        return bind(prim, operand, axis=int(axis) % builtins.max(nd, 1), reverse=bool(reverse))

    f.__name__ = prim.name
    return f


cumsum = _cumulative(P.cumsum_p)
cumprod = _cumulative(P.cumprod_p)
cummax = _cumulative(P.cummax_p)
cummin = _cumulative(P.cummin_p)
cumlogsumexp = _cumulative(P.cumlogsumexp_p)


# --- misc ---------------------------------------------------------------------------------------


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    return bind(P.reduce_precision_p, operand, exponent_bits=int(exponent_bits),
                mantissa_bits=int(mantissa_bits))


def fft(x, fft_type: Any, fft_lengths: Sequence[int]):
    """``lax.fft``: `fft_type` is an `FftType` or its name ('FFT', 'IFFT', 'RFFT',
    'IRFFT')."""
    if isinstance(fft_type, str):
        fft_type = FftType[fft_type.upper()]
    return bind(P.fft_p, x, fft_type=FftType(fft_type),
                fft_lengths=tuple(int(n) for n in fft_lengths))
