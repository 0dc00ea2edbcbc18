"""Autodiff of control flow: `closed_call`, `cond`, `scan` and `while`.

JVP: the primitive applied to JVP'd bodies (which take the primals and the nonzero tangents,
and return the primal outputs and the nonzero output tangents). Partial evaluation (for
linearize) splits the JVP'd primitive into a known one, computing the primal outputs and
residuals, and an unknown one, linear in the tangents. Transpose: the primitive applied to
the transposed (linear) bodies.

A `scan`'s partial evaluation runs the primal loop forward, saving per-iteration residuals,
and its transpose is a reverse scan. `while` has no transpose: reverse mode needs a static
trip count.
"""

from __future__ import annotations

import weakref

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray
from olympus_ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr, Var

from .. import lax_ops as lax
from ..ad import (
    Zero,
    backward_pass,
    dce_deep,
    dce_rules,
    instantiate,
    is_undefined_primal,
    jvp_flat,
    jvp_rules,
    tangent_aval,
    transpose_rules,
)
from ..core import bind, get_aval
from ..olympuspr_utils import (
    eval_olympuspr,
    hoist_consts,
    join_consts,
    partial_eval_olympuspr,
    partial_eval_rules,
)
from ..staging import trace_to_olympuspr
from ._util import zero_jvp


def _jvp_body(closed: ClosedOlympuspr, in_nz, instantiate_out=None):
    """Trace the JVP of `closed` taking (primals, nonzero tangents). Returns the closed
    olympuspr (outputs: primals, then the tangents flagged nonzero) and the per-output
    nonzero flags. With `instantiate_out`, exactly those output tangents are returned
    (zeros materialized)."""
    avals = closed.in_avals
    n = len(avals)
    out_nz: list = []

    def f(*args):
        ps, it = args[:n], iter(args[n:])
        ts = [next(it) if nz else Zero(tangent_aval(a)) for a, nz in zip(avals, in_nz)]
        outs_p, outs_t = jvp_flat(
            lambda *a: eval_olympuspr(closed.olympuspr, closed.consts, *a), ps, ts,
            instantiate_zeros=False)
        flags = [not isinstance(t, Zero) for t in outs_t] if instantiate_out is None \
            else list(instantiate_out)
        out_nz[:] = flags
        return list(outs_p) + [instantiate(t) for t, f in zip(outs_t, flags) if f]

    t_avals = [tangent_aval(a) for a, nz in zip(avals, in_nz) if nz]
    traced, _ = trace_to_olympuspr(f, list(avals) + t_avals)
    return traced, out_nz


# --- closed_call ---------------------------------------------------------------------------------


def _closed_call_jvp(primals, tangents, *, call_olympuspr):
    in_nz = [not isinstance(t, Zero) for t in tangents]
    body, out_nz = _jvp_body(call_olympuspr, in_nz)
    body, consts = hoist_consts(body)
    outs = bind(P.closed_call_p, *consts, *primals,
                *[t for t in tangents if not isinstance(t, Zero)], call_olympuspr=body)
    m = len(call_olympuspr.out_avals)
    out_p, it = outs[:m], iter(outs[m:])
    out_t = [next(it) if nz else Zero(tangent_aval(get_aval(p))) for p, nz in
             zip(out_p, out_nz)]
    return out_p, out_t


def _closed_call_partial_eval(eqn: Eqn, in_unknown):
    return call_partial_eval(eqn, in_unknown, "call_olympuspr")


def call_partial_eval(eqn: Eqn, in_unknown, param, make_params=None):
    """Split a call-like equation into a known call (the known outputs, then residuals)
    and an unknown one (taking the residuals, then the unknown inputs).
    ``make_params(closed, ins, outs)`` gives the new calls' params (`jit_params`'s `ins`
    and `outs`); by default the body param is replaced."""
    closed = eqn.params[param]
    j = closed.olympuspr
    known, unknown, out_unk, nres = partial_eval_olympuspr(j, in_unknown)
    n_known = len(known.outvars) - nres
    # Residuals that are inputs of the call are forwarded from the call's operands.
    in_pos = {id(v): i for i, v in enumerate(j.invars)}
    res_atoms, res_out = [], []
    for r in known.outvars[n_known:]:
        if isinstance(r, Var) and id(r) in in_pos:
            res_atoms.append(eqn.invars[in_pos[id(r)]])
        else:
            v = Var(r.aval)
            res_atoms.append(v)
            res_out.append((r, v))
    known = known.replace(outvars=list(known.outvars[:n_known]) + [r for r, _ in res_out])
    res_vars = [v for _, v in res_out]
    k_idx = [i for i, u in enumerate(in_unknown) if not u]
    u_idx = [i for i, u in enumerate(in_unknown) if u]
    ko_idx = [i for i, u in enumerate(out_unk) if not u]
    uo_idx = [i for i, u in enumerate(out_unk) if u]
    if make_params is None:
        def make_params(c, ins, outs):
            return dict(eqn.params, **{param: c})
    known_closed = ClosedOlympuspr(known, closed.consts)
    known_eqn = Eqn(eqn.primitive, [eqn.invars[i] for i in k_idx],
                    [eqn.outvars[i] for i in ko_idx] + res_vars,
                    make_params(known_closed, k_idx, ko_idx + [None] * len(res_vars)),
                    eqn.source_info)
    if not any(out_unk):
        return [known_eqn], [], out_unk
    unknown_closed = ClosedOlympuspr(unknown, [])
    unknown_eqn = Eqn(eqn.primitive, res_atoms + [eqn.invars[i] for i in u_idx],
                      [eqn.outvars[i] for i in uo_idx],
                      make_params(unknown_closed, [None] * len(res_atoms) + u_idx, uo_idx),
                      eqn.source_info)
    return [known_eqn], [unknown_eqn], out_unk


