"""`lax.reduce` and `lax.reduce_window`, which take a Python combining function.

The `computation` is traced once on two scalars and must be a single add, mul, max, min,
and, or or xor of its two arguments (the common monoids); anything else raises
NotImplementedError. The reduction is then the matching primitive (through the wrappers
of `olympus_trace.lax_ops`), combined with `init_value` unless that is the monoid's
identity.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable

import numpy as np

from olympus_ir import dtypes
from olympus_ir.avals import ShapedArray
from olympus_trace import lax_ops as _lax
from olympus_trace.core import Tracer, get_aval
from olympus_trace.lax_ops import padtype_to_pads
from olympus_trace.staging import trace_to_olympuspr

__all__ = ["reduce", "reduce_window"]


def _shape(x):
    return get_aval(x).shape


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
    info = dtypes.iinfo(dt)
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

_WINDOW_REDUCERS = {"add": _lax.reduce_window_sum, "max": _lax.reduce_window_max,
                    "min": _lax.reduce_window_min}


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
    reducer = _WINDOW_REDUCERS.get(name)
    if reducer is None:
        raise NotImplementedError(f"reduce_window with a {name} computation is not supported "
                                  "(only add, max and min).")
    if _is_identity(init_value, name, dt):
        return reducer(operand, window_dimensions, window_strides, padding, base_dilation,
                       window_dilation)
    init = _as_scalar(init_value, dt)
    if name == "add":
        # Padding and dilation holes hold the init value: pad explicitly with it.
        cfg = [(lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation, strict=False)]
        x = _lax.pad(operand, init, cfg)
        out = reducer(x, window_dimensions, window_strides, ((0, 0),) * nd, (1,) * nd,
                      window_dilation)
        return _lax.add(out, init)
    return _combine(name, reducer(operand, window_dimensions, window_strides, padding,
                                  base_dilation, window_dilation), init)


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
    aval = get_aval(x)
    dt = aval.dtype
    nd = len(_shape(x))
    if np.ndim(init_values) != 0:
        raise ValueError(f"reduce found non-scalar initial value: [{np.shape(init_values)}]")
    given = tuple(int(d) for d in dimensions)
    if len(set(given)) != len(given):
        raise ValueError(f"duplicate value in 'axes' of reduction: {given}")
    if any(not 0 <= d < nd for d in given):
        # JAX's lax.reduce takes no negative axes either.
        raise ValueError(f"reduction axes {given} contains out-of-bounds indices for "
                         f"{dt.name}[{','.join(map(str, aval.shape))}].")
    dims = tuple(sorted(given))
    name = _monoid_of(computation, dt)
    if name in ("add", "mul") and dt == np.bool_:
        name = "or" if name == "add" else "and"
    out = _REDUCE_PRIMS[name](x, dims)
    if _is_identity(init_values, name, dt):
        return out
    return _combine(name, out, _as_scalar(init_values, dt))
