"""The roofline rules of computation (JAX's counting): elementwise operations, cumulative
scans, matmuls, convolutions, sums, gathers and scatters, selects and host callbacks.
Every other primitive Olympus defines counts nothing (`register_standard_roofline`),
except the collectives, whose rules are in `collective_rules`."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from olympus.interpreters.partial_eval import dce_olympuspr
from olympus_ir import core as ir_core
from olympus_ir.prims import callbacks as CB
from olympus_ir.prims import collectives as C
from olympus_ir.prims import convolution as CV
from olympus_ir.prims import cumulative as CU
from olympus_ir.prims import elementwise as E
from olympus_ir.prims import indexing as IX
from olympus_ir.prims import linalg as LA
from olympus_ir.prims import reductions as R
from olympus_ir.prims import special as S

from .analysis import (
    RooflineResult,
    RooflineRuleContext,
    RooflineShape,
    _interpret,
    register_roofline,
    register_standard_roofline,
    roofline_rules,
)

# A fused multiply-add is two flops.
_FMA_FLOPS = 2


def _register_standard_rules() -> None:
    """Every primitive Olympus defines counts nothing unless a rule says otherwise; the
    collectives (JAX's ``lax.parallel``) are left without one, as in JAX, but pvary."""
    collectives = set(C.COLLECTIVES) - {C.pvary_p}
    for prim in list(ir_core.primitives_by_name.values()):
        if prim not in collectives and prim not in roofline_rules:
            register_standard_roofline(prim)


_register_standard_rules()


def _shapes(avals) -> list[RooflineShape]:
    return [RooflineShape.from_aval(a) for a in avals]


def _in_out_bytes(x: RooflineShape, out: RooflineShape) -> int:
    return x.dtype.itemsize * x.size + out.dtype.itemsize * out.size


def _unary_roofline(ctx: RooflineRuleContext, *args, **params) -> RooflineResult:
    (x,) = _shapes(ctx.avals_in)
    out = RooflineShape.from_aval(ctx.avals_out[0])
    return RooflineResult(unfused_flops=x.size, unfused_hbm_bytes=_in_out_bytes(x, out))


for _p in (E.abs_p, E.acos_p, E.asin_p, E.atan_p, E.cbrt_p, E.ceil_p, E.conj_p, E.cos_p,
           E.cosh_p, E.exp_p, E.expm1_p, E.floor_p, E.imag_p, E.integer_pow_p,
           E.is_finite_p, E.log_p, E.log1p_p, E.logistic_p, E.neg_p, E.not_p, E.real_p,
           E.round_p, E.rsqrt_p, E.sign_p, E.sin_p, E.sinh_p, E.sqrt_p, E.square_p, E.tan_p,
           S.bessel_i0e_p, S.bessel_i1e_p, E.digamma_p, E.erf_inv_p, E.erf_p, E.erfc_p,
           E.lgamma_p):
    register_roofline(_p)(_unary_roofline)


def _binary_roofline(ctx: RooflineRuleContext, *args, **params) -> RooflineResult:
    lhs, rhs = _shapes(ctx.avals_in)
    out = RooflineShape.from_aval(ctx.avals_out[0])
    broadcast = [max(a, b) for a, b in
                 itertools.zip_longest(lhs.shape, rhs.shape, fillvalue=1)]
    return RooflineResult(
        unfused_flops=int(np.prod(broadcast)),
        unfused_hbm_bytes=lhs.dtype.itemsize * lhs.size + _in_out_bytes(rhs, out))


for _p in (E.add_p, E.sub_p, E.mul_p, E.div_p, E.rem_p, E.and_p, E.or_p, E.xor_p, E.gt_p,
           E.lt_p, E.ge_p, E.le_p, E.eq_p, E.ne_p, E.min_p, E.max_p):
    register_roofline(_p)(_binary_roofline)


def _cumulative_roofline(flops_per_element: int):
    def rule(ctx: RooflineRuleContext, *args, axis: int, **params) -> RooflineResult:
        # A cumulative op is counted along its one axis only (JAX's model).
        (x,) = _shapes(ctx.avals_in)
        out = RooflineShape.from_aval(ctx.avals_out[0])
        return RooflineResult(unfused_flops=flops_per_element * x.shape[axis],
                              unfused_hbm_bytes=_in_out_bytes(x, out))

    return rule


for _p in (CU.cummax_p, CU.cummin_p, CU.cumprod_p, CU.cumsum_p):
    register_roofline(_p)(_cumulative_roofline(1))
# An exp and an add per element (the final log is not counted).
register_roofline(CU.cumlogsumexp_p)(_cumulative_roofline(2))


@register_roofline(LA.dot_general_p)
def _dot_general_roofline(ctx: RooflineRuleContext, *args, dimension_numbers,
                          **params) -> RooflineResult:
    lhs, rhs = _shapes(ctx.avals_in)
    out = RooflineShape.from_aval(ctx.avals_out[0])
    (lhs_contract, _), (lhs_batch, _) = dimension_numbers
    flops = (_FMA_FLOPS * lhs.size * rhs.size
             / np.prod([lhs.shape[i] for i in lhs_contract])
             / np.prod([lhs.shape[i] for i in lhs_batch]))
    hbm = 0
    if not ctx.pin_lhs_in_vmem:
        hbm += lhs.bytes + out.bytes
    if not ctx.pin_rhs_in_vmem:
        hbm += rhs.bytes
    return RooflineResult(flops=int(flops), unfused_flops=int(flops), hbm_bytes=hbm,
                          unfused_hbm_bytes=hbm)


def _valid_positions_one_dim(stride: int, base_dilation: int, window_dilation: int,
                             kernel: int, inputs: int, outputs: int,
                             padding: tuple[int, int]) -> int:
    """How many (output position, kernel tap) pairs of one spatial dimension read an
    input element rather than padding or a hole of the input dilation."""
    lo, hi = padding
    # Two layouts (a transposed convolution's gradient shapes) whose N*N loop has N hits.
    if (inputs == outputs == kernel == base_dilation and window_dilation == 1
            and stride == max(1, inputs - 1) and lo == hi == 0):
        return inputs
    if (inputs == 1 and kernel == outputs and window_dilation == base_dilation == 1
            and stride == 1 and lo == hi == outputs - 1):
        return outputs
    count = 0
    for k in range(kernel):
        if stride == 1 and base_dilation == 1:
            offset = lo - k * window_dilation
            count += max(min(inputs + offset, outputs) - max(0, offset), 0)
            continue
        for o in range(outputs):
            pos = o * stride - lo + k * window_dilation
            i = int(pos / base_dilation)
            if pos == i * base_dilation and 0 <= i < inputs:
                count += 1
    return count


@register_roofline(CV.conv_general_dilated_p)
def _conv_general_dilated_roofline(ctx: RooflineRuleContext, *args,
                                   window_strides: Sequence[int], padding,
                                   lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                                   dimension_numbers, batch_group_count: int,
                                   **params) -> RooflineResult:
    lhs, rhs = _shapes(ctx.avals_in)
    out = RooflineShape.from_aval(ctx.avals_out[0])
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    positions = 1
    for d in range(len(lhs_spec) - 2):
        positions *= _valid_positions_one_dim(
            window_strides[d], lhs_dilation[d], rhs_dilation[d], rhs.shape[rhs_spec[d + 2]],
            lhs.shape[lhs_spec[d + 2]], out.shape[out_spec[d + 2]], tuple(padding[d]))
    per_position = (rhs.shape[rhs_spec[1]] * out.shape[out_spec[1]]
                    * (lhs.shape[lhs_spec[0]] / batch_group_count))
    return RooflineResult(
        unfused_flops=int(per_position * positions * _FMA_FLOPS),
        unfused_hbm_bytes=lhs.dtype.itemsize * lhs.size + _in_out_bytes(rhs, out))


@register_roofline(R.reduce_sum_p)
def _reduce_sum_roofline(ctx: RooflineRuleContext, *args, axes, **params) -> RooflineResult:
    (x,) = _shapes(ctx.avals_in)
    reduced = np.prod([x.shape[i] for i in axes])
    kept = np.prod([x.shape[i] for i in set(range(len(x.shape))) - set(axes)])
    # n - 1 adds per result element; the result doubles as the accumulator.
    return RooflineResult(unfused_flops=int((reduced - 1) * kept),
                          unfused_hbm_bytes=int(x.dtype.itemsize * (x.size + kept)))


@register_roofline(E.select_n_p)
def _select_n_roofline(ctx: RooflineRuleContext, *args, **params) -> RooflineResult:
    which = RooflineShape.from_aval(ctx.avals_in[0])
    out = RooflineShape.from_aval(ctx.avals_out[0])
    return RooflineResult(unfused_flops=out.size,
                          unfused_hbm_bytes=_in_out_bytes(which, out))


@register_roofline(IX.gather_p)
def _gather_roofline(ctx: RooflineRuleContext, *args, mode=None, **params) -> RooflineResult:
    _, indices = _shapes(ctx.avals_in)
    out = RooflineShape.from_aval(ctx.avals_out[0])
    flops = 0
    if IX.GatherScatterMode.from_any(mode) is IX.GatherScatterMode.FILL_OR_DROP:
        # Per index: two bound checks, their `and`, a reduce to one flag per window;
        # per output element: choosing the value or the fill.
        flops = 4 * indices.size + out.size
    # A copy of the output's size (read and write) plus reading the indices.
    return RooflineResult(
        unfused_flops=flops,
        unfused_hbm_bytes=2 * out.dtype.itemsize * out.size + indices.bytes)


_SCATTER_COMBINERS = {IX.scatter_add_p: E.add_p, IX.scatter_mul_p: E.mul_p,
                      IX.scatter_min_p: E.min_p, IX.scatter_max_p: E.max_p,
                      IX.scatter_sub_p: E.sub_p}


def _scatter_roofline(ctx: RooflineRuleContext, *args, update_olympuspr=None,
                      **params) -> RooflineResult:
    """Moving the data is free; the update function (the combiner of scatter-add and its
    kind, `scatter_apply`'s function) is applied once per element of the updates."""
    _, indices, updates = _shapes(ctx.avals_in)
    program = update_olympuspr
    combine = _SCATTER_COMBINERS.get(ctx.primitive)
    if program is None and combine is not None:
        program = IX._update_olympuspr(combine, ctx.avals_in[0].dtype)
    flops = 0
    if program is not None:
        body = program.olympuspr if hasattr(program, "olympuspr") else program
        body, _ = dce_olympuspr(body, (True,) * len(body.outvars))
        per_element = _interpret("update", body, None, pin_lhs_in_vmem=False,
                                 pin_rhs_in_vmem=False)
        flops = per_element.unfused_flops * updates.size
    # The operand, the result and the updates (each of the updates' size) and the indices.
    return RooflineResult(unfused_flops=flops,
                          unfused_hbm_bytes=3 * updates.bytes + indices.bytes)


for _p in (IX.scatter_p, *_SCATTER_COMBINERS):
    register_roofline(_p)(_scatter_roofline)


@register_roofline(CB.pure_callback_p)
@register_roofline(CB.io_callback_p)
def _callback_with_results_roofline(ctx: RooflineRuleContext, *args,
                                    **params) -> RooflineResult:
    # Operands go to the host and results come back; the host function is not counted.
    return RooflineResult(unfused_hbm_bytes=RooflineShape.total_bytes(ctx.avals_in)
                          + RooflineShape.total_bytes(ctx.avals_out))


@register_roofline(CB.debug_callback_p)
def _debug_callback_roofline(ctx: RooflineRuleContext, *args, **params) -> RooflineResult:
    return RooflineResult(unfused_hbm_bytes=RooflineShape.total_bytes(ctx.avals_in))