def _transposed_body(closed: ClosedOlympuspr, lin, ct_avals, ct_nz):
    """Trace the transpose of the linear `closed`: inputs (its constants, non-linear
    operands, nonzero output cotangents), outputs the cotangents of the linear operands
    (zeros materialized)."""
    j = closed.olympuspr
    nl_vars = list(j.constvars) + [v for v, l in zip(j.invars, lin) if not l]
    lin_vars = [v for v, l in zip(j.invars, lin) if l]
    body = Olympuspr([], nl_vars + lin_vars, j.outvars, j.eqns)
    lin_avals = [v.aval for v in lin_vars]
    nres = len(nl_vars)

    def f(*args):
        res, it = args[:nres], iter(args[nres:])
        cts = [next(it) if nz else Zero(a) for a, nz in zip(ct_avals, ct_nz)]
        outs = backward_pass(body, list(res), lin_avals, cts)
        return [instantiate(c) for c in outs]

    in_avals = [v.aval for v in nl_vars] + [a for a, nz in zip(ct_avals, ct_nz) if nz]
    traced, _ = trace_to_olympuspr(f, in_avals)
    return traced


def _closed_call_transpose(cts, *args, call_olympuspr):
    lin = [is_undefined_primal(a) for a in args]
    ct_avals = [tangent_aval(a) for a in call_olympuspr.out_avals]
    ct_nz = [not isinstance(c, Zero) for c in cts]
    if not any(ct_nz):
        return [Zero(a.aval) if l else None for a, l in zip(args, lin)]
    body = _transposed_body(call_olympuspr, lin, ct_avals, ct_nz)
    body, consts = hoist_consts(body)
    res = list(call_olympuspr.consts) + [a for a, l in zip(args, lin) if not l]
    outs = iter(bind(P.closed_call_p, *consts, *res,
                     *[c for c in cts if not isinstance(c, Zero)], call_olympuspr=body))
    return [next(outs) if l else None for l in lin]


def call_dce(eqn: Eqn, used, param="call_olympuspr", make_params=None):
    """DCE rule of call-like primitives: prune the body's unused outputs and inputs
    (``make_params(closed, ins, outs)`` as in `call_partial_eval`)."""
    c = eqn.params[param]
    j = c.olympuspr
    new, used_in = dce_deep(j, used, prune_invars=True)
    new = new.replace(constvars=j.constvars)
    invars = [v for v, u in zip(eqn.invars, used_in) if u]
    outvars = [v for v, u in zip(eqn.outvars, used) if u]
    closed = ClosedOlympuspr(new, c.consts)
    params = dict(eqn.params, **{param: closed}) if make_params is None else make_params(
        closed, [i for i, u in enumerate(used_in) if u], [i for i, u in enumerate(used) if u])
    new_eqn = Eqn(eqn.primitive, invars, outvars, params, eqn.source_info)
    return new_eqn, [True] * len(invars)


jvp_rules[P.closed_call_p] = _closed_call_jvp
dce_rules[P.closed_call_p] = call_dce
transpose_rules[P.closed_call_p] = _closed_call_transpose
partial_eval_rules[P.closed_call_p] = _closed_call_partial_eval


# --- jit -----------------------------------------------------------------------------------
# As JAX does: the JVP is a `jit` of the JVP'd callee, linearization splits it into a known
# `jit` (primal outputs and residuals) and an unknown one (linear in the tangents), and the
# transpose is a `jit` of the transposed callee; each keeps the call's name and, for the
# operands and results it keeps, their shardings, layouts and donation.


#: callee -> {key: its transformed body}: a helper called many times is differentiated once
#: per use (JAX caches these too). Callees hold concrete constants only.
_jit_bodies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cached_body(closed: ClosedOlympuspr, key, make):
    try:
        per = _jit_bodies.setdefault(closed, {})
    except TypeError:
        return make()
    out = per.get(key)
    if out is None:
        out = per[key] = make()
    return out


def _jit_jvp(primals, tangents, *, olympuspr, **params):
    in_nz = [not isinstance(t, Zero) for t in tangents]
    body, out_nz = _cached_body(olympuspr, ("jvp", tuple(in_nz)),
                                lambda: _jvp_body(olympuspr, in_nz))
    n_in, n_out = len(primals), len(olympuspr.out_avals)
    ins = list(range(n_in)) + [i for i, nz in enumerate(in_nz) if nz]
    outs_sel = list(range(n_out)) + [i for i, nz in enumerate(out_nz) if nz]
    outs = bind(P.jit_p, *primals, *[t for t in tangents if not isinstance(t, Zero)],
                **P.jit_params(dict(params, olympuspr=olympuspr), body, ins, outs_sel))
    out_p, it = outs[:n_out], iter(outs[n_out:])
    out_t = [next(it) if nz else Zero(tangent_aval(a))
             for a, nz in zip(olympuspr.out_avals, out_nz)]
    return out_p, out_t


def _jit_params_of(eqn: Eqn):
    def make(closed, ins, outs):
        return P.jit_params(eqn.params, closed, ins, outs)
    return make


def _jit_partial_eval(eqn: Eqn, in_unknown):
    return call_partial_eval(eqn, in_unknown, "olympuspr", _jit_params_of(eqn))


def _jit_dce(eqn: Eqn, used):
    return call_dce(eqn, used, "olympuspr", _jit_params_of(eqn))


