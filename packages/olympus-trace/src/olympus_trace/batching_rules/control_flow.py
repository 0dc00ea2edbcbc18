"""Batching rules for structured control flow: cond, while, scan, closed_call and jit.

Bodies are batched by tracing them again under a `BatchTrace` (`batch_olympuspr`).

* ``cond`` with an unbatched index stays a cond over batched branches; with a batched
  index every branch runs (batched) and `select_n` picks each member's result, as JAX does.
* ``while``: which carries are batched is found by iterating to a fixed point. With a
  batched predicate the loop runs until every member is done; members that finished keep
  their carry (each update is a `select_n` on the member's predicate).
* ``scan``: the body is batched; batched carries sit at dimension 0, batched ``xs`` keep
  their batch dimension (moved off the scanned axis 0 when it is there).
* ``closed_call``: the callee is batched; ``jit``: a `jit` of the batched callee, as JAX
  (shardings and layouts are kept for the unbatched operands and results only).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray
from olympus_ir.core import ClosedOlympuspr

from .. import lax_ops
from ..batching import (
    AxisData,
    BatchTrace,
    BatchTracer,
    batching_rules,
    bdim_at_front,
    matchaxis,
    moveaxis,
    vmap_flat,
)
from ..core import bind, current_trace, get_aval, set_current_trace
from ..olympuspr_utils import eval_olympuspr
from ..staging import trace_to_olympuspr
from ._util import insert_at


def batched_aval(aval: ShapedArray, d: int | None, size: int) -> ShapedArray:
    if d is None:
        return aval
    return aval.update(shape=insert_at(aval.shape, d, size))


def batch_olympuspr(closed: ClosedOlympuspr, axis_data: AxisData, in_dims: Sequence,
                    force_out: Sequence | None = None) -> tuple[ClosedOlympuspr, list]:
    """Trace `closed` batched: its inputs carry batch dimensions `in_dims` (None: not
    batched). Returns the batched closed olympuspr and the batch dimension of each output.

    ``force_out[i]`` (an int) moves output i's batch dimension there, broadcasting it when
    the output is not batched; None leaves output i as it comes.
    """
    size = axis_data.size
    in_dims = list(in_dims)
    in_avals = [batched_aval(a, d, size) for a, d in zip(closed.in_avals, in_dims, strict=True)]
    found: list = []

    def fun(*args):
        trace = BatchTrace(current_trace(), axis_data)
        tracers = [BatchTracer(trace, a, d) if d is not None else a
                   for a, d in zip(args, in_dims, strict=True)]
        try:
            with set_current_trace(trace):
                outs = eval_olympuspr(closed.olympuspr, closed.consts, *tracers)
            vals_dims = [trace.to_batch_info(o) for o in outs]
        finally:
            trace.invalidate()
        res, out_dims = [], []
        for i, (v, d) in enumerate(vals_dims):
            f = None if force_out is None else force_out[i]
            if f is not None and d != f:
                v, d = matchaxis(size, d, f, v), f
            res.append(v)
            out_dims.append(d)
        found.append(out_dims)
        return res

    new, _ = trace_to_olympuspr(fun, in_avals, closed.olympuspr.debug_info)
    return new, found[0]


def _out_dims(closed, axis_data, in_dims) -> list:
    return batch_olympuspr(closed, axis_data, in_dims)[1]


def _trace_with(fun, avals) -> ClosedOlympuspr:
    closed, _ = trace_to_olympuspr(lambda *a: list(fun(*a)), avals)
    return closed


def _select_on(pred, old, new):
    """`new` where the member's `pred` (shape ``[B]``) is true, else `old` (batch dim 0).

    Typed keys are selected through their data (unwrap, select, wrap): the loop then reads
    its old keys without consuming them and carries fresh ones, as JAX's while (which makes
    this select in its lowering) is seen by the key-reuse checker."""
    aval = get_aval(new)
    if dtypes.is_key_dtype(aval.dtype):
        data = _select_on(pred, lax_ops.random_unwrap(old), lax_ops.random_unwrap(new))
        return lax_ops.random_wrap(data, impl=aval.dtype.impl)
    shape = aval.shape
    which = pred if len(shape) == 1 else lax_ops.broadcast_in_dim(pred, shape, (0,))
    return lax_ops.select_n(which, old, new)


# --- cond ---------------------------------------------------------------------------------


def _bcast_select_n(which, *cases):
    """`select_n` with `which` (batch dimension 0) broadcast to the cases' shape."""
    if len(cases) == 1:
        return cases[0]
    shape = get_aval(cases[0]).shape
    if len(get_aval(which).shape) != len(shape):
        which = lax_ops.broadcast_in_dim(which, shape, (0,))
    return lax_ops.select_n(which, *cases)


