"""Meshes, shardings and arrays across devices: the public functions around them.

The types (`Mesh`, `PartitionSpec`, `NamedSharding`, ...) live in olympus-runtime, which
hands them to jaxlib; this module adds what JAX puts next to them: `make_mesh`,
`set_mesh`, `typeof`, `reshard`, the ``make_array_from_*`` constructors and the
device/process queries.

Inside ``jit``, ``Explicit`` mesh axes are part of each value's type (sharding rules in
`olympus_trace.sharding_types`, the API side in `explicit_sharding`); XLA's partitioner
(Shardy) lays out everything the types leave open.
"""

from __future__ import annotations

import contextlib
import functools
import math
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import olympus_runtime as rt
from olympus_ir import ShapedArray
from olympus_ir.avals import MemorySpace, memory_space_suffix
from olympus_runtime import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    SingleDeviceSharding,
)
from olympus_runtime import mesh as _mesh_lib
from olympus_runtime.mesh import ManualAxisType
from olympus_trace import sharding_types, tree_util, vma_types
from olympus_trace.core import Tracer, get_aval

from .explicit_sharding import AbstractNamedSharding, type_sharding

__all__ = [
    "make_mesh", "set_mesh", "get_mesh", "get_abstract_mesh", "use_abstract_mesh",
    "make_single_device_sharding", "typeof", "reshard", "auto_axes", "explicit_axes",
    "make_array_from_callback", "make_array_from_single_device_arrays",
    "make_array_from_process_local_data", "local_device_count", "process_index",
    "process_count", "process_indices", "host_count", "host_id", "live_arrays",
    "clear_caches", "resolve_spec", "with_sharding_constraint", "default_device",
    "check_device",
]


# ------------------------------------------------------------------ meshes

def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str],
              axis_types: Any = None, *, devices: Sequence[Any] | None = None) -> Mesh:
    """A mesh of the first ``prod(axis_shapes)`` devices (by id) with the given axes.

    As in JAX 0.10.2 the axes are ``Explicit`` unless `axis_types` says otherwise.
    """
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    axis_names = tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(
            "Number of axis names should match the number of axis shapes; got "
            f"axis_shapes={axis_shapes} and axis_names={axis_names}")
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_names)
    devs = list(rt.devices() if devices is None else devices)
    n = math.prod(axis_shapes)
    if len(devs) < n:
        raise ValueError(
            f"Number of devices {len(devs)} must be >= the product of mesh_shape "
            f"{axis_shapes}")
    arr = np.empty(n, dtype=object)
    for i, d in enumerate(devs[:n]):
        arr[i] = d
    return Mesh(arr.reshape(axis_shapes), axis_names, axis_types)


class _SetMesh:
    """``olympus.set_mesh(mesh)``: sets the mesh at once (for this thread and new ones);
    used as a context manager, restores the previous one on exit."""

    def __init__(self, mesh: Mesh):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a Mesh, got {type(mesh).__name__}: {mesh!r}")
        self._saved = _mesh_lib.set_global_mesh(mesh)
        self._prev_global = self._saved

    def __enter__(self) -> Mesh:
        return _mesh_lib.get_mesh()

    def __exit__(self, *exc: Any) -> None:
        prev_mesh, _ = self._saved
        _mesh_lib.set_global_mesh(prev_mesh)


def set_mesh(mesh: Mesh) -> _SetMesh:
    """Make `mesh` the current mesh, as a setter or a context manager (`with set_mesh(m):`);
    PartitionSpecs and sharding-in-types resolve against it.
    """
    return _SetMesh(mesh)


get_mesh = _mesh_lib.get_mesh
get_abstract_mesh = _mesh_lib.get_abstract_mesh


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh):
    """Within the block, make `mesh` (an AbstractMesh: axis names, sizes and types, no devices)
    the current abstract mesh, for tracing without devices.
    """
    if not isinstance(mesh, AbstractMesh):
        raise TypeError(f"use_abstract_mesh expects an AbstractMesh, got {mesh!r}")
    saved = _mesh_lib.push_abstract_mesh(mesh)
    try:
        yield mesh
    finally:
        _mesh_lib.pop_mesh(saved)