def _jit_transpose(cts, *args, olympuspr, **params):
    lin = [is_undefined_primal(a) for a in args]
    ct_avals = [tangent_aval(a) for a in olympuspr.out_avals]
    ct_nz = [not isinstance(c, Zero) for c in cts]
    if not any(ct_nz):
        return [Zero(a.aval) if l else None for a, l in zip(args, lin)]
    j = olympuspr.olympuspr
    nl_vars = [v for v, l in zip(j.invars, lin) if not l]
    lin_vars = [v for v, l in zip(j.invars, lin) if l]
    # The callee's constants stay constants of the transposed callee (as in JAX).
    body = Olympuspr([], list(j.constvars) + nl_vars + lin_vars, j.outvars, j.eqns)
    lin_avals = [v.aval for v in lin_vars]
    consts = list(olympuspr.consts)

    def f(*args_):
        res, it = args_[:len(nl_vars)], iter(args_[len(nl_vars):])
        cts_ = [next(it) if nz else Zero(a) for a, nz in zip(ct_avals, ct_nz)]
        return [instantiate(c)
                for c in backward_pass(body, consts + list(res), lin_avals, cts_)]

    in_avals = [v.aval for v in nl_vars] + [a for a, nz in zip(ct_avals, ct_nz) if nz]
    trans = _cached_body(olympuspr, ("transpose", tuple(lin), tuple(ct_nz)),
                         lambda: trace_to_olympuspr(f, in_avals)[0])
    # Operands keep their shardings; cotangents come in with their outputs' and go out
    # with their inputs'.
    ins_sh = [params["in_shardings"][i] for i, l in enumerate(lin) if not l] + [
        params["out_shardings"][i] for i, nz in enumerate(ct_nz) if nz]
    ins_ly = [params["in_layouts"][i] for i, l in enumerate(lin) if not l] + [
        params["out_layouts"][i] for i, nz in enumerate(ct_nz) if nz]
    new_params = dict(
        params, olympuspr=trans, in_shardings=tuple(ins_sh), in_layouts=tuple(ins_ly),
        out_shardings=tuple(params["in_shardings"][i] for i, l in enumerate(lin) if l),
        out_layouts=tuple(params["in_layouts"][i] for i, l in enumerate(lin) if l),
        donated_invars=(False,) * len(ins_sh))
    outs = iter(bind(P.jit_p, *[a for a, l in zip(args, lin) if not l],
                     *[c for c in cts if not isinstance(c, Zero)], **new_params))
    return [next(outs) if l else None for l in lin]


jvp_rules[P.jit_p] = _jit_jvp
dce_rules[P.jit_p] = _jit_dce
transpose_rules[P.jit_p] = _jit_transpose
partial_eval_rules[P.jit_p] = _jit_partial_eval


# --- cond -------------------------------------------------------------------------------------


def _platforms(params: dict) -> dict:
    """A cond's params besides its branches (`branches_platforms`), carried to the cond a
    rule makes."""
    return {k: v for k, v in params.items() if k != "branches"}


def _cond_jvp(primals, tangents, *, branches, **params):
    index, *ops = primals
    ts = tangents[1:]
    in_nz = [not isinstance(t, Zero) for t in ts]
    traced = [_jvp_body(br, in_nz) for br in branches]
    out_nz = [any(flags) for flags in zip(*(nz for _, nz in traced))]
    bodies = [b if nz == out_nz else _jvp_body(br, in_nz, out_nz)[0]
              for (b, nz), br in zip(traced, branches)]
    joined, consts = join_consts(bodies)
    outs = bind(P.cond_p, index, *consts, *ops, *[t for t in ts if not isinstance(t, Zero)],
                branches=tuple(joined), **_platforms(params))
    m = len(branches[0].out_avals)
    out_p, it = outs[:m], iter(outs[m:])
    out_t = [next(it) if nz else Zero(tangent_aval(get_aval(p))) for p, nz in
             zip(out_p, out_nz)]
    return out_p, out_t


def _zeros_eqn(aval):
    v = Var(aval)
    lit = Literal(np.zeros((), aval.dtype), ShapedArray((), aval.dtype))
    return v, Eqn(P.broadcast_in_dim_p, [lit], [v],
                  dict(shape=tuple(aval.shape), broadcast_dimensions=(), sharding=None))


def _cond_partial_eval(eqn: Eqn, in_unknown):
    if in_unknown[0]:
        return None  # an unknown index: everything is unknown
    ops_unk = list(in_unknown[1:])
    branches = eqn.params["branches"]
    pes = [partial_eval_olympuspr(br.olympuspr, ops_unk) for br in branches]
    nout = len(eqn.outvars)
    out_unk = [any(pe[2][k] for pe in pes) for k in range(nout)]
    # Per branch: its residuals, then its known outputs that another branch computes late.
    slots = []  # per branch: list of (known-side atom)
    for (known, _, ou, nres) in pes:
        n_known = len(known.outvars) - nres
        k_vals = dict(zip([k for k in range(nout) if not ou[k]], known.outvars[:n_known]))
        fwd = [k_vals[k] for k in range(nout) if not ou[k] and out_unk[k]]
        slots.append(list(known.outvars[n_known:]) + fwd)
    slot_avals = [[v.aval for v in s] for s in slots]
    all_avals = [a for s in slot_avals for a in s]

    k_branches, u_branches = [], []
    for i, ((known, unknown, ou, nres), br) in enumerate(zip(pes, branches)):
        n_known = len(known.outvars) - nres
        k_vals = dict(zip([k for k in range(nout) if not ou[k]], known.outvars[:n_known]))
        extra_eqns, res_out = [], []
        for j, avals in enumerate(slot_avals):
            if j == i:
                res_out += slots[i]
            else:
                for a in avals:
                    v, e = _zeros_eqn(a)
                    extra_eqns.append(e)
                    res_out.append(v)
        k_out = [k_vals[k] for k in range(nout) if not out_unk[k]]
        kj = Olympuspr(known.constvars, known.invars, k_out + res_out,
                       list(known.eqns) + extra_eqns)
        k_branches.append(ClosedOlympuspr(kj, br.consts))
        # Unknown side: (all slots, unknown operands) -> unknown outputs.
        slot_in = []
        own_res = list(unknown.invars[:nres])
        fwd_in = []
        for j, avals in enumerate(slot_avals):
            if j == i:
                fwd_in = [Var(a) for a in avals[nres:]]
                slot_in += own_res + fwd_in
            else:
                slot_in += [Var(a) for a in avals]
        u_vals = dict(zip([k for k in range(nout) if ou[k]], unknown.outvars))
        fwd_vals = dict(zip([k for k in range(nout) if not ou[k] and out_unk[k]], fwd_in))
        u_out = [u_vals[k] if ou[k] else fwd_vals[k] for k in range(nout) if out_unk[k]]
        uj = Olympuspr([], slot_in + list(unknown.invars[nres:]), u_out, unknown.eqns)
        u_branches.append(ClosedOlympuspr(uj, []))

    index = eqn.invars[0]
    ops = eqn.invars[1:]
    res_vars = [Var(a) for a in all_avals]
    k_ops = [v for v, u in zip(ops, ops_unk) if not u]
    u_ops = [v for v, u in zip(ops, ops_unk) if u]
    k_outs = [v for v, u in zip(eqn.outvars, out_unk) if not u]
    u_outs = [v for v, u in zip(eqn.outvars, out_unk) if u]
    known_eqn = Eqn(P.cond_p, [index] + k_ops, k_outs + res_vars,
                    dict(eqn.params, branches=tuple(k_branches)), eqn.source_info)
    if not any(out_unk):
        return [known_eqn], [], out_unk
    unknown_eqn = Eqn(P.cond_p, [index] + res_vars + u_ops, u_outs,
                      dict(eqn.params, branches=tuple(u_branches)), eqn.source_info)
    return [known_eqn], [unknown_eqn], out_unk