def _cond_rule(axis_data, vals, dims, *, branches, **params):
    index, *ops = vals
    bidx, *op_dims = dims
    size = axis_data.size
    if bidx is not None:
        # A batched index (in range: `switch` clamps it): every branch runs on the
        # operands, each operand cut from differentiation for the members that do not take
        # that branch (as JAX does, so reverse mode never sees another branch's nan), then
        # `select_n` picks each member's result.
        idx = matchaxis(size, bidx, 0, index)
        ops = [bdim_at_front(x, d, size) for x, d in zip(ops, op_dims, strict=True)]
        results = []
        for i, br in enumerate(branches):
            taken = lax_ops.eq(idx, np.array(i, get_aval(idx).dtype))
            picked = [_bcast_select_n(taken, lax_ops.stop_gradient(x), x) for x in ops]
            results.append(vmap_flat(lambda *xs, br=br: eval_olympuspr(br.olympuspr, br.consts,
                                                                        *xs),
                                     axis_data, picked, [0] * len(picked),
                                     lambda k: [0] * k))
        outs = [_bcast_select_n(idx, *cases) for cases in zip(*results, strict=True)]
        return outs, [0] * len(outs)
    out_bat = None
    for br in branches:
        od = [d is not None for d in _out_dims(br, axis_data, op_dims)]
        out_bat = od if out_bat is None else [a or b for a, b in zip(out_bat, od, strict=True)]
    force = [0 if b else None for b in out_bat]
    new_branches = tuple(batch_olympuspr(br, axis_data, op_dims, force)[0] for br in branches)
    outs = bind(P.cond_p, index, *ops, branches=new_branches, **params)
    return list(outs), force


# --- while --------------------------------------------------------------------------------