def make_single_device_sharding(device: Any) -> SingleDeviceSharding:
    """A SingleDeviceSharding placing a whole array on `device`."""
    return SingleDeviceSharding(device)


def resolve_spec(s: Any, what: str) -> Any:
    """A sharding for `s`: a `PartitionSpec` is taken on the current mesh."""
    if isinstance(s, PartitionSpec):
        mesh = _mesh_lib.get_mesh()
        if mesh.empty:
            raise RuntimeError(
                f"{what}: a PartitionSpec ({s}) was given but no mesh is set; use "
                "NamedSharding(mesh, spec), or set a mesh with `olympus.set_mesh(mesh)` or "
                "`with mesh:`")
        return NamedSharding(mesh, s)
    return s


# ------------------------------------------------------------------ types

class TypedAval(ShapedArray):
    """What `typeof` returns: an aval that also carries the array's sharding, printed the
    way JAX prints sharding-in-types (``float32[8@x,4]`` for a dimension split over the
    ``Explicit`` mesh axis ``x``)."""

    __slots__ = ("sharding", "_vma")

    def __init__(self, aval: Any, sharding: Any = None, vma: tuple = ()):
        super().__init__(aval.shape, aval.dtype, aval.weak_type,
                         getattr(aval, "memory_space", MemorySpace.Device))
        self.sharding = sharding
        self._vma = vma  # inside shard_map: the manual axes the value varies over

    @property
    def manual_axis_type(self) -> Any:
        """The manual mesh axes a value inside shard_map varies over (JAX's
        ``typeof(x).manual_axis_type``; Olympus tracks no unreduced/reduced axes)."""
        return ManualAxisType(varying=frozenset(self._vma))

    def _vma_str(self) -> str:
        """``{V:x}`` / ``{V:(x,y), U:z}``: JAX's suffix for the varying manual axes and the
        axes the sharding leaves unreduced (``U``) or reduced (``R``), in mesh order."""
        v = self._vma
        s = self.sharding
        spec = getattr(s, "spec", None)
        unreduced = getattr(spec, "unreduced", ())
        reduced = getattr(spec, "reduced", ())
        if not (v or unreduced or reduced):
            return ""
        names = tuple(s.mesh.axis_names) if spec is not None else ()

        def part(prefix: str, axes: Any, ordered: bool) -> str:
            axes = tuple(axes) if ordered else tuple(a for a in names if a in axes)
            inner = str(axes[0]) if len(axes) == 1 else "(" + ",".join(map(str, axes)) + ")"
            return f"{prefix}:{inner}"

        parts = [part(p, axes, p == "V") for p, axes in
                 (("V", v), ("U", unreduced), ("R", reduced)) if axes]
        return "{" + ", ".join(parts) + "}"

    def _dims(self) -> list[str]:
        s = self.sharding
        out = [str(d) for d in self.shape]
        if isinstance(s, (NamedSharding, AbstractNamedSharding)):
            explicit = set(s.mesh.explicit_axes)
            for i in range(min(len(out), len(s.spec))):
                axes = [a for a in s.spec.axes_of(i) if a in explicit]
                if len(axes) == 1:
                    out[i] += f"@{axes[0]}"
                elif axes:
                    out[i] += f"@({','.join(axes)})"
        return out

    def __str__(self) -> str:
        weak = "~" if self.weak_type else ""
        space = memory_space_suffix(self.memory_space)
        return (f"{weak}{self.dtype.name}{space}[{','.join(self._dims())}]"
                f"{self._vma_str()}")

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        space = memory_space_suffix(self.memory_space)
        return (f"ShapedArray({self.dtype.name}{space}[{','.join(self._dims())}]"
                f"{self._vma_str()}{weak})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapedArray) and (
            self.shape, self.dtype, self.weak_type, self.memory_space) == (
                other.shape, other.dtype, other.weak_type,
                getattr(other, "memory_space", MemorySpace.Device))

    __hash__ = ShapedArray.__hash__


