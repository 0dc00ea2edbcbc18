"""Dtype queries and object inspection: result_type, promote_types, can_cast, issubdtype,
isdtype, finfo/iinfo, iscomplexobj/isrealobj, isscalar, ndim/shape/size."""

from __future__ import annotations

import builtins

import numpy as np

import olympus_runtime as rt
from olympus_ir import dtypes
from olympus_trace.core import Tracer

from ._util import aval_of, canonicalize_axis

dtype = np.dtype
finfo = dtypes.finfo
iinfo = dtypes.iinfo
issubdtype = dtypes.issubdtype


def result_type(*args):
    """The dtype that `args` (arrays, scalars, dtypes) promote to, with JAX's weak-type
    rules and 64-bit types canonicalized unless x64 is enabled."""
    return dtypes.result_type(*args)


def promote_types(a, b):
    """The dtype two dtypes promote to (JAX's promotion lattice)."""
    return dtypes.promote_types(a, b)


def _as_dtype(x):
    if isinstance(x, (Tracer, rt.Array, np.ndarray, np.generic)):
        return aval_of(x).dtype if not isinstance(x, (np.ndarray, np.generic)) else x.dtype
    return dtypes.dtype(x)


def can_cast(from_, to, casting="safe"):
    """Whether a value of dtype `from_` can be cast to `to` under the `casting` rule."""
    if isinstance(from_, (builtins.bool, int, float, complex)):
        raise TypeError("can_cast() does not support Python ints, floats, and complex "
                        "because the result used to depend on the value.")
    return builtins.bool(np.can_cast(_as_dtype(from_), _as_dtype(to), casting=casting))


_KINDS = {
    "bool": lambda d: d == dtypes.bool_,
    "signed integer": dtypes.is_signed_int,
    "unsigned integer": dtypes.is_unsigned_int,
    "integral": dtypes.is_integer,
    "real floating": dtypes.is_float,
    "complex floating": dtypes.is_complex,
    "numeric": lambda d: d != dtypes.bool_,
}


def isdtype(dtype, kind):
    """Whether `dtype` is of `kind`: a dtype, a kind name ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric') or a
    tuple of those."""
    d = dtypes.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized data type kind: {k!r}.")
            if _KINDS[k](d):
                return True
        else:
            try:
                if d == dtypes.dtype(k):
                    return True
            except TypeError:
                raise TypeError(f"Expected kind to be a dtype, string, or tuple; got {k!r}") \
                    from None
    return False


def iscomplexobj(x):
    """Whether `x` has a complex dtype (regardless of its values)."""
    if x is None:
        return False
    try:
        dt = x.dtype
    except AttributeError:
        dt = np.asarray(x).dtype
    return dtypes.issubdtype(np.dtype(dt), np.complexfloating)


def isrealobj(x):
    """Whether `x` does not have a complex dtype."""
    return not iscomplexobj(x)


def isscalar(element):
    """Whether `element` is a scalar: a Python or NumPy scalar, or (unlike NumPy) a 0-d
    array."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, rt.Array, Tracer)):
        return aval_of(element).ndim == 0 if not isinstance(element, np.ndarray) else \
            element.ndim == 0
    return False


def ndim(a):
    """The number of dimensions of `a`."""
    return len(shape(a))


def shape(a):
    """The shape of `a`."""
    if isinstance(a, (Tracer, rt.Array)):
        return tuple(aval_of(a).shape)
    return np.shape(a)


def size(a, axis=None):
    """The number of elements of `a` (along `axis`, if given)."""
    s = shape(a)
    if axis is None:
        return int(np.prod(s, dtype=np.int64))
    if isinstance(axis, (tuple, list)):
        return int(np.prod([s[canonicalize_axis(ax, len(s))] for ax in axis], dtype=np.int64))
    return s[canonicalize_axis(axis, len(s))]


def iterable(y):
    """Whether `y` can be iterated over."""
    return np.iterable(y)
