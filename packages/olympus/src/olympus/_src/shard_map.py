"""`olympus.shard_map` and `olympus.smap`: per-device code over a mesh.

``shard_map(f, mesh=..., in_specs=..., out_specs=...)(*args)`` runs `f` once per device on
that device's block of each argument (as `in_specs` split them) and assembles the blocks
of the results (as `out_specs` say). The collectives (``lax.psum``, ``all_gather``,
``ppermute``, ...) name mesh axes. It traces `f` at the block shapes into one
``shard_map`` equation, lowered to Shardy's ``sdy.manual_computation`` and partitioned by
XLA; outside jit the call runs as a jitted one-equation program.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from olympus_ir.prims.sharding import local_shape
from olympus_runtime import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec
from olympus_runtime import mesh as mesh_lib
from olympus_trace import lax_ops, tree_util, vma_types
from olympus_trace.core import get_aval
from olympus_trace.hitypes import HiPspec, hitype_handlers
from olympus_trace.make_olympuspr import abstractify
from olympus_trace.staging import trace_to_olympuspr

from . import shard_map_eager

__all__ = ["shard_map", "smap"]


def _is_spec(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _broadcast_specs(specs: Any, tree: Any, what: str, fname: str) -> list:
    """One spec per leaf of `tree` (`specs` is a tree prefix of it; None means P())."""
    return [s for s, _ in _specs_with_paths(specs, tree, what, fname)]


def _specs_with_paths(specs: Any, tree: Any, what: str, fname: str, path: str = "") -> list:
    """(spec, where it is in `specs`, e.g. ``[0]['a']``) per leaf of `tree`."""
    if _is_spec(specs):
        return [(specs or PartitionSpec(), path)] * len(tree_util.tree_leaves(tree))
    if isinstance(specs, HiPspec) and isinstance(tree, (tuple, list)):  # for each of them
        return [x for i, t in enumerate(tree)
                for x in _specs_with_paths(specs, t, what, fname, f"{path}[{i}]")]
    if isinstance(specs, HiPspec):  # a high-level value: one spec per array it is made of
        lo = list(specs.to_lo())
        if type(tree) not in hitype_handlers or len(lo) != len(tree_util.tree_leaves(tree)):
            raise ValueError(
                f"shard_map applied to the function '{fname}': {what} {specs!r} gives "
                f"{len(lo)} specs for a value made of {len(tree_util.tree_leaves(tree))} "
                "arrays")
        return [(s or PartitionSpec(), path) for s in lo]
    if isinstance(specs, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(specs) != len(tree):
            raise ValueError(
                f"shard_map applied to the function '{fname}' was given {what} with "
                f"{len(specs)} entries, but the function has {len(tree)} "
                f"{'arguments' if what == 'in_specs' else 'outputs'} there")
        out: list = []
        for i, (s, t) in enumerate(zip(specs, tree, strict=True)):
            out += _specs_with_paths(s, t, what, fname, f"{path}[{i}]")
        return out
    if isinstance(specs, dict) and isinstance(tree, dict) and set(specs) == set(tree):
        out = []
        for k in sorted(tree):
            out += _specs_with_paths(specs[k], tree[k], what, fname, f"{path}[{k!r}]")
        return out
    raise ValueError(
        f"shard_map applied to the function '{fname}': {what} {specs!r} is not a tree "
        "prefix of the values it applies to")


def _check_spec(mesh: Mesh, spec: PartitionSpec, what: str, fname: str) -> None:
    seen: set = set()
    for a in spec.used_axes():
        if a not in mesh.axis_names:
            raise ValueError(
                f"shard_map applied to the function '{fname}' was given {what} {spec} "
                f"naming the axis {a!r}, which is not in the mesh {mesh} (axes "
                f"{mesh.axis_names})")
        if a in seen:
            raise ValueError(f"shard_map: {what} {spec} names the mesh axis {a!r} twice")
        seen.add(a)


def _check_manual(manual: frozenset, spec: PartitionSpec, what: str) -> None:
    """With some axes left automatic (`axis_names`), specs name manual axes only (JAX's
    error)."""
    for a in spec.used_axes():
        if a not in manual:
            raise ValueError(
                f"shard_map {what} argument must refer to an axis marked as manual "
                f"({manual}), but:\n\n  {what} refers to {a!r}\n\nCheck the {what} values "
                "passed to shard_map.")


def _normalized(spec: PartitionSpec, ndim: int) -> PartitionSpec:
    """`spec` with one entry per dimension (a one-name tuple as the name; ``()`` as None)."""
    entries = [None if e == () else e[0] if isinstance(e, tuple) and len(e) == 1 else e
               for e in spec]
    return PartitionSpec(*entries, *([None] * (ndim - len(entries))))


def _typed(x: Any) -> Any:
    """``typeof(x)``; under eager grad, of the array being differentiated (which has the
    type)."""
    from .sharding import typeof

    while not hasattr(x, "_var") and getattr(x, "primal", None) is not None:
        x = x.primal
    return typeof(x)


def _type_spec(x: Any) -> PartitionSpec:
    """The PartitionSpec `x`'s sharding type says (trailing unsplit dimensions dropped)."""
    ty = _typed(x)
    entries = list(ty.sharding.spec) if ty.sharding is not None else []
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)


