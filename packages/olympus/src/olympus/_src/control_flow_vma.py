"""The varying-manual-axes checks of control flow inside a ``shard_map`` body.

JAX's types carry the manual axes a value varies over, so a ``scan`` whose carry starts
invariant but comes out varying, or a ``cond`` whose branches differ in how their outputs
vary, is a type error there (worded as below, with a hint to ``pcast``). Olympus keeps
those axes beside the trace (`olympus_trace.vma_types`); these checks derive the axes of
the loop body's / branches' outputs from their inputs' and raise JAX's errors.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from olympus_trace import tree_util, vma_types
from olympus_trace.staging import fun_source_info

__all__ = ["check_scan_carry", "check_branch_outputs"]

_HINT_URL = ("See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more "
             "information.\n\n")


def _type(aval: Any, axes: frozenset, manual: Sequence) -> str:
    """``float32[4]{V:x}``: an aval with the axes it varies over, as JAX prints it."""
    v = [a for a in manual if a in axes]
    suffix = "" if not v else "{V:" + (str(v[0]) if len(v) == 1 else
                                       "(" + ",".join(map(str, v)) + ")") + "}"
    return aval.str_short(short_dtypes=False) + suffix


def _axes_tuple(axes: frozenset, manual: Sequence) -> tuple:
    return tuple(a for a in manual if a in axes)


def _capitalize(s: str) -> str:
    return s[0].upper() + s[1:]


def _listed(items: list[str], loose: bool) -> str:
    """One item capitalized, or JAX's bulleted list (`loose`: a blank line between items,
    as scan's errors have them); each form ends with a period and a newline."""
    if len(items) == 1:
        return _capitalize(items[0]) + ".\n"
    if loose:
        return "\n".join(f"  * {d};\n" for d in items[:-1]) + f"  * {items[-1]}.\n"
    return "\n".join(f"  * {d};" for d in items[:-1]) + f"\n  * {items[-1]}.\n"


def _hint(hints: list[str], loose: bool) -> str:
    if not hints:
        return ""
    if len(hints) == 1:
        return f"This might be fixed by {hints[0]}.\n{_HINT_URL}"
    return f"This might be fixed by:\n{_listed(hints, loose)}{_HINT_URL}"


def _paths(tree: Any) -> list[str]:
    leaves = tree_util.tree_flatten_with_path(tree_util.tree_unflatten(
        tree, list(range(tree.num_leaves))))[0]
    return [tree_util.keystr(p) for p, _ in leaves]


def check_scan_carry(f: Callable, init_tree: Any, consts: Sequence, init: Sequence,
                     xs: Sequence, body: Any, what: str = "scan body") -> None:
    """Inside a shard_map body: the carry of ``scan(f, ...)`` (the closure-converted
    `body`, taking consts, carry, xs) must come out varying over the axes it went in with.
    (`what` = ``"while_loop body"``: a while loop's body, with no xs.)"""
    values = [*consts, *init, *xs]
    manual = vma_types.body_manual(values)
    if manual is None:
        return
    in_v = [vma_types.vma_of(v) or frozenset() for v in values]
    out_v = vma_types.olympuspr_out_vma(body, in_v, manual)
    k, n = len(consts), len(init)
    c_in, c_out = in_v[k:k + n], out_v[:n]
    if c_in == c_out:
        return
    try:
        name = next(iter(inspect.signature(f).parameters), None)
    except (TypeError, ValueError):
        name = None

    def component(p: str) -> str:
        if name:
            return f"the input carry component {name}{p}" if p else f"the input carry {name}"
        return f"the input carry at path {p}" if p else "the input carry"

    in_avals = body.in_avals[k:k + n]
    out_avals = body.out_avals[:n]
    diffs, hints = [], []
    for p, a, b, vi, vo in zip(_paths(init_tree), in_avals, out_avals, c_in, c_out,
                               strict=True):
        if vi == vo:
            continue
        diffs.append(f"{component(p)} has type {_type(a, vi, manual)} but the corresponding "
                     f"output carry component has type {_type(b, vo, manual)}, so the manual "
                     "axis types do not match")
        if vo - vi:
            hints.append(f"applying `olympus.lax.pcast(..., {_axes_tuple(vo - vi, manual)}, "
                         "to='varying')`, to the initial carry value corresponding to "
                         f"{component(p)}")
    raise TypeError(
        f"{what} function carry input and carry output must have equal types, but they "
        f"differ:\n\n{_listed(diffs, True)}\n{_hint(hints, True)}"
        "Revise the function so that all output types match the corresponding input types.")


def check_branch_outputs(what: str, funs: Sequence[Callable], branches: Sequence[Any],
                         consts: Sequence, operands: Sequence, out_tree: Any) -> None:
    """Inside a shard_map body: every branch of a ``cond`` / ``switch`` (`branches`, taking
    consts then operands; `funs` the user's functions, in the same order) must vary over
    the same axes as the first JAX names (``true_fun``; ``branches[0]``)."""
    values = [*consts, *operands]
    manual = vma_types.body_manual(values)
    if manual is None:
        return
    in_v = [vma_types.vma_of(v) or frozenset() for v in values]
    outs = [vma_types.olympuspr_out_vma(b, in_v, manual) for b in branches]
    if what == "cond":  # branches are [false_fun, true_fun]; JAX compares true to false
        pairs = [(1, 0, "true_fun", "false_fun")]
    else:
        pairs = [(0, i, "branches[0]", f"branches[{i}]") for i in range(1, len(branches))]
    paths = _paths(out_tree)
    for i, j, name1, name2 in pairs:
        if outs[i] == outs[j]:
            continue
        a1s, a2s = branches[i].out_avals, branches[j].out_avals
        component = (lambda p: f" at path {p}" if p else "")  # noqa: E731
        diffs, hints = [], []
        for p, a1, a2, v1, v2 in zip(paths, a1s, a2s, outs[i], outs[j], strict=True):
            if v1 == v2:
                continue
            diffs.append(f"the output of {name1}{component(p)} has type "
                         f"{_type(a1, v1, manual)} but the corresponding output of {name2} "
                         f"has type {_type(a2, v2, manual)}, so the manual axis types do not "
                         "match")
            # JAX's hint names, for each side that varies over fewer axes, the axes that
            # side has beyond the other's (so it can read "()").
            for n, w1, w2 in ((name1, v2, v1), (name2, v1, v2)):
                if w2 - w1:
                    hints.append(f"applying `olympus.lax.pcast(..., "
                                 f"{_axes_tuple(w1 - w2, manual)}, to='varying')` to the "
                                 f"output of {n}{component(p)}")
        raise TypeError(
            f"{what} branches must have equal output types but they differ.\n\n"
            f"{name1} is {fun_source_info(funs[i])}\n{name2} is {fun_source_info(funs[j])}"
            f"\n\n{_listed(diffs, False)}\n{_hint(hints, False)}"
            f"Revise {name1} and/or {name2} so that all output types match.")
