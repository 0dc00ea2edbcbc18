"""Autodiff of `cond` and `closed_call` (the loops are in loops.py).

JVP: the primitive applied to JVP'd bodies (which take the primals and the nonzero tangents,
and return the primal outputs and the nonzero output tangents). Partial evaluation (for
linearize) splits the JVP'd primitive into a known one, computing the primal outputs and
residuals, and an unknown one, linear in the tangents. Transpose: the primitive applied to
the transposed (linear) bodies.
"""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray
from olympus_ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr, Var

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
    partial_eval_olympuspr,
    partial_eval_rules,
)
from ..staging import trace_to_olympuspr


def join_consts(closed_list):
    """Rewrite closed olympusprs (e.g. cond branches) to take every one's constants (then
    their own inputs) as inputs, so they share one signature. Returns (new, consts)."""
    all_consts, all_avals = [], []
    for c in closed_list:
        all_consts += list(c.consts)
        all_avals += [v.aval for v in c.olympuspr.constvars]
    out, off = [], 0
    for c in closed_list:
        j = c.olympuspr
        n = len(j.constvars)
        const_in = [Var(a) for a in all_avals]
        const_in[off:off + n] = j.constvars
        off += n
        out.append(ClosedOlympuspr(Olympuspr([], const_in + list(j.invars), j.outvars, j.eqns,
                                             j.effects, j.debug_info), []))
    return out, all_consts


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
    closed = eqn.params["call_olympuspr"]
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
    k_in = [v for v, u in zip(eqn.invars, in_unknown) if not u]
    u_in = [v for v, u in zip(eqn.invars, in_unknown) if u]
    k_out = [v for v, u in zip(eqn.outvars, out_unk) if not u]
    u_out = [v for v, u in zip(eqn.outvars, out_unk) if u]
    known_eqn = Eqn(P.closed_call_p, k_in, k_out + res_vars,
                    dict(eqn.params, call_olympuspr=ClosedOlympuspr(known, closed.consts)),
                    eqn.source_info)
    if not any(out_unk):
        return [known_eqn], [], out_unk
    unknown_eqn = Eqn(P.closed_call_p, res_atoms + u_in, u_out,
                      dict(eqn.params, call_olympuspr=ClosedOlympuspr(unknown, [])),
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


def call_dce(eqn: Eqn, used, param="call_olympuspr"):
    """DCE rule of call-like primitives: prune the body's unused outputs and inputs."""
    c = eqn.params[param]
    j = c.olympuspr
    new, used_in = dce_deep(j, used, prune_invars=True)
    new = new.replace(constvars=j.constvars)
    invars = [v for v, u in zip(eqn.invars, used_in) if u]
    outvars = [v for v, u in zip(eqn.outvars, used) if u]
    new_eqn = Eqn(eqn.primitive, invars, outvars,
                  dict(eqn.params, **{param: ClosedOlympuspr(new, c.consts)}), eqn.source_info)
    return new_eqn, [True] * len(invars)


jvp_rules[P.closed_call_p] = _closed_call_jvp
dce_rules[P.closed_call_p] = call_dce
transpose_rules[P.closed_call_p] = _closed_call_transpose
partial_eval_rules[P.closed_call_p] = _closed_call_partial_eval


# --- cond -------------------------------------------------------------------------------------


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    ts = tangents[1:]
    in_nz = [not isinstance(t, Zero) for t in ts]
    traced = [_jvp_body(br, in_nz) for br in branches]
    out_nz = [any(flags) for flags in zip(*(nz for _, nz in traced))]
    bodies = [b if nz == out_nz else _jvp_body(br, in_nz, out_nz)[0]
              for (b, nz), br in zip(traced, branches)]
    joined, consts = join_consts(bodies)
    outs = bind(P.cond_p, index, *consts, *ops, *[t for t in ts if not isinstance(t, Zero)],
                branches=tuple(joined))
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


def _cond_transpose(cts, index, *ops, branches):
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
    outs = iter(bind(P.cond_p, index, *consts, *nl_ops, *nz_cts, branches=tuple(joined)))
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
