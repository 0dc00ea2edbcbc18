"""Where a jitted call runs: devices, mesh and the sharding of every input and output.

Decided once per signature from ``jit``'s `in_shardings` / `out_shardings` (shardings,
`PartitionSpec` s on the current mesh, pytrees of them; None leaves unspecified) and the
shardings of committed Array arguments (JAX's rule: committed inputs decide where the
computation runs). Everything that would crash or silently misbehave inside jaxlib (an
argument sharded unlike its `in_shardings`, arguments committed to different devices, a
sharding that does not fit its array) is a ValueError here, before C++.

With several devices the computation is lowered with Shardy annotations on one mesh (the
`NamedSharding` s' mesh) and partitioned by XLA; unspecified outputs are left to XLA's
sharding propagation.
"""

from __future__ import annotations

from typing import Any

import olympus_runtime as rt
from olympus_ir.avals import ShapeDtypeStruct
from olympus_runtime import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding
from olympus_runtime import mesh as mesh_lib
from olympus_runtime.layout import Format
from olympus_trace import tree_util

__all__ = ["Placement", "place", "normalize_shardings", "sdy_sharding", "sdy_mesh"]

_SHARDING_TYPES = (NamedSharding, SingleDeviceSharding, rt.GSPMDSharding)


def _is_spec_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (PartitionSpec, Format, *_SHARDING_TYPES))


def normalize_shardings(value: Any, what: str) -> Any:
    """Check a jit `in_shardings`/`out_shardings` argument; return a hashable form."""
    if value is None or _is_spec_leaf(value):
        return value
    leaves, tree = tree_util.tree_flatten(value, is_leaf=_is_spec_leaf)
    for leaf in leaves:
        if not _is_spec_leaf(leaf):
            raise TypeError(
                f"jit {what} leaves must be Shardings, PartitionSpecs or None, got "
                f"{type(leaf).__name__}: {leaf!r}")
    return ("tree", tree, tuple(leaves))