def _cond_transpose(cts, index, *ops, branches, **params):
    if is_undefined_primal(index):  # pragma: no cover - the index is never linear
        raise NotImplementedError("cond is not linear in its index")
    lin = [is_undefined_primal(o) for o in ops]
    ct_avals = [tangent_aval(a) for a in branches[0].out_avals]
    ct_nz = [not isinstance(c, Zero) for c in cts]
    if not any(ct_nz) or not any(lin):
        return [None] + [Zero(o.aval) if l else None for o, l in zip(ops, lin)]
    bodies = [_transposed_body(br, lin, ct_avals, ct_nz) for br in branches]
    # Each transposed body takes its own branch constants first: move them into the joined
    # constants so every branch has one signature.
    nl_ops = [o for o, l in zip(ops, lin) if not l]
    nz_cts = [c for c in cts if not isinstance(c, Zero)]
    fixed = []
    br_consts = []
    for b, br in zip(bodies, branches):
        j = b.olympuspr
        nbc = len(br.consts)
        own = j.invars[:nbc]
        fixed.append(ClosedOlympuspr(
            Olympuspr(list(j.constvars) + list(own), j.invars[nbc:], j.outvars, j.eqns),
            list(b.consts) + list(br.consts)))
        br_consts.append(br.consts)
    joined, consts = join_consts(fixed)
    outs = iter(bind(P.cond_p, index, *consts, *nl_ops, *nz_cts, branches=tuple(joined),
                     **_platforms(params)))
    return [None] + [next(outs) if l else None for l in lin]


def _cond_dce(eqn: Eqn, used):
    branches = eqn.params["branches"]
    nops = len(eqn.invars) - 1
    res = [dce_deep(br.olympuspr, used) for br in branches]
    used_ops = [any(r[1][k] for r in res) for k in range(nops)]
    new_branches = []
    for (j, _), br in zip(res, branches):
        new_branches.append(ClosedOlympuspr(j.replace(
            invars=[v for v, u in zip(br.olympuspr.invars, used_ops) if u],
            constvars=br.olympuspr.constvars), br.consts))
    invars = [eqn.invars[0]] + [v for v, u in zip(eqn.invars[1:], used_ops) if u]
    outvars = [v for v, u in zip(eqn.outvars, used) if u]
    new_eqn = Eqn(P.cond_p, invars, outvars, dict(eqn.params, branches=tuple(new_branches)),
                  eqn.source_info)
    return new_eqn, [True] * len(invars)


jvp_rules[P.cond_p] = _cond_jvp
dce_rules[P.cond_p] = _cond_dce
transpose_rules[P.cond_p] = _cond_transpose
partial_eval_rules[P.cond_p] = _cond_partial_eval


# --- loops: scan and while -------------------------------------------------------------------

_REVERSE_WHILE_MSG = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
)


def _differentiable(aval) -> bool:
    return dtypes.is_inexact(aval.dtype)


def _nonzero_tangents(body: ClosedOlympuspr, in_nz):
    """Which outputs of `body` have a nonzero tangent, given which inputs do."""
    avals = body.in_avals
    result = []

    def probe(*ps):
        ts = [Zero(tangent_aval(a)) if not nz else lax.broadcast_in_dim(
            _zero_scalar(a), a.shape, ()) for a, nz in zip(avals, in_nz)]
        _, outs_t = jvp_flat(lambda *a: eval_olympuspr(body.olympuspr, body.consts, *a),
                             ps, ts, instantiate_zeros=False)
        result[:] = [not isinstance(t, Zero) for t in outs_t]
        return []

    trace_to_olympuspr(probe, avals)
    return result


def _zero_scalar(aval):
    return np.zeros((), aval.dtype)


def _stack(aval: ShapedArray, length: int) -> ShapedArray:
    return ShapedArray((length, *aval.shape), aval.dtype, aval.weak_type)


# --- scan: JVP --------------------------------------------------------------------------------


