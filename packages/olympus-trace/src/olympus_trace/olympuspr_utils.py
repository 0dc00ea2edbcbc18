"""Olympuspr-to-olympuspr utilities: evaluation (inlining into the current trace),
dead-code elimination, and partial evaluation (the known/unknown split)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from olympus_ir import dtypes
from olympus_ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr, Var
from olympus_ir.prims.callbacks import debug_callback_p, eqn_effects, io_callback_p
from olympus_ir.prims.checks import check_p

from .core import bind
from .staging import source_override

#: Primitives with side effects: never removed by DCE (nor are equations whose
#: sub-olympusprs contain one, e.g. a `cond` whose branch prints).
effectful_primitives: set = {debug_callback_p, io_callback_p, check_p}

#: prim -> rule(eqn, unknowns: list[bool]) -> (known_eqns, unknown_eqns, out_unknowns) or
#: None to fall back to the default (the whole equation is unknown if any input is). A rule
#: may split an equation whose primal part can run early (e.g. `scan`): residuals it
#: introduces are ordinary vars defined by known equations and read by unknown ones.
partial_eval_rules: dict = {}


def eval_olympuspr(olympuspr: Olympuspr, consts: Sequence[Any], *args: Any) -> list:
    """Run `olympuspr` by binding each equation in the current trace.

    Under a staging trace this inlines the olympuspr; outside any trace it executes eagerly.
    """
    env: dict[int, Any] = {}

    def read(v):
        return _literal_value(v) if isinstance(v, Literal) else env[id(v)]

    if len(args) != len(olympuspr.invars):
        raise TypeError(
            f"olympuspr takes {len(olympuspr.invars)} arguments, got {len(args)}"
        )
    for v, x in zip(olympuspr.constvars, consts):
        env[id(v)] = x
    for v, x in zip(olympuspr.invars, args):
        env[id(v)] = x
    override = source_override
    outer = override[0]
    try:
        for eqn in olympuspr.eqns:
            override[0] = eqn.source_info or outer
            out = bind(eqn.primitive, *map(read, eqn.invars), **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            for v, x in zip(eqn.outvars, outs):
                env[id(v)] = x
    finally:
        override[0] = outer
    return [read(v) for v in olympuspr.outvars]


def _literal_value(lit: Literal):
    """A literal's value, weak-typed again (a Python scalar) if the literal was weak, so
    re-binding the equation gives the same avals."""
    if lit.aval.weak_type and lit.aval.shape == ():
        py = lit.val.item() if hasattr(lit.val, "item") else lit.val
        if type(py) in (int, float, complex) and dtypes.python_scalar_dtype(py) == lit.aval.dtype:
            return py
    return lit.val


def inline_closed(closed: ClosedOlympuspr, *args: Any) -> list:
    """Apply a closed olympuspr to `args` in the current trace."""
    return eval_olympuspr(closed.olympuspr, closed.consts, *args)


def dce_olympuspr(olympuspr: Olympuspr, used_outputs: Sequence[bool] | None = None,
                  prune_invars: bool = False, rules: Mapping | None = None,
                  ) -> tuple[Olympuspr, list[bool]]:
    """Remove equations whose results are unused.

    Returns the new olympuspr and, per input, whether it is used. With `prune_invars` the
    unused inputs are also dropped from the new olympuspr's signature. `rules` (primitive ->
    ``rule(eqn, used_outputs) -> (new eqn, used_inputs)``, e.g. ``ad.dce_rules``) trims an
    equation of which only some outputs are used; without one the equation stays whole.
    """
    if used_outputs is None:
        used_outputs = [True] * len(olympuspr.outvars)
    outvars = [v for v, u in zip(olympuspr.outvars, used_outputs) if u]
    live = {id(v) for v in outvars if isinstance(v, Var)}
    kept: list[Eqn] = []
    for eqn in reversed(olympuspr.eqns):
        used = [id(v) in live for v in eqn.outvars]
        effectful = eqn.primitive in effectful_primitives or bool(
            eqn.params and eqn_effects(eqn))
        if not any(used) and not effectful:
            continue
        rule = rules.get(eqn.primitive) if rules else None
        if rule is not None and not all(used) and not effectful:
            eqn, used_in = rule(eqn, used)
        else:
            used_in = [True] * len(eqn.invars)
        kept.append(eqn)
        live.update(id(v) for v, u in zip(eqn.invars, used_in) if u and isinstance(v, Var))
    kept.reverse()
    used_inputs = [id(v) in live for v in olympuspr.invars]
    invars = [v for v, u in zip(olympuspr.invars, used_inputs) if u] if prune_invars \
        else olympuspr.invars
    constvars = [v for v in olympuspr.constvars if id(v) in live]
    new = olympuspr.replace(constvars=constvars, invars=invars, outvars=outvars, eqns=kept)
    return new, used_inputs


def dce_closed(closed: ClosedOlympuspr, prune_invars: bool = False) -> ClosedOlympuspr:
    """DCE a closed olympuspr, dropping unused constants too (and unused inputs, with
    `prune_invars`)."""
    j = closed.olympuspr
    new, _ = dce_olympuspr(j, prune_invars=prune_invars)
    keep = {id(v) for v in new.constvars}
    consts = [c for v, c in zip(j.constvars, closed.consts) if id(v) in keep]
    return ClosedOlympuspr(new, consts)


def hoist_consts(closed: ClosedOlympuspr) -> tuple[ClosedOlympuspr, list]:
    """The same function with its constants as leading inputs (and no constants)."""
    j = closed.olympuspr
    conv = Olympuspr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns, j.effects,
                     j.debug_info)
    return ClosedOlympuspr(conv, []), list(closed.consts)


def partial_eval_olympuspr(
    olympuspr: Olympuspr, unknowns: Sequence[bool]
) -> tuple[Olympuspr, Olympuspr, list[bool], int]:
    """Split `olympuspr` into a known part and an unknown part.

    An equation is unknown if any of its inputs is. The known olympuspr takes the known
    inputs and returns the known outputs followed by residuals (known values the unknown
    part needs). The unknown olympuspr takes the residuals followed by the unknown inputs
    and returns the unknown outputs. Returns (known, unknown, out_unknowns, num_residuals).
    Constvars are treated as known: the known olympuspr keeps all of `olympuspr`'s
    constvars (close it with the same consts); the unknown one has none (constants it
    reads are residuals).
    """
    if len(unknowns) != len(olympuspr.invars):
        raise ValueError("partial_eval_olympuspr: one unknowns flag per input is required")
    unknown_ids = {id(v) for v, u in zip(olympuspr.invars, unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in olympuspr.eqns:
        in_unknown = [isinstance(v, Var) and id(v) in unknown_ids for v in eqn.invars]
        if not any(in_unknown):
            known_eqns.append(eqn)
            continue
        rule = partial_eval_rules.get(eqn.primitive)
        split = rule(eqn, in_unknown) if rule is not None else None
        if split is None:
            unknown_eqns.append(eqn)
            unknown_ids.update(id(v) for v in eqn.outvars)
            continue
        k_eqns, u_eqns, out_unknown = split
        known_eqns.extend(k_eqns)
        unknown_eqns.extend(u_eqns)
        unknown_ids.update(id(v) for v, u in zip(eqn.outvars, out_unknown) if u)

    def is_unknown(v):
        return isinstance(v, Var) and id(v) in unknown_ids

    out_unknowns = [is_unknown(v) for v in olympuspr.outvars]
    # Residuals: known vars (not literals) read by unknown equations or returned as
    # unknown outputs... known outputs are returned by the known olympuspr directly.
    defined_unknown = {id(v) for e in unknown_eqns for v in e.outvars}
    defined_unknown |= {id(v) for v, u in zip(olympuspr.invars, unknowns) if u}
    residuals: list[Var] = []
    seen: set[int] = set()
    for e in unknown_eqns:
        for v in e.invars:
            if isinstance(v, Var) and id(v) not in defined_unknown and id(v) not in seen:
                seen.add(id(v))
                residuals.append(v)
    known_in = [v for v, u in zip(olympuspr.invars, unknowns) if not u]
    known_out = [v for v, u in zip(olympuspr.outvars, out_unknowns) if not u]
    known = Olympuspr(olympuspr.constvars, known_in, known_out + residuals, known_eqns)
    known, _ = dce_olympuspr(known)
    # Keep every constvar so the known olympuspr closes over the original consts.
    known = known.replace(constvars=olympuspr.constvars)
    unknown_in = [v for v, u in zip(olympuspr.invars, unknowns) if u]
    unknown_out = [v for v, u in zip(olympuspr.outvars, out_unknowns) if u]
    # The unknown side binds each residual with a variable of its own, so no variable is
    # bound in two olympusprs (which would print under one name in both, as JAX's never do).
    fresh = {id(r): Var(r.aval) for r in residuals}

    def sub(v):
        return fresh.get(id(v), v) if isinstance(v, Var) else v

    unknown_eqns = [e.replace(invars=[sub(v) for v in e.invars])
                    if any(isinstance(v, Var) and id(v) in fresh for v in e.invars) else e
                    for e in unknown_eqns]
    unknown = Olympuspr([], [fresh[id(r)] for r in residuals] + unknown_in,
                        [sub(v) for v in unknown_out], unknown_eqns)
    return known, unknown, out_unknowns, len(residuals)


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