def _denormalize(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "tree":
        return tree_util.tree_unflatten(value[1], list(value[2]))
    return value


def _broadcast(prefix: Any, tree: Any, what: str) -> list:
    """One entry of `prefix` per leaf of `tree` (`prefix` is a tree prefix of `tree`)."""
    if _is_spec_leaf(prefix):
        return [prefix] * len(tree_util.tree_leaves(tree))
    if isinstance(prefix, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(tree) != len(prefix):
            n = len(tree) if isinstance(tree, (tuple, list)) else 1
            raise ValueError(
                f"jit {what} has {len(prefix)} entries but the function has {n} "
                f"{'arguments' if what == 'in_shardings' else 'outputs'} there; give one "
                "sharding (or None) per argument, or a single sharding for all")
        out: list = []
        for p, t in zip(prefix, tree, strict=True):
            out += _broadcast(p, t, what)
        return out
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise ValueError(f"jit {what}: the dict {sorted(prefix)} does not match the "
                             "arguments' structure")
        out = []
        for k in sorted(tree):
            out += _broadcast(prefix[k], tree[k], what)
        return out
    raise TypeError(f"jit {what}: unsupported entry {prefix!r}")


class Placement:
    """The devices of one signature and the sharding of each argument and result."""

    __slots__ = ("devices", "mesh", "num_partitions", "in_shardings", "out_specified",
                 "arg_attrs", "result_attrs", "meshes")

    def __init__(self, devices, mesh, in_shardings, out_specified, arg_attrs, result_attrs,
                 meshes):
        self.devices = devices
        self.mesh = mesh
        self.num_partitions = len(devices) if devices else 1
        self.in_shardings = in_shardings  # per flat argument: where to put it (or None)
        self.out_specified = out_specified  # per flat result: a sharding or None
        self.arg_attrs = arg_attrs
        self.result_attrs = result_attrs
        self.meshes = meshes


DEFAULT = Placement(None, None, None, None, None, None, ())


def _resolve(s: Any, what: str) -> Any:
    if isinstance(s, Format):  # its layout is the `layouts` module's concern
        s = s.sharding
    if isinstance(s, PartitionSpec):
        mesh = mesh_lib.get_mesh()
        if mesh.empty:
            raise RuntimeError(
                f"jit {what}: a PartitionSpec ({s}) was given but no mesh is set; use "
                "NamedSharding(mesh, spec), or set a mesh with `olympus.set_mesh(mesh)`")
        return NamedSharding(mesh, s)
    return s


def _struct_sharding(x: Any) -> Any:
    """The sharding a `ShapeDtypeStruct` argument carries (a PartitionSpec on the current
    mesh): like a committed array's, it places the argument, as JAX's AOT tracing does."""
    s = getattr(x, "sharding", None) if type(x) is ShapeDtypeStruct else None
    if s is None:
        return None
    return _resolve(s, "ShapeDtypeStruct sharding")


def _where(s: Any) -> str:
    ids = [d.id for d in s._internal_device_list]
    return f"with device ids {ids} on platform CPU"


def place(fname: str, arg_names, in_avals, leaves, dyn_args, in_shardings, out_shardings,
          out_tree, out_avals, constraint_shardings=(), out_types=()) -> Placement:
    """The placement of a call: see the module docstring. `out_types` (from a trace in
    explicit-sharding mode: one sharding type or None per result) pins the results left
    unspecified to the shardings their types say."""
    n = len(in_avals)
    in_raw = _denormalize(in_shardings)
    out_raw = _denormalize(out_shardings)
    flat_in = [None] * n
    if in_raw is not None:
        if _is_spec_leaf(in_raw):
            flat_in = [_resolve(in_raw, "in_shardings")] * n
        else:
            prefix = tuple(in_raw) if isinstance(in_raw, list) else in_raw
            if not isinstance(prefix, tuple):
                prefix = (prefix,)
            flat = [_resolve(s, "in_shardings")
                    for s in _broadcast(prefix, tuple(dyn_args), "in_shardings")]
            flat_in = flat + [None] * (n - len(flat))
    flat_out = [None] * len(out_avals)
    if out_raw is not None:
        skeleton = tree_util.tree_unflatten(out_tree, list(range(len(out_avals))))
        flat_out = [_resolve(s, "out_shardings")
                    for s in _broadcast(out_raw, skeleton, "out_shardings")]

    chosen: list = [None] * n
    sources: list[tuple[str, Any]] = []
    for i, (aval, x, s_in) in enumerate(zip(in_avals, leaves, flat_in, strict=True)):
        s_arg = x._sharding if type(x) is rt.Array and x._committed else _struct_sharding(x)
        if s_in is not None:
            rt.transfer.check_fits(s_in, tuple(aval.shape), "pjit")
            if s_arg is not None and not s_in.is_equivalent_to(s_arg, len(aval.shape)):
                raise ValueError(
                    "Sharding passed to jit does not match the sharding on the respective "
                    f"arg. Got jit sharding: {s_in!r},\narg sharding: {s_arg!r} for arg "
                    f"type: {aval.str_short(short_dtypes=False)}")
            chosen[i] = s_in
            sources.append((f"in_shardings of argument {arg_names[i]} of {fname}", s_in))
        elif s_arg is not None:
            chosen[i] = s_arg
            sources.append((f"argument {arg_names[i]} of {fname} with shape "
                            f"{aval.str_short(short_dtypes=False)}", s_arg))
    for j, s in enumerate(flat_out):
        if s is not None:
            rt.transfer.check_fits(s, tuple(out_avals[j].shape), "pjit")
            sources.append((f"out_shardings of result {j} of {fname}", s))
    outer = len(sources)  # shardings given from outside the function's body
    for s in constraint_shardings:
        sources.append((f"a sharding constraint or shard_map in {fname}", s))
    for what, s in sources:
        if isinstance(s, NamedSharding) and s.spec.unreduced:
            raise NotImplementedError(
                f"jit of {fname}: {what} is {s!r}, unreduced over mesh axes; "
                "Olympus makes such arrays with `device_put` (outside jit) only, and reads "
                "them through their `addressable_shards`")
    if not sources:
        return DEFAULT

    first_what, first = sources[0]
    devs = tuple(first._internal_device_list)
    for what, s in sources[1:]:
        if set(s._internal_device_list) != set(devs):
            raise ValueError(
                "Received incompatible devices for jitted computation. Got "
                f"{first_what} and {_where(first)} and {what} and {_where(s)}")
    if len(devs) == 1:
        d = devs[0]
        single = rt.sharding_for(d)
        # (the results' own shardings matter for their memory kinds only)
        return Placement((d,), None, [single] * n, flat_out, None, None, ())

    mesh = next((s.mesh for _, s in sources if isinstance(s, NamedSharding)), None)
    if mesh is None:
        raise NotImplementedError(
            f"jit of {fname}: shardings over several devices must be NamedShardings (got "
            f"{first!r}); build them from a Mesh")
    for what, s in sources:
        if isinstance(s, NamedSharding) and (
            s.mesh._flat_devices_tuple != mesh._flat_devices_tuple
            or s.mesh.axis_names != mesh.axis_names or s.mesh.axis_sizes != mesh.axis_sizes
        ):
            raise ValueError(
                f"Received incompatible meshes for jitted computation: {first_what} uses "
                f"{mesh} and {what} uses {s.mesh}; all shardings of one computation must "
                "use the same mesh")
    devs = mesh._flat_devices_tuple
    context = mesh_lib.get_mesh()
    in_context = not context.empty and context._flat_devices_tuple == devs
    # As JAX prints it: unspecified inputs are replicated on the context mesh when it is
    # this mesh, on the empty mesh when shardings came from outside the body, else bare.
    unspecified = "mesh" if in_context else "empty_mesh" if outer else None
    in_place: list = []
    arg_attrs: list = []
    for i, aval in enumerate(in_avals):
        s = chosen[i]
        if s is not None and not isinstance(s, NamedSharding):
            named = rt.named_from_hlo(mesh, s._to_xla_hlo_sharding(len(aval.shape)),
                                      len(aval.shape))
            if named is None:
                raise ValueError(
                    f"argument {arg_names[i]} of {fname} has sharding {s!r}, which the mesh "
                    f"{mesh} cannot express")
            s = named
        if s is None:
            in_place.append(NamedSharding(mesh, PartitionSpec()))
            arg_attrs.append(None if unspecified is None else
                             sdy_sharding(unspecified, PartitionSpec(), len(aval.shape)))
        else:
            in_place.append(s)
            arg_attrs.append(sdy_sharding("mesh", s.spec, len(aval.shape)))
    if out_types:
        flat_out = [_typed_result(mesh, ty, a) if s is None else s
                    for s, ty, a in zip(flat_out, out_types, out_avals, strict=True)]
    result_attrs = [None if s is None else sdy_sharding("mesh", s.spec, len(a.shape))
                    for s, a in zip(flat_out, out_avals, strict=True)]
    meshes = [sdy_mesh("mesh", mesh)]
    if any(a is not None and "@empty_mesh" in a for a in arg_attrs):
        meshes.append(sdy_mesh("empty_mesh", None))
    return Placement(devs, mesh, in_place, flat_out, arg_attrs, result_attrs, meshes)


def _typed_result(mesh: Mesh, ty: Any, aval: Any) -> NamedSharding:
    """The sharding of a result whose sharding type is `ty` (None: replicated)."""
    if ty is None:
        return NamedSharding(mesh, PartitionSpec(*([None] * len(aval.shape))))
    return NamedSharding(mesh, PartitionSpec(*ty.spec))


def constraint_shardings(closed: Any) -> list:
    """The shardings of every ``sharding_constraint`` in `closed` (nested bodies too)."""
    from olympus_ir import ClosedOlympuspr, Olympuspr

    found: list = []

    def walk(jpr: Any) -> None:
        for eqn in jpr.eqns:
            if eqn.primitive.name == "sharding_constraint":
                found.append(eqn.params["sharding"])
            elif eqn.primitive.name == "shard_map":
                found.append(NamedSharding(eqn.params["mesh"], PartitionSpec()))
            for v in eqn.params.values():
                for sub in (v if isinstance(v, (tuple, list)) else (v,)):
                    if isinstance(sub, ClosedOlympuspr):
                        walk(sub.olympuspr)
                    elif isinstance(sub, Olympuspr):
                        walk(sub)

    walk(closed.olympuspr)
    return found


def sdy_mesh(name: str, mesh: Mesh | None) -> str:
    """``sdy.mesh @name = <[...]>`` as JAX 0.10.2 prints it (with its stablehlo.mesh)."""
    if mesh is None:
        return f"sdy.mesh @{name} = <[]> {{stablehlo.mesh = {{axes = []}}}}"
    axes = ", ".join(f'"{a}"={s}' for a, s in zip(mesh.axis_names, mesh.axis_sizes,
                                                   strict=True))
    hlo_axes = ", ".join(f'{{name = "{a}", size = {s} : i64}}'
                         for a, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    return f"sdy.mesh @{name} = <[{axes}]> {{stablehlo.mesh = {{axes = [{hlo_axes}]}}}}"


def sdy_sharding(mesh_name: str, spec: PartitionSpec, ndim: int) -> str:
    """``#sdy.sharding<@mesh, [{"x"}, {}]>`` for `spec` on a rank-`ndim` array."""
    dims = []
    for i in range(ndim):
        axes = spec.axes_of(i)
        dims.append("{" + ", ".join(f'"{a}"' for a in axes) + "}")
    return f"#sdy.sharding<@{mesh_name}, [{', '.join(dims)}]>"


def result_memory_kinds(placement, out_avals) -> list | None:
    """Per output, the memory kind its specified sharding names when that differs from
    the output value's memory space (one device only), else None; None when no output
    moves."""
    from olympus_ir.avals import MemorySpace, memory_kind_to_space

    if placement.num_partitions != 1 or placement.out_specified is None:
        return None
    kinds = []
    for s, a in zip(placement.out_specified, out_avals, strict=True):
        kind = getattr(s, "memory_kind", None) if s is not None else None
        space = getattr(a, "memory_space", MemorySpace.Device)
        kinds.append(kind if kind is not None and memory_kind_to_space(kind) is not space
                     else None)
    return kinds if any(k is not None for k in kinds) else None


def in_memory_kinds(avals, kinds) -> list:
    """`avals` with each one a kind is given for moved into that kind's memory space."""
    from olympus_ir.avals import memory_kind_to_space

    return [a if k is None else a.update(memory_space=memory_kind_to_space(k))
            for a, k in zip(avals, kinds, strict=True)]
