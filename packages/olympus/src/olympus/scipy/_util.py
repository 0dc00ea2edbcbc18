"""Argument handling shared by the `olympus.scipy` modules, written on the public
`olympus.numpy` API: JAX's array-like check and its dtype promotion to an inexact type
(integers and bools become the default float; Python scalars stay weakly typed)."""

from __future__ import annotations

import operator

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus_trace.core import Tracer

_PY_SCALARS = (bool, int, float, complex)

# JAX's map from a non-inexact dtype to the inexact dtype it promotes to.
_TO_INEXACT = {np.dtype(k): np.dtype(v) for k, v in [
    ("bool", "float32"), ("uint8", "float32"), ("int8", "float32"),
    ("uint16", "float32"), ("int16", "float32"), ("uint32", "float32"),
    ("int32", "float32"), ("uint64", "float64"), ("int64", "float64")]}


def is_arraylike(x) -> bool:
    """Arrays, tracers, NumPy arrays and scalars, Python scalars; not lists or tuples."""
    if isinstance(x, (olympus.Array, np.ndarray, np.generic)) or isinstance(x, _PY_SCALARS):
        return True
    if isinstance(x, (list, tuple, dict, str, bytes)) or x is None:
        return False
    if hasattr(x, "__jax_array__") or hasattr(x, "__olympus_array__"):
        return True
    return hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "weak_type")


def check_arraylike(name: str, *args) -> None:
    for pos, a in enumerate(args):
        if not is_arraylike(a):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} at "
                            f"position {pos}.")


def _is_weak(x) -> bool:
    if isinstance(x, _PY_SCALARS) and not isinstance(x, bool):
        return True
    return bool(getattr(x, "weak_type", False))


def with_weak_type(out, weak: bool):
    """`out` with its weak type set to `weak`: where JAX's result is weakly typed exactly
    when its (promoted) arguments all are (its special functions that are primitives), or
    always strong (functions whose constants JAX makes with an explicit dtype)."""
    from olympus_trace import lax_ops

    if bool(getattr(out, "weak_type", False)) == weak:
        return out
    return lax_ops.convert_element_type(out, out.dtype, weak)


def all_weak(*args) -> bool:
    """Whether every argument is weakly typed (a Python number or a weak array)."""
    return all(_is_weak(a) for a in args)


def _convert(a, dtype, weak):
    a = jnp.asarray(a)
    if a.dtype == dtype and _is_weak(a) == weak:
        return a
    if weak:
        # A weakly typed result is the default type of its kind, which Python-scalar
        # arithmetic on a weak operand produces while keeping it weak.
        return a + (0j if np.issubdtype(dtype, np.complexfloating) else 0.0)
    return a.astype(dtype)


def promote_dtypes_inexact(*args):
    """`args` as arrays of one inexact dtype (JAX's ``promote_dtypes_inexact``)."""
    arrs = [jnp.asarray(a) for a in args]
    dtype = np.dtype(jnp.result_type(*arrs))
    dtype = _TO_INEXACT.get(dtype, dtype)
    if dtype == np.float64 and not x64_enabled():
        dtype = np.dtype(np.float32)
    weak = all(_is_weak(a) for a in args)
    return [_convert(a, dtype, weak) for a in arrs]


def promote_dtypes_complex(*args):
    """`args` as arrays of one complex dtype."""
    arrs = promote_dtypes_inexact(*args)
    dtype = arrs[0].dtype if arrs else np.dtype(np.float32)
    if not np.issubdtype(dtype, np.complexfloating):
        cdt = np.complex128 if dtype == np.float64 else np.complex64
        weak = all(_is_weak(a) for a in arrs)
        arrs = [_convert(a, np.dtype(cdt), weak) for a in arrs]
    return arrs


def promote_args_inexact(name: str, *args):
    """Check `args` are array-like, then promote them to one inexact dtype."""
    check_arraylike(name, *args)
    return promote_dtypes_inexact(*args)


def promote_dtypes(*args):
    """`args` as arrays of their common dtype (no promotion to inexact)."""
    arrs = [jnp.asarray(a) for a in args]
    dtype = np.dtype(jnp.result_type(*arrs))
    weak = all(_is_weak(a) for a in args)
    return [_convert(a, dtype, weak) if (a.dtype != dtype or not weak) else a for a in arrs]


def is_complex(x) -> bool:
    return np.issubdtype(jnp.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype,
                         np.complexfloating)


def x64_enabled() -> bool:
    return bool(olympus.config.read("olympus_enable_x64"))


def default_float():
    return np.dtype(np.float64) if x64_enabled() else np.dtype(np.float32)


def default_complex():
    return np.dtype(np.complex128) if x64_enabled() else np.dtype(np.complex64)


def canonicalize_axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def is_traced(x) -> bool:
    """Whether `x` is a tracer (an abstract value inside jit, vmap or grad). Not an
    ``olympus.Array`` check: tracers are instances of ``olympus.Array``, as in JAX."""
    return isinstance(x, Tracer)


def concrete_int(x, what: str) -> int:
    """`x` as a Python int; a traced value is JAX's ConcretizationTypeError naming `what`."""
    if is_traced(x):
        raise olympus.errors.ConcretizationTypeError(x, what)
    return operator.index(x) if not hasattr(x, "shape") else int(np.asarray(x))
