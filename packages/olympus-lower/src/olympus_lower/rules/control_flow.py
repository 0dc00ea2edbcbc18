"""Control flow: cond, while, scan and closed_call.

* ``cond`` -> ``stablehlo.case`` with one region per branch; branches read the
  operands from the enclosing scope. (XLA runs the last branch for an out-of-range
  index; callers clamp the index.)
* ``while`` -> ``stablehlo.while`` carrying the cond consts, body consts and carry; the
  results are the final carry.
* ``scan`` -> ``stablehlo.while`` over (i, consts, carry, xs, ys): step ``i`` reads
  ``xs[t]`` with ``dynamic_slice`` and writes ``ys[t]`` with
  ``dynamic_update_slice``, where ``t = i`` (``length - 1 - i`` when ``reverse``).
  `unroll` and `linear` do not change the lowering.
* ``closed_call`` -> the callee's equations inlined.
* ``custom_linear_solve`` -> the `solve` function's equations inlined.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from .. import mlir_utils as mu
from ._registry import register_lowering


@register_lowering("cond")
def _cond_lowering(ctx, index, *operands, branches):
    out_types = [mu.aval_to_ir_type(a) for a in ctx.avals_out]
    idx_aval = ctx.avals_in[0]
    if np.dtype(idx_aval.dtype) != np.int32:
        index = mu.convert(index, idx_aval.dtype, np.int32, ())
    case = hlo.CaseOp(out_types, index, len(branches))
    for region, branch in zip(case.regions, branches, strict=True):
        block = ir.Block.create_at_start(region, [])
        with ir.InsertionPoint(block):
            outs = ctx.lower_sub(branch, operands)
            hlo.return_(outs)
    return list(case.results)


def _while_op(types, init, cond_fn, body_fn):
    """``stablehlo.while`` over values of `types`; ``cond_fn(*args) -> pred`` and
    ``body_fn(*args) -> new args`` build the regions."""
    op = hlo.WhileOp(types, list(init))
    cond_block = ir.Block.create_at_start(op.cond, types)
    with ir.InsertionPoint(cond_block):
        hlo.return_([cond_fn(*cond_block.arguments)])
    body_block = ir.Block.create_at_start(op.body, types)
    with ir.InsertionPoint(body_block):
        hlo.return_(list(body_fn(*body_block.arguments)))
    return list(op.results)


@register_lowering("while")
def _while_lowering(ctx, *operands, cond_olympuspr, body_olympuspr, cond_nconsts,
                    body_nconsts):
    nc, nb = int(cond_nconsts), int(body_nconsts)
    types = [mu.aval_to_ir_type(a) for a in ctx.avals_in]

    def cond_fn(*args):
        cconsts, carry = args[:nc], args[nc + nb:]
        (pred,) = ctx.lower_sub(cond_olympuspr, [*cconsts, *carry])
        return pred

    def body_fn(*args):
        consts, bconsts, carry = args[:nc + nb], args[nc:nc + nb], args[nc + nb:]
        new_carry = ctx.lower_sub(body_olympuspr, [*bconsts, *carry])
        return [*consts, *new_carry]

    results = _while_op(types, operands, cond_fn, body_fn)
    return results[nc + nb:]


@register_lowering("scan")
def _scan_lowering(ctx, *operands, olympuspr, length, reverse, num_consts, num_carry,
                   linear=None, unroll=1, **_unused):
    length, n_c, n_k = int(length), int(num_consts), int(num_carry)
    avals_in, avals_out = ctx.avals_in, ctx.avals_out
    n_x = len(operands) - n_c - n_k
    x_avals = avals_in[n_c + n_k:]
    y_avals = avals_out[n_k:]
    i32 = np.dtype(np.int32)
    ys_init = [mu.zeros_like(a) for a in y_avals]
    if length == 0:
        # No iterations: the carry passes through and every ys is empty.
        return [*operands[n_c:n_c + n_k], *ys_init]
    types = ([mu.tensor_type((), i32)]
             + [mu.aval_to_ir_type(a) for a in avals_in]
             + [mu.aval_to_ir_type(a) for a in y_avals])
    init = [mu.ir_constant(np.int32(0)), *operands, *ys_init]

    def cond_fn(i, *rest):
        return mu.compare(i, mu.ir_constant(np.int32(length)), "LT", i32)

    def body_fn(i, *rest):
        consts = rest[:n_c]
        carry = rest[n_c:n_c + n_k]
        xs = rest[n_c + n_k:n_c + n_k + n_x]
        ys = rest[n_c + n_k + n_x:]
        t = hlo.subtract(mu.ir_constant(np.int32(length - 1)), i) if reverse else i
        zero = mu.ir_constant(np.int32(0))
        x_t = []
        for x, a in zip(xs, x_avals, strict=True):
            sl = hlo.dynamic_slice(x, [t] + [zero] * (a.ndim - 1), [1, *a.shape[1:]])
            x_t.append(mu.reshape(sl, a.shape[1:]))
        outs = ctx.lower_sub(olympuspr, [*consts, *carry, *x_t])
        new_carry, y_t = outs[:n_k], outs[n_k:]
        new_ys = []
        for y, yt, a in zip(ys, y_t, y_avals, strict=True):
            upd = mu.reshape(yt, (1, *a.shape[1:]))
            new_ys.append(hlo.dynamic_update_slice(y, upd, [t] + [zero] * (a.ndim - 1)))
        i1 = hlo.add(i, mu.ir_constant(np.int32(1)))
        return [i1, *consts, *new_carry, *xs, *new_ys]

    results = _while_op(types, init, cond_fn, body_fn)
    carry_out = results[1 + n_c:1 + n_c + n_k]
    ys_out = results[1 + len(operands):]
    return [*carry_out, *ys_out]


@register_lowering("closed_call")
def _closed_call_lowering(ctx, *args, call_olympuspr, **_unused):
    return ctx.lower_sub(call_olympuspr, args)


@register_lowering("optimization_barrier")
def _optimization_barrier_lowering(ctx, *xs):
    return list(hlo.OptimizationBarrierOp(list(xs)).results) if xs else []


@register_lowering("custom_linear_solve")
def _linear_solve_lowering(ctx, *args, const_lengths, jaxprs):
    start = const_lengths.matvec + const_lengths.vecmat
    consts = args[start:start + const_lengths.solve]
    return ctx.lower_sub(jaxprs.solve, list(consts) + list(args[sum(const_lengths):]))
