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
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir.core import ClosedOlympuspr, Eqn, def_shape_rule, new_primitive
from olympus_trace import ad, batching, tree_util
from olympus_trace.ad_rules.control_flow import _jvp_body, _transposed_body, call_dce, hoist_consts
from olympus_trace.core import EvalTrace, bind, get_aval, trace_ctx
from olympus_trace.make_olympuspr import abstractify
from olympus_trace.olympuspr_utils import (
    dce_olympuspr,
    eval_olympuspr,
    partial_eval_olympuspr,
    partial_eval_rules,
)
from olympus_trace.staging import DebugInfo, fun_source_info, trace_to_olympuspr

from .lowering import register_lowering

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


def _call_lowering(ctx, *args, call_olympuspr, **_unused):
    return ctx.lower_sub(call_olympuspr, args)


def _check_no_const_tangents(tangents, num_consts, what):
    if any(not isinstance(t, ad.Zero) for t in tangents[:num_consts]):
        raise ValueError(
            f"Detected differentiation of a {what} function with respect to a closed-over "
            f"value. That isn't supported because the custom {'JVP' if 'jvp' in what else 'VJP'}"
            " rule only specifies how to differentiate the function with respect to explicit "
            "input parameters. Try passing the closed-over value into the function as an "
            "explicit argument."
        )


def _vmap_flat(fun, axis_data, vals, dims):
    return batching.vmap_flat(fun, axis_data, list(vals), list(dims),
                              lambda n: [0] * n)


def _batched_body(call: ClosedOlympuspr, axis_data, vals, dims):
    """The olympuspr of `call` vmapped (outputs batched along 0), consts hoisted."""
    def f(*xs):
        return _vmap_flat(lambda *a: eval_olympuspr(call.olympuspr, call.consts, *a),
                          axis_data, xs, dims)

    closed, _ = trace_to_olympuspr(f, [get_aval(v) for v in vals])
    return hoist_consts(closed)


# --- custom_jvp ---------------------------------------------------------------------------------

custom_jvp_call_p = new_primitive("custom_jvp_call", multiple_results=True)


@def_shape_rule(custom_jvp_call_p)
def _custom_jvp_call_shape_rule(*avals, call_olympuspr, jvp, num_consts, symbolic_zeros=False):
    return list(call_olympuspr.out_avals)


def _custom_jvp_call_jvp(primals, tangents, *, call_olympuspr, jvp, num_consts,
                         symbolic_zeros=False):
    _check_no_const_tangents(tangents, num_consts, "custom_jvp")
    ps = primals[num_consts:]
    ts = [ad.instantiate(t) for t in tangents[num_consts:]]
    outs, out_ts = jvp(list(ps), ts)
    return list(outs), list(out_ts)


def _custom_jvp_call_batch(axis_data, vals, dims, *, call_olympuspr, jvp, num_consts,
                           symbolic_zeros=False):
    body, consts = _batched_body(call_olympuspr, axis_data, vals, dims)
    arg_dims = list(dims[num_consts:])
    n = len(arg_dims)

    def batched_jvp(ps, ts):
        # The primals and tangents here are the batched (physical) values: a tangent is
        # batched exactly where its primal is.
        def flat(*pt):
            outs, out_ts = jvp(list(pt[:n]), list(pt[n:]))
            return list(outs) + list(out_ts)

        res = _vmap_flat(flat, axis_data, list(ps) + list(ts), arg_dims + arg_dims)
        m = len(res) // 2
        return res[:m], res[m:]

    outs = bind(custom_jvp_call_p, *consts, *vals, call_olympuspr=body, jvp=batched_jvp,
                num_consts=len(consts) + num_consts, symbolic_zeros=symbolic_zeros)
    return outs, [0] * len(outs)


ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
batching.batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch
register_lowering(custom_jvp_call_p, _call_lowering)


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

custom_vjp_call_p = new_primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = new_primitive("custom_lin", multiple_results=True)


@def_shape_rule(custom_vjp_call_p)
def _custom_vjp_call_shape_rule(*avals, call_olympuspr, fwd, bwd, num_consts):
    return list(call_olympuspr.out_avals)


@def_shape_rule(custom_lin_p)
def _custom_lin_shape_rule(*avals, num_res, bwd, out_avals):
    return list(out_avals)


_JVP_OF_VJP_MSG = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _custom_vjp_call_jvp(primals, tangents, *, call_olympuspr, fwd, bwd, num_consts):
    _check_no_const_tangents(tangents, num_consts, "custom_vjp")
    ps = list(primals[num_consts:])
    ts = list(tangents[num_consts:])
    outs, res, res_tree = fwd(ps)
    diff_in = [dtypes.is_inexact(get_aval(p).dtype) for p in ps]
    diff_out = [dtypes.is_inexact(get_aval(o).dtype) for o in outs]
    lin_in = [ad.instantiate(t) for t, d in zip(ts, diff_in) if d]
    out_avals = tuple(ad.tangent_aval(get_aval(o)) for o, d in zip(outs, diff_out) if d)
    if not out_avals:
        return outs, [ad.Zero(ad.tangent_aval(get_aval(o))) for o in outs]
    lin_outs = iter(bind(custom_lin_p, *res, *lin_in, num_res=len(res),
                         bwd=functools.partial(bwd, res_tree, diff_in, diff_out),
                         out_avals=out_avals))
    return outs, [next(lin_outs) if d else ad.Zero(ad.tangent_aval(get_aval(o)))
                  for o, d in zip(outs, diff_out)]


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    res = args[:num_res]
    cts = [ad.instantiate(c) for c in cts]
    cts_in = bwd(list(res), cts)
    return [None] * num_res + list(cts_in)


