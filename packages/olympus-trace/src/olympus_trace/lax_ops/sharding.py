"""Wrapper of ``sharding_constraint`` (`olympus_ir.prims.sharding`): the sharding is
already resolved (a PartitionSpec is turned into a sharding on the current mesh by the
public ``olympus.lax.with_sharding_constraint``)."""

from __future__ import annotations

from typing import Any

from olympus_ir.prims.sharding import (
    custom_partitioning_p,
    inspect_sharding_p,
    layout_constraint_p,
    shard_alike_p,
    sharding_constraint_p,
)

from .. import tree_util
from ..core import bind, get_aval

__all__ = ["sharding_constraint", "inspect_sharding", "shard_map", "annotate_vma", "spec_vma",
           "custom_partitioning", "layout_constraint", "shard_alike"]


def sharding_constraint(x: Any, sharding: Any) -> Any:
    return bind(sharding_constraint_p, x, sharding=sharding)


def inspect_sharding(x: Any, callback: Any) -> None:
    """Have `callback` called with the ``HloSharding`` XLA gives the traced value `x`."""
    bind(inspect_sharding_p, x, callback=callback)


def layout_constraint(x: Any, layout: Any) -> Any:
    """`x`, stored as `layout` says (`olympus.experimental.layout.with_layout_constraint`)."""
    return bind(layout_constraint_p, x, layout=layout)


def custom_partitioning(*args: Any, **params: Any) -> list:
    """The ``custom_partitioning`` call of `args` (params: see its primitive)."""
    return bind(custom_partitioning_p, *args, **params)


# --- shard_map ---------------------------------------------------------------------------------
#
# Inside a shard_map body every value varies over a set of manual mesh axes (its "vma"): an
# input over the axes its in_spec names, axis_index(a) over a, a psum over a stops varying
# over a. `annotate_vma` rewrites a traced body so that this is explicit, as JAX's types make
# it: an operand combined with values that vary over more axes goes through ``pvary`` (the
# identity, whose transpose is a psum: the cotangents of an invariant value used on every
# device are summed), and a psum over manual axes becomes ``psum_invariant`` (whose transpose
# is ``pvary``). Differentiating the rewritten body is then correct for replicated inputs
# and outputs alike.


def annotate_vma(closed, in_vmas, manual_axes, out_specs=None, check_vma=True, fname="fun",
                 out_spec_paths=None):
    """Rewrite the closed shard_map body `closed` (no consts) with explicit ``pvary`` /
    ``psum_invariant``; with `out_specs`, lift each output to the axes its spec names and
    (with `check_vma`) refuse outputs said to be replicated over an axis they vary over
    (JAX's error; `out_spec_paths` name each output's spec in it, e.g. ``[0]``).
    Returns the new closed olympuspr."""
    from olympus_ir import Literal
    from olympus_ir.prims import collectives as C

    from .. import vma_types
    from ..staging import trace_to_olympuspr
    from ..vma_types import axis_names_tuple, eqn_vma

    manual = tuple(manual_axes)
    manual_axes_sizes = dict(manual_axes) if isinstance(manual_axes, dict) else {}
    jpr = closed.olympuspr
    order = {a: i for i, a in enumerate(manual)}

    def sort(axes):
        return tuple(sorted(axes, key=order.__getitem__))

    def body(*args):
        if check_vma:  # the rewritten body's values print their varying axes ({V:i})
            vma_types.begin(args, in_vmas, manual)
        env = {}
        vma = {}
        for v, x, m in zip(jpr.invars, args, in_vmas, strict=True):
            env[id(v)] = x
            vma[id(v)] = frozenset(m)

        def read(a):
            if isinstance(a, Literal):
                return a.val, frozenset()
            return env[id(a)], vma[id(a)]

        def lift(x, have, want):
            missing = want - have
            if not missing:
                return x
            return bind(C.pvary_p, x, axes=sort(missing))

        for eqn in jpr.eqns:
            p = eqn.primitive
            vals, vmas = zip(*map(read, eqn.invars)) if eqn.invars else ((), ())
            vals = list(vals)
            params = dict(eqn.params)
            name = params.get("axis_name")
            own = frozenset(n for n in axis_names_tuple(name) if n in order) \
                if name is not None else frozenset()
            out_vma = eqn_vma(p, params, vmas, order)
            if getattr(p, "out_vmas", None) is not None:  # results typed one by one
                outs = bind(p, *vals, **params)
                for v, o, m in zip(eqn.outvars, outs, p.out_vmas(params, vmas, order),
                                   strict=True):
                    env[id(v)] = o
                    vma[id(v)] = m
                continue
            if p in (C.psum_p, C.pmax_p, C.pmin_p) and own:
                x = lift(vals[0], vmas[0], own)
                if p is C.psum_p:
                    outs = [bind(C.psum_invariant_p, x, axes=sort(own))]
                else:
                    outs = [bind(p, x, **params)]
            elif p is C.psum_invariant_p:
                outs = [bind(p, lift(vals[0], vmas[0], frozenset(params["axes"])), **params)]
            elif p is C.pvary_p or p is C.axis_index_p:
                outs = [bind(p, *vals, **params)]
            elif own and p in (C.all_gather_p, C.ppermute_p, C.psum_scatter_p,
                               C.all_to_all_p):
                outs = [bind(p, lift(vals[0], vmas[0], own), **params)]
            else:
                lifted = [x if isinstance(a, Literal) else lift(x, m, out_vma)
                          for a, x, m in zip(eqn.invars, vals, vmas, strict=True)]
                out = bind(p, *lifted, **params)
                outs = out if p.multiple_results else [out]
            for v, o in zip(eqn.outvars, outs, strict=True):
                env[id(v)] = o
                vma[id(v)] = out_vma
        results = []
        failures = []
        for k, v in enumerate(jpr.outvars):
            x, m = read(v)
            if out_specs is not None:
                spec_axes = frozenset(a for a in out_specs[k].used_axes() if a in order)
                if m - spec_axes and check_vma:
                    path = out_spec_paths[k] if out_spec_paths is not None else f"[{k}]"
                    failures.append(_out_vma_failure(path, out_specs[k], m, manual))
                x = lift(x, m, spec_axes)
            results.append(x)
        if failures:
            raise ValueError(_out_vma_error(fname, manual, manual_axes_sizes, failures))
        return results

    new, _ = trace_to_olympuspr(body, closed.in_avals)
    return new


