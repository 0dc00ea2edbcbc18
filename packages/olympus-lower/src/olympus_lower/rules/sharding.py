"""Lowering of ``sharding_constraint``: ``sdy.sharding_constraint`` on the module's mesh
(``@mesh``, which the caller declares with ``lower_olympuspr(meshes=...)``); on a single
device it is the identity."""

from __future__ import annotations

from jaxlib.mlir import ir

from olympus_ir.prims.sharding import sharding_constraint_p

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