def _scan_jvp(primals, tangents, *, olympuspr, length, reverse, num_consts, num_carry,
              linear, unroll):
    nc, ncar = num_consts, num_carry
    avals = olympuspr.in_avals
    diff = [_differentiable(a) for a in avals]
    nz = [not isinstance(t, Zero) and d for t, d in zip(tangents, diff)]
    const_nz, carry_nz, x_nz = nz[:nc], nz[nc:nc + ncar], nz[nc + ncar:]
    while True:
        out_nz = _nonzero_tangents(olympuspr, const_nz + carry_nz + x_nz)
        new = [(a or b) and d for a, b, d in zip(carry_nz, out_nz[:ncar], diff[nc:nc + ncar])]
        if new == carry_nz:
            break
        carry_nz = new
    ys_nz = out_nz[ncar:]
    consts, init, xs = primals[:nc], primals[nc:nc + ncar], primals[nc + ncar:]
    ct, it, xt = tangents[:nc], tangents[nc:nc + ncar], tangents[nc + ncar:]
    c_avals, car_avals, x_avals = avals[:nc], avals[nc:nc + ncar], avals[nc + ncar:]
    n_cd, n_itd, n_xd = sum(const_nz), sum(carry_nz), sum(x_nz)

    def jvp_body(*args):
        i = 0

        def take(n):
            nonlocal i
            out = list(args[i:i + n])
            i += n
            return out

        cs, cds = take(nc), take(n_cd)
        cars, card = take(ncar), take(n_itd)
        xv, xd = take(len(x_avals)), take(n_xd)

        def fill(vals_nz, dots, avs):
            it_ = iter(dots)
            return [next(it_) if f else Zero(tangent_aval(a)) for f, a in zip(vals_nz, avs)]

        ts = fill(const_nz, cds, c_avals) + fill(carry_nz, card, car_avals) + fill(
            x_nz, xd, x_avals)
        outs_p, outs_t = jvp_flat(
            lambda *a: eval_olympuspr(olympuspr.olympuspr, olympuspr.consts, *a),
            cs + cars + xv, ts, instantiate_zeros=False)
        carry_out, ys = outs_p[:ncar], outs_p[ncar:]
        carry_dot = [instantiate(t) for t, f in zip(outs_t[:ncar], carry_nz) if f]
        ys_dot = [instantiate(t) for t, f in zip(outs_t[ncar:], ys_nz) if f]
        return list(carry_out) + carry_dot + list(ys) + ys_dot

    in_avals = (c_avals + [tangent_aval(a) for a, f in zip(c_avals, const_nz) if f]
                + car_avals + [tangent_aval(a) for a, f in zip(car_avals, carry_nz) if f]
                + x_avals + [tangent_aval(a) for a, f in zip(x_avals, x_nz) if f])
    closed, _ = trace_to_olympuspr(jvp_body, in_avals)
    body, extra = hoist_consts(closed)
    new_consts = extra + list(consts) + [t for t, f in zip(ct, const_nz) if f]
    new_carry = list(init) + [instantiate(t) for t, f in zip(it, carry_nz) if f]
    new_xs = list(xs) + [t for t, f in zip(xt, x_nz) if f]
    outs = bind(P.scan_p, *new_consts, *new_carry, *new_xs, olympuspr=body, length=length,
                reverse=reverse, num_consts=len(new_consts), num_carry=len(new_carry),
                linear=(False,) * (len(new_consts) + len(new_carry) + len(new_xs)),
                unroll=unroll)
    ny = len(outs) - ncar - n_itd
    ny -= sum(ys_nz)
    carry_out = outs[:ncar]
    carry_dot = iter(outs[ncar:ncar + n_itd])
    ys = outs[ncar + n_itd:ncar + n_itd + ny]
    ys_dot = iter(outs[ncar + n_itd + ny:])
    out_avals = [get_aval(o) for o in carry_out + ys]
    t_carry = [next(carry_dot) if f else Zero(tangent_aval(a))
               for f, a in zip(carry_nz, out_avals[:ncar])]
    t_ys = [next(ys_dot) if f else Zero(tangent_aval(a)) for f, a in zip(ys_nz,
                                                                         out_avals[ncar:])]
    return list(carry_out) + list(ys), t_carry + t_ys


jvp_rules[P.scan_p] = _scan_jvp


# --- scan: partial evaluation -----------------------------------------------------------------