def _out_vma_failure(path, spec, varying, manual) -> str:
    """One bullet of JAX's out_specs replication error."""
    named = [a for a in manual if a in spec.used_axes()]
    unmentioned = [a for a in manual if a not in named]
    if len(unmentioned) > 1:
        got = [a for a in manual if a in varying]
        diff = [a for a in unmentioned if a in varying]
        return (f"* out_specs{path} is {spec} which implies that the corresponding output "
                f"value is only varying across mesh axes {{{','.join(map(str, named))}}} and "
                f"not {{{','.join(map(str, diff))}}}, but it was inferred to be possibly "
                f"varying over {{{','.join(map(str, got))}}}")
    return (f"* out_specs{path} is {spec} which implies that the corresponding output value "
            f"is replicated across mesh axis '{unmentioned[0]}', but could not infer "
            "replication over any axes")


def _out_vma_error(fname, manual, sizes, failures) -> str:
    if len(failures) == 1:
        failures = [failures[0][2:]]  # one failure: no bullet
    return (f"shard_map applied to the function '{fname}' was given out_specs which require "
            "replication which can't be statically inferred given the mesh:\n\n"
            f"The mesh given has shape {tuple(sizes[a] for a in manual)} with corresponding "
            f"axis names {manual}.\n\n" + "\n\n".join(failures) + "\n\n"
            "Check if these output values are meant to be replicated over those mesh axes. If "
            "not, consider revising the corresponding out_specs entries. If so, consider "
            "disabling the check by passing the check_vma=False argument to "
            "`olympus.shard_map`.")


def spec_vma(spec, manual) -> frozenset:
    return frozenset(a for a in spec.used_axes() if a in manual)


def shard_map(args, body, *, mesh, in_specs, out_specs, check_vma=True, fname="fun",
              annotate=True, manual_axes=None, out_spec_paths=None):
    """Bind ``shard_map`` of the closed `body` on `args`. The body's consts become leading
    operands replicated on every device (spec ``P()``); with `annotate` the body is first
    rewritten by `annotate_vma`. `manual_axes` (default: every mesh axis) are the axes the
    body is written per device over; the others stay the partitioner's."""
    from olympus_ir.prims.sharding import shard_map_p

    from ..olympuspr_utils import hoist_consts

    manual = tuple(a for a in mesh.axis_names if manual_axes is None or a in manual_axes)
    sizes = {a: mesh.shape[a] for a in manual}
    in_specs = tuple(in_specs)
    out_specs = tuple(out_specs)
    if body.consts:
        body, consts = hoist_consts(body)
        empty = type(in_specs[0])() if in_specs else _empty_spec(out_specs)
        args = list(consts) + list(args)
        in_specs = (empty,) * len(consts) + in_specs
    if annotate:
        body = annotate_vma(body, [spec_vma(s, manual) for s in in_specs], sizes,
                            out_specs, check_vma, fname, out_spec_paths)
        if body.consts:
            body, consts = hoist_consts(body)
            empty = type(in_specs[0])() if in_specs else _empty_spec(out_specs)
            args = list(consts) + list(args)
            in_specs = (empty,) * len(consts) + in_specs
    return bind(shard_map_p, *args, olympuspr=body, mesh=mesh, in_specs=in_specs,
                out_specs=out_specs, manual_axes=manual, check_vma=bool(check_vma))


def _empty_spec(out_specs):
    return type(out_specs[0])()


def shard_alike(x: Any, y: Any) -> tuple[Any, Any]:
    """`x` and `y` (pytrees of one structure, leaves of one shape each), each pair of leaves
    sharded alike (``olympus.experimental.shard_alike``)."""
    x_flat, x_tree = tree_util.tree_flatten(x)
    y_flat, y_tree = tree_util.tree_flatten(y)
    if x_tree != y_tree:
        raise ValueError(f"Trees should be equal. Got x_tree: {x_tree}, y_tree: {y_tree}")
    for a, b in zip(x_flat, y_flat):
        xs, ys = get_aval(a).shape, get_aval(b).shape
        if xs != ys:
            raise ValueError(
                "The leaves shapes of `x` and `y` should match. Got `x` leaf shape:"
                f" {xs} and `y` leaf shape: {ys}. File an issue at"
                " https://github.com/jax-ml/jax/issues if you want this feature.")
    outs = [bind(shard_alike_p, a, b) for a, b in zip(x_flat, y_flat)]
    return (tree_util.tree_unflatten(x_tree, [o[0] for o in outs]),
            tree_util.tree_unflatten(y_tree, [o[1] for o in outs]))
