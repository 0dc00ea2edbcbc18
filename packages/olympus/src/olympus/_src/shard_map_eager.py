"""Eager ``shard_map``: called outside any trace, the body runs one primitive at a time.

JAX runs a ``shard_map`` called outside ``jit`` op by op, so inside the body Python sees
values: ``print(x)`` shows each device's block ("On cpu:0 at mesh coordinates (i,) =
(0,): ..."), and an invariant scalar can drive Python control flow. Olympus does the same
here, for a shard_map over every mesh axis with concrete arguments.

A value in the body is a `ShardMapTracer`: a global array whose leading axis holds one block
per device (mesh order, split over all mesh axes), and the manual axes it varies over
(`vma_types.eqn_vma`, the traced body's rule; every axis when ``check_vma=False``). Each
primitive runs as a cached ``jit`` of a one-primitive ``shard_map`` over those blocks.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from olympus_ir import ShapedArray
from olympus_runtime import PartitionSpec
from olympus_runtime import mesh as mesh_lib
from olympus_trace import lax_ops, tree_util, vma_types
from olympus_trace.core import (
    EvalTrace,
    Trace,
    Tracer,
    bind,
    current_trace,
    escaped_tracer_error,
    set_current_trace,
)
from olympus_trace.lax_ops import collectives as _collectives
from olympus_trace.lax_ops.sharding import _out_vma_error, _out_vma_failure

__all__ = ["applies", "run", "in_helper"]

_helper = threading.local()


def in_helper() -> bool:
    """Whether the shard_map being called is one of this module's own (one primitive, or
    moving blocks), whose arguments are this module's stacked blocks, not the user's:
    their shardings are not checked against its in_specs."""
    return getattr(_helper, "depth", 0) > 0


def _jit_shard_map(body: Any, mesh: Any, in_specs: Any, out_specs: Any) -> Any:
    from .jit import jit
    from .shard_map import shard_map

    f = jit(shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=False))

    def call(*xs):
        _helper.depth = getattr(_helper, "depth", 0) + 1
        try:
            return f(*xs)
        finally:
            _helper.depth -= 1
    return call


def applies(mesh: Any, manual: tuple, leaves: list) -> bool:
    """Whether a shard_map call runs eagerly: outside any trace, over every mesh axis, on
    values (no tracers)."""
    return (type(current_trace()) is EvalTrace and len(manual) == len(mesh.axis_names)
            and not in_helper() and not any(isinstance(x, Tracer) for x in leaves))


def _stacked_spec(manual: tuple) -> PartitionSpec:
    return PartitionSpec(manual if len(manual) > 1 else manual[0])


def _make_applier(prim: Any, params: dict, mesh: Any, manual: tuple, is_tracer: tuple):
    """A jitted shard_map applying `prim` to one block per device of its tracer operands
    (the other operands, replicated, are passed whole)."""
    stacked = _stacked_spec(manual)

    def body(*xs):
        args = [lax_ops.squeeze(x, (0,)) if t else x for x, t in zip(xs, is_tracer,
                                                                      strict=True)]
        out = bind(prim, *args, **params)
        if prim.multiple_results:
            return [lax_ops.expand_dims(o, (0,)) for o in out]
        return lax_ops.expand_dims(out, (0,))

    in_specs = tuple(stacked if t else PartitionSpec() for t in is_tracer)
    return _jit_shard_map(body, mesh, in_specs, stacked)


@functools.lru_cache(maxsize=512)
def _cached_applier(prim: Any, params: tuple, mesh: Any, manual: tuple, is_tracer: tuple):
    return _make_applier(prim, dict(params), mesh, manual, is_tracer)


def _outside(trace: ShardMapTrace):
    """Run with the context the shard_map was called in (no body axes bound)."""
    saved_axes = list(_collectives._mesh_axes)
    del _collectives._mesh_axes[:]
    saved_mesh = mesh_lib.push_abstract_mesh(trace.outer_abstract)
    return saved_axes, saved_mesh


def _restore(saved: tuple) -> None:
    saved_axes, saved_mesh = saved
    mesh_lib.pop_mesh(saved_mesh)
    _collectives._mesh_axes[:] = saved_axes


class ShardMapTrace(Trace):
    """The trace of an eager shard_map body."""

    name = "shard_map"

    def __init__(self, mesh: Any, manual: tuple, check_vma: bool, parent: Trace,
                 outer_abstract: Any):
        super().__init__()
        self.mesh = mesh
        self.manual = manual
        self.check_vma = check_vma
        self.parent = parent
        self.outer_abstract = outer_abstract

    def process_primitive(self, prim, args, params):
        is_tracer = tuple(isinstance(a, ShardMapTracer) and a._trace is self for a in args)
        for a, t in zip(args, is_tracer, strict=True):
            if isinstance(a, Tracer) and not t:
                raise escaped_tracer_error(a)
        vals = [a.val if t else a for a, t in zip(args, is_tracer, strict=True)]
        if self.check_vma:
            empty = frozenset()
            vma = vma_types.eqn_vma(prim, params,
                                    [a.vma if t else empty
                                     for a, t in zip(args, is_tracer, strict=True)],
                                    self.manual)
        else:
            vma = frozenset(self.manual)
        try:
            key = tuple(params.items())
            hash(key)
        except TypeError:
            key = None
        f = _make_applier(prim, params, self.mesh, self.manual, is_tracer) if key is None \
            else _cached_applier(prim, key, self.mesh, self.manual, is_tracer)
        saved = _outside(self)
        try:
            with set_current_trace(self.parent):
                out = f(*vals)
        finally:
            _restore(saved)
        if prim.multiple_results:
            return [ShardMapTracer(self, o, vma) for o in out]
        return ShardMapTracer(self, out, vma)


class ShardMapTracer(Tracer):
    """A value in an eager shard_map body: every device's block, stacked."""

    __slots__ = ("val", "vma")

    def __init__(self, trace: ShardMapTrace, val: Any, vma: frozenset):
        self._trace = trace
        self.val = val
        self.vma = vma

    @property
    def aval(self) -> ShapedArray:
        a = self.val.aval
        return ShapedArray(tuple(a.shape[1:]), a.dtype, a.weak_type)

    @property
    def _eager_vma(self) -> tuple:
        """The varying manual axes in mesh order (what ``typeof`` shows as ``{V:...}``;
        none without ``check_vma``, as JAX types them)."""
        if not self._trace.check_vma:
            return ()
        return tuple(a for a in self._trace.manual if a in self.vma)

    def to_concrete_value(self):
        # As JAX: a value invariant over every axis is the same on each device.
        if self._trace.check_vma and not self.vma:
            return np.asarray(self.val)[0]
        return None

    def __str__(self) -> str:
        mesh = self._trace.mesh
        blocks = list(self.val)
        names = f"({', '.join(map(str, mesh.axis_names))},)"
        return "\n".join(
            f"On {device} at mesh coordinates {names} = {idx}:\n{block}\n"
            for (idx, device), block in zip(np.ndenumerate(mesh.devices), blocks,
                                            strict=True))

    __repr__ = __str__


