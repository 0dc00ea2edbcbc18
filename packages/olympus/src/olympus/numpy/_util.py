"""Helpers shared by the `olympus.numpy` modules: argument checking (JAX's strictness about
array-like arguments), dtype and axis canonicalization, concrete-value access."""

from __future__ import annotations

import builtins
import operator

import numpy as np

import olympus_runtime as rt
from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace.core import Tracer, get_aval
from olympus_trace.errors import ConcretizationTypeError

_PY_SCALARS = (builtins.bool, int, float, complex)
Array = rt.Array

aval_of = prom.aval_of
canonicalize_axis = prom.canonicalize_axis
axes_tuple = prom.axes_tuple
promote_dtypes = prom.promote_dtypes
promote_dtypes_inexact = prom.promote_dtypes_inexact


def is_arraylike(x) -> builtins.bool:
    """Arrays, tracers, NumPy arrays and scalars, Python scalars (not lists or tuples)."""
    if isinstance(x, (Tracer, rt.ArrayBase, np.ndarray, np.generic)) or type(x) in _PY_SCALARS:
        return True  # (ArrayBase: also typed key arrays)
    if isinstance(x, _PY_SCALARS):
        return True
    return hasattr(x, "__jax_array__") or hasattr(x, "__olympus_array__")


def check_for_prngkeys(name: str, *args) -> None:
    """JAX's check of a NumPy operation's operands: keys mixed with other dtypes are
    refused by name (same-dtype keys reach the primitives, whose rules refuse them)."""
    dts = [aval_of(a).dtype for a in args]
    if len(set(dts)) < 2 or not any(dtypes.is_key_dtype(dt) for dt in dts):
        return
    raise TypeError(f"{name} does not accept dtypes {', '.join(map(str, dts))}.")


def check_arraylike(name: str, *args) -> None:
    for pos, a in enumerate(args):
        if not is_arraylike(a):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} at "
                            f"position {pos}.")


def ensure_arraylike(name: str, *args):
    """Check `args` are array-like (JAX's rule: lists and tuples are rejected) and return
    them as operands (NumPy values with canonical dtypes)."""
    check_arraylike(name, *args)
    out = []
    for a in args:
        if hasattr(a, "__olympus_array__"):
            a = a.__olympus_array__()
        out.append(prom.to_operand(a))
    return out[0] if len(out) == 1 else out


def arr1(name, x):
    return ensure_arraylike(name, x)


def check_no_out(name: str, out) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to olympus.numpy.{name} is not "
                                  "supported.")


def canon_dtype(d):
    """A user dtype argument (None, a dtype-like, Python type or olympus scalar type) as the
    canonical NumPy dtype (64-bit types map to 32-bit ones unless x64 is enabled)."""
    if d is None:
        return None
    return dtypes.canonicalize_dtype(d)


def dtype_of(x) -> np.dtype:
    return aval_of(x).dtype


def shape_of(x) -> tuple:
    return tuple(aval_of(x).shape)


def ndim_of(x) -> int:
    return aval_of(x).ndim


def weak_of(x) -> builtins.bool:
    return aval_of(x).weak_type




def static_axis(axis):
    """`axis` as a jit-static (hashable) value, as JAX normalizes it before its jitted
    library functions: None, an int, or a tuple of ints."""
    if axis is None or isinstance(axis, tuple):
        return axis
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(ax) for ax in axis)


def static_int(x, what: str) -> int:
    """A Python int from `x`, or ConcretizationTypeError if `x` is traced."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        if v is None:
            raise ConcretizationTypeError(x, f"The error arose for {what}.")
        x = v
    return operator.index(x) if not isinstance(x, np.ndarray) else operator.index(x.item())


def concrete_value(x):
    """`x` as a NumPy value if it is concrete (not an abstract tracer), else None."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        return None if v is None else np.asarray(v)
    if isinstance(x, Array):
        return np.asarray(x)
    if isinstance(x, (list, tuple)):
        vals = [concrete_value(v) for v in x]
        if builtins.any(v is None for v in vals):
            return None
        return np.asarray(vals)
    return np.asarray(x)


def concrete_or_error(x, context: str):
    """`x` as a NumPy value, or ConcretizationTypeError naming `context`."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        if v is None:
            raise ConcretizationTypeError(x, context)
        return np.asarray(v)
    if isinstance(x, (list, tuple)):
        return np.asarray([concrete_or_error(v, context) for v in x])
    return np.asarray(x)


def is_tracer(x) -> builtins.bool:
    return isinstance(x, Tracer)


def full_like_aval(x, value, dtype=None, shape=None):
    """An array of `value` with x's (or the given) dtype and shape, weak if x is."""
    a = aval_of(x)
    dt = a.dtype if dtype is None else dtype
    shp = a.shape if shape is None else tuple(shape)
    weak = a.weak_type if dtype is None else False
    v = lax.convert_element_type(np.array(value, dt)[()] if not weak else value, dt, weak)
    return lax.broadcast_in_dim(v, shp, ()) if shp != () else v


def as_output(x):
    """A function result as OLYMPUS arrays: NumPy values and Python scalars (returned
    unchanged by no-op paths, e.g. ``floor`` of integers) are put on the device (Python
    scalars stay weakly typed); tuples and lists are converted elementwise."""
    t = type(x)
    if t is Array or isinstance(x, Tracer):
        return x
    if t is tuple or t is list:
        return t(as_output(v) for v in x)
    if isinstance(x, (np.ndarray, np.generic)):
        if not dtypes.is_supported(x.dtype):
            return x
        return rt.device_put(np.asarray(x, dtypes.canonicalize_dtype(x.dtype)))
    if t in _PY_SCALARS:
        return rt.device_put(x)
    return x


def returns_arrays(fn):
    """Wrap `fn` so that its results are OLYMPUS arrays (see `as_output`)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return as_output(fn(*args, **kwargs))

    return wrapper


def get_aval_safe(x):
    try:
        return get_aval(x)
    except TypeError:
        return None
