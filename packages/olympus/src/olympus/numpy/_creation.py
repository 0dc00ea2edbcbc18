"""Array creation: array/asarray, zeros/ones/full/empty (and *_like), arange, linspace,
logspace, geomspace, eye, identity, tri/tril/triu, diag/diagflat, meshgrid, indices,
fromfunction, frombuffer, mgrid/ogrid, copy and astype.

Python scalars make weakly typed arrays, lists of Python numbers make arrays of the default
(32-bit unless x64 is enabled) integer or float type, as in JAX."""

from __future__ import annotations

import builtins
import functools
import operator
import warnings

import numpy as np

import olympus_runtime as rt
from olympus_ir import dtypes, shape_poly
from olympus_ir.shape_poly import DimExpr
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace import staged_constants
from olympus_trace.core import Tracer, get_aval
from olympus_trace.errors import ConcretizationTypeError

from .._src.library_jit import jitted as _jitted
from . import _indexing
from . import _ufuncs as uf
from ._linalg_basic import diagonal
from ._shape import broadcast_to, canonicalize_shape, ravel, stack
from ._util import (
    Array,
    aval_of,
    canon_dtype,
    check_arraylike,
    ensure_arraylike,
    static_int,
)

_PY = (builtins.bool, int, float, complex)


def _leaves(x):
    for v in x:
        if isinstance(v, (list, tuple)):
            yield from _leaves(v)
        else:
            yield v


def _put(v, device=None):
    """`v` on a device; a scalar made while staging is a literal of the trace instead (as
    JAX lifts it: ``x * jnp.float32(3)`` prints ``mul a 3.0:f32[]``)."""
    if device is None:
        if np.ndim(v) == 0:
            lit = staged_constants.stage_scalar(v, get_aval(v))
            if lit is not None:
                return lit
        return rt.device_put(v)
    return rt.device_put(v, device)


def _python_default(arr: np.ndarray) -> np.dtype:
    kind = arr.dtype.kind
    if kind == "b":
        return dtypes.bool_
    if kind in "iu":
        dt = dtypes.default_int()
        if arr.size:
            info = dtypes.iinfo(dt)
            lo, hi = int(arr.min()), int(arr.max())
            if lo < info.min or hi > info.max:
                bad = hi if hi > info.max else lo
                raise OverflowError(f"Python int {bad} too large to convert to {dt.name}")
        return dt
    if kind == "f":
        return dtypes.default_float()
    if kind == "c":
        return dtypes.default_complex()
    raise TypeError(f"Cannot convert a value of dtype {arr.dtype} to an array.")


def _py_to_numpy(obj, dt):
    """Python scalars (or sequences of them) as a NumPy array of the requested dtype,
    converted by NumPy directly: a Python int out of the dtype's range raises OverflowError,
    a float inf or nan to an integer type OverflowError / ValueError (as in JAX), instead of
    wrapping through int64."""
    return np.asarray(obj, dtype=dt)


def _py_base(v):
    for t in _PY:
        if isinstance(v, t):
            return t
    return type(v)


def _stack_nested(obj, dt):
    """A (nested) list holding traced values, as JAX stages it: each element converted and
    given a leading axis in turn, then joined by `concatenate`s of at most 16 operands."""
    if isinstance(obj, (list, tuple)):
        if not obj:
            return _put(np.zeros((0,), dt))
        parts = []
        for v in obj:
            x = _stack_nested(v, dt)
            shape = aval_of(x).shape
            parts.append(lax.broadcast_in_dim(x, (1, *shape), tuple(range(1, len(shape) + 1))))
        while len(parts) > 16:
            parts = [lax.concatenate(parts[i:i + 16], 0) for i in range(0, len(parts), 16)]
        return lax.concatenate(parts, 0)
    if not isinstance(obj, (Tracer, Array)):
        return np.asarray(obj, dt)  # a constant element stays a literal, as in JAX
    return asarray(obj, dt)