def _custom_lin_jvp(primals, tangents, **params):
    raise TypeError(_JVP_OF_VJP_MSG)


def _custom_lin_lowering(ctx, *args, **params):
    raise TypeError(_JVP_OF_VJP_MSG)


def _custom_lin_batch(axis_data, vals, dims, **params):
    # custom_lin is only ever staged and transposed; reaching a batch trace means the
    # tangents are being evaluated (forward mode, e.g. jacfwd over a custom_vjp function).
    raise TypeError(_JVP_OF_VJP_MSG)


def _custom_vjp_call_batch(axis_data, vals, dims, *, call_olympuspr, fwd, bwd, num_consts):
    body, consts = _batched_body(call_olympuspr, axis_data, vals, dims)
    arg_dims = list(dims[num_consts:])

    def batched_fwd(ps):
        trees = []

        def flat(*xs):
            outs, res, res_tree = fwd(list(xs))
            trees.append((len(outs), res_tree))
            return list(outs) + list(res)

        r = _vmap_flat(flat, axis_data, ps, arg_dims)
        n_out, res_tree = trees[0]
        return r[:n_out], r[n_out:], res_tree

    def batched_bwd(res_tree, diff_in, diff_out, res, cts):
        def flat(*xs):
            return [ad.instantiate(c) for c in bwd(res_tree, diff_in, diff_out,
                                                   list(xs[:len(res)]), list(xs[len(res):]))]

        n_diff = sum(diff_in)
        cts_in = _vmap_flat(flat, axis_data, list(res) + list(cts),
                            [0] * (len(res) + len(cts)))
        d_dims = [d for d, f in zip(arg_dims, diff_in) if f]
        assert len(d_dims) == n_diff
        # An argument that was not batched gets the sum of the per-member cotangents.
        from olympus_trace import lax_ops as lax

        return [lax.reduce_sum(c, (0,)) if d is None else c for c, d in zip(cts_in, d_dims)]

    outs = bind(custom_vjp_call_p, *consts, *vals, call_olympuspr=body, fwd=batched_fwd,
                bwd=batched_bwd, num_consts=len(consts) + num_consts)
    return outs, [0] * len(outs)


ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
ad.jvp_rules[custom_lin_p] = _custom_lin_jvp
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
batching.batching_rules[custom_vjp_call_p] = _custom_vjp_call_batch
batching.batching_rules[custom_lin_p] = _custom_lin_batch
register_lowering(custom_vjp_call_p, _call_lowering)
register_lowering(custom_lin_p, _custom_lin_lowering)


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

checkpoint_p = new_primitive("checkpoint", multiple_results=True)


@def_shape_rule(checkpoint_p)
def _checkpoint_shape_rule(*avals, call_olympuspr, prevent_cse=True):
    return list(call_olympuspr.out_avals)


def _checkpoint_jvp(primals, tangents, *, call_olympuspr, prevent_cse=True):
    in_nz = [not isinstance(t, ad.Zero) for t in tangents]
    body, out_nz = _jvp_body(call_olympuspr, in_nz)
    body, consts = hoist_consts(body)
    outs = bind(checkpoint_p, *consts, *primals,
                *[t for t in tangents if not isinstance(t, ad.Zero)], call_olympuspr=body,
                prevent_cse=prevent_cse)
    m = len(call_olympuspr.out_avals)
    out_p, it = outs[:m], iter(outs[m:])
    return out_p, [next(it) if nz else ad.Zero(ad.tangent_aval(get_aval(p)))
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
    lin = [ad.is_undefined_primal(a) for a in args]
    ct_avals = [ad.tangent_aval(a) for a in call_olympuspr.out_avals]
    ct_nz = [not isinstance(c, ad.Zero) for c in cts]
    if not any(ct_nz):
        return [ad.Zero(a.aval) if l else None for a, l in zip(args, lin)]
    body = _transposed_body(call_olympuspr, lin, ct_avals, ct_nz)
    body, consts = hoist_consts(body)
    res = list(call_olympuspr.consts) + [a for a, l in zip(args, lin) if not l]
    outs = iter(bind(checkpoint_p, *consts, *res,
                     *[c for c in cts if not isinstance(c, ad.Zero)], call_olympuspr=body,
                     prevent_cse=prevent_cse))
    return [next(outs) if l else None for l in lin]


def _checkpoint_batch(axis_data, vals, dims, *, call_olympuspr, prevent_cse=True):
    body, consts = _batched_body(call_olympuspr, axis_data, vals, dims)
    outs = bind(checkpoint_p, *consts, *vals, call_olympuspr=body, prevent_cse=prevent_cse)
    return outs, [0] * len(outs)


ad.jvp_rules[checkpoint_p] = _checkpoint_jvp
ad.transpose_rules[checkpoint_p] = _checkpoint_transpose
partial_eval_rules[checkpoint_p] = _checkpoint_partial_eval
ad.dce_rules[checkpoint_p] = call_dce
batching.batching_rules[checkpoint_p] = _checkpoint_batch
register_lowering(checkpoint_p, _call_lowering)


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
