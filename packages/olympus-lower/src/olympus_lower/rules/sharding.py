"""Lowering of ``sharding_constraint`` (``sdy.sharding_constraint``; the identity on one
device) and ``shard_map`` (``sdy.manual_computation`` over every mesh axis), on the
module's mesh ``@mesh``, which the caller declares with ``lower_olympuspr(meshes=...)``.
While a shard_map body is lowered, `manual_mesh` says which mesh the collectives in it
run over (`olympus_lower.rules.collectives`)."""

from __future__ import annotations

from jaxlib.mlir import ir

from olympus_ir.prims.sharding import shard_map_p, sharding_constraint_p

from ._registry import register_lowering


def sdy_dims(spec, ndim: int) -> str:
    """``[{"x"}, {}]``: the per-dimension axes of `spec` for a rank-`ndim` value."""
    dims = ["{" + ", ".join(f'"{a}"' for a in spec.axes_of(i)) + "}" for i in range(ndim)]
    return f"[{', '.join(dims)}]"


@register_lowering(sharding_constraint_p)
def _sharding_constraint_lowering(ctx, x, *, sharding):
    if sharding.num_devices == 1:
        return [x]
    attr = ir.Attribute.parse(
        f"#sdy.sharding<@mesh, {sdy_dims(sharding.spec, ctx.avals_in[0].ndim)}>")
    op = ir.Operation.create("sdy.sharding_constraint", results=[x.type], operands=[x],
                             attributes={"sharding": attr})
    return [op.result]


#: The (axis names, axis sizes) of the shard_map bodies being lowered, innermost last.
manual_mesh: list[tuple[tuple, tuple]] = []


@register_lowering(shard_map_p)
def _shard_map_lowering(ctx, *xs, olympuspr, mesh, in_specs, out_specs, manual_axes,
                        check_vma):
    from jaxlib.mlir.dialects import sdy

    from ..mlir_utils import aval_to_ir_type

    def per_value(specs, avals):
        return ir.Attribute.parse("#sdy.sharding_per_value<[" + ", ".join(
            f"<@mesh, {sdy_dims(s, a.ndim)}>" for s, a in zip(specs, avals, strict=True))
            + "]>")

    axes = ", ".join(f'"{a}"' for a in manual_axes)
    out_types = [aval_to_ir_type(a) for a in ctx.avals_out]
    op = sdy.ManualComputationOp(
        out_types, list(xs), per_value(in_specs, ctx.avals_in),
        per_value(out_specs, ctx.avals_out), ir.Attribute.parse(f"#sdy<manual_axes{{{axes}}}>"))
    block = op.body.blocks.append(*[aval_to_ir_type(a) for a in olympuspr.in_avals])
    manual_mesh.append((tuple(mesh.axis_names), tuple(mesh.shape[a] for a in mesh.axis_names)))
    try:
        with ir.InsertionPoint(block):
            outs = ctx.lower_sub(olympuspr, list(block.arguments))
            sdy.ReturnOp(outs)
    finally:
        manual_mesh.pop()
    return list(op.results)
