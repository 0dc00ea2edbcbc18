"""`colocated_cpu_devices`, `colocated_python`, `colocated_python_class`."""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .func import make_callable
from .obj import wrap_class

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]


def colocated_cpu_devices(devices_or_mesh):
    """The CPU devices colocated with `devices_or_mesh` (a sequence of devices, or a mesh,
    for which a mesh of the same shape, names and axis types is returned).

    CPU devices name no colocation, so, as JAX does for them, each input device takes
    the next unused CPU device of its process, in device order: the i-th output belongs
    to the i-th input."""
    from ...sharding import Mesh

    if isinstance(devices_or_mesh, Mesh):
        return _colocated_cpu_mesh(devices_or_mesh)
    return _colocated_cpu_devices(tuple(devices_or_mesh))


@functools.lru_cache(maxsize=1024)
def _colocated_cpu_devices(devices: tuple) -> list:
    if not devices:
        raise IndexError("colocated_cpu_devices: got no devices")
    first = devices[0]
    if first.device_kind == "cpu":
        candidates = [d for d in first.client._get_all_devices() if d.device_kind == "cpu"]
    else:  # pragma: no cover - Olympus has only CPU devices
        from ... import devices as _devices

        candidates = _devices("cpu")
    by_process: dict[int, list] = collections.defaultdict(list)
    for d in candidates:
        by_process[d.process_index].append(d)
    taken = collections.Counter()
    out = []
    for d in devices:
        pool = by_process[d.process_index]
        k = taken[d.process_index]
        if k >= len(pool):
            raise ValueError(
                f"Process {d.process_index} does not have enough local CPU devices")
        out.append(pool[k])
        taken[d.process_index] += 1
    return out


@functools.lru_cache(maxsize=1024)
def _colocated_cpu_mesh(mesh):
    from ...sharding import Mesh

    cpus = _colocated_cpu_devices(tuple(mesh.devices.flat))
    return Mesh(np.array(cpus).reshape(mesh.axis_sizes), mesh.axis_names,
                axis_types=mesh.axis_types)


def colocated_python(fun: Callable[..., Any]) -> Callable[..., Any]:
    """`fun` as a colocated Python callable: called with arrays (pytrees of them), it runs
    `fun` on their devices' host and returns its arrays. ``.specialize(in_specs=,
    out_specs_fn=, devices=)`` returns a callable with that information fixed (a
    function without array arguments needs ``devices``)."""
    return make_callable(fun)


def colocated_python_class(cls: type) -> type:
    """A wrapper class for `cls`: constructing it records the arguments; the real object
    is built on the devices' host at the first method call, and released with the
    wrapper. Each method (a plain function of `cls`) is a colocated Python callable."""
    return wrap_class(cls)