def array(object, dtype=None, *args, copy=True, order="K", ndmin=0, device=None):  # noqa: A002
    """An array from an array, scalar or (nested) sequence; `dtype` canonicalized.

    `copy`, `order` and `ndmin` given positionally (after `dtype`) still work, with
    JAX's DeprecationWarning."""
    if args:
        if len(args) > 3:
            raise TypeError(f"array() takes at most 5 positional arguments but "
                            f"{len(args) + 2} were given")
        for i, name in enumerate(("copy", "order", "ndmin")):
            if i < len(args) and (copy, order, ndmin)[i] != (True, "K", 0)[i]:
                raise TypeError(f"array() got multiple values for argument '{name}'")
        copy, order, ndmin = (list(args) + [copy, order, ndmin][len(args):])[:3]
        warnings.warn("Passing the copy, order, and ndmin arguments to jnp.array "
                      "positionally is deprecated. Use keyword arguments instead.",
                      DeprecationWarning, stacklevel=2)
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"olympus.numpy.array: order={order!r} is not supported.")
    dt = canon_dtype(dtype)
    ndmin = operator.index(ndmin)
    if object is None:  # JAX 0.10.2's ValueError
        raise ValueError("None is not a valid value for jnp.array")
    if hasattr(object, "__olympus_array__"):
        object = object.__olympus_array__()  # noqa: A001
    if isinstance(object, (Tracer, Array)):
        out = object
        if dt is not None:
            if aval_of(out).dtype != dt or aval_of(out).weak_type:
                if dtypes.is_complex(aval_of(out).dtype) and not dtypes.is_complex(dt):
                    # As JAX's: the real part, with NumPy's warning (even for bool).
                    warnings.warn("Casting complex values to real discards the imaginary "
                                  "part", np.exceptions.ComplexWarning,
                                  stacklevel=_caller_stacklevel())
                    out = lax.convert_element_type(out, dt, False)
                else:
                    out = _astype(out, dt)
        if copy and isinstance(out, Array) and out is object:
            out = lax.copy(out)
    elif type(object) in _PY:
        out = _put(object) if dt is None else _put(_py_to_numpy(object, dt))
    elif isinstance(object, (np.ndarray, np.generic)):
        arr = np.asarray(object)
        if dt is None:
            if not dtypes.is_supported(arr.dtype):
                raise TypeError(f"Cannot convert an array of dtype {arr.dtype} to an "
                                "OLYMPUS array: unsupported element type.")
            dt = dtypes.canonicalize_dtype(arr.dtype)
        out = _put(arr.astype(dt, copy=False), device)
        device = None
    elif isinstance(object, (list, tuple)):
        leaves = list(_leaves(object))
        if builtins.any(isinstance(v, (Tracer, Array)) for v in leaves):
            if dt is None:
                dt = dtypes.result_type(*leaves) if leaves else dtypes.default_float()
            out = _stack_nested(object, dt)
        else:
            try:
                arr = np.asarray(object)
            except ValueError as e:
                raise ValueError(f"olympus.numpy.array: {e}") from None
            if not dtypes.is_supported(arr.dtype):
                raise TypeError(f"Cannot convert {type(object).__name__} {object!r} to an "
                                "array: unsupported element types.")
            if dt is None:
                if builtins.all(type(v) in _PY for v in leaves):
                    dt = _python_default(arr)
                else:
                    for v in leaves:
                        if not (type(v) in _PY or isinstance(v, (np.ndarray, np.generic))):
                            raise TypeError(f"Cannot convert element {v!r} to an array.")
                    dt = dtypes.result_type(*leaves)
                out = _put(arr.astype(dt), device)
            else:
                out = _put(_py_to_numpy(object, dt), device)
            device = None
    elif type(object) is DimExpr:  # a symbolic dimension as a value (JAX's rule)
        out = lax.copy(lax.dim_as_value(object))
        if dt is not None:
            out = lax.convert_element_type(out, dt, False)
    elif isinstance(object, (builtins.bool, int, float, complex)):
        # Subclasses of Python scalars (e.g. IntEnum members): as their base type.
        out = _put(_py_base(object)(object)) if dt is None else \
            _put(_py_to_numpy(_py_base(object)(object), dt))
    elif hasattr(object, "__array__"):
        from ..random._prng import PRNGKeyArray

        if isinstance(object, PRNGKeyArray):  # typed keys stay keys (not NumPy data)
            if dt is not None:
                raise TypeError(f"Cannot convert a PRNG key array to dtype {dt}; use "
                                "olympus.random.key_data to get its raw data.")
            return object
        return array(np.asarray(object), dtype, copy, order, ndmin, device=device)
    else:
        raise TypeError(f"Unexpected input type for array: {type(object)}")
    if ndmin > aval_of(out).ndim:
        out = lax.reshape(out, (1,) * (ndmin - aval_of(out).ndim) + aval_of(out).shape)
    if device is not None:
        out = rt.device_put(out, device)
    return out


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """`a` as an array (no copy for arrays of the requested dtype)."""
    return array(a, dtype=dtype, copy=builtins.bool(copy), order=order, device=device)