def _while_rule(axis_data, vals, dims, *, cond_olympuspr, body_olympuspr, cond_nconsts,
                body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    size = axis_data.size
    cconsts, bconsts, init = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
    cdims, bdims, idims = dims[:nc], dims[nc:nc + nb], dims[nc + nb:]
    carry_bat = [d is not None for d in idims]
    while True:  # which carries end up batched: a fixed point
        od = _out_dims(body_olympuspr, axis_data, bdims + [0 if b else None for b in carry_bat])
        new = [b or d is not None for b, d in zip(carry_bat, od, strict=True)]
        if new == carry_bat:
            break
        carry_bat = new
    carry_dims = [0 if b else None for b in carry_bat]
    (pd,) = _out_dims(cond_olympuspr, axis_data, cdims + carry_dims)
    if pd is not None:
        carry_dims = [0] * len(init)
    init = [matchaxis(size, d, cd, x) for x, d, cd in zip(init, idims, carry_dims, strict=True)]
    body_b, _ = batch_olympuspr(body_olympuspr, axis_data, bdims + carry_dims, carry_dims)
    if pd is None:
        cond_b, _ = batch_olympuspr(cond_olympuspr, axis_data, cdims + carry_dims)
        outs = bind(P.while_p, *cconsts, *bconsts, *init, cond_olympuspr=cond_b,
                    body_olympuspr=body_b, cond_nconsts=nc, body_nconsts=nb)
        return list(outs), carry_dims
    # A batched predicate: loop while any member runs; finished members keep their carry.
    cond_b, _ = batch_olympuspr(cond_olympuspr, axis_data, cdims + carry_dims, [0])
    c_avals = [get_aval(x) for x in cconsts]
    b_avals = [get_aval(x) for x in bconsts]
    k_avals = [get_aval(x) for x in init]

    def new_cond(*args):
        (pred,) = eval_olympuspr(cond_b.olympuspr, cond_b.consts, *args)
        return [lax_ops.reduce_or(pred, (0,))]

    def new_body(*args):
        cc, bc, carry = args[:nc], args[nc:nc + nb], args[nc + nb:]
        (pred,) = eval_olympuspr(cond_b.olympuspr, cond_b.consts, *cc, *carry)
        new = eval_olympuspr(body_b.olympuspr, body_b.consts, *bc, *carry)
        return [_select_on(pred, o, n) for o, n in zip(carry, new, strict=True)]

    cond_j = _trace_with(new_cond, c_avals + k_avals)
    body_j = _trace_with(new_body, c_avals + b_avals + k_avals)
    outs = bind(P.while_p, *cconsts, *cconsts, *bconsts, *init, cond_olympuspr=cond_j,
                body_olympuspr=body_j, cond_nconsts=nc, body_nconsts=nc + nb)
    return list(outs), carry_dims


# --- scan ---------------------------------------------------------------------------------


def _scan_rule(axis_data, vals, dims, *, olympuspr, length, reverse, num_consts, num_carry,
               linear, unroll):
    size = axis_data.size
    n_c, n_k = num_consts, num_carry
    consts, init, xs = vals[:n_c], vals[n_c:n_c + n_k], vals[n_c + n_k:]
    cdims, idims, xdims = dims[:n_c], dims[n_c:n_c + n_k], dims[n_c + n_k:]
    # As JAX's rule: batched consts move their batch axis to 0, batched xs to 1 (the
    # scanned axis stays first), in the order consts, carry, xs.
    body_cdims = [None if d is None else 0 for d in cdims]
    x_body_dims = [None if d is None else 0 for d in xdims]
    carry_bat = [d is not None for d in idims]
    while True:
        od = _out_dims(olympuspr, axis_data,
                       body_cdims + [0 if b else None for b in carry_bat] + x_body_dims)[:n_k]
        new = [b or d is not None for b, d in zip(carry_bat, od, strict=True)]
        if new == carry_bat:
            break
        carry_bat = new
    carry_dims = [0 if b else None for b in carry_bat]
    consts = [x if d is None or d == 0 else moveaxis(x, d, 0)
              for x, d in zip(consts, cdims, strict=True)]
    cdims = body_cdims
    init = [matchaxis(size, d, cd, x) for x, d, cd in zip(init, idims, carry_dims, strict=True)]
    new_xs = [x if d is None or d == 1 else moveaxis(x, d, 1)
              for x, d in zip(xs, xdims, strict=True)]
    n_y = len(olympuspr.out_avals) - n_k
    body_b, od = batch_olympuspr(olympuspr, axis_data, cdims + carry_dims + x_body_dims,
                                 carry_dims + [None] * n_y)
    outs = bind(P.scan_p, *consts, *init, *new_xs, olympuspr=body_b, length=length,
                reverse=reverse, num_consts=n_c, num_carry=n_k, linear=linear, unroll=unroll)
    y_dims = [None if d is None else d + 1 for d in od[n_k:]]
    return list(outs), carry_dims + y_dims


# --- closed_call --------------------------------------------------------------------------


def _closed_call_rule(axis_data, vals, dims, *, call_olympuspr, **params):
    new, out_dims = batch_olympuspr(call_olympuspr, axis_data, dims)
    return list(bind(P.closed_call_p, *vals, call_olympuspr=new, **params)), out_dims


def _jit_rule(axis_data, vals, dims, *, olympuspr, **params):
    new, out_dims = batch_olympuspr(olympuspr, axis_data, dims)
    n_out = len(olympuspr.out_avals)
    ins = [i if d is None else None for i, d in enumerate(dims)]
    outs = [i if out_dims[i] is None else None for i in range(n_out)]
    new_params = P.jit_params(dict(params, olympuspr=olympuspr), new, ins, outs)
    new_params["donated_invars"] = tuple(params["donated_invars"])
    return list(bind(P.jit_p, *vals, **new_params)), out_dims


batching_rules[P.jit_p] = _jit_rule
batching_rules[P.cond_p] = _cond_rule
batching_rules[P.while_p] = _while_rule
batching_rules[P.scan_p] = _scan_rule
batching_rules[P.closed_call_p] = _closed_call_rule


def _optimization_barrier_rule(axis_data, vals, dims):
    # The barrier is the identity: each operand keeps its batch dimension (or none).
    return bind(P.optimization_barrier_p, *vals), list(dims)


batching_rules[P.optimization_barrier_p] = _optimization_barrier_rule


def _linear_solve_rule(axis_data, vals, dims, *, const_lengths, jaxprs):
    # b (and so x) is batched at 0, broadcast when it was not; each function is batched
    # with its own consts as they come and x/b at 0, its results forced to 0.
    n = sum(const_lengths)
    b = [matchaxis(axis_data.size, d, 0, v) for v, d in zip(vals[n:], dims[n:])]
    const_dims, i = [], 0
    for k in const_lengths:
        const_dims.append(list(dims[i:i + k]))
        i += k
    new = []
    for j, cd in zip(jaxprs, const_dims):
        if j is None:
            new.append(None)
            continue
        batched, _ = batch_olympuspr(j, axis_data, cd + [0] * (len(j.in_avals) - len(cd)),
                                     force_out=[0] * len(j.out_avals))
        new.append(batched)
    outs = bind(P.linear_solve_p, *vals[:n], *b, const_lengths=const_lengths,
                jaxprs=P.LinearSolveTuple(*new))
    return list(outs), [0] * len(outs)


batching_rules[P.linear_solve_p] = _linear_solve_rule


def _platform_index_rule(axis_data, vals, dims, **params):
    # No operands, so never batched; listed so every primitive has a rule.
    return bind(P.platform_index_p, **params), None


batching_rules[P.platform_index_p] = _platform_index_rule
