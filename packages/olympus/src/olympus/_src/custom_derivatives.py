"""User-defined derivatives (`custom_jvp`, `custom_vjp`) and rematerialization
(`checkpoint` / `remat`).

JAX's design. A call of a `custom_jvp` function binds ``custom_jvp_call``, a primitive
carrying the function (as an olympuspr) and the user's JVP rule (a Python callable): the
JVP trace calls the rule, every other interpreter just runs the function (lowering inlines
it; batching batches both). A `custom_vjp` function binds ``custom_vjp_call`` carrying the
function, `fwd` and `bwd`: its JVP runs `fwd` for the primal outputs and residuals and
represents the tangent outputs by ``custom_lin``, a primitive linear in the tangents whose
transpose rule calls `bwd` (so reverse mode uses `bwd`, and forward mode is an error, as in
JAX). ``checkpoint`` wraps a function so that reverse mode recomputes its forward pass in
the backward pass instead of saving its intermediate values: its partial evaluation keeps
only the primal outputs on the known side and puts the whole function, recomputation
included, on the linear side.

Outside any transformation (eager execution), the functions are simply called.

This module holds the user-facing API. The primitives are defined in
`olympus_ir.prims.custom_derivatives`; their rules in the `custom_derivatives` family files
of `olympus_trace.ad_rules`, `olympus_trace.batching_rules` and `olympus_lower.rules`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir.prims.custom_derivatives import (
    checkpoint_p,
    custom_jvp_call_p,
    custom_lin_p,
    custom_vjp_call_p,
)
from olympus_trace import ad, tree_util
from olympus_trace.core import EvalTrace, bind, get_aval, trace_ctx
from olympus_trace.make_olympuspr import abstractify
from olympus_trace.olympuspr_utils import hoist_consts
from olympus_trace.staging import DebugInfo, fun_source_info, trace_to_olympuspr

__all__ = ["custom_jvp", "custom_vjp", "checkpoint", "remat", "custom_jvp_call_p",
           "custom_vjp_call_p", "custom_lin_p", "checkpoint_p"]


def _eager() -> bool:
    return type(trace_ctx.trace) is EvalTrace


def _resolve_args(fun, args, kwargs):
    """Keyword arguments bound to positions, as JAX's custom_jvp/custom_vjp do."""
    if not kwargs:
        return tuple(args)
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        raise TypeError("keyword arguments could not be resolved to positions") from None
    ba = sig.bind(*args, **kwargs)
    ba.apply_defaults()
    return ba.args


def _nondiff(argnums, nargs, what):
    nums = tuple(sorted({n % nargs if -nargs <= n < nargs else n for n in argnums}))
    for n in nums:
        if not 0 <= n < nargs:
            raise TypeError(f"{what}: nondiff_argnums {argnums} out of range for {nargs} "
                            "arguments")
    return nums


def _split_args(args, nondiff):
    static = tuple(args[i] for i in nondiff)
    dyn = tuple(a for i, a in enumerate(args) if i not in nondiff)
    return static, dyn


def _merge_args(static, dyn, nondiff, nargs):
    s, d = iter(static), iter(dyn)
    return tuple(next(s) if i in nondiff else next(d) for i in range(nargs))


def _trace_flat(flat_fun, in_avals, name, traced_for):
    dbg = DebugInfo(traced_for, name, tuple(f"args[{i}]" for i in range(len(in_avals))))
    closed, _ = trace_to_olympuspr(flat_fun, in_avals, dbg)
    return hoist_consts(closed)


# --- custom_jvp ---------------------------------------------------------------------------------


def _tangent_type_error(kind, want, got):
    return TypeError(
        f"Custom JVP rule must produce primal and tangent outputs with corresponding shapes "
        f"and dtypes. Expected {want} (tangent type of {kind}) but got {got}.")


def _trace_primal(fun, nondiff_argnums, args, what):
    """Split `args` into non-differentiable (static) and differentiable ones and trace `fun`
    on the latter: what custom_jvp and custom_vjp both need before binding."""
    nargs = len(args)
    nondiff = _nondiff(nondiff_argnums, nargs, what)
    static, dyn = _split_args(args, nondiff)
    leaves, in_tree = tree_util.tree_flatten(dyn)
    in_avals = [abstractify(x) for x in leaves]
    out_store: list = []

    def flat_fun(*xs):
        d = tree_util.tree_unflatten(in_tree, list(xs))
        out = fun(*_merge_args(static, d, nondiff, nargs))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_store.append(out_tree)
        return out_leaves

    closed, consts = _trace_flat(flat_fun, in_avals, fun_source_info(fun), what)
    return nondiff, static, dyn, leaves, in_tree, in_avals, closed, consts, out_store[0]


