"""Ref discharge: a program holding refs as a pure program over their values.

The design (JAX's "discharge" approach, in its simplest form): an olympuspr with refs is
*re-evaluated* under a new trace with every ref replaced by a cell holding its current
value. ``new_ref(x)`` makes a cell; ``get`` indexes the cell's value; ``swap`` /
``addupdate`` replace it (``.at[idx].set`` / ``.add``); ``freeze`` reads it. Loops and
conditionals whose operands include refs are re-expressed with the public `scan`,
`while_loop` and `switch`, the ref values becoming extra carries (or operands and results
of the branches); other sub-programs are inlined. The result is a pure function of the
ref values and the other inputs that returns the outputs and the refs' final values.

It is used twice: by `jit` (a jitted function taking or closing over refs runs the
discharged program, then writes the refs' final values back: refs are in effect donated)
and by reverse-mode AD (a linear olympuspr with tangent refs is discharged before it is
transposed, so only pure primitives are transposed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from olympus_ir.core import ClosedOlympuspr, Literal, Olympuspr
from olympus_ir.prims.callbacks import olympuspr_effects
from olympus_ir.prims.refs import (
    REF_PRIMITIVES,
    AbstractRef,
    addupdate_p,
    freeze_p,
    get_p,
    new_ref_p,
    ref_effect,
    swap_p,
)
from olympus_trace import ad
from olympus_trace.core import bind, get_aval
from olympus_trace.olympuspr_utils import _literal_value
from olympus_trace.staging import trace_to_olympuspr

__all__ = ["has_refs", "eval_discharged", "discharge_closed"]


class _Cell:
    __slots__ = ("val",)

    def __init__(self, val):
        self.val = val


def has_refs(j: Olympuspr | ClosedOlympuspr) -> bool:
    """Whether `j` takes, closes over, or operates on refs."""
    if isinstance(j, ClosedOlympuspr):
        j = j.olympuspr
    if any(isinstance(v.aval, AbstractRef) for v in (*j.constvars, *j.invars)):
        return True
    return ref_effect in olympuspr_effects(j) or any(
        e.primitive in REF_PRIMITIVES for e in j.eqns)


def _sub_has_refs(e) -> bool:
    """Whether an equation's sub-programs (at any depth) use refs."""
    for sub in e.params.values():
        subs = sub if isinstance(sub, (tuple, list)) else (sub,)
        for x in subs:
            if isinstance(x, (ClosedOlympuspr, Olympuspr)):
                j = x.olympuspr if isinstance(x, ClosedOlympuspr) else x
                if has_refs(j) or any(_sub_has_refs(q) for q in j.eqns):
                    return True
    return False


def _np_index(indexer, idx_vals) -> tuple:
    ops = iter(idx_vals)
    out = []
    for d in indexer.dims:
        if d[0] == "int":
            out.append(next(ops))
        else:
            _, start, size, stride = d
            out.append(slice(start, start + (size - 1) * stride + 1 if size else start, stride))
    return tuple(out)


def _as_array(x):
    import olympus.numpy as jnp

    return jnp.asarray(x)


def eval_discharged(j: Olympuspr, consts: Sequence, args: Sequence) -> tuple[list, list]:
    """Evaluate `j` with the values of its ref constvars/invars given in place of the refs;
    returns (outputs, final values of the ref constvars then ref invars)."""
    env: dict[Any, Any] = {}
    cells = []
    for v, x in zip((*j.constvars, *j.invars), (*consts, *args), strict=True):
        if isinstance(v.aval, AbstractRef):
            # A cell given directly is shared (one ref passed at two positions).
            env[v] = x if isinstance(x, _Cell) else _Cell(x)
            if not any(env[v] is c for c in cells):
                cells.append(env[v])
        else:
            env[v] = x

    def read(v):
        return _literal_value(v) if isinstance(v, Literal) else env[v]

    for e in j.eqns:
        ins = [read(v) for v in e.invars]
        rule = _rules.get(e.primitive)
        if rule is not None:
            outs = rule(e, ins)
        elif any(isinstance(x, _Cell) for x in ins) or _sub_has_refs(e):
            # A sub-program using refs of its own (a nested jit making a ref) is evaluated
            # here too: binding it would stage the refs again, undischarged.
            outs = _sub_program(e, ins)
        else:
            out = bind(e.primitive, *ins, **e.params)
            outs = out if e.primitive.multiple_results else [out]
        for v, x in zip(e.outvars, outs, strict=True):
            env[v] = x
    results = [read(v) for v in j.outvars]
    if any(isinstance(x, _Cell) for x in results):
        raise ValueError("a ref cannot be returned from a discharged program")
    return results, [c.val for c in cells]


def _new_ref(e, ins):
    return [_Cell(ins[0])]


def _freeze(e, ins):
    return [ins[0].val]


def _get(e, ins):
    cell, *idx = ins
    return [_as_array(cell.val)[_np_index(e.params["indexer"], idx)]]


