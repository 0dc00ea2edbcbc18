"""The custom-derivative primitives and checkpoint: differentiation already happened, so
``custom_jvp_call``, ``custom_vjp_call`` and ``checkpoint`` lower to their function's
equations inlined (the user's rules in their params are not looked at). ``custom_lin``
stands for the tangents of a custom_vjp function: lowering one means a program evaluates
them (forward-mode differentiation of a custom_vjp function), which is an error."""

from __future__ import annotations

from olympus_ir.prims.custom_derivatives import (
    JVP_OF_CUSTOM_VJP_MSG,
    checkpoint_p,
    custom_jvp_call_p,
    custom_lin_p,
    custom_vjp_call_p,
)

from ._registry import register_lowering


@register_lowering(custom_jvp_call_p)
@register_lowering(custom_vjp_call_p)
@register_lowering(checkpoint_p)
def _inlined_call_lowering(ctx, *args, call_olympuspr, **_rules):
    return ctx.lower_sub(call_olympuspr, args)


@register_lowering(custom_lin_p)
def _custom_lin_lowering(ctx, *args, **params):
    raise TypeError(JVP_OF_CUSTOM_VJP_MSG)
