"""Shardings: where an array's data lives.

`SingleDeviceSharding` subclasses jaxlib's C++ ``_jax.SingleDeviceSharding`` (rather
than patching it, so a jax in another process-global slot is not disturbed) and adds the
two Python members C++ reads (JAXLIB.md §4): the ``memory_kind`` property and
``_to_xla_hlo_sharding(ndim)``.

Shardings are **interned**: there is exactly one object per (device, memory kind), and
``SingleDeviceSharding(device)`` returns it. They define no Python ``__hash__`` or
``__eq__``, so the C++ jit fast path hashes and compares them by identity, the cheapest
option measured (JAXLIB.md §9, "Sharding hashing dominates").
"""

from __future__ import annotations

import threading
from typing import Any

import jaxlib.xla_client as xc
from jaxlib import _jax

__all__ = ["SingleDeviceSharding", "sharding_for"]

_REPLICATED = xc.HloSharding.replicate()

_interned: dict[tuple[Any, str | None], SingleDeviceSharding] = {}
# The common case, (device, default memory) -> sharding, keyed by device alone.
_by_device: dict[Any, SingleDeviceSharding] = {}
_intern_lock = threading.Lock()


class SingleDeviceSharding(_jax.SingleDeviceSharding):
    """The sharding of an array that lives entirely on one device."""

    def __new__(cls, device: Any, *, memory_kind: str | None = None):
        key = (device, memory_kind)
        s = _interned.get(key)
        if s is not None:
            return s
        with _intern_lock:
            s = _interned.get(key)
            if s is None:
                s = super().__new__(cls, device)
                # Initialize here, under the lock, so a half-built object is never shared.
                _jax.SingleDeviceSharding.__init__(s, device, memory_kind=memory_kind)
                # Two spellings of the same memory kind must give one object.
                canon = (device, s._memory_kind)
                s = _interned.setdefault(canon, s)
                _interned[key] = s
                if s._memory_kind == device.default_memory().kind:
                    _by_device.setdefault(device, s)
                    _interned.setdefault((device, None), s)
        return s

    def __init__(self, device: Any, *, memory_kind: str | None = None):
        # Already initialized by __new__ (the object may be a shared, interned one).
        pass

    # --- read by jaxlib's C++ -----------------------------------------------------

    @property
    def memory_kind(self) -> str:
        return self._memory_kind

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> Any:
        return _REPLICATED

    # --- the small public API ------------------------------------------------------

    @property
    def device(self) -> Any:
        return self._device

    @property
    def device_set(self) -> set:
        return {self._device}

    @property
    def _device_assignment(self) -> tuple:
        return (self._device,)

    @property
    def num_devices(self) -> int:
        return 1

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def is_fully_addressable(self) -> bool:
        return True

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(global_shape)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"

    def __reduce__(self):
        return (_sharding_from_device_id, (self._device.id, self._memory_kind))


def sharding_for(device: Any) -> SingleDeviceSharding:
    """The interned default-memory sharding of `device` (a dict lookup when warm)."""
    s = _by_device.get(device)
    if s is None:
        s = SingleDeviceSharding(device)
    return s


def _sharding_from_device_id(device_id: int, memory_kind: str) -> SingleDeviceSharding:
    from .backend import devices

    for d in devices():
        if d.id == device_id:
            return SingleDeviceSharding(d, memory_kind=memory_kind)
    raise ValueError(f"no device with id {device_id} in this process")
