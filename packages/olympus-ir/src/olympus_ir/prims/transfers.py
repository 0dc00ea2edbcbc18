"""Moving values between devices and memory spaces: ``device_put``.

* ``device_put(*xs; devices, srcs, copy_semantics)``: each ``xs[i]`` placed on
  ``devices[i]``: None (wherever it is), a device, a sharding-like object (with a
  ``memory_kind``), or a `MemorySpace` (``Host`` offloads it to host memory, ``Device``
  brings it back). ``srcs[i]`` is where it comes from when known (None otherwise) and
  ``copy_semantics[i]`` an `ArrayCopySemantics`. The result has the operand's type, in the
  memory space the target names (`MemorySpace.Host` for a ``pinned_host`` memory kind).
  Checkpoint policies that offload residuals stage these (device -> host in the forward
  pass, host -> device in the backward pass).
"""

from __future__ import annotations

import enum
from typing import Any

from ..avals import MemorySpace, ShapedArray, memory_kind_to_space
from ..core import def_shape_rule, new_primitive

__all__ = ["device_put_p", "ArrayCopySemantics", "placed_aval"]


class ArrayCopySemantics(enum.Enum):
    """Whether a transfer may return its operand (``REUSE_INPUT``), always copies
    (``ALWAYS_COPY``), or may consume it (``DONATE_INPUT``); the runtime maps these to
    PJRT's copy semantics."""

    ALWAYS_COPY = 0
    REUSE_INPUT = 1
    DONATE_INPUT = 2

    def __repr__(self) -> str:
        return f"ArrayCopySemantics.{self.name}"

    __hash__ = object.__hash__


device_put_p = new_primitive("device_put", multiple_results=True)


def placed_aval(aval: ShapedArray, target: Any) -> ShapedArray:
    """The type of `aval` once put on `target`: the memory space changes when the target is
    a `MemorySpace` or a sharding with a memory kind; a device or None keeps it."""
    if isinstance(target, MemorySpace):
        space = target
    else:
        kind = getattr(target, "memory_kind", None) if target is not None else None
        if kind is None:
            return aval
        space = memory_kind_to_space(kind)
    return aval if aval.memory_space is space else aval.update(memory_space=space)


@def_shape_rule(device_put_p)
def device_put_shape_rule(*xs, devices, srcs, copy_semantics):
    if not len(xs) == len(devices) == len(srcs) == len(copy_semantics):
        raise TypeError(
            f"device_put got {len(xs)} operands, {len(devices)} devices, {len(srcs)} srcs "
            f"and {len(copy_semantics)} copy_semantics; they must have the same length.")
    for c in copy_semantics:
        if not isinstance(c, ArrayCopySemantics):
            raise TypeError(f"device_put copy_semantics must be ArrayCopySemantics values, "
                            f"got {c!r}.")
    return [placed_aval(x, d) for x, d in zip(xs, devices)]
