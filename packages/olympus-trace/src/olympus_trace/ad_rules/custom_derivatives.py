"""JVP, transpose, partial-evaluation and DCE rules of the primitives the user
differentiates: custom_jvp_call runs the user's JVP rule; custom_vjp_call runs `fwd` and
represents its tangents by custom_lin, whose transpose runs `bwd`; checkpoint's partial
evaluation keeps only the primal outputs on the known side, so reverse mode recomputes the
function instead of saving its intermediate values."""

from __future__ import annotations

import functools

from olympus_ir import dtypes
from olympus_ir.core import ClosedOlympuspr, Eqn
from olympus_ir.prims.custom_derivatives import (
    JVP_OF_CUSTOM_VJP_MSG,
    checkpoint_p,
    custom_jvp_call_p,
    custom_lin_p,
    custom_vjp_call_p,
)

from ..ad import (
    Zero,
    dce_rules,
    instantiate,
    is_undefined_primal,
    jvp_rules,
    tangent_aval,
    transpose_rules,
)
from ..core import bind, get_aval
from ..olympuspr_utils import (
    dce_olympuspr,
    hoist_consts,
    partial_eval_olympuspr,
    partial_eval_rules,
)
from .control_flow import _jvp_body, _transposed_body, call_dce


def _check_no_const_tangents(tangents, num_consts, what):
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise ValueError(
            f"Detected differentiation of a {what} function with respect to a closed-over "
            f"value. That isn't supported because the custom {'JVP' if 'jvp' in what else 'VJP'}"
            " rule only specifies how to differentiate the function with respect to explicit "
            "input parameters. Try passing the closed-over value into the function as an "
            "explicit argument."
        )


# --- custom_jvp_call --------------------------------------------------------------------------


def _custom_jvp_call_jvp(primals, tangents, *, call_olympuspr, jvp, num_consts,
                         symbolic_zeros=False):
    _check_no_const_tangents(tangents, num_consts, "custom_jvp")
    ps = primals[num_consts:]
    ts = [instantiate(t) for t in tangents[num_consts:]]
    outs, out_ts = jvp(list(ps), ts)
    return list(outs), list(out_ts)


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


# --- custom_vjp_call and custom_lin -------------------------------------------------------------


def _custom_vjp_call_jvp(primals, tangents, *, call_olympuspr, fwd, bwd, num_consts):
    _check_no_const_tangents(tangents, num_consts, "custom_vjp")
    ps = list(primals[num_consts:])
    ts = list(tangents[num_consts:])
    outs, res, res_tree = fwd(ps)
    diff_in = [dtypes.is_inexact(get_aval(p).dtype) for p in ps]
    diff_out = [dtypes.is_inexact(get_aval(o).dtype) for o in outs]
    lin_in = [instantiate(t) for t, d in zip(ts, diff_in) if d]
    out_avals = tuple(tangent_aval(get_aval(o)) for o, d in zip(outs, diff_out) if d)
    if not out_avals:
        return outs, [Zero(tangent_aval(get_aval(o))) for o in outs]
    lin_outs = iter(bind(custom_lin_p, *res, *lin_in, num_res=len(res),
                         bwd=functools.partial(bwd, res_tree, diff_in, diff_out),
                         out_avals=out_avals))
    return outs, [next(lin_outs) if d else Zero(tangent_aval(get_aval(o)))
                  for o, d in zip(outs, diff_out)]


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    res = args[:num_res]
    cts = [instantiate(c) for c in cts]
    cts_in = bwd(list(res), cts)
    return [None] * num_res + list(cts_in)


def _custom_lin_jvp(primals, tangents, **params):
    raise TypeError(JVP_OF_CUSTOM_VJP_MSG)


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
jvp_rules[custom_lin_p] = _custom_lin_jvp
transpose_rules[custom_lin_p] = _custom_lin_transpose


# --- checkpoint -------------------------------------------------------------------------------


def _checkpoint_jvp(primals, tangents, *, call_olympuspr, prevent_cse=True):
    in_nz = [not isinstance(t, Zero) for t in tangents]
    body, out_nz = _jvp_body(call_olympuspr, in_nz)
    body, consts = hoist_consts(body)
    outs = bind(checkpoint_p, *consts, *primals,
                *[t for t in tangents if not isinstance(t, Zero)], call_olympuspr=body,
                prevent_cse=prevent_cse)
    m = len(call_olympuspr.out_avals)
    out_p, it = outs[:m], iter(outs[m:])
    return out_p, [next(it) if nz else Zero(tangent_aval(get_aval(p)))
                   for p, nz in zip(out_p, out_nz)]


def _checkpoint_partial_eval(eqn: Eqn, in_unknown):
    """Known side: only the known outputs (no residuals). Unknown side: the whole body
    (recomputing the known values it needs from the known inputs)."""
    closed = eqn.params["call_olympuspr"]
    j = closed.olympuspr
    known, _, out_unk, nres = partial_eval_olympuspr(j, in_unknown)
    n_known = len(known.outvars) - nres
    known_only, _ = dce_olympuspr(known, [True] * n_known + [False] * nres)
    known_only = known_only.replace(constvars=j.constvars)
    k_in = [v for v, u in zip(eqn.invars, in_unknown) if not u]
    k_out = [v for v, u in zip(eqn.outvars, out_unk) if not u]
    known_eqn = Eqn(checkpoint_p, k_in, k_out,
                    dict(eqn.params, call_olympuspr=ClosedOlympuspr(known_only, closed.consts)),
                    eqn.source_info)
    if not any(out_unk):
        return [known_eqn], [], out_unk
    unknown_body, _ = dce_olympuspr(j, out_unk)
    unknown_body = unknown_body.replace(constvars=j.constvars)
    u_out = [v for v, u in zip(eqn.outvars, out_unk) if u]
    unknown_eqn = Eqn(checkpoint_p, list(eqn.invars), u_out,
                      dict(eqn.params, call_olympuspr=ClosedOlympuspr(unknown_body,
                                                                      closed.consts)),
                      eqn.source_info)
    return [known_eqn], [unknown_eqn], out_unk


def _checkpoint_transpose(cts, *args, call_olympuspr, prevent_cse=True):
    lin = [is_undefined_primal(a) for a in args]
    ct_avals = [tangent_aval(a) for a in call_olympuspr.out_avals]
    ct_nz = [not isinstance(c, Zero) for c in cts]
    if not any(ct_nz):
        return [Zero(a.aval) if l else None for a, l in zip(args, lin)]
    body = _transposed_body(call_olympuspr, lin, ct_avals, ct_nz)
    body, consts = hoist_consts(body)
    res = list(call_olympuspr.consts) + [a for a, l in zip(args, lin) if not l]
    outs = iter(bind(checkpoint_p, *consts, *res,
                     *[c for c in cts if not isinstance(c, Zero)], call_olympuspr=body,
                     prevent_cse=prevent_cse))
    return [next(outs) if l else None for l in lin]


jvp_rules[checkpoint_p] = _checkpoint_jvp
transpose_rules[checkpoint_p] = _checkpoint_transpose
partial_eval_rules[checkpoint_p] = _checkpoint_partial_eval
dce_rules[checkpoint_p] = call_dce