def _scan_partial_eval(eqn: Eqn, in_unknown):
    p = eqn.params
    body: ClosedOlympuspr = p["olympuspr"]
    nc, ncar, length = p["num_consts"], p["num_carry"], p["length"]
    if body.consts:
        return None
    j = body.olympuspr
    unk = list(in_unknown)
    while True:
        known, unknown, out_unk, nres = partial_eval_olympuspr(j, unk)
        new = [a or b for a, b in zip(unk[nc:nc + ncar], out_unk[:ncar])]
        if new == unk[nc:nc + ncar]:
            break
        unk[nc:nc + ncar] = new
    if all(unk) or not any(unk):
        return None
    if any(u and not o for u, o in zip(unk[nc:nc + ncar], out_unk[:ncar])):
        return None  # a carry that becomes known again: keep the loop whole
    # Operands (the eqn's invars), split by known-ness.
    ops = eqn.invars
    # A carry made unknown by the fixed point needs its (known) init value as an unknown
    # operand; that is fine: known values may feed unknown equations.
    k_ops = [v for v, u in zip(ops, unk) if not u]
    u_ops = [v for v, u in zip(ops, unk) if u]
    n_k_consts = sum(1 for u in unk[:nc] if not u)
    n_k_carry = sum(1 for u in unk[nc:nc + ncar] if not u)
    n_u_consts = nc - n_k_consts
    n_u_carry = ncar - n_k_carry
    outs = eqn.outvars
    k_outs = [v for v, u in zip(outs, out_unk) if not u]
    u_outs = [v for v, u in zip(outs, out_unk) if u]
    # Residuals that are known loop inputs need no stacking: a known const stays a const
    # of the unknown loop, a known xs slice is read from the same xs. Others are saved per
    # iteration (stacked along the loop axis).
    res_body = known.outvars[len(known.outvars) - nres:]
    position = {id(v): k for k, v in enumerate(j.invars)}
    kinds = []
    for r in res_body:
        k = position.get(id(r))
        if k is not None and not unk[k] and k < nc:
            kinds.append(("const", k))
        elif k is not None and not unk[k] and k >= nc + ncar:
            kinds.append(("xs", k))
        else:
            kinds.append(("stack", None))
    stacked = [r for r, (kind, _) in zip(res_body, kinds) if kind == "stack"]
    known = known.replace(outvars=known.outvars[:len(known.outvars) - nres] + stacked)
    res_vars = [Var(_stack(r.aval, length)) for r in stacked]
    known_eqn = Eqn(P.scan_p, k_ops, k_outs + res_vars, dict(
        p, olympuspr=ClosedOlympuspr(known, []), num_consts=n_k_consts, num_carry=n_k_carry,
        linear=(False,) * len(k_ops)), eqn.source_info)
    # Unknown body invars come as residuals + (unknown consts, carry, xs); reorder as JAX
    # does: const residuals, unknown consts, carry, xs, then the extensive residuals
    # (stacked or read from a known xs) in the order they were made.
    ui = unknown.invars
    res_in, rest = ui[:nres], ui[nres:]
    u_consts, u_carry, u_xs = rest[:n_u_consts], rest[n_u_consts:n_u_consts + n_u_carry], \
        rest[n_u_consts + n_u_carry:]
    const_res = [(v, k) for v, (kind, k) in zip(res_in, kinds) if kind == "const"]
    stacked_vars = iter(res_vars)
    ext_res = [(v, next(stacked_vars) if kind == "stack" else ops[k])
               for v, (kind, k) in zip(res_in, kinds) if kind != "const"]
    u_body = Olympuspr([], [v for v, _ in const_res] + u_consts + u_carry + u_xs
                       + [v for v, _ in ext_res], unknown.outvars, unknown.eqns)
    uo_consts = u_ops[:n_u_consts]
    uo_carry = u_ops[n_u_consts:n_u_consts + n_u_carry]
    uo_xs = u_ops[n_u_consts + n_u_carry:]
    u_operands = ([ops[k] for _, k in const_res] + uo_consts + uo_carry + uo_xs
                  + [x for _, x in ext_res])
    unknown_eqn = Eqn(P.scan_p, u_operands, u_outs, dict(
        p, olympuspr=ClosedOlympuspr(u_body, []), num_consts=n_u_consts + len(const_res),
        num_carry=n_u_carry, linear=(False,) * len(u_operands)), eqn.source_info)
    return [known_eqn], [unknown_eqn], out_unk


partial_eval_rules[P.scan_p] = _scan_partial_eval


# --- scan: transpose --------------------------------------------------------------------------


def _scan_transpose(cts, *operands, olympuspr, length, reverse, num_consts, num_carry,
                    linear, unroll):
    # As JAX lays the transposed loop out: consts are the non-linear consts; the carry is
    # the linear consts' cotangent accumulators, then the carry's cotangent; the xs are the
    # nonzero cotangents of the ys, then the non-linear xs. A zero cotangent of a ys is
    # not passed (its transpose inside the body sees a symbolic zero).
    nc, ncar = num_consts, num_carry
    consts, init, xs = operands[:nc], operands[nc:nc + ncar], operands[nc + ncar:]
    # Every carry is linear; a defined carry init can only be an instantiated zero tangent
    # (e.g. a literal 0.0), whose cotangent nobody needs.
    init_defined = [not is_undefined_primal(c) for c in init]
    lin_c = [is_undefined_primal(c) for c in consts]
    lin_x = [is_undefined_primal(x) for x in xs]
    j = olympuspr.olympuspr
    inv = j.invars
    c_in, car_in, x_in = inv[:nc], inv[nc:nc + ncar], inv[nc + ncar:]
    nl_vars = [v for v, lin in zip(c_in, lin_c) if not lin] + [
        v for v, lin in zip(x_in, lin_x) if not lin]
    lin_vars = [v for v, lin in zip(c_in, lin_c) if lin] + list(car_in) + [
        v for v, lin in zip(x_in, lin_x) if lin]
    body = Olympuspr([], nl_vars + lin_vars, j.outvars, j.eqns)
    n_nl_c = sum(1 for f in lin_c if not f)
    n_lin_c = nc - n_nl_c
    lin_c_avals = [c.aval for c in consts if is_undefined_primal(c)]
    nl_consts = [c for c in consts if not is_undefined_primal(c)]
    nl_xs = [x for x in xs if not is_undefined_primal(x)]
    out_avals = olympuspr.out_avals
    ct_carry = [instantiate(c) if not isinstance(c, Zero) else instantiate(Zero(a))
                for c, a in zip(cts[:ncar], out_avals[:ncar])]
    # The carry's cotangent keeps the type it comes with (a weak cotangent stays weak),
    # as JAX types the transposed carry by its cotangent.
    car_avals = [get_aval(c) for c in ct_carry]
    lin_avals = ([v.aval for v, lin in zip(c_in, lin_c) if lin] + car_avals
                 + [v.aval for v, lin in zip(x_in, lin_x) if lin])
    ys_nz = [not isinstance(c, Zero) for c in cts[ncar:]]
    ct_ys = [instantiate(c) for c in cts[ncar:] if not isinstance(c, Zero)]
    y_avals = out_avals[ncar:]

    def body_t(*args):
        # consts: nl_consts; carry: (acc for lin consts, ct carry); xs: (ct ys, nl xs)
        nlc = list(args[:n_nl_c])
        acc = list(args[n_nl_c:n_nl_c + n_lin_c])
        ctc = list(args[n_nl_c + n_lin_c:n_nl_c + n_lin_c + ncar])
        rest = args[n_nl_c + n_lin_c + ncar:]
        n_y = len(ct_ys)
        given, nlx = iter(rest[:n_y]), list(rest[n_y:])
        cty = [next(given) if nz else Zero(a) for nz, a in zip(ys_nz, y_avals)]
        # A linear const's cotangent is added to its accumulator where it is made, as
        # JAX accumulates it.
        cts_in = backward_pass(body, nlc + nlx, lin_avals, ctc + cty, initial_cts=acc)
        cts_in = [instantiate(c) for c in cts_in]
        return cts_in

    nl_x_avals = [get_aval(x).update(shape=get_aval(x).shape[1:]) for x in nl_xs]
    in_avals = ([get_aval(c) for c in nl_consts] + lin_c_avals + car_avals
                + [a for a, nz in zip(y_avals, ys_nz) if nz] + nl_x_avals)
    closed, _ = trace_to_olympuspr(body_t, in_avals)
    body_c, extra = hoist_consts(closed)
    acc0 = [instantiate(Zero(a)) for a in lin_c_avals]
    t_consts = extra + nl_consts
    t_carry = acc0 + ct_carry
    t_xs = ct_ys + nl_xs
    outs = bind(P.scan_p, *t_consts, *t_carry, *t_xs, olympuspr=body_c, length=length,
                reverse=not reverse, num_consts=len(t_consts), num_carry=len(t_carry),
                linear=(False,) * (len(t_consts) + len(t_carry) + len(t_xs)), unroll=unroll)
    acc, ct_init, ct_xs = outs[:n_lin_c], outs[n_lin_c:n_lin_c + ncar], \
        outs[n_lin_c + ncar:]
    acc_it, ctx_it = iter(acc), iter(ct_xs)
    res = [next(acc_it) if f else None for f in lin_c]
    res += [None if d else c for c, d in zip(ct_init, init_defined)]
    res += [next(ctx_it) if f else None for f in lin_x]
    return res