def typeof(x: Any) -> TypedAval:
    """The abstract type of `x` (an Array, a tracer, or anything array-like), with the
    sharding its type carries (explicit mesh axes only; see `explicit_sharding`); JAX's
    TypeError for anything else (`introspection.typeof`)."""
    from olympus_trace.hitypes import hitype_handlers

    from .introspection import typeof as _aval_of

    hi = hitype_handlers.get(type(x))
    if hi is not None:  # a registered high-level value (olympus.experimental.hijax)
        return hi(x)
    if type(x) is rt.Array:
        ts = type_sharding(x, x.ndim)
        spec = getattr(x._sharding, "spec", None)
        if spec is not None and (spec.unreduced or spec.reduced):  # part of the type
            ts = AbstractNamedSharding(ts.mesh, PartitionSpec(
                *ts.spec, unreduced=spec.unreduced, reduced=spec.reduced))
        return TypedAval(x.aval, ts)
    aval = _aval_of(x)
    if getattr(aval, "inner_aval", None) is not None:  # a ref's type: Ref{float32[3]}
        return aval
    vma = (getattr(x, "_eager_vma", None) or vma_types.ordered_vma(x)) \
        if isinstance(x, Tracer) else ()
    return TypedAval(aval, type_sharding(x, len(aval.shape)), vma)


# ------------------------------------------------------------------ resharding

def _is_target(s: Any) -> bool:
    return isinstance(s, (PartitionSpec, NamedSharding, SingleDeviceSharding,
                          rt.GSPMDSharding))


