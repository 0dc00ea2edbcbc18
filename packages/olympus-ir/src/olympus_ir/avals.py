"""Abstract values: what the IR knows about an array without its data."""

from __future__ import annotations

import enum
import math
import threading
from typing import Any

import numpy as np

from . import dtypes
from .shape_poly import DimExpr


def canonicalize_shape(shape: Any, what: str = "shape") -> tuple[int, ...]:
    """A tuple of non-negative Python ints (or symbolic dimensions, `shape_poly.DimExpr`),
    or a TypeError naming `what`."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of integers, got {shape!r}") from None
    out = []
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            if type(d) is DimExpr:
                out.append(d)
                continue
            if hasattr(d, "__index__") and not hasattr(d, "aval"):
                d = d.__index__()
            else:
                raise TypeError(
                    f"{what} must be a sequence of integers, got {shape!r} "
                    f"(element {d!r} of type {type(d).__name__})"
                )
        d = int(d)
        if d < 0:
            raise TypeError(f"{what} must have every element be nonnegative, got {shape!r}.")
        out.append(d)
    return tuple(out)


#: The largest byte size XLA can represent (a signed 64-bit count): a bigger static shape
#: aborts the process inside XLA ("overflow in static extent product"), so it is refused
#: here, when the type is made, before anything calls into C++.
_MAX_BYTES = 2**63 - 1


def _too_big(shape, dtype):
    raise ValueError(
        f"array of shape {shape} and dtype {dtype.name} is too big: its "
        f"{math.prod(shape)} elements of {dtype.itemsize} bytes exceed the largest size an "
        f"array can have ({_MAX_BYTES} bytes).")


class MemorySpace(enum.Enum):
    """Where an array lives: device memory (the default) or host memory (memory kind
    ``pinned_host``), the target of offloaded checkpoint residuals. Printed in an aval as
    ``f32<host>[4]``; ``olympus.memory.Space`` is this enum."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__  # identity: cheaper than Enum's hash of the name


def memory_kind_to_space(kind: str | None) -> MemorySpace:
    """The memory space of a sharding's memory kind (``pinned_host`` is host memory)."""
    return MemorySpace.Host if kind == "pinned_host" else MemorySpace.Device


def memory_space_suffix(space: MemorySpace) -> str:
    """How a type prints its memory space: nothing for device memory, else ``<host>``."""
    return "" if space is MemorySpace.Device else f"<{space.name.lower()}>"


def memory_space_to_kind(space: MemorySpace) -> str:
    """The runtime memory kind that holds values of memory space `space`."""
    if space is MemorySpace.Host:
        return "pinned_host"
    if space is MemorySpace.Device:
        return "device"
    raise ValueError(f"memory space {space!r} has no memory kind")


