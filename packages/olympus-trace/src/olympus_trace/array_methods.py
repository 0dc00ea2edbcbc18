"""The array methods and operators shared by tracers and the runtime's Array.

`ARRAY_METHODS` maps attribute names to functions of `self`; `install(cls)` attaches them.
The meta-package installs the same table on the runtime's Array class, so a traced value and
a concrete one behave the same.
"""

from __future__ import annotations

from . import array_ops as ops
from .core import Tracer


def _swap(f):
    return lambda self, other: f(other, self)


def _defer(f):
    """Binary operator that returns NotImplemented for non-array operands (so e.g. lists
    and other objects get a chance with their reflected operator)."""

    def op(self, other):
        if not _is_operand(other):
            return NotImplemented
        return f(self, other)

    return op


def _is_operand(x) -> bool:
    if isinstance(x, (bool, int, float, complex, Tracer, list, tuple)):
        return True
    try:
        ops.aval_of(x)
        return True
    except TypeError:
        return False


def _reshape(self, *shape, order="C"):
    return ops.reshape(self, *shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return ops.transpose(self, axes or None)


def _mT(self):
    nd = self.ndim
    if nd < 2:
        raise ValueError("Matrix transpose requires at least 2 dimensions")
    return ops.swapaxes(self, -1, -2)


# --- methods implemented by olympus.numpy -------------------------------------------------------
#
# olympus-trace cannot import the meta-package, so these methods look their implementation
# up in the namespace that olympus.numpy registers with `set_numpy_namespace` when it is
# imported (falling back to the array_ops version, if any, when it is not).

_numpy_ns = None
_numpy_extra: dict = {}


def set_numpy_namespace(ns, **extra) -> None:
    """Register the module implementing the NumPy API (``olympus.numpy``); `extra` maps
    private hooks (e.g. ``at``) to callables."""
    global _numpy_ns
    _numpy_ns = ns
    _numpy_extra.update(extra)


def _np_method(name, fallback=None):
    def method(self, *args, **kwargs):
        fn = getattr(_numpy_ns, name, None) if _numpy_ns is not None else None
        if fn is None:
            if fallback is None:
                raise NotImplementedError(
                    f"Array.{name} is not available"
                    + (" (import olympus to get olympus.numpy)" if _numpy_ns is None else
                       f": olympus.numpy.{name} is not implemented yet"))
            return fallback(self, *args, **kwargs)
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


def _at(self):
    fn = _numpy_extra.get("at")
    if fn is None:
        raise NotImplementedError("Array.at needs olympus.numpy (import olympus)")
    return fn(self)


def _round(self, ndigits=None):
    out = _np_method("round")(self, 0 if ndigits is None else ndigits)
    return out


def _divmod(self, other):
    return _np_method("divmod")(self, other)


def _rdivmod(self, other):
    return _np_method("divmod")(other, self)


def _nonzero(self, *, size=None, fill_value=None):
    return _np_method("nonzero")(self, size=size, fill_value=fill_value)


ARRAY_METHODS = {
    "__add__": _defer(ops.add), "__radd__": _defer(_swap(ops.add)),
    "__sub__": _defer(ops.subtract), "__rsub__": _defer(_swap(ops.subtract)),
    "__mul__": _defer(ops.multiply), "__rmul__": _defer(_swap(ops.multiply)),
    "__truediv__": _defer(ops.true_divide), "__rtruediv__": _defer(_swap(ops.true_divide)),
    "__floordiv__": _defer(ops.floor_divide), "__rfloordiv__": _defer(_swap(ops.floor_divide)),
    "__mod__": _defer(ops.remainder), "__rmod__": _defer(_swap(ops.remainder)),
    "__pow__": _defer(ops.power), "__rpow__": _defer(_swap(ops.power)),
    "__matmul__": _defer(ops.matmul), "__rmatmul__": _defer(_swap(ops.matmul)),
    "__and__": _defer(ops.bitwise_and), "__rand__": _defer(_swap(ops.bitwise_and)),
    "__or__": _defer(ops.bitwise_or), "__ror__": _defer(_swap(ops.bitwise_or)),
    "__xor__": _defer(ops.bitwise_xor), "__rxor__": _defer(_swap(ops.bitwise_xor)),
    "__lshift__": _defer(ops.left_shift), "__rlshift__": _defer(_swap(ops.left_shift)),
    "__rshift__": _defer(ops.right_shift), "__rrshift__": _defer(_swap(ops.right_shift)),
    "__lt__": _defer(ops.less), "__le__": _defer(ops.less_equal),
    "__gt__": _defer(ops.greater), "__ge__": _defer(ops.greater_equal),
    "__eq__": _defer(ops.equal), "__ne__": _defer(ops.not_equal),
    "__neg__": ops.negative, "__pos__": ops.positive, "__abs__": ops.absolute,
    "__invert__": ops.invert,
    "__getitem__": ops.getitem,
    "astype": ops.astype,
    "reshape": _reshape,
    "transpose": _transpose,
    "T": property(lambda self: ops.transpose(self)),
    "mT": property(_mT),
    "ravel": ops.ravel, "flatten": ops.ravel,
    "squeeze": ops.squeeze,
    "swapaxes": ops.swapaxes,
    "sum": _np_method("sum", ops.sum), "prod": _np_method("prod", ops.prod),
    "max": _np_method("max", ops.max), "min": _np_method("min", ops.min),
    "mean": _np_method("mean", ops.mean), "all": _np_method("all", ops.all),
    "any": _np_method("any", ops.any),
    "argmax": _np_method("argmax", ops.argmax), "argmin": _np_method("argmin", ops.argmin),
    "clip": _np_method("clip", ops.clip),
    "dot": _np_method("dot", ops.matmul),
    "var": _np_method("var"), "std": _np_method("std"), "ptp": _np_method("ptp"),
    "cumsum": _np_method("cumsum"), "cumprod": _np_method("cumprod"),
    "round": _np_method("round"), "__round__": _round,
    "__divmod__": _defer(_divmod), "__rdivmod__": _defer(_rdivmod),
    "nonzero": _nonzero, "repeat": _np_method("repeat"), "take": _np_method("take"),
    "sort": _np_method("sort"), "argsort": _np_method("argsort"),
    "searchsorted": _np_method("searchsorted"),
    "compress": lambda self, condition, axis=None, **kw: _np_method("compress")(
        condition, self, axis, **kw),
    "choose": lambda self, choices, mode="raise": _np_method("choose")(self, choices,
                                                                       mode=mode),
    "diagonal": _np_method("diagonal"), "trace": _np_method("trace"),
    "copy": _np_method("copy"), "conjugate": _np_method("conjugate"),
    "at": property(_at),
    "conj": _np_method("conj", lambda self: ops.lax.conj(self)),
    "real": property(_np_method("real", lambda self: ops.lax.real(self))),
    "imag": property(_np_method("imag", lambda self: ops.lax.imag(self))),
}


def install(cls, methods=None) -> None:
    for name, fn in (methods or ARRAY_METHODS).items():
        setattr(cls, name, fn)


install(Tracer)