def _map_targets(fn: Callable, xs: Any, shardings: Any, what: str) -> Any:
    if _is_target(shardings):
        s = resolve_spec(shardings, what)
        return tree_util.tree_map(lambda x: fn(x, s), xs)
    return tree_util.tree_map(lambda x, s: fn(x, resolve_spec(s, what)), xs, shardings)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Ask XLA's partitioner to lay `x` (a pytree) out as `shardings` says (a sharding, a
    `PartitionSpec` on the current mesh, or a pytree of them). Outside a trace the value
    is moved there at once."""
    from olympus_trace import lax_ops

    def one(v: Any, s: Any) -> Any:
        shape = tuple(get_aval(v).shape)
        rt.transfer.check_fits(s, shape, "with_sharding_constraint")
        if isinstance(v, Tracer):
            if not isinstance(s, NamedSharding):
                if s.num_devices == 1:
                    return v
                raise TypeError(
                    "with_sharding_constraint inside jit needs a NamedSharding or a "
                    f"PartitionSpec, got {s!r}")
            if _mesh_lib.get_abstract_mesh().explicit_axes or s.mesh.explicit_axes:
                sharding_types.activate_for(v)  # the constraint types the value
            return lax_ops.sharding_constraint(v, s)
        return rt.device_put(v, s)

    return _map_targets(one, x, shardings, "with_sharding_constraint")


def reshard(xs: Any, out_shardings: Any) -> Any:
    """Move `xs` (a pytree) to `out_shardings` (a sharding, a `PartitionSpec` on the
    current mesh, or a pytree of them): a copy outside jit, a sharding constraint inside."""
    return with_sharding_constraint(xs, out_shardings)


def _switched_mesh(axes: Any, kind: AxisType, name: str, shardings: Any = None) -> Any:
    """The current abstract mesh with `axes` (all by default) switched to `kind`; None
    when there is no mesh (neither current nor in `shardings`)."""
    cur = _mesh_lib.get_abstract_mesh()
    mesh = cur
    for s in tree_util.tree_leaves(shardings):
        if isinstance(s, NamedSharding):
            m = s.mesh.abstract_mesh
            if not cur.empty and m != cur:
                raise ValueError(
                    f"Context mesh {cur} must match the mesh passed to shardings {m}. "
                    "Recommended approach is to use `olympus.set_mesh` context manager.")
            mesh = m
    if mesh.empty:
        return None
    names = mesh.axis_names if axes is None else (
        (axes,) if isinstance(axes, str) else tuple(axes))
    return mesh.update_axis_types({a: kind for a in names})


def auto_axes(fun: Callable | None = None, /, *, axes: Any = None,
              out_sharding: Any = None):
    """Run `fun` with the mesh axes `axes` (all by default) ``Auto``: their shardings are
    the compiler's choice inside, so they are not in types there; the result is laid out
    as `out_sharding` says (given here or, if not, by the caller as a keyword)."""
    if fun is None:
        return lambda f: auto_axes(f, axes=axes, out_sharding=out_sharding)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if out_sharding is None:
            if "out_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'out_sharding'")
            target = kwargs.pop("out_sharding")
        else:
            target = out_sharding
        new = _switched_mesh(axes, AxisType.Auto, "auto_axes", target)
        if new is None or set(_mesh_lib.get_abstract_mesh().auto_axes) == set(
                new.auto_axes) and not _mesh_lib.get_abstract_mesh().empty:
            return fun(*args, **kwargs)
        with use_abstract_mesh(new):
            out = fun(*args, **kwargs)
        return reshard(out, target)

    return wrapped


def explicit_axes(fun: Callable | None = None, /, *, axes: Any = None,
                  in_sharding: Any = None):
    """Run `fun` with the mesh axes `axes` (all by default) ``Explicit``: its arguments
    are first laid out (and typed) as `in_sharding` says (given here or by the caller as
    a keyword); its results keep the shardings the outer mesh can express."""
    if fun is None:
        return lambda f: explicit_axes(f, axes=axes, in_sharding=in_sharding)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if in_sharding is None:
            if "in_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'in_sharding'")
            target = kwargs.pop("in_sharding")
        else:
            target = in_sharding
        new = _switched_mesh(axes, AxisType.Explicit, "explicit_axes")
        if new is None:
            raise ValueError(
                "Context mesh cannot be empty. Please use `olympus.set_mesh` API to enter "
                "into a mesh context when using `explicit_axes` API.")
        with use_abstract_mesh(new):
            args = reshard(args, target)
            out = fun(*args, **kwargs)
        return out

    return wrapped


# ------------------------------------------------------------------ building arrays

def _check_sharding(sharding: Any, shape: tuple, what: str) -> Any:
    if not isinstance(sharding, (NamedSharding, SingleDeviceSharding, rt.GSPMDSharding)):
        raise TypeError(f"{what}: sharding must be a Sharding, got {sharding!r}")
    rt.transfer.check_fits(sharding, shape, what)
    return sharding


def make_array_from_callback(shape: Sequence[int], sharding: Any,
                             data_callback: Callable[[Any], Any], dtype: Any = None) -> Any:
    """An array of `shape` laid out by `sharding` whose every shard is
    ``data_callback(index)`` (the index of the global array that shard holds)."""
    shape = tuple(int(d) for d in shape)
    _check_sharding(sharding, shape, "make_array_from_callback")
    index_map = sharding.devices_indices_map(shape)
    local = sharding.addressable_devices
    arrays = []
    for d in sharding._internal_device_list:
        if d not in local:
            continue
        block = data_callback(index_map[d])
        if dtype is not None:
            block = np.asarray(block, dtype)
        arrays.append(rt.device_put(block, d))
    return make_array_from_single_device_arrays(shape, sharding, arrays, dtype=dtype)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any,
                                         arrays: Sequence[Any], *, dtype: Any = None) -> Any:
    """Assemble single-device arrays, one per addressable device of `sharding` (in its
    device order or any order: each is matched by the device it is on)."""
    shape = tuple(int(d) for d in shape)
    _check_sharding(sharding, shape, "make_array_from_single_device_arrays")
    arrays = list(arrays)
    local = [d for d in sharding._internal_device_list if d in sharding.addressable_devices]
    if len(arrays) != len(local):
        raise ValueError(
            f"make_array_from_single_device_arrays: expected {len(local)} arrays (one per "
            f"addressable device of {sharding!r}), got {len(arrays)}")
    by_device = {}
    for i, a in enumerate(arrays):
        if type(a) is not rt.Array or len(a._sharding._internal_device_list) != 1:
            raise ValueError(
                f"make_array_from_single_device_arrays: arrays[{i}] must be an Array on a "
                f"single device, got {type(a).__name__}")
        by_device[a._sharding._internal_device_list[0]] = a
    missing = [d for d in local if d not in by_device]
    if missing:
        raise ValueError(
            f"make_array_from_single_device_arrays: no array on {missing[0]}, which the "
            f"sharding {sharding!r} needs")
    shard_shape = sharding.shard_shape(shape)
    dt = arrays[0].dtype if dtype is None else np.dtype(dtype)
    ordered = []
    for d in local:
        a = by_device[d]
        if tuple(a.shape) != shard_shape or a.dtype != dt:
            raise ValueError(
                f"make_array_from_single_device_arrays: the array on {d} is "
                f"{a.aval.str_short(short_dtypes=False)}, but {sharding!r} gives a "
                f"{dt.name}{list(shard_shape)} shard for the global shape {shape}")
        ordered.append(a)
    if len(sharding._internal_device_list) == 1:
        return ordered[0]
    aval = ShapedArray(shape, dt)
    return rt.Array(aval, sharding, ordered, True, _skip_checks=True)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Sequence[int] | None = None) -> Any:
    """A global array from this process's part of the data (dimension 0 split over the
    processes in order; with one process, `local_data` is the whole array)."""
    local_data = np.asarray(local_data)
    nproc = process_count()
    if global_shape is None:
        global_shape = (local_data.shape[0] * nproc, *local_data.shape[1:]) if nproc > 1 \
            else local_data.shape
    global_shape = tuple(global_shape)
    offset = process_index() * local_data.shape[0] if nproc > 1 else 0

    def block(index):
        idx = list(index)
        if idx:
            s = idx[0]
            start = 0 if s.start is None else s.start
            stop = global_shape[0] if s.stop is None else s.stop
            idx[0] = slice(start - offset, stop - offset)
        return local_data[tuple(idx)]

    return make_array_from_callback(global_shape, sharding, block)


# ------------------------------------------------------------------ devices, processes

def check_device(device: Any) -> Any:
    """`device` if it is a Device of this process's client (or None), else a TypeError."""
    if device is None:
        return None
    if not isinstance(device, rt.Device):
        raise TypeError(f"default_device must be a Device or None, got {device!r}")
    if device not in rt.devices():
        raise ValueError(f"default_device: {device} is not a device of this client")
    return device


