"""Device meshes as NumPy arrays of devices (JAX's ``jax.experimental.mesh_utils``), for
building ``olympus.sharding.Mesh``. On CPU there is no physical topology to follow: the
devices are laid out in order."""

from __future__ import annotations

import collections
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]

#: device_kind -> handler(devices, mesh_shape, **options) returning a mesh or None, consulted
#: before the default layout (for platforms with a topology to respect).
device_kind_handler_dict: dict[str, Callable[..., np.ndarray | None]] = {}


def _axis_sizes(mesh_shape) -> tuple[int, ...] | None:
    if not isinstance(mesh_shape, Sequence):
        return None
    try:
        return tuple(operator.index(d) for d in mesh_shape)
    except TypeError:
        return None


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """`devices` (default: all) as an array of shape `mesh_shape`."""
    import olympus

    if devices is None:
        devices = olympus.devices()
    shape = _axis_sizes(mesh_shape)
    if shape is None:
        raise ValueError("`mesh_shape` passed to `create_device_mesh` should be a sequence of"
                         f" ints. Got {mesh_shape}")
    if math.prod(shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {shape}")
    handler = device_kind_handler_dict.get(devices[-1].device_kind)
    if handler is not None:
        result = handler(devices, shape, contiguous_submeshes=contiguous_submeshes,
                         allow_split_physical_axes=allow_split_physical_axes)
        if result is not None:
            return result
    out = np.empty(len(devices), dtype=object)
    out[:] = list(devices)
    return out.reshape(shape)


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> np.ndarray:
    """A mesh of shape ``mesh_shape * dcn_mesh_shape``: the devices of each granule (a
    slice, or a process with `process_is_granule`) form one `mesh_shape` block, and the
    blocks are tiled in `dcn_mesh_shape`."""
    import olympus

    if devices is None:
        devices = olympus.devices()
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise ValueError(f"Device {devices[0]} does not have attribute {attr}. See "
                         "`process_is_granule` option.")
    groups: dict = collections.defaultdict(list)
    for d in devices:
        groups[getattr(d, attr)].append(d)
    granules = ([groups[k] for k in sorted(groups)] if should_sort_granules_by_key
                else list(groups.values()))
    if math.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(f"Number of slices {len(granules)} must equal the product of "
                         f"dcn_mesh_shape {dcn_mesh_shape}")
    blocks = [create_device_mesh(mesh_shape, g,
                                 allow_split_physical_axes=allow_split_physical_axes)
              for g in granules]
    layout = np.empty(len(granules), dtype=object)
    layout[:] = blocks
    nested = layout.reshape(tuple(dcn_mesh_shape)).tolist()
    return np.block(nested)
