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
from collections.abc import Sequence
from typing import Any

import jaxlib.xla_client as xc
from jaxlib import _jax

__all__ = ["SingleDeviceSharding", "GSPMDSharding", "sharding_for"]

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


# ------------------------------------------------------------------ several devices

_gspmd_interned: dict[tuple, GSPMDSharding] = {}


class GSPMDSharding(_jax.GSPMDSharding):
    """An array laid out over several devices as an XLA ``HloSharding`` describes.

    ``GSPMDSharding(devices, xla_client.HloSharding.iota_tile([4]))`` splits dimension 0
    over 4 devices; ``HloSharding.replicate()`` copies the array to each of them. The
    device list is the *logical* order the HloSharding's device indices refer to (and
    the order of an executable's partitions). Interned like `SingleDeviceSharding`:
    one object per (devices, sharding, memory kind), compared by identity.
    """

    def __new__(cls, devices: Sequence[Any], hlo_sharding: Any, *,
                memory_kind: str | None = None):
        devices = tuple(devices)
        if not isinstance(hlo_sharding, xc.HloSharding):
            hlo_sharding = xc.HloSharding.from_proto(hlo_sharding)  # an OpSharding
        key = (devices, str(hlo_sharding), memory_kind)
        s = _gspmd_interned.get(key)
        if s is not None:
            return s
        with _intern_lock:
            s = _gspmd_interned.get(key)
            if s is None:
                if not devices:
                    raise ValueError("GSPMDSharding needs at least one device")
                if not (hlo_sharding.is_replicated() or hlo_sharding.is_tiled()):
                    raise NotImplementedError(
                        f"GSPMDSharding supports replicated and tiled shardings, not {hlo_sharding}"
                    )
                if hlo_sharding.is_tiled() and hlo_sharding.num_devices() != len(devices):
                    raise ValueError(
                        f"sharding {hlo_sharding} spans {hlo_sharding.num_devices()} devices "
                        f"but {len(devices)} were given"
                    )
                s = super().__new__(cls, _jax.DeviceList(devices), hlo_sharding)
                _jax.GSPMDSharding.__init__(
                    s, _jax.DeviceList(devices), hlo_sharding, memory_kind=memory_kind
                )
                s = _gspmd_interned.setdefault((devices, str(hlo_sharding), s._memory_kind), s)
                _gspmd_interned[key] = s
        return s

    def __init__(self, devices: Sequence[Any], hlo_sharding: Any, *,
                 memory_kind: str | None = None):
        pass  # initialized (once) by __new__

    @property
    def memory_kind(self) -> str:
        return self._memory_kind

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> Any:
        return self._hlo_sharding

    @property
    def device_set(self) -> set:
        return set(self._internal_device_list)

    @property
    def _device_assignment(self) -> tuple:
        return tuple(self._internal_device_list)

    @property
    def num_devices(self) -> int:
        return len(self._internal_device_list)

    @property
    def is_fully_replicated(self) -> bool:
        return self._hlo_sharding.is_replicated()

    @property
    def is_fully_addressable(self) -> bool:
        return self._internal_device_list.is_fully_addressable

    def _tiles(self, ndim: int) -> tuple[list[int], list[int]]:
        """(tiles per array dimension, device index per tile in row-major tile order)."""
        hlo = self._hlo_sharding
        if hlo.is_replicated():
            return [1] * ndim, list(range(len(self._internal_device_list)))
        dims = list(hlo.tile_assignment_dimensions())
        if hlo.subgroup_types() and not hlo.replicate_on_last_tile_dim():
            raise NotImplementedError(f"GSPMDSharding does not support {hlo}")
        if len(dims) != ndim + hlo.replicate_on_last_tile_dim():
            raise ValueError(f"sharding {hlo} does not fit a rank-{ndim} array")
        return dims, list(hlo.tile_assignment_devices())

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        dims, _ = self._tiles(len(global_shape))
        for d, n in zip(global_shape, dims, strict=False):
            if d % n:
                raise ValueError(
                    f"sharding {self._hlo_sharding} does not divide shape "
                    f"{tuple(global_shape)} evenly"
                )
        return tuple(d // n for d, n in zip(global_shape, dims, strict=False))

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple[slice, ...]]:
        """device -> the index (a tuple of slices) of the global array it holds."""
        global_shape = tuple(global_shape)
        shard = self.shard_shape(global_shape)
        dims, tile_devices = self._tiles(len(global_shape))
        devices = list(self._internal_device_list)
        out: dict[Any, tuple[slice, ...]] = {}
        for tile, dev_index in enumerate(tile_devices):
            coords = []
            for n in reversed(dims):
                coords.append(tile % n)
                tile //= n
            coords.reverse()
            out[devices[dev_index]] = tuple(
                slice(c * s, (c + 1) * s) for c, s in zip(coords, shard, strict=False)
            )
        return out

    def __repr__(self) -> str:
        devs = ", ".join(str(d) for d in self._internal_device_list)
        return f"GSPMDSharding({self._hlo_sharding}, devices=[{devs}])"

    def __reduce__(self):
        return (_gspmd_from_ids, (tuple(d.id for d in self._internal_device_list),
                                  str(self._hlo_sharding), self._memory_kind))


def _gspmd_from_ids(ids: tuple[int, ...], hlo: str, memory_kind: str) -> GSPMDSharding:
    from .backend import devices

    by_id = {d.id: d for d in devices()}
    try:
        devs = [by_id[i] for i in ids]
    except KeyError as e:
        raise ValueError(f"no device with id {e.args[0]} in this process") from None
    return GSPMDSharding(devs, xc.HloSharding.from_string(hlo), memory_kind=memory_kind)
