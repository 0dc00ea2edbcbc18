"""``check`` has no lowering: XLA has no assertions, so a check must be discharged by
``checkify`` before a program is lowered (its shape rule already refuses to stage one
otherwise); reaching here is the same error. A ``debug`` check that was not discharged
lowers to nothing, as in JAX."""

from __future__ import annotations

from olympus_ir.prims.checks import FUNCTIONALIZATION_ERROR, check_p

from ._registry import register_lowering


@register_lowering(check_p)
def _check_lowering(ctx, *args, err_tree, debug=False):
    if debug:
        return []
    raise ValueError(FUNCTIONALIZATION_ERROR)
