"""Colocated Python functions, run in this process.

A callable carries a `Specialization` (input specs, an output-spec function, devices;
each may be fixed once). A call checks its arguments as JAX does (arrays only, one device
list, devices known when there is no array), then runs the function. The first call of a
specialization per input signature is where JAX finds the output specs: without an
``out_specs_fn`` the results must be arrays; with one, the specs it returns (and the
input specs) must carry shardings. Later calls just run the function.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Specialization", "make_callable", "spec_of", "check_local_devices"]

_NO_DEVICES = ("No devices found. colocated_python function without input arguments must "
               "be first specialized with devices.")


def _array_type():
    from ... import Array

    return Array


def spec_of(x: Any):
    """The ShapeDtypeStruct of the array `x` (JAX's error for anything else)."""
    from ... import ShapeDtypeStruct

    if not isinstance(x, _array_type()):
        raise ValueError("colocated_python only supports olympus.Array as input and output, "
                         f"but got {type(x)}.")
    return ShapeDtypeStruct(shape=x.shape, dtype=x.dtype, sharding=x.sharding)


def _device_list(devices: Sequence) -> tuple:
    return tuple(devices)


def _infer_devices(leaves: Sequence) -> tuple | None:
    lists = {}
    for x in leaves:
        sharding = getattr(x, "sharding", None)
        if sharding is not None:
            dl = sharding._internal_device_list
            lists.setdefault(tuple(dl), dl)
    if not lists:
        return None
    if len(lists) != 1:
        shown = "{" + ", ".join(repr(v) for v in lists.values()) + "}"
        raise ValueError("All arguments must use the same device list, but got multiple "
                         f"device lists: {shown}.")
    return next(iter(lists))


def check_local_devices(devices: Sequence) -> None:
    """Refuse devices of another process: running there would mean sending the function
    serialized, which Olympus never does."""
    from ... import process_index

    here = process_index()
    remote = [d for d in devices if d.process_index != here]
    if remote:
        raise NotImplementedError(
            f"colocated_python: devices {remote} belong to process "
            f"{remote[0].process_index}, not this one ({here}). Running Python code there "
            "means sending it serialized (pickled), and Olympus never serializes or "
            "unpickles functions; call it with this process's devices.")


def _need_sharding(specs: Sequence, what: str) -> None:
    for i, s in enumerate(specs):
        if getattr(s, "sharding", None) is None:
            # JAX fails here with "'NoneType' object has no attribute 'memory_kind'".
            raise AttributeError(
                f"colocated_python: {what} leaf {i} ({s!r}) has no sharding; colocated "
                "Python needs each spec's sharding")


@dataclasses.dataclass(frozen=True)
class Specialization:
    """What a colocated callable was specialized with (None: not given)."""

    in_specs_treedef: Any = None
    in_specs_leaves: tuple | None = None
    out_specs_fn: Callable[..., Any] | None = None
    devices: tuple | None = None

    def update(self, *, in_specs_treedef=None, in_specs_leaves=None, out_specs_fn=None,
               devices=None) -> Specialization:
        """A copy with the given fields set (each may be set only once)."""
        if in_specs_treedef is not None or in_specs_leaves is not None:
            if self.in_specs_treedef is not None or self.in_specs_leaves is not None:
                raise ValueError("in_specs already specified")
        if out_specs_fn is not None and self.out_specs_fn is not None:
            raise ValueError("out_specs_fn already specified")
        if devices is not None:
            if self.devices is not None:
                raise ValueError("devices already specified")
            devices = _device_list(devices)
        return Specialization(
            self.in_specs_treedef if in_specs_treedef is None else in_specs_treedef,
            self.in_specs_leaves if in_specs_leaves is None else in_specs_leaves,
            self.out_specs_fn if out_specs_fn is None else out_specs_fn,
            self.devices if devices is None else devices)


class _Signatures:
    """The input signatures a callable has run with (their first run is the one that
    checks output specs)."""

    def __init__(self):
        self._seen: set = set()
        self._lock = threading.Lock()

    def first(self, key) -> bool:
        with self._lock:
            if key in self._seen:
                return False
            self._seen.add(key)
            return True


def _signature(treedef, leaves, devices) -> tuple:
    return (treedef, devices, tuple((x.shape, x.dtype, x.sharding) for x in leaves))


def _run_first(fun, spec: Specialization, args, kwargs, leaves):
    """The first run of a signature: JAX's output-spec discovery, in process."""
    from ... import tree_util

    if spec.in_specs_leaves is not None:
        _need_sharding(spec.in_specs_leaves, "in_specs")
    if spec.out_specs_fn is not None:
        arg_specs, kwarg_specs = tree_util.tree_map(spec_of, (args, kwargs))
        out_specs = spec.out_specs_fn(*arg_specs, **kwarg_specs)
        _need_sharding(tree_util.tree_leaves(out_specs), "out_specs")
        return fun(*args, **kwargs)
    result = fun(*args, **kwargs)
    for leaf in tree_util.tree_leaves(result):
        spec_of(leaf)
    return result


def make_callable(fun: Callable[..., Any],
                  specialization: Specialization | None = None) -> Callable[..., Any]:
    """`fun` as a colocated callable with `specialization` (see the module docstring)."""
    from ... import tree_util

    spec = specialization or Specialization()
    signatures = _Signatures()

    def specialize(in_specs: Any = None, out_specs_fn: Callable[..., Any] | None = None,
                   devices: Sequence | None = None) -> Callable[..., Any]:
        """A callable with these input specs (a pytree of ShapeDtypeStruct for
        ``(args, kwargs)``), output-spec function and devices fixed."""
        treedef = leaves = None
        if in_specs is not None:
            flat, treedef = tree_util.tree_flatten(in_specs)
            leaves = tuple(flat)
        return make_callable(fun, spec.update(in_specs_treedef=treedef,
                                              in_specs_leaves=leaves,
                                              out_specs_fn=out_specs_fn, devices=devices))

    @functools.wraps(fun)
    def call(*args, **kwargs):
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        if not leaves and spec.devices is None:
            raise ValueError(_NO_DEVICES)
        for x in leaves:
            spec_of(x)
        devices = spec.devices if spec.devices is not None else _infer_devices(leaves)
        check_local_devices(devices)
        if signatures.first(_signature(treedef, leaves, devices)):
            return _run_first(fun, spec, args, kwargs, leaves)
        return fun(*args, **kwargs)

    call.specialize = specialize
    return call
