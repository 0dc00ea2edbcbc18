"""A jitted function called while another function is traced: one ``jit`` equation.

As in JAX, ``jit(f)(x)`` under a trace (``make_olympuspr``, an outer jit, ``grad``,
``vmap``...) binds the `jit` primitive with `f`'s olympuspr instead of inlining `f`, so the
printed olympuspr and the lowered module show the call (a private ``func.func``). The
olympuspr is traced once per signature (the jit cache key: argument pytree, static
values, abstract values, config) and kept with the function, so a helper called a
hundred times while tracing is traced once. A function that closes over a value being
traced is traced again at each call: those values become leading operands of the call
(the olympuspr cannot be kept, it would hold them).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from olympus_ir.core import ClosedOlympuspr, Olympuspr
from olympus_ir.prims.control_flow import jit_p
from olympus_trace import tree_util
from olympus_trace.ad import dce_deep
from olympus_trace.core import Tracer, bind
from olympus_trace.make_olympuspr import trace_fun
from olympus_trace.staging import user_source_info

from . import jit as _jit

__all__ = ["call", "prune_callees"]


class NestedCall(NamedTuple):
    """One signature of a jitted function traced for calls under another trace."""

    closed: ClosedOlympuspr  # its constants are concrete values
    out_tree: Any
    params: dict  # the jit equation's params but `olympuspr`
    tracer_consts: list  # values of outer traces the function read (uncached entries)
    ref_consts: list  # refs the function closes over: trailing operands, as JAX passes them


def _compiler_options_error(state, name: str) -> ValueError:
    src = user_source_info()
    where = "unknown" if src is None else f"{src.file}:{src.line} ({src.function})"
    return ValueError(
        "`compiler_options` can only be passed to top-level `olympus.jit`. Got "
        f"compiler_options={state._compiler_options} specified on a nested jit with name: "
        f"{name} and source info: {where}")


def _trace(state, args, kwargs) -> NestedCall:
    _jit.counters["trace"] += 1
    name = _jit.fun_name(state._fun)
    closed, out_tree, _ = trace_fun(state._fun, args, kwargs, state._static_argnums,
                                    state._static_argnames, "jit")
    j = closed.olympuspr
    outer = [isinstance(c, Tracer) for c in closed.consts]
    tracer_consts = []
    if any(outer):
        # Values of enclosing traces become the call's leading operands (JAX's order).
        tracer_consts = [c for c, o in zip(closed.consts, outer) if o]
        moved = [v for v, o in zip(j.constvars, outer) if o]
        j = Olympuspr([v for v, o in zip(j.constvars, outer) if not o], moved + list(j.invars),
                      j.outvars, j.eqns, j.effects, j.debug_info)
        closed = ClosedOlympuspr(j, [c for c, o in zip(closed.consts, outer) if not o])
    from .refs import Ref

    is_ref = [isinstance(c, Ref) for c in closed.consts]
    ref_consts = []
    if any(is_ref):
        ref_consts = [c for c, r in zip(closed.consts, is_ref) if r]
        j = Olympuspr([v for v, r in zip(j.constvars, is_ref) if not r],
                      list(j.invars) + [v for v, r in zip(j.constvars, is_ref) if r],
                      j.outvars, j.eqns, j.effects, j.debug_info)
        closed = ClosedOlympuspr(j, [c for c, r in zip(closed.consts, is_ref) if not r])
    n_in, n_out = len(j.invars), len(j.outvars)
    donated = (False,) * n_in
    if state._donate_argnums or state._donate_argnames:
        nums = state._static_argnums
        nargs = len(args)
        nums = tuple(i % nargs if -nargs <= i < 0 else i for i in nums)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in state._static_argnames}
        donated = (False,) * len(tracer_consts) + _jit._donation_mask(
            state, dyn_args, dyn_kwargs, args, nums) + (False,) * len(ref_consts)
    params = dict(
        in_shardings=(None,) * n_in, out_shardings=(None,) * n_out,
        in_layouts=(None,) * n_in, out_layouts=(None,) * n_out, donated_invars=donated,
        ctx_mesh=None, name=name, keep_unused=bool(state._keep_unused), inline=False,
        compiler_options_kvs=())
    return NestedCall(closed, out_tree, params, tracer_consts, ref_consts)


def call(state, args: tuple, kwargs: dict):
    """`state`'s function applied to `args` under the current (non-evaluation) trace."""
    if state._compiler_options:
        raise _compiler_options_error(state, _jit.fun_name(state._fun))
    key, leaves = state._signature(args, kwargs)
    calls = state._nested_calls
    entry = calls.get(key)
    if entry is None:
        entry = _trace(state, args, kwargs)
        if not entry.tracer_consts:
            _jit._remember(calls, key, entry)
    outs = bind(jit_p, *entry.tracer_consts, *leaves, *entry.ref_consts,
                olympuspr=entry.closed, **entry.params)
    return tree_util.tree_unflatten(entry.out_tree, outs)


def prune_callees(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """`closed` with the unused results of its nested jits (and what computes only them)
    removed, as JAX's lowering does; its inputs stay."""
    j = closed.olympuspr
    if not any(e.primitive is jit_p for e in j.eqns):
        return closed
    new, _ = dce_deep(j, [True] * len(j.outvars))
    keep = {id(v) for v in new.constvars}
    return ClosedOlympuspr(new, [c for v, c in zip(j.constvars, closed.consts) if id(v) in keep])
