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
    "sum": ops.sum, "prod": ops.prod, "max": ops.max, "min": ops.min,
    "mean": ops.mean, "all": ops.all, "any": ops.any,
    "argmax": ops.argmax, "argmin": ops.argmin,
    "clip": ops.clip,
    "dot": ops.matmul,
    "conj": lambda self: ops.lax.conj(self),
    "real": property(lambda self: ops.lax.real(self)),
    "imag": property(lambda self: ops.lax.imag(self)),
}


def install(cls, methods=None) -> None:
    for name, fn in (methods or ARRAY_METHODS).items():
        setattr(cls, name, fn)


install(Tracer)
