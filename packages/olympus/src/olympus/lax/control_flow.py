"""Structured control flow: `cond` (more arrive with the control-flow issue)."""

from __future__ import annotations

import numpy as np
from olympus_ir import dtypes
from olympus_ir.core import ClosedOlympuspr, Olympuspr, Var
from olympus_ir.prims.control_flow import cond_p
from olympus_trace import lax_ops, tree_util
from olympus_trace.core import bind, get_aval
from olympus_trace.make_olympuspr import abstractify
from olympus_trace.staging import DebugInfo, fun_source_info, trace_to_olympuspr


def _trace_branch(fun, in_tree, in_avals, what):
    out_trees = []

    def flat(*xs):
        out = fun(*tree_util.tree_unflatten(in_tree, list(xs)))
        leaves, t = tree_util.tree_flatten(out)
        out_trees.append(t)
        return leaves

    dbg = DebugInfo(what, fun_source_info(fun), tuple(f"operand[{i}]" for i in
                                                      range(len(in_avals))))
    closed, _ = trace_to_olympuspr(flat, in_avals, dbg)
    return closed, out_trees[0]


def _join_consts(closed_list):
    """Rewrite each branch to take every branch's consts (then the operands) as inputs."""
    all_consts, all_avals = [], []
    for c in closed_list:
        all_consts += c.consts
        all_avals += [v.aval for v in c.olympuspr.constvars]
    out, offset = [], 0
    for c in closed_list:
        j = c.olympuspr
        n = len(j.constvars)
        const_in = [Var(a) for a in all_avals]
        const_in[offset:offset + n] = j.constvars
        offset += n
        out.append(ClosedOlympuspr(Olympuspr([], const_in + j.invars, j.outvars, j.eqns,
                                             j.effects, j.debug_info), []))
    return out, all_consts


def _branch_types(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ("," if len(avals) == 1 else "") + ")"


def switch(index, branches, *operands):
    """Apply ``branches[index](*operands)``, with `index` clamped into range."""
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    idx_aval = get_aval(index)
    if idx_aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {idx_aval.shape}.")
    if not dtypes.is_integer(idx_aval.dtype):
        raise TypeError(f"Index type must be an integer, got {idx_aval.dtype}.")
    index = lax_ops.convert_element_type(index, np.int32)
    if len(branches) > 1:
        index = lax_ops.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    return _cond_bind(index, branches, operands, "switch")


def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if `pred` else ``false_fun(*operands)``, staged as one primitive."""
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {aval.shape}.")
    if not (dtypes.is_bool(aval.dtype) or dtypes.is_integer(aval.dtype)
            or dtypes.is_float(aval.dtype)):
        raise TypeError(f"Pred type must be either boolean or number, got {aval.dtype}.")
    if dtypes.is_bool(aval.dtype):
        index = lax_ops.convert_element_type(pred, np.int32)
    else:
        index = lax_ops.convert_element_type(lax_ops.ne(pred, np.zeros((), aval.dtype)
                                                         [()]), np.int32)
    return _cond_bind(index, [false_fun, true_fun], operands, "cond")


def _cond_bind(index, branches, operands, what):
    leaves, in_tree = tree_util.tree_flatten(operands)
    in_avals = [abstractify(x) for x in leaves]
    traced = [_trace_branch(b, in_tree, in_avals, what) for b in branches]
    out_trees = [t for _, t in traced]
    for i, t in enumerate(out_trees[1:], 1):
        if t != out_trees[0]:
            raise TypeError(
                f"branch 0 and {i} outputs must have same type structure, got {out_trees[0]} "
                f"and {t}."
            )
    closed = [c for c, _ in traced]
    for i, c in enumerate(closed[1:], 1):
        a0, ai = closed[0].out_avals, c.out_avals
        if [(a.shape, a.dtype) for a in a0] != [(a.shape, a.dtype) for a in ai]:
            raise TypeError(
                f"branch 0 output {_branch_types(a0)} and branch {i} output "
                f"{_branch_types(ai)} must have identical types"
            )
    joined, consts = _join_consts(closed)
    outs = bind(cond_p, index, *consts, *leaves, branches=tuple(joined))
    return tree_util.tree_unflatten(out_trees[0], outs)