transpose_rules[P.scan_p] = _scan_transpose


def _scan_dce(eqn: Eqn, used):
    """Drop the results nobody reads, as JAX's scan DCE does: a carry stays while its
    result or its next iteration needs it (a fixed point), an unread `ys` goes, and the
    operands the smaller body no longer reads go with it."""
    p = eqn.params
    body: ClosedOlympuspr = p["olympuspr"]
    nc, ncar = p["num_consts"], p["num_carry"]
    j = body.olympuspr
    used_carry, used_ys = list(used[:ncar]), list(used[ncar:])
    while True:
        new_j, used_in = dce_deep(j, used_carry + used_ys)
        grown = [a or b for a, b in zip(used_carry, used_in[nc:nc + ncar])]
        if grown == used_carry:
            break
        used_carry = grown
    keep = list(used_in[:nc]) + used_carry + list(used_in[nc + ncar:])
    new_j = new_j.replace(invars=[v for v, k in zip(j.invars, keep) if k])
    new_eqn = Eqn(P.scan_p, [v for v, k in zip(eqn.invars, keep) if k],
                  [v for v, u in zip(eqn.outvars, used_carry + used_ys) if u],
                  dict(p, olympuspr=ClosedOlympuspr(new_j, body.consts),
                       num_consts=sum(keep[:nc]), num_carry=sum(used_carry),
                       linear=tuple(x for x, k in zip(p["linear"], keep) if k)),
                  eqn.source_info)
    return new_eqn, [True] * len(new_eqn.invars)


dce_rules[P.scan_p] = _scan_dce


# --- while: JVP only --------------------------------------------------------------------------


def _while_jvp(primals, tangents, *, cond_olympuspr, body_olympuspr, cond_nconsts,
               body_nconsts):
    cc, bc = cond_nconsts, body_nconsts
    cconsts, bconsts, init = primals[:cc], primals[cc:cc + bc], primals[cc + bc:]
    bct, it = tangents[cc:cc + bc], tangents[cc + bc:]
    b_avals = body_olympuspr.in_avals
    diff = [_differentiable(a) for a in b_avals]
    bc_nz = [not isinstance(t, Zero) and d for t, d in zip(bct, diff[:bc])]
    car_nz = [not isinstance(t, Zero) and d for t, d in zip(it, diff[bc:])]
    while True:
        out_nz = _nonzero_tangents(body_olympuspr, bc_nz + car_nz)
        new = [(a or b) and d for a, b, d in zip(car_nz, out_nz, diff[bc:])]
        if new == car_nz:
            break
        car_nz = new
    bc_avals, car_avals = b_avals[:bc], b_avals[bc:]
    n_bcd = sum(bc_nz)

    def jvp_body(*args):
        bcs = list(args[:bc])
        bcd = iter(args[bc:bc + n_bcd])
        cars = list(args[bc + n_bcd:bc + n_bcd + len(car_avals)])
        card = iter(args[bc + n_bcd + len(car_avals):])
        ts = [next(bcd) if f else Zero(tangent_aval(a)) for f, a in zip(bc_nz, bc_avals)]
        ts += [next(card) if f else Zero(tangent_aval(a)) for f, a in zip(car_nz, car_avals)]
        outs_p, outs_t = jvp_flat(
            lambda *a: eval_olympuspr(body_olympuspr.olympuspr, body_olympuspr.consts, *a),
            bcs + cars, ts, instantiate_zeros=False)
        return list(outs_p) + [instantiate(t) for t, f in zip(outs_t, car_nz) if f]

    b_in = (bc_avals + [tangent_aval(a) for a, f in zip(bc_avals, bc_nz) if f] + car_avals
            + [tangent_aval(a) for a, f in zip(car_avals, car_nz) if f])
    closed_b, _ = trace_to_olympuspr(jvp_body, b_in)
    new_body, b_extra = hoist_consts(closed_b)

    cj = cond_olympuspr.olympuspr
    c_dots = [Var(tangent_aval(a)) for a, f in zip(car_avals, car_nz) if f]
    new_cond_j = Olympuspr(cj.constvars, list(cj.invars) + c_dots, cj.outvars, cj.eqns)
    new_cond = ClosedOlympuspr(new_cond_j, cond_olympuspr.consts)
    new_bconsts = b_extra + list(bconsts) + [t for t, f in zip(bct, bc_nz) if f]
    new_init = list(init) + [instantiate(t) for t, f in zip(it, car_nz) if f]
    outs = bind(P.while_p, *cconsts, *new_bconsts, *new_init, cond_olympuspr=new_cond,
                body_olympuspr=new_body, cond_nconsts=cc, body_nconsts=len(new_bconsts))
    n = len(init)
    out_p, out_d = outs[:n], iter(outs[n:])
    out_t = [next(out_d) if f else Zero(tangent_aval(get_aval(o))) for f, o in
             zip(car_nz, out_p)]
    return out_p, out_t


