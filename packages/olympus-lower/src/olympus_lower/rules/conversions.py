"""Conversions and selection: convert_element_type, bitcast_convert_type, select_n,
clamp."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from .. import mlir_utils as mu
from ._registry import register_lowering


@register_lowering("convert_element_type")
def _convert_element_type_lowering(ctx, x, *, new_dtype, weak_type=False, sharding=None):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    # complex -> real takes the real part; anything -> bool is `x != 0`.
    return [mu.convert(x, aval_in.dtype, aval_out.dtype, aval_in.shape)]


@register_lowering("bitcast_convert_type")
def _bitcast_convert_type_lowering(ctx, x, *, new_dtype):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if aval_in.dtype == aval_out.dtype:
        return [x]
    return [hlo.bitcast_convert(mu.aval_to_ir_type(aval_out), x)]


@register_lowering("select_n")
def _select_n_lowering(ctx, which, *cases):
    """``cases[which]``: one ``stablehlo.select`` for a bool predicate, a balanced tree
    of selects on ``which < mid`` for an int32 one."""
    which_aval = ctx.avals_in[0]
    if len(cases) == 1:
        return [cases[0]]
    if which_aval.dtype == np.bool_:
        assert len(cases) == 2
        return [hlo.select(which, cases[1], cases[0])]

    def tree(offset, cs):
        if len(cs) == 1:
            return cs[0]
        mid = len(cs) // 2
        pivot = mu.full(which_aval.shape, offset + mid, which_aval.dtype)
        pred = mu.compare(which, pivot, "LT", which_aval.dtype)
        return hlo.select(pred, tree(offset, cs[:mid]), tree(offset + mid, cs[mid:]))

    return [tree(0, list(cases))]


@register_lowering("clamp")
def _clamp_lowering(ctx, lo, x, hi):
    return [hlo.clamp(lo, x, hi)]
