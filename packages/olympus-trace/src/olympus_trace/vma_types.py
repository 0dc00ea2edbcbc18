"""Varying manual axes ("vma"): the manual mesh axes over which a value inside a
``shard_map`` body may differ from device to device.

An input varies over the axes its in_spec names; ``axis_index(a)`` varies over ``a``; a
``psum`` over ``a`` no longer does; ``all_gather``/``ppermute``/``psum_scatter``/
``all_to_all`` over ``a`` do; ``pvary`` adds its axes; ``psend``'s token and ``precv``'s
value vary over none; anything else varies over the union
of its operands' axes. `eqn_vma` is that rule, for one equation.

JAX keeps the vma in each value's type (``float32[4]{V:x}``). Olympus keeps it beside the
trace, like the sharding types (`sharding_types`): `begin` gives a shard_map body's trace
its inputs' axes, and `vma_of` derives a value's axes from the equations traced so far
(once per equation, when asked: ``olympus.typeof`` and ``pcast`` ask). `annotate_vma`
(`lax_ops.sharding`) applies the same rule to a whole body. Values traced in a nested
trace (a jit or loop body inside the shard_map) are not tracked: they show no axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from olympus_ir import Literal

from .sharding_types import staging_tracer

__all__ = ["eqn_vma", "eqn_out_vmas", "begin", "vma_of", "ordered_vma", "axis_names_tuple", "body_manual",
           "olympuspr_out_vma", "trace_vma"]


def axis_names_tuple(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def eqn_vma(prim: Any, params: dict, vmas: Sequence[frozenset], manual: Any) -> frozenset:
    """The axes the results of one equation vary over, given its operands' (`manual`: the
    manual axes of the body, a container of names)."""
    from olympus_ir.prims import collectives as C

    name = params.get("axis_name")
    own = frozenset(n for n in axis_names_tuple(name) if n in manual) if name is not None \
        else frozenset()
    union = frozenset().union(*vmas) if vmas else frozenset()
    if prim in (C.psum_p, C.pmax_p, C.pmin_p) and own:
        return vmas[0] - own
    if prim is C.psum_invariant_p:
        return vmas[0] - frozenset(params["axes"])
    if prim is C.pvary_p:
        return union | frozenset(params["axes"])
    if prim is C.axis_index_p:
        return own
    if prim in (C.psend_p, C.precv_p):  # a token, and what arrives: invariant, as in JAX
        return frozenset()
    if own and prim in (C.all_gather_p, C.ppermute_p, C.psum_scatter_p, C.all_to_all_p):
        return vmas[0] | own
    return union


def eqn_out_vmas(prim: Any, params: dict, vmas: Sequence[frozenset], manual: Any,
                 n_out: int) -> list:
    """The axes each result of one equation varies over: `eqn_vma` for all of them, or
    per result for a primitive that says (`out_vmas`: a high-level primitive's, from its
    expansion)."""
    per_result = getattr(prim, "out_vmas", None)
    if per_result is not None:
        return list(per_result(params, vmas, manual))
    return [eqn_vma(prim, params, vmas, manual)] * n_out


class _BodyVma:
    """Per traced shard_map body: the axes of each Var so far, and how many of the trace's
    equations have been read."""

    __slots__ = ("axes", "done", "manual")

    def __init__(self, axes: dict, manual: tuple):
        self.axes = axes  # id(Var) -> frozenset
        self.done = 0
        self.manual = manual


def begin(tracers: Sequence[Any], vmas: Sequence[frozenset], manual: Sequence) -> None:
    """Track the vma of the values of the trace the body inputs `tracers` belong to."""
    ts = [staging_tracer(t) for t in tracers]
    trace = next((t._trace for t in ts if t is not None), None)
    if trace is None:
        return
    trace.body_vma = _BodyVma({id(t._var): frozenset(m) for t, m in zip(ts, vmas, strict=True)
                               if t is not None}, tuple(manual))


def vma_of(x: Any) -> frozenset | None:
    """The manual axes the traced value `x` varies over; None outside a tracked body."""
    t = staging_tracer(x)
    if t is None:
        return None
    state = getattr(t._trace, "body_vma", None)
    if state is None:
        return None
    eqns = t._trace.eqns
    axes = state.axes
    empty = frozenset()
    for e in eqns[state.done:]:
        vmas = [empty if isinstance(a, Literal) else axes.get(id(a), empty) for a in e.invars]
        outs = eqn_out_vmas(e.primitive, e.params, vmas, state.manual, len(e.outvars))
        for v, out in zip(e.outvars, outs):
            axes[id(v)] = out
    state.done = len(eqns)
    return axes.get(id(t._var), empty)


def ordered_vma(x: Any) -> tuple:
    """`vma_of(x)` in mesh-axis order (empty outside a tracked body)."""
    axes = vma_of(x)
    if not axes:
        return ()
    manual = staging_tracer(x)._trace.body_vma.manual
    return tuple(a for a in manual if a in axes)


def body_manual(values: Sequence[Any]) -> tuple | None:
    """The manual axes of the tracked shard_map body any of `values` was traced in (None:
    none was)."""
    for x in values:
        t = staging_tracer(x)
        state = getattr(getattr(t, "_trace", None), "body_vma", None)
        if state is not None:
            return state.manual
    return None


def olympuspr_out_vma(closed: Any, in_vmas: Sequence[frozenset], manual: Sequence) -> list:
    """The axes each output of `closed` (its consts invariant) varies over, given its
    inputs'."""
    j = getattr(closed, "olympuspr", closed)
    empty = frozenset()
    axes = {id(v): frozenset(m) for v, m in zip(j.invars, in_vmas, strict=True)}
    for e in j.eqns:
        vmas = [empty if isinstance(a, Literal) else axes.get(id(a), empty) for a in e.invars]
        outs = eqn_out_vmas(e.primitive, e.params, vmas, manual, len(e.outvars))
        for v, out in zip(e.outvars, outs):
            axes[id(v)] = out
    return [empty if isinstance(v, Literal) else axes.get(id(v), empty) for v in j.outvars]


def trace_vma(trace: Any) -> dict | None:
    """Var -> the manual axes (in mesh order) each value of a tracked shard_map body's
    `trace` varies over, for the values that vary (None: not a tracked body); what the
    printer shows as ``{V:i}``."""
    state = getattr(trace, "body_vma", None)
    if state is None:
        return None
    empty = frozenset()
    axes = state.axes
    for e in trace.eqns[state.done:]:
        vmas = [empty if isinstance(a, Literal) else axes.get(id(a), empty) for a in e.invars]
        outs = eqn_out_vmas(e.primitive, e.params, vmas, state.manual, len(e.outvars))
        for v, out in zip(e.outvars, outs):
            axes[id(v)] = out
    state.done = len(trace.eqns)
    out_map = {}
    for v in [*trace.invars, *(o for e in trace.eqns for o in e.outvars)]:
        m = axes.get(id(v))
        if m:
            out_map[v] = tuple(a for a in state.manual if a in m)
    return out_map