def _to_blocks(trace: ShardMapTrace, x: Any, spec: PartitionSpec) -> Any:
    """The argument `x`, split by `spec`, as one block per device."""
    return _mover(_add_block_axis, trace.mesh, spec, _stacked_spec(trace.manual))(x)


def _from_blocks(trace: ShardMapTrace, val: Any, spec: PartitionSpec) -> Any:
    """The result laid out as `spec` says, from one block per device."""
    return _mover(_drop_block_axis, trace.mesh, _stacked_spec(trace.manual), spec)(val)


@functools.lru_cache(maxsize=256)
def _mover(fn: Any, mesh: Any, in_spec: PartitionSpec, out_spec: PartitionSpec) -> Any:
    return _jit_shard_map(fn, mesh, in_spec, out_spec)


def _add_block_axis(b: Any) -> Any:
    return lax_ops.expand_dims(b, (0,))


def _drop_block_axis(b: Any) -> Any:
    return lax_ops.squeeze(b, (0,))


def run(f: Any, mesh: Any, manual: tuple, leaves: list, in_tree: Any, flat_in: list,
        out_specs: Any, check_vma: bool, specs_with_paths: Any, fname: str) -> Any:
    """Call the shard_map body `f` eagerly; the results placed as `out_specs` say."""
    from olympus_runtime import AxisType

    outer_abstract = mesh_lib.get_abstract_mesh()
    trace = ShardMapTrace(mesh, manual, check_vma, current_trace(), outer_abstract)
    args = [ShardMapTracer(trace, _to_blocks(trace, x, s),
                        lax_ops.spec_vma(s, manual) if check_vma else frozenset(manual))
            for x, s in zip(leaves, flat_in, strict=True)]
    inside = mesh.abstract_mesh.update_axis_types({a: AxisType.Manual for a in manual})
    saved = mesh_lib.push_abstract_mesh(inside)
    try:
        with lax_ops.bound_mesh_axes([(a, mesh.shape[a]) for a in manual]), \
                set_current_trace(trace):
            outs = f(*tree_util.tree_unflatten(in_tree, args))
    finally:
        mesh_lib.pop_mesh(saved)
    trace.invalidate()
    out_leaves, out_tree = tree_util.tree_flatten(outs)
    skeleton = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    flat_out = [s for s, _ in specs_with_paths(out_specs, skeleton, "out_specs", fname)] \
        if out_tree.num_leaves else []
    results = []
    for x, s in zip(out_leaves, flat_out, strict=True):
        if isinstance(x, ShardMapTracer) and x._trace is trace:
            val, vma = x.val, x.vma
        else:
            val, vma = _to_blocks(trace, x, PartitionSpec()), frozenset()
        if check_vma and vma - lax_ops.spec_vma(s, manual):
            # JAX's eager path checks each result in a shard_map of its own helper, whose
            # name its message carries.
            sizes = {a: mesh.shape[a] for a in manual}
            raise ValueError(_out_vma_error("_rem_singleton", manual, sizes,
                                            [_out_vma_failure("", s, vma, manual)]))
        results.append(_from_blocks(trace, val, s))
    return tree_util.tree_unflatten(out_tree, results)