class custom_jvp:
    """A function with a user-defined JVP rule (`defjvp` / `defjvps`).

    ``f = custom_jvp(fun, nondiff_argnums=())``; ``f.defjvp(rule)`` where
    ``rule(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp symbolic_zeros=True is not supported")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per (differentiable) argument: ``rule(t_i, primal_out, *primals)``;
        None for an argument that does not affect the output."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            zeros = tree_util.tree_map(lambda y: ad.instantiate(ad.Zero.from_value(y)),
                                       primal_out)
            out = zeros
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                contrib = rule(t, primal_out, *primals)
                out = tree_util.tree_map(lambda a, b: a + b, out, contrib)
            return primal_out, out

        self.defjvp(jvp)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any):
        name = getattr(self.fun, "__name__", str(self.fun))
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using "
                                 "defjvp.")
        args = _resolve_args(self.fun, args, kwargs)
        if _eager():
            return self.fun(*args)
        (nondiff, static, dyn, leaves, in_tree, in_avals, closed, consts,
         out_tree) = _trace_primal(self.fun, self.nondiff_argnums, args, "custom_jvp")
        out_avals = closed.out_avals
        rule = self.jvp

        def jvp_flat(ps, ts):
            p = tree_util.tree_unflatten(in_tree, list(ps))
            t = tree_util.tree_unflatten(in_tree, list(ts))
            res = rule(*static, tuple(p), tuple(t))
            if not (isinstance(res, (list, tuple)) and len(res) == 2):
                raise TypeError("Custom JVP rule must produce a pair (list or tuple of length "
                                f"two) representing primal and tangent outputs, but got {res}.")
            p_out, t_out = res
            p_leaves, p_tree = tree_util.tree_flatten(p_out)
            t_leaves, t_tree = tree_util.tree_flatten(t_out)
            if p_tree != out_tree:
                raise TypeError(
                    "Custom JVP rule must produce primal outputs with the same container "
                    f"(pytree) structure as the custom_jvp function {name}, but got {p_tree} "
                    f"and {out_tree} respectively.")
            if p_tree != t_tree:
                raise TypeError(
                    "Custom JVP rule must produce primal and tangent outputs with equal "
                    f"container (pytree) structures, but got {p_tree} and {t_tree} "
                    "respectively.")
            outs_t = []
            for pl, tl, want in zip(p_leaves, t_leaves, out_avals):
                pa = get_aval(pl)
                if (pa.shape, pa.dtype) != (want.shape, want.dtype):
                    raise TypeError(
                        "Custom JVP rule must produce primal outputs with the same shapes and "
                        f"dtypes as the custom_jvp function {name}: expected "
                        f"{want.str_short()}, got {pa.str_short()}.")
                ta = ad.tangent_aval(pa)
                if isinstance(tl, np.ndarray) and tl.dtype == dtypes.float0:
                    got_shape, got_dtype, got = tl.shape, dtypes.float0, \
                        f"float0[{','.join(map(str, tl.shape))}]"
                else:
                    tga = get_aval(tl)
                    got_shape, got_dtype, got = tga.shape, tga.dtype, tga.str_short()
                if (got_shape, got_dtype) != (ta.shape, ta.dtype):
                    raise _tangent_type_error(pa.str_short(), ta.str_short(), got)
                outs_t.append(ad.Zero(ta) if got_dtype == dtypes.float0 else tl)
            return p_leaves, outs_t

        outs = bind(custom_jvp_call_p, *consts, *leaves, call_olympuspr=closed, jvp=jvp_flat,
                    num_consts=len(consts), symbolic_zeros=False)
        return tree_util.tree_unflatten(out_tree, outs)


# --- custom_vjp ---------------------------------------------------------------------------------


class custom_vjp:
    """A function with a user-defined VJP: ``f.defvjp(fwd, bwd)`` where
    ``fwd(*args) -> (out, residuals)`` and ``bwd(*nondiff_args, residuals, out_cotangent)
    -> tuple of cotangents, one per differentiable argument`` (None for zero)."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp symbolic_zeros=True is not supported")
        self.fwd = fwd
        self.bwd = bwd

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any):
        name = getattr(self.fun, "__name__", str(self.fun))
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using "
                                 "defvjp.")
        args = _resolve_args(self.fun, args, kwargs)
        if _eager():
            return self.fun(*args)
        nargs = len(args)
        (nondiff, static, dyn, leaves, in_tree, in_avals, closed, consts,
         out_tree) = _trace_primal(self.fun, self.nondiff_argnums, args, "custom_vjp")
        out_avals = closed.out_avals
        user_fwd, user_bwd = self.fwd, self.bwd

        def fwd_flat(ps):
            d = tree_util.tree_unflatten(in_tree, list(ps))
            res = user_fwd(*_merge_args(static, d, nondiff, nargs))
            if not (isinstance(res, (list, tuple)) and len(res) == 2):
                raise TypeError(
                    "Custom VJP fwd rule must produce a pair (list or tuple of length two) "
                    f"where the first element represents the primal output, got {res}.")
            out, residuals = res
            o_leaves, o_tree = tree_util.tree_flatten(out)
            if o_tree != out_tree:
                raise TypeError(
                    "Custom VJP fwd rule must produce a pair (list or tuple of length two) "
                    "where the first element represents the primal output (equal in value "
                    f"to the output of the custom_vjp-decorated function {name}, and in "
                    f"particular of the same container/pytree structure), but got {o_tree} "
                    f"instead of {out_tree}.")
            for o, want in zip(o_leaves, out_avals):
                oa = get_aval(o)
                if (oa.shape, oa.dtype) != (want.shape, want.dtype):
                    raise TypeError(
                        f"Custom VJP fwd rule for {name} must produce primal outputs with "
                        f"the same shapes and dtypes as {name}: expected {want.str_short()},"
                        f" got {oa.str_short()}.")
            r_leaves, r_tree = tree_util.tree_flatten(residuals)
            return o_leaves, r_leaves, r_tree

        def bwd_flat(res_tree, diff_in, diff_out, res, cts):
            it = iter(cts)
            full = [next(it) if d else np.zeros(a.shape, dtypes.float0)
                    for a, d in zip(out_avals, diff_out)]
            ct = tree_util.tree_unflatten(out_tree, full)
            r = tree_util.tree_unflatten(res_tree, list(res))
            cts_in = user_bwd(*static, r, ct)
            if not isinstance(cts_in, (tuple, list)) or len(cts_in) != len(dyn):
                raise TypeError(
                    f"Custom VJP bwd rule must produce a tuple of length equal to the number "
                    f"of primal (differentiable) inputs ({len(dyn)}), but got "
                    f"{type(cts_in).__name__}"
                    + (f" of length {len(cts_in)}." if isinstance(cts_in, (tuple, list))
                       else "."))
            flat: list = []
            for i, (arg, c) in enumerate(zip(dyn, cts_in)):
                arg_leaves, arg_tree = tree_util.tree_flatten(arg)
                if c is None:
                    flat += [None] * len(arg_leaves)
                    continue
                c_leaves, c_tree = tree_util.tree_flatten(c, is_leaf=lambda x: x is None)
                if c_tree != arg_tree:
                    raise TypeError(
                        "Custom VJP bwd rule must produce an output with the same container "
                        "(pytree) structure as the args tuple of the primal function, and in "
                        "particular must produce a tuple of length equal to the number of "
                        f"arguments to the primal function, but got bwd output structure "
                        f"{c_tree} for primal input structure {arg_tree} (argument {i}).")
                flat += c_leaves
            out = []
            for c, a, d in zip(flat, in_avals, diff_in):
                if not d:
                    continue
                ta = ad.tangent_aval(a)
                if c is None:
                    out.append(ad.Zero(ta))
                    continue
                ca = get_aval(c)
                if (ca.shape, ca.dtype) != (ta.shape, ta.dtype):
                    raise ValueError(
                        "Custom VJP bwd rule must produce an output with the same shape/"
                        "dtypes as the args tuple of the primal function. Expected "
                        f"{ta.str_short()} but got {ca.str_short()}.")
                out.append(c)
            return out

        outs = bind(custom_vjp_call_p, *consts, *leaves, call_olympuspr=closed, fwd=fwd_flat,
                    bwd=bwd_flat, num_consts=len(consts))
        return tree_util.tree_unflatten(out_tree, outs)


# --- checkpoint / remat -----------------------------------------------------------------------------


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """`fun`, differentiated by recomputing its forward pass during the backward pass
    instead of storing its intermediate values (no policies: nothing is saved)."""
    if policy is not None:
        raise NotImplementedError("checkpoint policies are not supported (nothing is saved)")
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def remat_f(*args, **kwargs):
        if _eager():
            return fun(*args, **kwargs)
        nargs = len(args)
        nums = tuple(sorted(n % nargs for n in statics))
        static, dyn = _split_args(args, nums)
        leaves, in_tree = tree_util.tree_flatten((dyn, kwargs))
        in_avals = [abstractify(x) for x in leaves]
        out_store: list = []

        def flat_fun(*xs):
            d, kw = tree_util.tree_unflatten(in_tree, list(xs))
            out = fun(*_merge_args(static, d, nums, nargs), **kw)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_store.append(out_tree)
            return out_leaves

        closed, consts = _trace_flat(flat_fun, in_avals, fun_source_info(fun), "checkpoint")
        outs = bind(checkpoint_p, *consts, *leaves, call_olympuspr=closed,
                    prevent_cse=prevent_cse)
        return tree_util.tree_unflatten(out_store[0], outs)

    return remat_f


remat = checkpoint