class ShapedArray:
    """An array type: shape, dtype, whether the dtype is weak (from a Python scalar), and
    its memory space (device unless offloaded to host memory)."""

    __slots__ = ("shape", "dtype", "weak_type", "memory_space", "_hash")
    array_abstraction_level = 1

    def __init__(self, shape: Any, dtype: Any, weak_type: bool = False,
                 memory_space: MemorySpace = MemorySpace.Device):
        self.shape = canonicalize_shape(shape)
        self.dtype = dtypes.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype
        self.weak_type = bool(weak_type)
        self.memory_space = memory_space
        self._hash = None
        size = math.prod(self.shape)
        if type(size) is int and size * self.dtype.itemsize > _MAX_BYTES:
            _too_big(self.shape, self.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape=None, dtype=None, weak_type=None,
               memory_space=None) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            self.memory_space if memory_space is None else memory_space,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    # As a part of a high-level type (JAX's hijax): an array type lowers to itself.
    def lo_ty(self) -> list[ShapedArray]:
        return [self]

    def lower_val(self, val: Any) -> list:
        return [val]

    def raise_val(self, val: Any) -> Any:
        return val

    def to_tangent_aval(self) -> ShapedArray:
        """The type of this type's tangents: the same for inexact dtypes, float0 else."""
        if dtypes.is_inexact(self.dtype):
            return self
        return ShapedArray(self.shape, dtypes.float0, self.weak_type, self.memory_space)

    def dec_rank(self, size: int, spec: int | None) -> ShapedArray:
        """The type of one element when mapped along axis `spec` (None: not mapped)."""
        probe = mapped_axes_probe.axes
        if probe is not None:  # only asked which axis (see `mapped_axes_probe`)
            probe.append(spec)
            return self
        if spec is None:
            return self
        axis = spec % self.ndim if -self.ndim <= spec < self.ndim else spec
        if not 0 <= axis < self.ndim:
            raise ValueError(f"axis {spec} is out of bounds for {self.str_short()}")
        return self.update(shape=self.shape[:axis] + self.shape[axis + 1:])

    def inc_rank(self, size: int, spec: int | None) -> ShapedArray:
        """The type of `size` stacked values of this type, stacked along axis `spec`."""
        if spec is None:
            return self
        axis = spec % (self.ndim + 1) if -self.ndim - 1 <= spec <= self.ndim else spec
        if not 0 <= axis <= self.ndim:
            raise ValueError(f"axis {spec} is out of bounds for stacking {self.str_short()}")
        return self.update(shape=self.shape[:axis] + (size,) + self.shape[axis:])

    def leading_axis_spec(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is ShapedArray
            and self.shape == other.shape  # type: ignore[attr-defined]
            and self.dtype == other.dtype  # type: ignore[attr-defined]
            and self.weak_type == other.weak_type  # type: ignore[attr-defined]
            and self.memory_space is other.memory_space  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash((self.shape, self.dtype, self.weak_type, self.memory_space))
        return h

    def str_short(self, short_dtypes: bool = True) -> str:
        """``f32[3,4]`` (``f32<host>[3,4]`` in host memory): the form used in printed
        olympusprs."""
        if short_dtypes:
            name = dtypes.short_name(self.dtype)
        else:  # numpy calls float0's structured dtype "void"; JAX prints "float0"
            name = "float0" if self.dtype == dtypes.float0 else self.dtype.name
        space = memory_space_suffix(self.memory_space)
        return f"{name}{space}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{weak})"

    def __str__(self) -> str:
        """``float32[3]``; ``~float32[]`` when weakly typed (JAX's form)."""
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


class _MappedAxesProbe(threading.local):
    """While `axes` is a list, `ShapedArray.dec_rank` only appends the axis it is asked to
    remove: how a high-level type's mapping spec (e.g. one axis per tuple element) maps
    each of its arrays, found by calling the type's own `dec_rank`."""

    def __init__(self) -> None:
        self.axes: list | None = None


mapped_axes_probe = _MappedAxesProbe()


class AbstractToken:
    """The type of an ordering token (JAX's ``core.AbstractToken``, printed ``Tok``): a
    value with no data that only orders side effects (``stablehlo.token``). There is one,
    `abstract_token`."""

    __slots__ = ()
    array_abstraction_level = 1
    weak_type = False
    memory_space = MemorySpace.Device
    #: no dimensions: code that walks the shapes of a signature sees none here
    shape = ()
    ndim = 0

    def str_short(self, short_dtypes: bool = True) -> str:
        return "Tok"

    def __repr__(self) -> str:
        return "AbstractToken()"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractToken

    def __hash__(self) -> int:
        return hash(AbstractToken)

    def update(self, shape=None, dtype=None, weak_type=None, memory_space=None):
        return self

    def strip_weak_type(self) -> AbstractToken:
        return self


#: The type of every ordering token.
abstract_token = AbstractToken()


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array, e.g. as an argument to ``jit(f).trace``."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape: Any, dtype: Any, *, sharding: Any = None, weak_type: bool = False):
        self.shape = canonicalize_shape(shape)
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        self.dtype = dtypes.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    @classmethod
    def like(cls, x: Any) -> ShapeDtypeStruct:
        """The struct of `x` (an array, tracer, NumPy or Python scalar, or struct), keeping
        its weak type, and its sharding when `x` is committed to a device (JAX's rule)."""
        aval = _aval_for_like(x)
        sharding = getattr(x, "sharding", None) if getattr(x, "_committed", False) else None
        return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        sh = f", sharding={self.sharding!r}" if self.sharding is not None else ""
        wt = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sh}{wt})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (
            self.shape, self.dtype, self.sharding, self.weak_type
        ) == (other.shape, other.dtype, other.sharding, other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.sharding, self.weak_type))


def has_array_protocol(x: Any) -> bool:
    """Whether `x` is a foreign object offering ``__olympus_array__`` (JAX's
    ``__jax_array__``): convertible by ``olympus.numpy.asarray``, but not an array."""
    return getattr(type(x), "__olympus_array__", None) is not None


def array_protocol_error() -> ValueError:
    """JAX's error for an ``__olympus_array__`` object where an abstract value is needed
    (a traced argument, a primitive's operand, a jitted ``jnp`` function's operand)."""
    return ValueError(
        "Triggering __olympus_array__() during abstractification is no longer supported. "
        "To avoid this error, either explicitly convert your object using "
        "olympus.numpy.array(), or register your object as a pytree.")


def _aval_for_like(x: Any) -> ShapedArray:
    """`ShapeDtypeStruct.like`'s abstraction: anything carrying an ``aval`` (arrays,
    tracers), Python scalars (weak), NumPy values and shape/dtype specs."""
    from olympus_ir.prims.refs import AbstractRef

    aval = getattr(x, "aval", None)
    if isinstance(aval, AbstractRef):
        raise NotImplementedError(
            "Ref/AbstractRef support is not implemented. Please file an issue at"
            " https://github.com/jax-ml/jax/issues")
    if isinstance(aval, ShapedArray):
        return aval
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        dt = dtypes.bool_ if isinstance(x, bool) else dtypes.python_scalar_dtype(x)
        return ShapedArray((), dt, not isinstance(x, bool))
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, str):
        return ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype),
                           bool(getattr(x, "weak_type", False)))
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid OLYMPUS type")


def raise_to_shaped(x: Any) -> ShapedArray:
    """The `ShapedArray` of a spec (anything with ``.shape`` and ``.dtype``)."""
    if isinstance(x, ShapedArray):
        return x
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        raise TypeError(
            f"Expected an array or an object with .shape and .dtype, got {type(x).__name__}"
        )
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), getattr(x, "weak_type", False))


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """The type that holds the values of `aval`: itself, except for typed PRNG keys, whose
    ``key<fry>[n]`` values are held as their ``u32[n, 2]`` data (by the runtime and in
    lowered modules)."""
    dt = getattr(aval, "dtype", None)  # (tokens have none)
    if type(dt) is not dtypes.KeyDType:
        return aval
    return ShapedArray(aval.shape + dt.key_shape, dtypes.uint32)