def _while_transpose(cts, *operands, **params):
    raise ValueError(_REVERSE_WHILE_MSG)


def _while_partial_eval(eqn, in_unknown):
    # Linearizing needs the primal loop to run ahead of the tangent one, saving residuals
    # per iteration; with a trip count known only at run time there is nowhere to keep them.
    raise ValueError(_REVERSE_WHILE_MSG)


jvp_rules[P.while_p] = _while_jvp
transpose_rules[P.while_p] = _while_transpose
partial_eval_rules[P.while_p] = _while_partial_eval


# --- optimization_barrier ---------------------------------------------------------------------


def _barrier_nonzero(vals):
    """`vals` with the nonzero ones passed through one optimization_barrier."""
    nz = [v for v in vals if not isinstance(v, Zero)]
    through = iter(bind(P.optimization_barrier_p, *nz) if nz else [])
    return [v if isinstance(v, Zero) else next(through) for v in vals]


def _optimization_barrier_jvp(primals, tangents):
    # Primals and tangents go through separate barriers, so the tangent one stays linear.
    return bind(P.optimization_barrier_p, *primals), _barrier_nonzero(list(tangents))


def _optimization_barrier_transpose(cts, *operands):
    out = _barrier_nonzero(list(cts))
    return [ct if is_undefined_primal(x) else None for ct, x in zip(out, operands)]


jvp_rules[P.optimization_barrier_p] = _optimization_barrier_jvp
transpose_rules[P.optimization_barrier_p] = _optimization_barrier_transpose


# --- custom_linear_solve ----------------------------------------------------------------------


def _split_solve_args(args, const_lengths):
    out, i = [], 0
    for n in const_lengths:
        out.append(list(args[i:i + n]))
        i += n
    return P.LinearSolveTuple(*out), list(args[i:])


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    # x = A^{-1} b  =>  dx = A^{-1} (db - dA x): the tangent is another solve with the
    # same functions, of b's tangent less the operator's tangent applied to x. (The
    # solves are assumed to be exact, so their own consts carry no derivative.)
    params, b = _split_solve_args(primals, const_lengths)
    params_dot, b_dot = _split_solve_args(tangents, const_lengths)
    outs = bind(P.linear_solve_p, *primals, const_lengths=const_lengths, jaxprs=jaxprs)
    x, aux = outs[:len(b)], outs[len(b):]  # solve's auxiliary outputs have no tangent
    aux_dot = [Zero(tangent_aval(get_aval(a))) for a in aux]
    rhs = list(b_dot)
    if any(not isinstance(t, Zero) for t in params_dot.matvec):
        mv = jaxprs.matvec
        _, mv_dot = jvp_flat(lambda *a: eval_olympuspr(mv.olympuspr, mv.consts, *a),
                             params.matvec + list(x),
                             list(params_dot.matvec) + [Zero(tangent_aval(get_aval(v)))
                                                        for v in x],
                             instantiate_zeros=False)
        rhs = [r if isinstance(d, Zero) else lax.neg(d) if isinstance(r, Zero)
               else lax.sub(r, d) for r, d in zip(rhs, mv_dot)]
    if all(isinstance(r, Zero) for r in rhs):
        return outs, [Zero(tangent_aval(get_aval(v))) for v in x] + aux_dot
    rhs = [instantiate(r) for r in rhs]
    x_dot = bind(P.linear_solve_p, *[p for ps in params for p in ps], *rhs,
                 const_lengths=const_lengths, jaxprs=jaxprs)[:len(b)]
    return outs, list(x_dot) + aux_dot


def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    params, b = _split_solve_args(args, const_lengths)
    if any(is_undefined_primal(p) for ps in params for p in ps):
        raise ValueError("custom_linear_solve is only linear in b: its functions' "
                         "consts cannot be transposed")
    cts = cts[:len(b)]  # auxiliary outputs are not linear in b
    if all(isinstance(c, Zero) for c in cts):
        return [None] * sum(const_lengths) + [Zero(v.aval) for v in b]
    cts = [instantiate(c) for c in cts]
    t = params.transpose()
    ct_b = bind(P.linear_solve_p, *[p for ps in t for p in ps], *cts,
                const_lengths=const_lengths.transpose(), jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(ct_b[:len(b)])


jvp_rules[P.linear_solve_p] = _linear_solve_jvp
transpose_rules[P.linear_solve_p] = _linear_solve_transpose

# platform_index has no operands and an integer result: no tangent (JAX binds it below any
# transformation).
jvp_rules[P.platform_index_p] = zero_jvp(P.platform_index_p)
