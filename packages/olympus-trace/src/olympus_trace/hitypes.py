"""High-level ("hijax") types: user-defined aggregate types that lower to low-level arrays.

A `HiType` says how one value of a user class (a quantized array, a tuple, ...) is made of
ordinary arrays: `lo_ty()` gives their types, `lower_val` takes a value apart and
`raise_val` puts it back together. `register_hitype(cls, typeof_fn)` ties the user's value
class to its type. Olympus carries a high-level value through the transformations the way
it carries a pytree: a registered class is a pytree node whose children are the low-level
arrays and whose auxiliary data is the type, so `jit`, `grad`, `vmap`, `scan`, ... see the
arrays and the user's function sees the high-level value rebuilt around the tracers. (JAX
keeps the high-level types in its jaxprs and lowers them later; the values computed are
the same.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olympus_ir.avals import mapped_axes_probe

from .core import Tracer, get_aval

__all__ = ["HiType", "MutableHiType", "HiPspec", "MappingSpec", "QuasiDynamicData", "AvalQDD",
           "AvalMutableQDD", "aval_method", "aval_property", "register_hitype",
           "hitype_handlers", "hi_typeof", "is_hi", "lo_types", "lower_value", "raise_value",
           "lo_mapped_axes"]


def _must_override(self, what: str):
    # JAX's base classes assert ("must override"): the same exception type, naming what.
    raise AssertionError(f"must override: {type(self).__name__} does not define `{what}`")


class HiType:
    """The base of an immutable high-level type. Subclasses define equality and hashing,
    `lo_ty`, `lower_val` and `raise_val`, and for autodiff `to_tangent_aval` (and
    `vspace_zero`/`vspace_add` if the type is its own tangent type)."""

    is_high = True
    has_qdd = False

    def lo_ty(self) -> list:
        _must_override(self, "lo_ty")

    def lower_val(self, hi_val) -> list:
        _must_override(self, "lower_val")

    def raise_val(self, *lo_vals):
        _must_override(self, "raise_val")

    def to_tangent_aval(self) -> HiType:
        _must_override(self, "to_tangent_aval")

    def to_ct_aval(self) -> HiType:
        return self.to_tangent_aval()

    def vspace_zero(self):
        _must_override(self, "vspace_zero")

    def vspace_add(self, x, y):
        _must_override(self, "vspace_add")

    def normalize(self) -> HiType:
        return self

    def str_short(self, short_dtypes: bool = True, **_: Any) -> str:
        return repr(self)

    def dec_rank(self, size, spec) -> HiType:
        _must_override(self, "dec_rank")

    def inc_rank(self, size, spec) -> HiType:
        _must_override(self, "inc_rank")

    def leading_axis_spec(self):
        _must_override(self, "leading_axis_spec")

    def shard(self, mesh, manual_axes, check_vma, spec) -> HiType:
        _must_override(self, "shard")

    def unshard(self, mesh, check_vma, spec) -> HiType:
        _must_override(self, "unshard")

    def nospec(self, mesh, check_vma, all_names) -> HiPspec:
        _must_override(self, "nospec")


class QuasiDynamicData:
    """The base of the state a mutable high-level type carries beside its type (its
    quasi-dynamic data)."""


class MutableHiType:
    """The base of a mutable high-level type, whose lowering depends on its current
    quasi-dynamic data: `lo_ty_qdd`, `new_from_loval`, `read_loval`, `update_from_loval`.
    Olympus defines the interface; it does not track quasi-dynamic data through
    transformations (see the package CHANGELOG)."""

    is_high = True
    has_qdd = True
    is_writer = False

    def lo_ty_qdd(self, state, /) -> list:
        _must_override(self, "lo_ty_qdd")

    def lo_ty(self):
        raise AssertionError("mutable hitypes should use lo_ty_qdd instead")

    def new_from_loval(self, state, /, *vals):
        _must_override(self, "new_from_loval")

    def read_loval(self, state, val, /) -> list:
        _must_override(self, "read_loval")

    def update_from_loval(self, state, val, /, *lo_vals) -> None:
        _must_override(self, "update_from_loval")

    def to_tangent_aval(self):
        _must_override(self, "to_tangent_aval")

    def to_ct_aval(self):
        return self.to_tangent_aval()


class AvalQDD:
    """A type with the quasi-dynamic data a value of it has now."""

    __slots__ = ("aval", "qdd")

    def __init__(self, aval, qdd):
        self.aval = aval
        self.qdd = qdd

    def __repr__(self) -> str:
        return f"AvalQDD(aval={self.aval!r}, qdd={self.qdd!r})"

    def __eq__(self, other) -> bool:
        return type(other) is AvalQDD and (self.aval, self.qdd) == (other.aval, other.qdd)

    def __hash__(self) -> int:
        return hash((self.aval, self.qdd))


class AvalMutableQDD:
    """A type with a cell holding its quasi-dynamic data, which operations update."""

    __slots__ = ("aval", "mutable_qdd")

    def __init__(self, aval, mutable_qdd):
        self.aval = aval
        self.mutable_qdd = mutable_qdd

    def __repr__(self) -> str:
        return f"AvalMutableQDD(aval={self.aval!r}, mutable_qdd={self.mutable_qdd!r})"


class HiPspec:
    """The base of a partition spec for a high-level type (`to_lo` gives one
    PartitionSpec per low-level array)."""

    def to_lo(self) -> tuple:
        _must_override(self, "to_lo")

    def to_tangent_spec(self) -> HiPspec:
        _must_override(self, "to_tangent_spec")

    def to_ct_spec(self) -> HiPspec:
        _must_override(self, "to_ct_spec")


class MappingSpec:
    """The base of a vmap/scan axis spec for a high-level type."""


class aval_method:
    """A method a type defines for its values (JAX's marker for methods a traced value
    forwards to its type). Olympus's traced high-level values are the user's own value
    objects rebuilt around tracers, so they have their class's methods; on the type itself
    ``ty.name(...)`` calls ``fun(ty, ...)``."""

    __slots__ = ("fun",)

    def __init__(self, fun: Callable):
        self.fun = fun

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return self.fun.__get__(obj, objtype)


class aval_property:
    """A property a type defines for its values (see `aval_method`): ``ty.name`` is
    ``fget(ty)``."""

    __slots__ = ("fget",)

    def __init__(self, fget: Callable):
        self.fget = fget

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return self.fget(obj)


class LoArrayKey:
    """The key path entry of one low-level array of a high-level value: it prints as
    nothing, so the arrays of argument `x` are all named ``x`` (as JAX names them, a
    high-level value being one argument)."""

    __slots__ = ("idx",)

    def __init__(self, idx: int):
        self.idx = idx

    def __str__(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"LoArrayKey(idx={self.idx})"

    def __eq__(self, other) -> bool:
        return type(other) is LoArrayKey and other.idx == self.idx

    def __hash__(self) -> int:
        return hash(("LoArrayKey", self.idx))


#: A user's value class -> the function giving a value's high-level type.
hitype_handlers: dict[type, Callable[[Any], Any]] = {}


def register_hitype(val_cls: type, typeof_fn: Callable[[Any], Any]) -> None:
    """Make values of `val_cls` high-level values whose type is ``typeof_fn(value)``:
    transformations carry them as the low-level arrays their type lowers them to."""
    from . import tree_util

    if not isinstance(val_cls, type):
        raise TypeError(f"register_hitype expects a class, got {val_cls!r}")
    if not callable(typeof_fn):
        raise TypeError(f"register_hitype expects a callable typeof_fn, got {typeof_fn!r}")
    first = val_cls not in hitype_handlers
    hitype_handlers[val_cls] = typeof_fn

    def flatten(x):
        try:
            ty = hitype_handlers[type(x)](x)
        except (AttributeError, TypeError):
            # A value rebuilt around placeholders (the transformations unflatten trees of
            # non-arrays, e.g. axis specs or names): the type it was raised from.
            ty = getattr(x, "_olympus_hitype", None)
            if ty is None:
                raise
        return list(ty.lower_val(x)), ty

    def flatten_with_keys(x):
        lo, ty = flatten(x)
        return [(LoArrayKey(i), v) for i, v in enumerate(lo)], ty

    def unflatten(ty, lo_vals):
        val = ty.raise_val(*lo_vals)
        try:
            object.__setattr__(val, "_olympus_hitype", ty)
        except (AttributeError, TypeError):
            pass
        return val

    if first:
        tree_util.register_pytree_node(val_cls, flatten, unflatten, flatten_with_keys)


def lo_mapped_axes(ty: Any, size: int, spec: Any) -> list:
    """The axis along which each low-level array of a value of type `ty` is mapped when
    the value is mapped with `spec`: an int maps every array along that axis; a
    `MappingSpec` is what the type's own `dec_rank` hands its array types."""
    n = len(lo_types(ty))
    if spec is None or isinstance(spec, int):
        return [spec] * n
    if not isinstance(ty, HiType):
        raise TypeError(f"a mapping spec {spec!r} was given for a value of type {ty}")
    prev = mapped_axes_probe.axes
    mapped_axes_probe.axes = axes = []
    try:
        ty.dec_rank(size, spec)
    finally:
        mapped_axes_probe.axes = prev
    if len(axes) != n or not all(a is None or isinstance(a, int) for a in axes):
        raise TypeError(f"cannot map a value of type {ty} with spec {spec!r}: its dec_rank "
                        f"must map each of its {n} arrays with an int or None")
    return axes


def is_hi(ty: Any) -> bool:
    return isinstance(ty, (HiType, MutableHiType))


def hi_typeof(x: Any):
    """The type of `x`: its registered high-level type, or its abstract value."""
    h = hitype_handlers.get(type(x))
    if h is not None:
        return h(x)
    if isinstance(x, Tracer):
        return x.aval
    return get_aval(x)


def lo_types(ty: Any) -> list:
    """The low-level types a value of type `ty` is made of."""
    return list(ty.lo_ty()) if isinstance(ty, HiType) else [ty]


def lower_value(ty: Any, x: Any) -> list:
    """`x` (of type `ty`) as its low-level values."""
    return list(ty.lower_val(x)) if isinstance(ty, HiType) else [x]


def raise_value(ty: Any, lo_vals) -> Any:
    """The value of type `ty` made of `lo_vals`."""
    return ty.raise_val(*lo_vals) if isinstance(ty, HiType) else lo_vals[0]
