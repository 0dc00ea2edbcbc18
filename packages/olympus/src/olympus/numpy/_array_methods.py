"""The array methods, operators and properties: one table, installed on both tracers and
the runtime's `Array`, so a traced value and a concrete one behave the same.

Every entry is an ``olympus.numpy`` function (NumPy semantics live only there). Installed
on a tracer, an operator calls it directly; installed on `Array`, a NumPy-semantics
operator runs by the eager rule (`olympus._src.eager`: one cached jit per signature).
Binary operators return `NotImplemented` for operands JAX does not accept (lists,
strings, arbitrary objects), so Python tries the other operand and then raises its
``TypeError``.
"""

from __future__ import annotations

import numpy as np

import olympus_runtime as rt
from olympus_ir import dtypes
from olympus_ir.prims.refs import AbstractRef
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace.ad import tangents_typed_as_primals
from olympus_trace.core import Tracer, concrete_or_error

from .._src import eager
from . import (
    _array_api,
    _creation,
    _indexing,
    _linalg_basic,
    _products,
    _reductions,
    _shape,
    _sorting,
)
from . import _ufuncs as uf

__all__ = ["install"]


def accepts(x) -> bool:
    """The operand types a binary operator takes (JAX's ``_accepted_binop_types``)."""
    return isinstance(x, (int, float, complex, np.generic, np.ndarray, Tracer, rt.Array))


def _divmod(x1, x2):
    return uf.divmod._func(x1, x2)


#: name -> (NumPy-semantics function of (self, other), eager with Python scalars traced?)
BINARY = {
    "add": (uf.add._func, True),
    "sub": (uf.subtract._func, True),
    "mul": (uf.multiply._func, True),
    "truediv": (uf.true_divide._func, True),
    "floordiv": (uf.floor_divide._func, True),
    "mod": (uf.remainder._func, True),
    "divmod": (_divmod, True),
    # A concrete integer exponent selects exact repeated multiplication: never traced.
    "pow": (uf.power._func, False),
    "matmul": (_products.matmul, True),
    "and": (uf.bitwise_and._func, True),
    "or": (uf.bitwise_or._func, True),
    "xor": (uf.bitwise_xor._func, True),
    "lshift": (uf.left_shift._func, True),
    "rshift": (uf.right_shift._func, True),
}
COMPARISONS = {
    "lt": uf.less._func, "le": uf.less_equal._func, "gt": uf.greater._func,
    "ge": uf.greater_equal._func, "eq": uf.equal._func, "ne": uf.not_equal._func,
}
UNARY = {
    "neg": uf.negative._func, "pos": uf.positive._func, "abs": uf.absolute._func,
    "invert": uf.invert._func,
}


def _reshape(self, *args, order="C"):
    shape = args[0] if len(args) == 1 else args
    return _shape.reshape(self, shape, order=order)


def _transpose(self, *args):
    if not args or (len(args) == 1 and args[0] is None):
        axes = None
    elif len(args) == 1 and isinstance(args[0], (tuple, list)):
        axes = args[0]
    else:
        axes = args
    return _shape.transpose(self, axes)


def _matrix_transpose(self):
    return _shape.matrix_transpose(self)


def _round(self, decimals=0, out=None):
    return uf.round(self, decimals, out=out)


def _operator_round(self, ndigits=None):
    return uf.round(self, 0 if ndigits is None else ndigits)


def _nonzero(self, *, fill_value=None, size=None):
    return _indexing.nonzero(self, size=size, fill_value=fill_value)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    return _indexing.compress(condition, self, axis, size=size, fill_value=fill_value,
                              out=out)


def _choose(self, choices, out=None, mode="raise"):
    return _indexing.choose(self, choices, out=out, mode=mode)


def _clip(self, min=None, max=None):  # noqa: A002
    return uf.clip(self, min, max)


def _dot(self, b, *, precision=None, preferred_element_type=None):
    return _products.dot(self, b, precision=precision,
                         preferred_element_type=preferred_element_type)