def copy(a, order=None, subok=False):
    """A copy of `a`."""
    check_arraylike("copy", a)
    return array(a, copy=True, order=order)


def astype(x, dtype, /, *, copy=False, device=None):
    """`x` converted to `dtype`."""
    x = ensure_arraylike("astype", x)
    dt = canon_dtype(dtype)
    if dtypes.is_complex(aval_of(x).dtype) and dt != dtypes.bool_ and not dtypes.is_complex(dt):
        warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. "
                      "Please first use jnp.real or jnp.imag to take the "
                      "real/imaginary component of your input.", DeprecationWarning,
                      stacklevel=_caller_stacklevel())
    out = _astype(x, dt)
    return out if device is None else rt.device_put(out, device)


def _caller_stacklevel() -> int:
    """The `stacklevel` that attributes a warning raised in the caller of this function's
    caller to the first frame outside olympus.numpy (`jnp.astype` and `x.astype` reach
    it through different wrappers)."""
    import sys

    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
            "olympus.numpy"):
        frame, level = frame.f_back, level + 1
    return level


def _astype(x, dt):
    if dtypes.is_complex(aval_of(x).dtype) and dt == dtypes.bool_:
        # convert_element_type(complex, bool) does not mean "nonzero"; compare instead.
        out = lax.ne(x, lax.convert_element_type(0, aval_of(x).dtype))
    else:
        out = lax.convert_element_type(x, dt, False)
    return out


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """A 1-D array from the bytes of a buffer."""
    return asarray(np.frombuffer(buffer, dtype=dtypes.dtype(dtype), count=count,
                                 offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """A 1-D array from numbers in a string separated by `sep`."""
    return asarray(np.fromstring(string, dtype=dtypes.dtype(dtype), count=count, sep=sep))


def fromiter(*args, **kwargs):
    """Not supported: an iterator's values are not array data (build a list and use
    olympus.numpy.array instead)."""
    raise NotImplementedError("olympus.numpy.fromiter() is not implemented because it may be "
                              "non-pure and thus unsafe for use with jit and other "
                              "transformations. Consider using olympus.numpy.array(list(...)) "
                              "instead.")


def fromfile(*args, **kwargs):
    """Not supported: reading files is not a pure operation (use numpy.fromfile and
    olympus.numpy.asarray)."""
    raise NotImplementedError("olympus.numpy.fromfile() is not implemented because it may be "
                              "non-pure and thus unsafe for use with jit and other "
                              "transformations. Consider using "
                              "olympus.numpy.asarray(numpy.fromfile(...)) instead.")


def load(file, *args, **kwargs):
    """numpy.load, with arrays converted to OLYMPUS arrays."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray) and out.dtype.kind in "biufc":
        return asarray(out)
    return out


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The repr of an array's values (computed by NumPy on a host copy)."""
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The str of an array's values (computed by NumPy on a host copy)."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def array2string(a, *args, **kwargs):
    """numpy.array2string of a host copy of `a`."""
    return np.array2string(np.asarray(a), *args, **kwargs)


# --- filled arrays --------------------------------------------------------------------------------


def _fill(shape, value, dt, weak):
    v = lax.convert_element_type(value, dt, weak)
    if shape == ():
        if isinstance(v, (Tracer, Array)):
            return v
        return _put(v if type(v) in _PY else np.asarray(v, dt))
    return lax.broadcast_in_dim(v, shape, ())


def full(shape, fill_value, dtype=None, *, device=None):
    """An array of `shape` filled with `fill_value` (broadcast if it is an array)."""
    shape = canonicalize_shape(shape)
    if isinstance(fill_value, (list, tuple)) or np.ndim(fill_value) if not isinstance(
            fill_value, (Tracer, Array)) else aval_of(fill_value).ndim:
        return broadcast_to(asarray(fill_value, dtype=dtype), shape)
    fill_value = ensure_arraylike("full", fill_value)
    a = aval_of(fill_value)
    weak = dtype is None and a.weak_type
    dt = canon_dtype(dtype) if dtype is not None else a.dtype
    out = _fill(shape, fill_value, dt, weak)
    return out if device is None else rt.device_put(out, device)


def zeros(shape, dtype=None, *, device=None):
    """An array of zeros (the default float dtype unless `dtype` is given)."""
    return full(shape, 0, canon_dtype(dtype) or dtypes.default_float(), device=device)


def ones(shape, dtype=None, *, device=None):
    """An array of ones (the default float dtype unless `dtype` is given)."""
    return full(shape, 1, canon_dtype(dtype) or dtypes.default_float(), device=device)


def empty(shape, dtype=None, *, device=None):
    """An array of `shape` (filled with zeros: OLYMPUS arrays are never uninitialized)."""
    return zeros(shape, dtype, device=device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    """An array like `a` (its shape and dtype, weak type included) filled with
    `fill_value`."""
    a = ensure_arraylike("full_like", a)
    av = aval_of(a)
    shp = av.shape if shape is None else canonicalize_shape(shape)
    if np.ndim(fill_value) if not isinstance(fill_value, (Tracer, Array)) else aval_of(
            fill_value).ndim:
        return broadcast_to(asarray(fill_value, dtype=dtype or av.dtype), shp)
    fill_value = ensure_arraylike("full_like", fill_value)
    weak = dtype is None and av.weak_type
    dt = av.dtype if dtype is None else canon_dtype(dtype)
    out = _fill(tuple(shp), fill_value, dt, weak)
    return out if device is None else rt.device_put(out, device)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    """Zeros with the shape and dtype of `a`."""
    check_arraylike("zeros_like", a)
    return full_like(a, 0, dtype, shape, device=device)


def ones_like(a, dtype=None, shape=None, *, device=None):
    """Ones with the shape and dtype of `a`."""
    check_arraylike("ones_like", a)
    return full_like(a, 1, dtype, shape, device=device)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """Zeros with the shape and dtype of `prototype`."""
    check_arraylike("empty_like", prototype)
    return full_like(prototype, 0, dtype, shape, device=device)


# --- ranges ------------------------------------------------------------------------------------


def _concrete_arg(v, fname, argname):
    if isinstance(v, Tracer):
        c = v.to_concrete_value()
        if c is None:
            raise ConcretizationTypeError(
                v, f"It arose in the olympus.numpy.{fname} argument '{argname}'.")
        return np.asarray(c)[()]
    if isinstance(v, Array):
        return np.asarray(v)[()]
    return v


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values in ``[start, stop)`` (start defaults to 0). Bounds must be
    concrete."""
    start = _concrete_arg(start, "arange", "start")
    stop = _concrete_arg(stop, "arange", "stop")
    step = _concrete_arg(step, "arange", "step")
    if builtins.any(type(v) is DimExpr for v in (start, stop, step)):
        return _arange_symbolic(start, stop, step, dtype)
    if dtype is None:
        vals = [v for v in (start, stop, step) if v is not None]
        dt = dtypes.result_type(*vals)
    else:
        dt = canon_dtype(dtype)
    if stop is None and step is None:
        if dtypes.is_complex(dt) or dtypes.is_complex(np.result_type(start)):
            return _put(np.arange(start, dtype=dt), device)
        n = builtins.max(int(np.ceil(start)), 0)
        out = lax.iota(dt, n)
        return out if device is None else rt.device_put(out, device)
    return _put(np.arange(start, stop, step, dtype=dt), device)


def _arange_symbolic(start, stop, step, dtype):
    """`arange` with a symbolic bound: ``start + step * iota(size)``, the size a dimension
    expression (the step's sign must be decidable), as JAX does."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    for v in (start, stop, step):
        if not shape_poly.is_dim(v):
            raise ValueError(
                "In arange with non-constant arguments all of start, stop, and step must be "
                f"either dimension expressions or integers: start={start}, stop={stop}, "
                f"step={step}")
    try:
        if step == 0:
            raise ValueError("arange has step == 0")
        positive = step > 0
    except shape_poly.InconclusiveDimensionOperation as e:
        raise shape_poly.InconclusiveDimensionOperation(
            f"In arange with non-constant arguments the step ({step}) must be resolved "
            f"statically if it is > 0 or < 0.\nDetails: {e}") from None
    gap = step if positive else -step
    distance = (stop - start) if positive else (start - stop)
    size = shape_poly.max_dim(0, distance + gap - 1) // gap
    dt = canon_dtype(dtype) if dtype is not None else dtypes.default_int()
    return uf.add(_dim_scalar(start, dt), uf.multiply(_dim_scalar(step, dt), lax.iota(dt, size)))


def _dim_scalar(d, dt):
    """A dimension as a scalar of `dt`: a literal for an int, else its run-time value."""
    if type(d) is DimExpr:
        return lax.convert_element_type(lax.dim_as_value(d), dt, False)
    return np.array(d, dt)[()]


def _is_concrete_bound(v):
    return not isinstance(v, (Tracer, Array))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """`num` evenly spaced samples from `start` to `stop` (array bounds give one line per
    element, along `axis`). Traced bounds are supported; `num` is static."""
    num = static_int(num, "the 'num' argument of olympus.numpy.linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    if dtype is None:
        dt = dtypes.result_type(start, stop)
        dt = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    else:
        dt = canon_dtype(dtype)
    comp = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    if _is_concrete_bound(start) and _is_concrete_bound(stop):
        wide = np.complex128 if dtypes.is_complex(comp) else np.float64
        out, step = np.linspace(np.asarray(start, wide), np.asarray(stop, wide), num,
                                endpoint=endpoint, retstep=True, axis=axis)
        if dtypes.is_integer(dt):
            out = np.floor(out)
        res = _put(out.astype(dt), device)
        return (res, _put(np.asarray(step).astype(comp))) if retstep else res
    start = astype(ensure_arraylike("linspace", start), comp)
    stop = astype(ensure_arraylike("linspace", stop), comp)
    bshape = prom.broadcast_shapes(aval_of(start).shape, aval_of(stop).shape)
    start, stop = prom.broadcast_to(start, bshape), prom.broadcast_to(stop, bshape)
    nd = len(bshape) + 1
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
    exp_shape = bshape[:ax] + (1,) + bshape[ax:]
    kept = tuple(i for i in range(nd) if i != ax)
    s1 = lax.broadcast_in_dim(start, exp_shape, kept)
    e1 = lax.broadcast_in_dim(stop, exp_shape, kept)
    div = num - 1 if endpoint else num
    if num > 1:
        delta = uf.true_divide(uf.subtract(stop, start), div)
        real = dtypes.finfo(comp).dtype if dtypes.is_complex(comp) else comp
        tshape = [1] * nd
        tshape[ax] = div
        t = lax.div(lax.convert_element_type(lax.iota(dtypes.int32, div), real),
                    np.array(div, real)[()])
        t = lax.convert_element_type(lax.reshape(t, tuple(tshape)), comp)
        one = np.array(1, comp)[()]
        out = uf.add(uf.multiply(s1, uf.subtract(one, t)), uf.multiply(e1, t))
        if endpoint:
            out = lax.concatenate([out, e1], ax)
    elif num == 1:
        delta = prom.broadcast_to(np.array(np.nan, comp), bshape) if endpoint else \
            uf.subtract(stop, start)
        out = s1
    else:
        delta = prom.broadcast_to(np.array(np.nan, comp), bshape)
        out = lax.broadcast_in_dim(np.array(0, comp)[()], bshape[:ax] + (0,) + bshape[ax:],
                                   ())
    if dtypes.is_integer(dt):
        out = lax.floor(out)
    out = lax.convert_element_type(out, dt)
    if device is not None:
        out = rt.device_put(out, device)
    return (out, delta) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``."""
    num = static_int(num, "the 'num' argument of olympus.numpy.logspace")
    check_arraylike("logspace", start, stop)
    if dtype is None:
        dt = dtypes.result_type(start, stop)
        dt = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    else:
        dt = canon_dtype(dtype)
    if builtins.all(_is_concrete_bound(v) for v in (start, stop, base)):
        out = np.logspace(start, stop, num, endpoint=endpoint, base=base, axis=axis)
        if dtypes.is_integer(dt):
            out = np.floor(out)
        return _put(out.astype(dt))
    from ._ufuncs import power

    comp = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    lin = linspace(start, stop, num, endpoint=endpoint, dtype=comp, axis=axis)
    out = power(astype(ensure_arraylike("logspace", base), comp), lin)
    if dtypes.is_integer(dt):
        out = lax.floor(out)
    return lax.convert_element_type(out, dt)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples evenly spaced on a log scale between `start` and `stop` (same sign)."""
    num = static_int(num, "the 'num' argument of olympus.numpy.geomspace")
    check_arraylike("geomspace", start, stop)
    if dtype is None:
        dt = dtypes.result_type(start, stop)
        dt = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    else:
        dt = canon_dtype(dtype)
    if _is_concrete_bound(start) and _is_concrete_bound(stop):
        if np.any(np.asarray(start) == 0) or np.any(np.asarray(stop) == 0):
            raise ValueError("Geometric sequence cannot include zero")
        out = np.geomspace(start, stop, num, endpoint=endpoint, axis=axis)
        if dtypes.is_integer(dt):
            out = np.floor(out)
        return _put(out.astype(dt))
    from ._ufuncs import absolute, log10, sign

    comp = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    start = astype(ensure_arraylike("geomspace", start), comp)
    stop = astype(ensure_arraylike("geomspace", stop), comp)
    sgn = sign(start)
    out = logspace(log10(absolute(start)), log10(absolute(stop)), num, endpoint=endpoint,
                   base=10.0, dtype=comp, axis=axis)
    nd = aval_of(out).ndim
    ax = axis + nd if axis < 0 else axis
    sgn = lax.broadcast_in_dim(sgn, aval_of(out).shape, tuple(
        i for i in range(nd) if i != ax)) if nd > 1 else sgn
    out = uf.multiply(out, sgn)
    if dtypes.is_integer(dt):
        out = lax.floor(out)
    return lax.convert_element_type(out, dt)


# --- matrices -------------------------------------------------------------------------------------


def _static_nm(N, M, name):
    N = static_int(N, f"the N argument of olympus.numpy.{name}")
    M = N if M is None else static_int(M, f"the M argument of olympus.numpy.{name}")
    if N < 0 or M < 0:
        raise ValueError(f"negative dimensions are not allowed, got {(N, M)}")
    return N, M


def _tri_mask(N, M, k):
    """Boolean (N, M) mask of ``j <= i + k``; k may be traced."""
    if isinstance(k, Tracer):
        idt = dtypes.default_int()
        i = lax.broadcasted_iota(idt, (N, M), 0)
        j = lax.broadcasted_iota(idt, (N, M), 1)
        return lax.le(j, lax.add(i, lax.convert_element_type(k, idt)))
    return np.tri(N, M, operator.index(k), dtype=bool)


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """A 2-D array with ones on the k-th diagonal."""
    N, M = _static_nm(N, M, "eye")
    dt = canon_dtype(dtype) or dtypes.default_float()
    if isinstance(k, Tracer):
        idt = dtypes.default_int()
        i = lax.broadcasted_iota(idt, (N, M), 0)
        j = lax.broadcasted_iota(idt, (N, M), 1)
        return lax.convert_element_type(
            lax.eq(lax.sub(j, i), lax.convert_element_type(k, idt)), dt)
    return _put(np.eye(N, M, operator.index(k), dtype=dt), device)


def identity(n, dtype=None):
    """The n x n identity matrix."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal."""
    N, M = _static_nm(N, M, "tri")
    dt = canon_dtype(dtype) or dtypes.default_float()
    mask = _tri_mask(N, M, k)
    if isinstance(mask, np.ndarray):
        return _put(mask.astype(dt))
    return lax.convert_element_type(mask, dt)


def _tri_staged(N, M, k):
    """The boolean (N, M) mask ``i + k >= j`` as equations, as JAX's `tri` stages it."""
    i = lax.add(lax.broadcasted_iota(np.int32, (N, M), 0), np.int32(operator.index(k)))
    return lax.ge(i, lax.broadcasted_iota(np.int32, (N, M), 1))


def _masked_triangle(name, m, k, keep_lower):
    m = ensure_arraylike(name, m)
    shape = aval_of(m).shape
    if len(shape) < 2:
        raise ValueError(f"Argument to olympus.numpy.{name} must be at least 2D")
    nd = len(shape)
    mask = _tri_staged(shape[-2], shape[-1], k)
    if nd > 2:
        mask = lax.broadcast_in_dim(mask, shape, (nd - 2, nd - 1))
    zeros = zeros_like(m)
    return lax.select(mask, m, zeros) if keep_lower else lax.select(mask, zeros, m)


@_jitted(static_argnames=("k",))
def tril(m, k=0):
    """The lower triangle (entries above the k-th diagonal zeroed) of the last two axes."""
    return _masked_triangle("tril", m, k, True)


@_jitted(static_argnames=("k",))
def triu(m, k=0):
    """The upper triangle (entries below the k-th diagonal zeroed) of the last two axes."""
    return _masked_triangle("triu", m, operator.index(k) - 1, False)


def diag(v, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with a 1-D `v` on its k-th
    diagonal."""
    v = ensure_arraylike("diag", v)
    k = static_int(k, "the k argument of olympus.numpy.diag")
    shape = aval_of(v).shape
    if len(shape) == 1:
        n = shape[0] + builtins.abs(k)
        dt = aval_of(v).dtype
        vp = lax.pad(v, np.array(0, dt)[()], [(builtins.max(k, 0), builtins.max(-k, 0), 0)])
        # Entry (i, i + k) holds v[i] (v[i + k] for k < 0): the padded v along columns.
        vb = lax.broadcast_in_dim(vp, (n, n), (1,))
        mask = np.eye(n, n, k, dtype=bool)
        return _indexing.where(mask, vb, np.array(0, dt)[()])
    if len(shape) == 2:
        return diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


def diagflat(v, k=0):
    """A 2-D array with the flattened `v` on its k-th diagonal."""
    v = ensure_arraylike("diagflat", v)
    return diag(ravel(v), k)


# --- grids ----------------------------------------------------------------------------------------


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors ('xy' or 'ij' indexing)."""
    args = [ensure_arraylike("meshgrid", x) for x in xi]
    for a in args:
        if aval_of(a).ndim != 1:
            raise ValueError("Arguments to olympus.numpy.meshgrid must be 1D, got shape "
                             f"{aval_of(a).shape}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    n = len(args)
    pos = list(range(n))
    if indexing == "xy" and n >= 2:
        pos[0], pos[1] = 1, 0
    shape = [0] * n
    for a, p in zip(args, pos):
        shape[p] = aval_of(a).shape[0]
    outs = []
    for a, p in zip(args, pos):
        if sparse:
            s = [1] * n
            s[p] = shape[p]
            outs.append(lax.reshape(a, tuple(s)))
        else:
            outs.append(lax.broadcast_in_dim(a, tuple(shape), (p,)))
    return outs


def indices(dimensions, dtype=None, sparse=False):
    """Index grids for an array of shape `dimensions`."""
    dims = canonicalize_shape(dimensions)
    dt = canon_dtype(dtype) or dtypes.default_int()
    n = len(dims)
    outs = []
    for i, d in enumerate(dims):
        if sparse:
            s = [1] * n
            s[i] = d
            outs.append(lax.reshape(lax.iota(dt, d), tuple(s)))
        else:
            outs.append(lax.broadcasted_iota(dt, dims, i))
    if sparse:
        return tuple(outs)
    if not outs:
        return _put(np.zeros((0,), dt))
    return stack(outs)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(i, j, ...)`` evaluated at every index of `shape` (vectorized with
    vmap)."""
    from olympus._src.api import vmap

    shape = canonicalize_shape(shape)
    f = functools.partial(function, **kwargs) if kwargs else function
    n = len(shape)
    for i in range(n):
        in_axes = [0 if j == i else None for j in range(n)]
        f = vmap(f, in_axes=tuple(in_axes[::-1]))
    dt = canon_dtype(dtype)
    return f(*(lax.iota(dt, s) for s in shape))


class _Grid:
    def __init__(self, np_grid, name):
        self._g = np_grid
        self._name = name

    def __getitem__(self, key):
        res = self._g[key]
        if isinstance(res, (list, tuple)):
            return [asarray(r) for r in res]
        return asarray(res)

    def __repr__(self) -> str:
        return f"<olympus.numpy.{self._name}>"


mgrid = _Grid(np.mgrid, "mgrid")
ogrid = _Grid(np.ogrid, "ogrid")
