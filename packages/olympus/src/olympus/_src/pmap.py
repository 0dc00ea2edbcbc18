"""`olympus.pmap`: map a function over the leading axis of its arguments, one device per
member, compiled once per signature.

Built on `shard_map` over a one-axis mesh of the devices (named `axis_name`): each device
gets its member's slice (the mapped axis removed), runs `f`, and the results are stacked
along `out_axes`, so the collectives of `olympus.lax` work over `axis_name` and vmap
axes inside compose with it. The whole call is one jitted program (`jit` of the
shard_map), which also gives pmap the AOT stages: ``pmap(f).lower(x).compile()``.
Results are laid out by a `NamedSharding` on that mesh (JAX's `PmapSharding` is not
reproduced).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

import olympus_runtime as rt
from olympus_runtime import Mesh, PartitionSpec
from olympus_trace import lax_ops, tree_util
from olympus_trace.make_olympuspr import abstractify

from .jit import jit
from .shard_map import shard_map

__all__ = ["pmap"]


def _flat_axes(axes: Any, tree: Any, what: str) -> list:
    """One axis (int or None) per leaf of `tree`; `axes` is a tree prefix of it."""
    if axes is None or isinstance(axes, int):
        return [axes] * len(tree_util.tree_leaves(tree))
    if isinstance(axes, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(axes) != len(tree):
            raise ValueError(
                f"pmap {what} specification must be a tree prefix of the corresponding "
                f"value, got specification {axes} for value tree with {len(tree)} entries")
        out: list = []
        for a, t in zip(axes, tree, strict=True):
            out += _flat_axes(a, t, what)
        return out
    if isinstance(axes, dict) and isinstance(tree, dict):
        out = []
        for k in sorted(tree):
            out += _flat_axes(axes.get(k), tree[k], what)
        return out
    raise ValueError(f"pmap {what} specification {axes!r} is not a tree prefix of the value")


def _spec(ax: int | None, name: Any) -> PartitionSpec:
    if ax is None:
        return PartitionSpec()
    return PartitionSpec(*([None] * ax), name)


def pmap(fun: Callable, axis_name: Any = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Iterable[int] = (),
         devices: Sequence[Any] | None = None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums: int | Iterable[int] = ()):
    """Parallel map of `fun` over the leading (`in_axes`) axis of its arguments."""
    if not callable(fun):
        raise TypeError(f"pmap requires a callable, got {fun!r}")
    if backend not in (None, "cpu"):
        raise ValueError(f"pmap: unknown backend {backend!r}; only 'cpu' is available")
    statics = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(f"pmap: axis_name must be a string, got {axis_name!r}")
    name = axis_name if axis_name is not None else "_internal_pmap_axis_name"  # as JAX names it
    fname = getattr(fun, "__name__", "fun")
    cache: dict = {}

    def program(args: tuple) -> tuple[Callable, tuple]:
        """The jitted shard_map for these arguments, and the dynamic arguments."""
        nargs = len(args)
        st = tuple(i % nargs for i in statics if -nargs <= i < nargs)
        dyn = tuple(a for i, a in enumerate(args) if i not in st)
        static_vals = tuple((i, args[i]) for i in st)
        if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(dyn):
            raise ValueError(
                f"pmap in_axes specification must be a tree prefix of the corresponding "
                f"value, got specification {in_axes} for value tree with {len(dyn)} entries")
        ins = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes] * len(dyn)
        flat_in = _flat_axes(list(ins), list(dyn), "in_axes")
        leaves = tree_util.tree_leaves(dyn)
        sizes = set()
        for x, ax in zip(leaves, flat_in, strict=True):
            if ax is not None:
                shape = abstractify(x).shape
                if not -len(shape) <= ax < len(shape):
                    raise ValueError(f"pmap in_axes {ax} is out of bounds for an argument of "
                                     f"shape {shape}")
                sizes.add(shape[ax % len(shape)])
        if axis_size is not None:
            sizes.add(axis_size)
        if len(sizes) != 1:
            raise ValueError(
                "pmap got inconsistent sizes for array axes to be mapped: "
                f"{sorted(sizes)}" if sizes else
                "pmap requires at least one argument with a mapped axis (or axis_size)")
        n = sizes.pop()
        devs = list(devices) if devices is not None else rt.devices()
        if n > len(devs):
            raise ValueError(
                f"compiling computation that requires {n} logical devices, but only "
                f"{len(devs)} XLA devices are available (num_replicas={n})")
        devs = devs[:n] if devices is None else devs
        if len(devs) != n:
            raise ValueError(f"pmap: {len(devs)} devices given for a mapped axis of size {n}")
        key = (n, tuple(d.id for d in devs), static_vals, tree_util.tree_structure(dyn),
               tuple(flat_in))
        prog = cache.get(key)
        if prog is None:
            prog = _build(fun, fname, name, n, devs, nargs, st, dict(static_vals), dyn,
                          leaves, flat_in, out_axes, donate)
            cache[key] = prog
        return prog, tuple(leaves)

    @functools.wraps(fun)
    def mapped(*args, **kwargs):
        if kwargs:
            raise NotImplementedError("pmap does not support keyword arguments")
        prog, leaves = program(args)
        return prog(*leaves)

    def lower(*args, **kwargs):
        if kwargs:
            raise NotImplementedError("pmap does not support keyword arguments")
        prog, leaves = program(args)
        return prog.lower(*leaves)

    mapped.lower = lower
    return mapped


def _build(fun, fname, name, n, devs, nargs, st, statics, dyn, leaves, flat_in, out_axes,
           donate) -> Callable:
    """jit(shard_map(per-member function)) for one signature."""
    from olympus_trace.staging import trace_to_olympuspr

    mesh = Mesh(np.array(devs, dtype=object), (name,))
    axes = [None if a is None else a % abstractify(x).ndim
            for x, a in zip(leaves, flat_in, strict=True)]
    in_tree = tree_util.tree_structure(dyn)
    out_tree_box: list = []

    def member(*xs):
        """`fun` on one member's values (mapped axes removed): flat outputs."""
        d = iter(tree_util.tree_unflatten(in_tree, list(xs)))
        full = [statics[i] if i in st else next(d) for i in range(nargs)]
        outs = fun(*full)
        out_leaves, out_tree = tree_util.tree_flatten(outs)
        out_tree_box.append(out_tree)
        return out_leaves

    member_avals = []
    for x, a in zip(leaves, axes, strict=True):
        av = abstractify(x)
        if a is not None:
            av = av.update(shape=av.shape[:a] + av.shape[a + 1:])
        member_avals.append(av)
    with lax_ops.bound_mesh_axes([(name, n)]):
        trace_to_olympuspr(member, member_avals)  # to learn the output structure
    out_tree = out_tree_box[-1]
    skeleton = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    out_ax = _flat_axes(out_axes, skeleton, "out_axes")

    def block(*blocks):
        xs = [b if a is None else lax_ops.squeeze(b, (a,))
              for b, a in zip(blocks, axes, strict=True)]
        outs = member(*xs)
        return tuple(o if a is None else lax_ops.expand_dims(o, (a % (len(o.shape) + 1),))
                     for o, a in zip(outs, out_ax, strict=True))

    sm = shard_map(block, mesh=mesh, in_specs=tuple(_spec(a, name) for a in axes),
                   out_specs=tuple(_spec(a, name) for a in out_ax), check_vma=False)

    def run(*flat):
        return tree_util.tree_unflatten(out_tree, list(sm(*flat)))

    run.__name__ = f"pmap_{fname}"
    leaf_donate = []
    dyn_positions = [j for j in range(nargs) if j not in st]
    for pos, a in zip(dyn_positions, dyn, strict=True):
        leaf_donate += [pos in donate] * len(tree_util.tree_leaves(a))
    return jit(run, donate_argnums=tuple(i for i, d in enumerate(leaf_donate) if d))