def _swap(e, ins):
    cell, val, *idx = ins
    index = _np_index(e.params["indexer"], idx)
    cur = _as_array(cell.val)
    old = cur[index]
    cell.val = _strong(cur.at[index].set(val))
    return [old]


def _addupdate(e, ins):
    cell, val, *idx = ins
    cur = _as_array(cell.val)
    new = cur.at[_np_index(e.params["indexer"], idx)].add(val)
    from olympus_trace import lax_ops  # an add keeps the ref's weak type (as in JAX)

    cell.val = lax_ops.convert_element_type(new, get_aval(new).dtype,
                                            weak_type=get_aval(cur).weak_type)
    return []


def _strong(x):
    """A written ref holds a strongly typed value (as in JAX)."""
    from olympus_trace import lax_ops

    return lax_ops.convert_element_type(x, get_aval(x).dtype, weak_type=False)


_rules = {new_ref_p: _new_ref, freeze_p: _freeze, get_p: _get, swap_p: _swap,
          addupdate_p: _addupdate}


# --- sub-programs with ref operands ------------------------------------------------------


def _uniq_cells(ins) -> list:
    """The distinct ref cells among `ins`, in order of first appearance."""
    uniq: list = []
    for x in ins:
        if isinstance(x, _Cell) and not any(x is c for c in uniq):
            uniq.append(x)
    return uniq


def _rebind(ins, uniq, vals):
    """`ins` with each cell of `uniq` replaced by a fresh cell holding its value from
    `vals` (shared by the positions of one ref); returns (new ins, the fresh cells), whose
    values after evaluating a sub-program are the refs' final values."""
    fresh = [_Cell(v) for v in vals]
    out = []
    for x in ins:
        if isinstance(x, _Cell):
            k = next(i for i, c in enumerate(uniq) if c is x)
            out.append(fresh[k])
        else:
            out.append(x)
    return out, fresh


def _closed(x):
    return (x.olympuspr, x.consts) if isinstance(x, ClosedOlympuspr) else (x, [])


def _run_sub(sub, ins):
    """Evaluate sub-olympuspr `sub` on `ins` (ref operands given as their values)."""
    j, consts = _closed(sub)
    return eval_discharged(j, consts, ins)


def _sub_program(e, ins):
    name = e.primitive.name
    p = e.params
    if name == "scan":
        return _scan(e, ins)
    if name == "while":
        return _while(e, ins)
    if name == "cond":
        return _cond(e, ins)
    for key in ("call_olympuspr", "olympuspr", "fun_olympuspr", "jaxpr"):
        sub = p.get(key)
        if isinstance(sub, (ClosedOlympuspr, Olympuspr)):
            outs, finals = _run_sub(sub, ins)  # the cells themselves: updated in place
            return outs
    expansion = getattr(e.primitive, "expansion", None)
    if expansion is not None:  # a high-level primitive: its expansion, on the refs
        outs, finals = _run_sub(expansion([v.aval for v in e.invars], p), ins)
        return outs
    raise NotImplementedError(f"refs passed to '{name}' cannot be discharged")


def _scan(e, ins):
    from olympus.lax import scan

    p = e.params
    nc, nk = int(p["num_consts"]), int(p["num_carry"])
    if any(isinstance(x, _Cell) for x in ins[nc:]):
        raise ValueError("refs can only be closed over by a scan body, not carried or scanned")
    uniq = _uniq_cells(ins)
    j, consts = _closed(p["olympuspr"])

    def body(carry, xs):
        ref_vals, c = carry
        args, fresh = _rebind(ins[:nc], uniq, ref_vals)
        outs, _ = eval_discharged(j, consts, [*args, *c, *xs])
        return ([f.val for f in fresh], outs[:nk]), outs[nk:]

    init = ([_strong(c.val) for c in uniq], list(ins[nc:nc + nk]))
    (finals, carry), ys = scan(body, init, list(ins[nc + nk:]), length=p["length"],
                               reverse=p["reverse"], unroll=p["unroll"])
    for c, v in zip(uniq, finals, strict=True):
        c.val = v
    return [*carry, *ys]


def _while(e, ins):
    from olympus.lax import while_loop

    p = e.params
    nc, nb = int(p["cond_nconsts"]), int(p["body_nconsts"])
    if any(isinstance(x, _Cell) for x in ins[nc + nb:]):
        raise ValueError("refs can only be closed over by a while loop, not carried")
    uniq = _uniq_cells(ins)
    cj, cconsts = _closed(p["cond_olympuspr"])
    bj, bconsts = _closed(p["body_olympuspr"])

    def cond_fun(carry):
        ref_vals, c = carry
        args, _ = _rebind(ins[:nc], uniq, ref_vals)
        return eval_discharged(cj, cconsts, [*args, *c])[0][0]

    def body_fun(carry):
        ref_vals, c = carry
        args, fresh = _rebind(ins[nc:nc + nb], uniq, ref_vals)
        outs, _ = eval_discharged(bj, bconsts, [*args, *c])
        return ([f.val for f in fresh], outs)

    finals, outs = while_loop(cond_fun, body_fun,
                              ([_strong(c.val) for c in uniq], list(ins[nc + nb:])))
    for c, v in zip(uniq, finals, strict=True):
        c.val = v
    return list(outs)