def _check_explicit_args(leaves: list, specs: list) -> None:
    """Over a mesh whose axes are all ``Explicit`` (and all manual), each argument's type
    already says how it is split: an in_spec that says otherwise is JAX's error (the
    caller reshards)."""
    for x, s in zip(leaves, specs, strict=True):
        ty = _typed(x)
        want = _normalized(s, ty.ndim)
        have = ty.sharding.spec if ty.sharding is not None else PartitionSpec()
        have = _normalized(have, ty.ndim)
        if tuple(have) != tuple(want):
            raise ValueError(
                f"in_specs passed to shard_map: {want} does not match the specs of the "
                f"input: {have} for arg: {ty}. `in_specs` is an optional argument so you can "
                "omit specifying it and shard_map will infer the in_specs from the "
                "arguments. If you want to reshard your inputs, you can use "
                "`olympus.reshard` on the arguments and then pass those args to shard_map.")


def shard_map(f: Callable | None = None, /, *, out_specs: Any, in_specs: Any = None,
              mesh: Mesh | AbstractMesh | None = None, axis_names: Any = frozenset(),
              check_vma: bool = True):
    """Map `f` over the blocks of its arguments on the devices of `mesh` (default: the
    current mesh). See the module docstring."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs,
                                 mesh=mesh, axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable, got {f!r}")
    fname = getattr(f, "__name__", "fun")

    @functools.wraps(f)
    def wrapped(*args):
        m = mesh if mesh is not None else mesh_lib.get_mesh()
        if isinstance(m, AbstractMesh) or m.empty:
            raise ValueError(
                f"shard_map applied to the function '{fname}' needs a concrete mesh: pass "
                "mesh=... or set one with `olympus.set_mesh(mesh)`")
        ctx = mesh_lib.get_abstract_mesh()
        if ctx.manual_axes and (ctx.axis_names, ctx.axis_sizes) != (m.axis_names,
                                                                    m.axis_sizes):
            raise ValueError(f"The context mesh {ctx} should match the mesh passed to "
                             f"shard_map {m}")
        names = frozenset(axis_names) or frozenset(m.axis_names)
        for a in names:
            if a not in m.axis_names:
                raise ValueError(
                    f"shard_map applied to the function '{fname}' was given axis_names "
                    f"{set(names)} naming {a!r}, which is not in the mesh {m} (axes "
                    f"{m.axis_names})")
        manual = tuple(a for a in m.axis_names if a in names)
        leaves, in_tree = tree_util.tree_flatten(args)
        all_explicit = len(manual) == len(m.axis_names) and \
            set(m.explicit_axes) == set(manual)
        if in_specs is None and all_explicit:
            # As JAX: over Explicit axes, each argument's type says how it is split.
            flat_in = [_type_spec(x) for x in leaves]
        elif in_specs is None:
            flat_in = []
            for i, x in enumerate(leaves):
                s = getattr(x, "_sharding", None)
                if not isinstance(s, NamedSharding) or s.mesh != m:
                    raise ValueError(
                        f"shard_map applied to the function '{fname}' was not given in_specs, "
                        f"and argument leaf {i} has no sharding on the mesh to infer them from")
                flat_in.append(s.spec)
        else:
            flat_in = _broadcast_specs(in_specs, args, "in_specs", fname)
        for s in flat_in:
            _check_spec(m, s, "in_specs", fname)
            _check_manual(names, s, "in_specs")
        if in_specs is not None and all_explicit and not shard_map_eager.in_helper():
            _check_explicit_args(leaves, flat_in)
        avals = [abstractify(x) for x in leaves]
        if shard_map_eager.applies(m, manual, leaves):
            # Outside any trace, as JAX: the body runs op by op on each device's block.
            for i, (a, s) in enumerate(zip(avals, flat_in, strict=True)):
                _local_aval(a, s, m, i, fname)
            return shard_map_eager.run(f, m, manual, leaves, in_tree, flat_in, out_specs,
                                       check_vma, _specs_with_paths, fname)
        local = []
        for i, (a, s) in enumerate(zip(avals, flat_in, strict=True)):
            local.append(_local_aval(a, s, m, i, fname))
        out_tree_box: list = []

        def flat_body(*xs):
            if check_vma:  # `olympus.typeof` shows each value's varying manual axes
                vma_types.begin(xs, [lax_ops.spec_vma(s, manual) for s in flat_in], manual)
            outs = f(*tree_util.tree_unflatten(in_tree, list(xs)))
            out_leaves, out_tree = tree_util.tree_flatten(outs)
            out_tree_box.append(out_tree)
            return out_leaves

        axes = [(a, m.shape[a]) for a in manual]
        # Inside the body the current abstract mesh has the manual axes `Manual`.
        inside = m.abstract_mesh.update_axis_types({a: AxisType.Manual for a in manual})
        saved = mesh_lib.push_abstract_mesh(inside)
        try:
            with lax_ops.bound_mesh_axes(axes):
                closed, _ = trace_to_olympuspr(flat_body, local)
        finally:
            mesh_lib.pop_mesh(saved)
        out_tree = out_tree_box[0]
        skeleton = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        flat_out, out_paths = zip(*_specs_with_paths(out_specs, skeleton, "out_specs",
                                                     fname)) if out_tree.num_leaves else ((), ())
        for s in flat_out:
            _check_spec(m, s, "out_specs", fname)
            _check_manual(names, s, "out_specs")
        outs = lax_ops.shard_map(leaves, closed, mesh=m, in_specs=tuple(flat_in),
                                 out_specs=tuple(flat_out), check_vma=check_vma,
                                 fname=fname, out_spec_paths=out_paths,
                                 manual_axes=None if len(manual) == len(m.axis_names)
                                 else manual)
        return tree_util.tree_unflatten(out_tree, list(outs))

    return wrapped


def _local_aval(a: Any, s: PartitionSpec, m: Mesh, i: int, fname: str) -> Any:
    """The type of argument leaf `i`'s block on each device."""
    try:
        return a.update(shape=local_shape(m, s, a.shape))
    except TypeError as e:
        raise ValueError(
            f"shard_map applied to the function '{fname}' was given argument leaf "
            f"{i} of type {a.str_short(short_dtypes=False)} and in_specs {s}: {e}"
        ) from None


def smap(f: Callable | None = None, /, *, in_axes: Any = 0, out_axes: Any,
         axis_name: str):
    """`shard_map` over the one mesh axis `axis_name` of the current mesh, with arguments
    split along dimension `in_axes` (None: replicated) and results joined along
    `out_axes`."""
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes,
                                 axis_name=axis_name)

    def to_spec(ax: Any) -> PartitionSpec:
        if ax is None:
            return PartitionSpec()
        return PartitionSpec(*([None] * ax), axis_name)

    def specs(axes: Any) -> Any:
        if isinstance(axes, (tuple, list)):
            return type(axes)(specs(a) for a in axes)
        return to_spec(axes)

    @functools.wraps(f)
    def wrapped(*args):
        ins = specs(in_axes) if isinstance(in_axes, (tuple, list)) else \
            tuple(to_spec(in_axes) for _ in args)
        return shard_map(f, in_specs=ins, out_specs=specs(out_axes))(*args)

    return wrapped


def _aval(x: Any) -> Any:
    return get_aval(x)