def _conjugate(self):
    return uf.conjugate(self)


def _flatten(self, order="C"):
    return _shape.ravel(self, order)


def _copy(self):
    return _creation.copy(self)


def _view(self, dtype=None, type=None):  # noqa: A002
    """The same bytes read as `dtype` (the last axis rescaled when the sizes differ)."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    src = prom.aval_of(self).dtype
    dt = dtypes.dtype(dtype)
    x = self
    if src == dtypes.bool_:
        x, src = lax.convert_element_type(x, dtypes.uint8), np.dtype(np.uint8)
    out_dt = np.dtype(np.uint8) if dt == dtypes.bool_ else dt
    shape = prom.aval_of(x).shape
    if out_dt.itemsize != src.itemsize:
        if not shape:
            raise ValueError("view() of a 0-d array needs a dtype of the same size")
        if out_dt.itemsize > src.itemsize:
            ratio = out_dt.itemsize // src.itemsize
            if shape[-1] % ratio:
                raise ValueError("When changing to a larger dtype, its size must be a divisor "
                                 "of the total size in bytes of the last axis of the array.")
            x = lax.reshape(x, shape[:-1] + (shape[-1] // ratio, ratio))
            out = lax.bitcast_convert_type(x, out_dt)
        else:
            out = lax.bitcast_convert_type(x, out_dt)
            out = lax.reshape(out, shape[:-1] + (shape[-1] * (src.itemsize // out_dt.itemsize),))
    else:
        out = lax.bitcast_convert_type(x, out_dt)
    return lax.convert_element_type(out, dtypes.bool_) if dt == dtypes.bool_ else out


def _byteswap(self):
    """The elements with their bytes reversed, same dtype (JAX 0.10.2's method): complex
    values swap their real and imaginary parts separately; one-byte dtypes are copied."""
    dt = prom.aval_of(self).dtype
    if dtypes.is_complex(dt):
        return lax.complex(_byteswap(uf.real(self)), _byteswap(uf.imag(self)))
    if dt.itemsize == 1:
        return _copy(self)
    as_bytes = lax.bitcast_convert_type(self, np.dtype(np.uint8))
    return lax.bitcast_convert_type(lax.rev(as_bytes, (prom.aval_of(self).ndim,)), dt)


def _to_device(self, device, *, stream=None):
    if stream is not None:
        raise NotImplementedError("stream is not supported by to_device")
    return rt.device_put(self, device)


def _item(self, *args):
    return np.asarray(concrete_or_error(
        None, self, "This occurred in the item() method of olympus.Array")).item(*args)


def _tolist(self):
    shape = f"{self.aval.dtype.name}[{','.join(map(str, self.aval.shape))}]"
    return np.asarray(concrete_or_error(
        None, self, f"The tolist() method was called on traced array with shape {shape}.")
    ).tolist()


def _flat(self):
    raise NotImplementedError("OLYMPUS Arrays do not implement the arr.flat property: "
                              "consider arr.flatten() instead.")


def _contains(self, other):
    return _reductions.any(uf.equal(self, other))


#: name -> function of (self, *args, **kwargs): the methods (NumPy's names).
METHODS = {
    "all": _reductions.all, "any": _reductions.any, "argmax": _reductions.argmax,
    "argmin": _reductions.argmin, "argpartition": _sorting.argpartition,
    "argsort": _sorting.argsort, "astype": _creation.astype, "byteswap": _byteswap,
    "choose": _choose,
    "clip": _clip, "compress": _compress, "conj": _conjugate, "conjugate": _conjugate,
    "copy": _copy, "cumprod": _reductions.cumprod, "cumsum": _reductions.cumsum,
    "diagonal": _linalg_basic.diagonal, "dot": _dot, "flatten": _flatten,
    "max": _reductions.max, "mean": _reductions.mean, "min": _reductions.min,
    "nonzero": _nonzero, "prod": _reductions.prod, "ptp": _reductions.ptp,
    "ravel": _flatten, "repeat": _shape.repeat, "reshape": _reshape, "round": _round,
    "searchsorted": _sorting.searchsorted, "sort": _sorting.sort,
    "squeeze": _shape.squeeze, "std": _reductions.std, "sum": _reductions.sum,
    "swapaxes": _shape.swapaxes, "take": _indexing.take, "to_device": _to_device,
    "trace": _linalg_basic.trace, "transpose": _transpose, "var": _reductions.var, "view": _view,
    "__getitem__": _indexing.getitem, "__round__": _operator_round,
    "__contains__": _contains, "__array_namespace__": _array_api.__array_namespace__,
}
#: name -> getter: the properties.
PROPERTIES = {
    "T": lambda self: _shape.transpose(self), "mT": _matrix_transpose,
    "real": uf.real, "imag": uf.imag, "at": _indexing._at, "flat": _flat,
}
#: Tracers only (Array has its own, reading the concrete value).
TRACER_ONLY = {"item": _item, "tolist": _tolist}


def _tracer_getitem(x, idx):
    """``x[idx]``; on a traced ref, a read of the ref (`olympus.ref.get`)."""
    if type(x.aval) is AbstractRef:
        return lax.ref_get(x, idx)
    return _indexing.getitem(x, idx)


TRACER_ONLY["__getitem__"] = _tracer_getitem


def _tracer_at(x):
    """``x.at``: on a traced ref, views of the ref (``x.at[i][...] = v`` writes row i);
    on an array, the functional index update helper."""
    if type(x.aval) is AbstractRef:
        from .._src.refs import _RefViewIndexer

        return _RefViewIndexer(x)
    return _indexing._at(x)


TRACER_ONLY["at"] = property(_tracer_at)


def _defer(fn, swap, typed=tangents_typed_as_primals):
    """A tracer's binary operator: `NotImplemented` for operands JAX does not accept.
    Forward-mode tangents are typed as JAX's jitted ``jnp`` function sees them."""
    def convert(other):  # JAX's operators convert an ``__olympus_array__`` operand first
        m = getattr(other, "__olympus_array__", None)
        return other if m is None else m()

    if swap:
        def op(self, other):
            if not accepts(other) and not accepts(other := convert(other)):
                return NotImplemented
            self, other = typed((self, other))
            return fn(other, self)
    else:
        def op(self, other):
            if not accepts(other) and not accepts(other := convert(other)):
                return NotImplemented
            self, other = typed((self, other))
            return fn(self, other)
    return op


def _unary(fn):
    """A tracer's unary operator (forward-mode tangents typed as in `_defer`)."""
    def op(self):
        return fn(*tangents_typed_as_primals((self,)))
    return op


def _as_is(args):
    return args


def _entries(for_array: bool) -> dict:
    out = {}
    for name, (fn, scalars) in BINARY.items():
        for swap, dunder in ((False, f"__{name}__"), (True, f"__r{name}__")):
            if for_array:
                out[dunder] = eager.operator(fn, dunder, swap=swap, scalars=scalars,
                                             accepts=accepts)
            else:
                out[dunder] = _defer(fn, swap)
    for name, fn in COMPARISONS.items():
        dunder = f"__{name}__"
        out[dunder] = (eager.operator(fn, dunder, accepts=accepts) if for_array
                       else _defer(fn, False, _as_is))  # no tangent out of a comparison
    for name, fn in UNARY.items():
        dunder = f"__{name}__"
        out[dunder] = eager.positional(fn, dunder) if for_array else _unary(fn)
    out.update(METHODS)
    out.update({name: property(getter) for name, getter in PROPERTIES.items()})
    if not for_array:
        out.update(TRACER_ONLY)
    return out


def install() -> None:
    """Give tracers and `Array` the methods, operators and properties of the table."""
    for name, value in _entries(for_array=False).items():
        setattr(Tracer, name, value)
    rt.register_array_methods(_entries(for_array=True), override=True)