def _cond(e, ins):
    from olympus.lax import switch

    index, *ops = ins
    uniq = _uniq_cells(ops)
    plain = [None if isinstance(x, _Cell) else x for x in ops]

    def branch(b):
        def run(ref_vals, plain):
            args, fresh = _rebind([o if p is None else p for o, p in zip(ops, plain)], uniq,
                                  ref_vals)
            outs, _ = _run_sub(b, args)
            return outs, [f.val for f in fresh]
        return run

    outs, finals = switch(index, [branch(b) for b in e.params["branches"]],
                          [_strong(c.val) for c in uniq], plain)
    for c, v in zip(uniq, finals, strict=True):
        c.val = v
    return list(outs)


# --- whole programs ------------------------------------------------------------------------


def discharge_closed(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """`closed` (no ref inputs) with its internal refs discharged: same signature."""
    j = closed.olympuspr

    def fun(*args):
        return eval_discharged(j, closed.consts, args)[0]

    new, _ = trace_to_olympuspr(fun, [v.aval for v in j.invars])
    return new


def _discharge_linear(j: Olympuspr):
    """The backward pass's hook: a linear olympuspr holding tangent refs as a pure one.
    Returns (olympuspr, extra leading residuals: the constants the re-trace made)."""
    if not has_refs(j):
        return j, []
    closed = discharge_closed(ClosedOlympuspr(j, []))
    nj = closed.olympuspr
    return (Olympuspr([], [*nj.constvars, *nj.invars], nj.outvars, nj.eqns, nj.effects,
                      nj.debug_info), list(closed.consts))


ad.discharge_hooks.append(_discharge_linear)


# --- jit of a function with refs ---------------------------------------------------------


class RefCall:
    """How `jit` runs a traced function whose program holds refs: the discharged program
    (refs' values in, outputs and refs' final values out) is jitted once; each call reads
    the refs' current values, runs it, and writes the final values back."""

    def __init__(self, closed: ClosedOlympuspr, out_tree, arg_names: Sequence[str]):
        from .jit import jit

        j = closed.olympuspr
        self.closed = closed
        self.out_tree = out_tree
        self.arg_names = tuple(arg_names)
        di = j.debug_info
        self.where = str(di) if di is not None else "the function traced for jit"
        self.name = di.func_src_info if di is not None else "the function"
        for a, v in zip(j.out_avals, j.outvars, strict=True):
            if isinstance(a, AbstractRef):
                src = ""
                if v in j.invars:
                    src = ("\n\nThe returned mutable array was passed in as the argument "
                           f"{self.arg_names[j.invars.index(v)]}.")
                raise ValueError(f"function {self.where} returned a mutable array reference "
                                 f"of type {a}, but mutable array references cannot be "
                                 f"returned.{src}")
        self.ref_args = [i for i, a in enumerate(closed.in_avals) if isinstance(a, AbstractRef)]

        def pure(const_vals, args):
            return eval_discharged(j, const_vals, args)

        pure.__name__ = getattr(di, "func_src_info", "fun").split(" ")[0]
        self.jitted = jit(pure)

    def check_aliasing(self, leaves) -> list:
        from .refs import Ref

        seen: dict[int, int] = {}
        for i in self.ref_args:
            r = leaves[i]
            if id(r) in seen:
                k = seen[id(r)]
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to a "
                    f"function, but when tracing {self.name} for jit the mutable array "
                    f"reference of type {r.aval} appeared at both {self.arg_names[k]} and "
                    f"{self.arg_names[i]}.")
            seen[id(r)] = i
        const_refs = [c for c in self.closed.consts if isinstance(c, Ref)]
        for c in const_refs:
            if id(c) in seen:
                raise ValueError(
                    f"when tracing {self.name} for jit, a mutable array reference of type "
                    f"{c.aval} was both closed over and passed as the argument "
                    f"{self.arg_names[seen[id(c)]]}")
        return const_refs

    def run(self, leaves):
        from olympus_trace import tree_util

        from .refs import Ref

        const_refs = self.check_aliasing(leaves)
        consts = [c._live() if isinstance(c, Ref) else c for c in self.closed.consts]
        args = [x._live() if isinstance(x, Ref) else x for x in leaves]
        outs, finals = self.jitted(consts, args)
        for r, v in zip([*const_refs, *(leaves[i] for i in self.ref_args)], finals,
                        strict=True):
            r._value = v
        return tree_util.tree_unflatten(self.out_tree, outs)


def ref_call_for(closed: ClosedOlympuspr, out_tree, arg_names) -> RefCall | None:
    """The `RefCall` of a traced jit call whose program holds refs, else None."""
    from .refs import Ref

    if not (has_refs(closed) or any(isinstance(c, Ref) for c in closed.consts)):
        return None
    return RefCall(closed, out_tree, arg_names)
