"""conv_general_dilated: ``stablehlo.convolution``.

The dimension numbers map directly (lhs_spec -> input batch/feature/spatial, rhs_spec ->
kernel output-feature/input-feature/spatial, out_spec -> output). Operands whose dtype
differs from the result's (a `preferred_element_type`) are converted first. A convolution
with an empty operand or result is a constant zero.

Negative padding is never handed to ``stablehlo.convolution``: XLA:CPU (jaxlib 0.10.2)
computes wrong values for it once any other convolution has run in the process (it reads
memory it should not). Spatial dimensions with negative padding are instead dilated,
padded and cropped explicitly (``stablehlo.pad`` + ``stablehlo.slice``) before the
convolution, which then sees no padding and no lhs dilation there.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from .. import mlir_utils as mu
from ._registry import register_lowering
from .linalg import precision_config


@register_lowering("conv_general_dilated")
def _conv_general_dilated_lowering(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation,
                                   rhs_dilation, dimension_numbers, feature_group_count=1,
                                   batch_group_count=1, precision=None,
                                   preferred_element_type=None):
    lhs_aval, rhs_aval = ctx.avals_in
    aval_out = ctx.avals_out[0]
    out_dt = aval_out.dtype
    if aval_out.size == 0 or lhs_aval.size == 0 or rhs_aval.size == 0:
        return [mu.zeros_like(aval_out)]
    if lhs_aval.dtype != out_dt:
        lhs = mu.convert(lhs, lhs_aval.dtype, out_dt, lhs_aval.shape)
    if rhs_aval.dtype != out_dt:
        rhs = mu.convert(rhs, rhs_aval.dtype, out_dt, rhs_aval.shape)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs, padding, lhs_dilation = explicit_negative_padding(
        lhs, lhs_aval.shape, out_dt, [int(d) for d in lhs_spec[2:]], padding, lhs_dilation,
        np.zeros((), out_dt))
    dnums = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=int(lhs_spec[0]),
        input_feature_dimension=int(lhs_spec[1]),
        input_spatial_dimensions=[int(d) for d in lhs_spec[2:]],
        kernel_output_feature_dimension=int(rhs_spec[0]),
        kernel_input_feature_dimension=int(rhs_spec[1]),
        kernel_spatial_dimensions=[int(d) for d in rhs_spec[2:]],
        output_batch_dimension=int(out_spec[0]),
        output_feature_dimension=int(out_spec[1]),
        output_spatial_dimensions=[int(d) for d in out_spec[2:]],
    )
    nsp = len(lhs_spec) - 2
    pad = np.asarray(padding, np.int64).reshape(nsp, 2)
    op = hlo.ConvolutionOp(
        mu.aval_to_ir_type(aval_out), lhs, rhs, dnums, int(feature_group_count),
        int(batch_group_count),
        window_strides=[int(s) for s in window_strides],
        padding=mu.dense_i64_elements(pad),
        lhs_dilation=[int(d) for d in lhs_dilation],
        rhs_dilation=[int(d) for d in rhs_dilation],
        precision_config=precision_config(precision),
    )
    return [op.result]


def explicit_negative_padding(x, shape, dtype, dims, padding, dilation, fill):
    """Apply the (dilation, padding) of every dimension in `dims` whose padding is negative
    to `x` itself. Returns (x, padding, dilation) with those entries made (0, 0) and 1."""
    padding = [tuple(int(v) for v in p) for p in padding]
    dilation = [int(d) for d in dilation]
    todo = [i for i, (lo, hi) in enumerate(padding) if lo < 0 or hi < 0]
    if not todo:
        return x, padding, dilation
    nd = len(shape)
    lo_c, hi_c, interior = [0] * nd, [0] * nd, [0] * nd
    for i in todo:
        d = dims[i]
        lo, hi = padding[i]
        lo_c[d], hi_c[d] = max(lo, 0), max(hi, 0)
        interior[d] = dilation[i] - 1 if shape[d] > 0 else 0
    x = hlo.pad(x, mu.ir_constant(np.asarray(fill, dtype)), lo_c, hi_c, interior)
    padded = [shape[k] + lo_c[k] + hi_c[k] + interior[k] * max(shape[k] - 1, 0)
              for k in range(nd)]
    start, limit = [0] * nd, list(padded)
    for i in todo:
        d = dims[i]
        lo, hi = padding[i]
        start[d] = max(-lo, 0)
        limit[d] = max(start[d], padded[d] - max(-hi, 0))
        padding[i] = (0, 0)
        dilation[i] = 1
    x = hlo.slice(x, start, limit, [1] * nd)
    return x, padding, dilation