@contextlib.contextmanager
def default_device(device: Any):
    """``with olympus.default_device(d):`` uncommitted arrays and computations go to `d`
    inside the block (this thread); ``olympus_default_device`` sets it process-wide."""
    state = rt.config.default_device_state
    prev = state.swap_local(check_device(device))
    try:
        yield
    finally:
        state.set_local(prev)


def local_device_count(backend: str | None = None) -> int:
    """The number of devices this process can address (on `backend`, default the default one)."""
    return rt.local_device_count(backend)


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes of a multi-process run (0 when alone)."""
    return rt.process_index()


def process_count(backend: str | None = None) -> int:
    """The number of processes taking part in the computation (1 unless
    `olympus.distributed.initialize` joined several).
    """
    return len({d.process_index for d in rt.devices(backend)})


def process_indices(backend: str | None = None) -> list[int]:
    """The sorted indices of the processes owning the backend's devices."""
    return sorted({d.process_index for d in rt.devices(backend)})


host_id = process_index
host_count = process_count


def live_arrays(platform: str | None = None) -> list:
    """Every live (not deleted) Array in the process."""
    return [a for a in rt.get_client().live_arrays() if not a.is_deleted()]


#: Caches extensions registered (``olympus.extend.backend.register_backend_cache``):
#: objects with ``cache_clear()``, cleared with Olympus's own.
registered_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def clear_caches() -> None:
    """Forget every compiled program (jit signature caches and the runtime's) and clear
    the caches extensions registered."""
    from . import jit as jit_mod

    jit_mod.clear_all()
    rt.clear_cache()
    for cache in list(registered_caches):
        cache.cache_clear()
