"""Host callbacks: ``debug_callback``, ``pure_callback``, ``io_callback`` ->
``stablehlo.custom_call @xla_ffi_python_cpu_callback``.

**Results.** jaxlib does not check what a callback returns (JAXLIB.md §11: a wrong shape
or dtype is left as zeros), so the host side of ``pure_callback`` / ``io_callback``
checks the count, shape and dtype of the results first (after canonicalizing them, so a
float64 result stands for float32 without x64, as in JAX), raising JAX's RuntimeError.
An exception raised on the host is also kept (`take_callback_error`) so the caller can
chain it to the runtime error the execution reports.

The custom call carries ``has_side_effect = true`` and ``mhlo.backend_config = {index = k
: ui64}``, where k is the position of the Python function in the module's list of host
callbacks (`LoweredModule.host_callbacks`); the compiler must be given that list
(JAXLIB.md §11: without it the program crashes when it runs).

**Order.** XLA keeps side-effecting custom calls alive but does not keep independent
ones in program order (two prints with no data dependency between them can swap). So
before lowering, `thread_effect_tokens` rewrites a program that has callbacks: an order
token (a ``bool[]`` value) is threaded through every callback in program order, and
through the operands and results of each ``cond``, ``while``, ``scan`` and
``closed_call`` whose sub-olympusprs hold callbacks (an extra carry of the loops). Each
callback takes the token and returns a new one, so every callback depends on the one
before it. The rewritten equations are ``debug_callback[token=True]``; no other
primitive changes. Callbacks inside primitives this pass does not know stay unordered.

A ``while`` whose cond has callbacks is rewritten further (XLA skips the cond of a loop
whose trip count it can compute): the predicate is computed before the loop and at the
end of each iteration, and carried (see `_while_effectful_cond`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir import ClosedOlympuspr, DropVar, Eqn, Literal, Olympuspr, ShapedArray, Var, dtypes
from olympus_ir.core import primitives_by_name
from olympus_ir.prims.callbacks import (
    TOKEN_AVAL,
    debug_callback_p,
    eqn_effects,
    io_callback_p,
    olympuspr_effects,
    pure_callback_p,
)
from olympus_ir.prims.control_flow import closed_call_p

from .. import mlir_utils as mu
from ._registry import register_lowering

__all__ = ["thread_effect_tokens", "host_callback_wrapper", "checked_callback_wrapper",
           "check_callback_results", "take_callback_error", "keep_callback_error"]

_CALLBACK_TARGET = "xla_ffi_python_cpu_callback"
_TOKEN_VALUE = np.array(True)


# --- the host side --------------------------------------------------------------------------


class _Pending(threading.local):
    error: BaseException | None = None


_pending = _Pending()


def take_callback_error() -> BaseException | None:
    """The exception the last failing host callback on this thread raised (then
    forgotten), or None."""
    e, _pending.error = _pending.error, None
    return e


def keep_callback_error(e: BaseException) -> None:
    """Remember `e`, raised by a host callback on this thread, for `take_callback_error`."""
    _pending.error = e


def check_callback_results(outs: Any, result_avals: Sequence[ShapedArray]) -> list:
    """`outs` (what a callback returned, flat) as numpy arrays of `result_avals`, or
    RuntimeError with JAX's wording."""
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    if len(outs) != len(result_avals):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(result_avals)}, Actual: {len(outs)}")
    checked = []
    for i, (o, aval) in enumerate(zip(outs, result_avals)):
        v = np.asarray(o)
        canon = dtypes.canonicalize_dtype(v.dtype) if v.dtype != object else v.dtype
        if canon != v.dtype:
            v = v.astype(canon)
        if v.shape != aval.shape:
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {aval.shape}, Actual: {v.shape}")
        if v.dtype != aval.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {aval.dtype}, Actual: {v.dtype}")
        checked.append(v)
    return checked


def checked_callback_wrapper(callback: Callable, avals_in: Sequence[ShapedArray],
                             result_avals: Sequence[ShapedArray],
                             token: bool = False) -> Callable:
    """The compiler's function for a callback with results: numpy copies in, `callback`,
    results checked against `result_avals` (and the order token first, with `token`)."""
    result_avals = tuple(result_avals)

    def host(*args):
        if token:
            args = args[1:]
        try:
            outs = check_callback_results(
                callback(*[np.array(a, copy=True) for a in args]), result_avals)
        except BaseException as e:
            _pending.error = e
            raise
        return (_TOKEN_VALUE, *outs) if token else tuple(outs)

    host.__name__ = f"host_{getattr(callback, '__name__', 'callback')}"
    return host


def host_callback_wrapper(callback: Callable, avals_in: Sequence[ShapedArray],
                          token: bool = False) -> Callable:
    """The function handed to the compiler: converts the operands to numpy arrays (copies:
    the buffers are only valid during the call), calls `callback`, and returns what the
    custom call's results expect (the order token, or nothing). An exception raised by
    `callback` propagates; the runtime reports it as an error of the execution."""
    n = len(avals_in)

    def host(*args):
        if token:
            args = args[1:]
        if len(args) != n:  # pragma: no cover - the custom call fixes the arity
            raise RuntimeError(
                f"host callback {getattr(callback, '__name__', callback)!r} expected {n} "
                f"operands, got {len(args)}")
        try:
            callback(*[np.array(a, copy=True) for a in args])
        except BaseException as e:
            _pending.error = e
            raise
        return (_TOKEN_VALUE,) if token else ()

    host.__name__ = f"host_{getattr(callback, '__name__', 'callback')}"
    return host


# --- lowering -------------------------------------------------------------------------------


@register_lowering(debug_callback_p)
def _debug_callback_lowering(ctx, *args, callback, effect, token=False):
    avals_in = ctx.avals_in[1:] if token else ctx.avals_in
    result_types = [mu.aval_to_ir_type(TOKEN_AVAL)] if token else []
    return _emit_callback(ctx, host_callback_wrapper(callback, avals_in, token), args,
                          result_types, side_effect=True)


def _emit_callback(ctx, host, args, result_types, side_effect: bool):
    index = ctx.register_host_callback(host)
    op = hlo.CustomCallOp(
        result_types, list(args),
        call_target_name=ir.StringAttr.get(_CALLBACK_TARGET),
        has_side_effect=ir.BoolAttr.get(side_effect),
        backend_config=ir.StringAttr.get(""),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
    )
    ui64 = ir.IntegerType.get_unsigned(64)
    op.attributes["mhlo.backend_config"] = ir.DictAttr.get(
        {"index": ir.IntegerAttr.get(ui64, index)})
    return list(op.results)


@register_lowering(pure_callback_p)
def _pure_callback_lowering(ctx, *args, callback, result_avals, vmap_method=None,
                            sharding=None):
    host = checked_callback_wrapper(callback, ctx.avals_in, result_avals)
    # Not side-effecting for XLA (as JAX lowers it): an unused call is removed, and calls
    # may be merged or reordered; the function promised to be pure.
    return _emit_callback(ctx, host, args, [mu.aval_to_ir_type(a) for a in result_avals],
                          side_effect=False)


@register_lowering(io_callback_p)
def _io_callback_lowering(ctx, *args, callback, result_avals, ordered, sharding=None,
                          token=False):
    avals_in = ctx.avals_in[1:] if token else ctx.avals_in
    host = checked_callback_wrapper(callback, avals_in, result_avals, token)
    types = [mu.aval_to_ir_type(a) for a in result_avals]
    if token:
        types = [mu.aval_to_ir_type(TOKEN_AVAL), *types]
    return _emit_callback(ctx, host, args, types, side_effect=True)


# --- ordering: thread a token through every callback ---------------------------------------


def thread_effect_tokens(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """`closed` with an order token threaded through its callbacks (see the module
    docstring); `closed` itself if it has none. The signature does not change."""
    if not olympuspr_effects(closed):
        return closed
    j = closed.olympuspr
    eqns, _ = _thread_eqns(j.eqns, Literal(np.bool_(True), TOKEN_AVAL))
    return ClosedOlympuspr(j.replace(eqns=eqns), closed.consts)


def _thread_eqns(eqns: Sequence[Eqn], tok: Any) -> tuple[list[Eqn], Any]:
    out = []
    for e in eqns:
        rule = _token_rules.get(e.primitive)
        if rule is None or not (e.params and eqn_effects(e)):
            out.append(e)
            continue
        e, tok = rule(e, tok)
        out.extend(e if isinstance(e, list) else [e])
    return out, tok


def _thread_sub(sub: ClosedOlympuspr | Olympuspr, pos_in: int, pos_out: int | None):
    """A sub-olympuspr taking the token as input `pos_in` and (unless `pos_out` is None)
    returning the token after its callbacks as output `pos_out`."""
    closed = sub if isinstance(sub, ClosedOlympuspr) else ClosedOlympuspr(sub, [])
    j = closed.olympuspr
    tok_in = Var(TOKEN_AVAL)
    eqns, tok_out = _thread_eqns(j.eqns, tok_in)
    invars = list(j.invars)
    invars.insert(pos_in, tok_in)
    outvars = list(j.outvars)
    if pos_out is not None:
        outvars.insert(pos_out, tok_out)
    new = ClosedOlympuspr(j.replace(invars=invars, outvars=outvars, eqns=eqns), closed.consts)
    return new if isinstance(sub, ClosedOlympuspr) else new.olympuspr


def _callback_rule(e: Eqn, tok):
    new_tok = Var(TOKEN_AVAL)
    return e.replace(invars=[tok, *e.invars], outvars=[new_tok, *e.outvars],
                     params={**e.params, "token": True}), new_tok


def _cond_rule(e: Eqn, tok):
    branches = tuple(_thread_sub(b, 0, 0) for b in e.params["branches"])
    new_tok = Var(TOKEN_AVAL)
    index, *ops = e.invars
    return e.replace(invars=[index, tok, *ops], outvars=[new_tok, *e.outvars],
                     params={**e.params, "branches": branches}), new_tok


def _while_rule(e: Eqn, tok):
    p = e.params
    nc, nb = int(p["cond_nconsts"]), int(p["body_nconsts"])
    ops = e.invars
    if olympuspr_effects(p["cond_olympuspr"]):
        return _while_effectful_cond(e, tok)
    cond = _thread_sub(p["cond_olympuspr"], nc, None)  # takes (and ignores) the token
    body = _thread_sub(p["body_olympuspr"], nb, 0)
    new_tok = Var(TOKEN_AVAL)
    return e.replace(invars=[*ops[:nc + nb], tok, *ops[nc + nb:]],
                     outvars=[new_tok, *e.outvars],
                     params={**p, "cond_olympuspr": cond, "body_olympuspr": body}), new_tok


def _while_effectful_cond(e: Eqn, tok):
    """A loop whose cond has callbacks. XLA does not run the cond computation of a loop
    whose trip count it can compute, which would drop those callbacks; so, as JAX does
    for ordered effects, the predicate is computed by the body instead (and once before
    the loop) and carried: ``pred = cond(c); while pred: c = body(c); pred = cond(c)``.
    Both computations are ``closed_call`` s of the threaded cond and body."""
    p = e.params
    nc, nb = int(p["cond_nconsts"]), int(p["body_nconsts"])
    cconsts, bconsts, carry = e.invars[:nc], e.invars[nc:nc + nb], e.invars[nc + nb:]
    cond = _thread_sub(p["cond_olympuspr"], nc, 0)  # (cconsts, tok, carry) -> (tok, pred)
    body = _thread_sub(p["body_olympuspr"], nb, 0)  # (bconsts, tok, carry) -> (tok, carry)
    pred_aval = cond.out_avals[1]
    carry_avals = [v.aval for v in carry]

    def call(fn, args):
        outs = [Var(a) for a in fn.out_avals]
        return Eqn(closed_call_p, list(args), outs, {"call_olympuspr": fn}), outs

    first, (tok1, pred0) = call(cond, [*cconsts, tok, *carry])
    # body: (cconsts, bconsts, tok, pred, carry) -> (tok, pred, carry)
    b_cc, b_bc = [Var(v.aval) for v in cconsts], [Var(v.aval) for v in bconsts]
    b_tok, b_pred, b_carry = Var(TOKEN_AVAL), Var(pred_aval), [Var(a) for a in carry_avals]
    run_body, (t2, *carry2) = call(body, [*b_bc, b_tok, *b_carry])
    run_cond, (t3, pred3) = call(cond, [*b_cc, t2, *carry2])
    new_body = Olympuspr([], [*b_cc, *b_bc, b_tok, b_pred, *b_carry], [t3, pred3, *carry2],
                         [run_body, run_cond])
    # cond: (tok, pred, carry) -> pred
    c_pred = Var(pred_aval)
    new_cond = Olympuspr([], [Var(TOKEN_AVAL), c_pred, *[Var(a) for a in carry_avals]],
                         [c_pred], [])
    new_tok = Var(TOKEN_AVAL)
    loop = e.replace(
        invars=[*cconsts, *bconsts, tok1, pred0, *carry],
        outvars=[new_tok, DropVar(pred_aval), *e.outvars],
        params={**p, "cond_olympuspr": ClosedOlympuspr(new_cond, []),
                "body_olympuspr": ClosedOlympuspr(new_body, []),
                "cond_nconsts": 0, "body_nconsts": nc + nb})
    return [first, loop], new_tok


def _scan_rule(e: Eqn, tok):
    p = e.params
    nc = int(p["num_consts"])
    ops = e.invars
    linear = p.get("linear")
    linear = None if linear is None else (*linear[:nc], False, *linear[nc:])
    new_tok = Var(TOKEN_AVAL)
    return e.replace(invars=[*ops[:nc], tok, *ops[nc:]], outvars=[new_tok, *e.outvars],
                     params={**p, "olympuspr": _thread_sub(p["olympuspr"], nc, 0),
                             "num_carry": int(p["num_carry"]) + 1, "linear": linear}), new_tok


def _closed_call_rule(e: Eqn, tok):
    new_tok = Var(TOKEN_AVAL)
    call = _thread_sub(e.params["call_olympuspr"], 0, 0)
    return e.replace(invars=[tok, *e.invars], outvars=[new_tok, *e.outvars],
                     params={**e.params, "call_olympuspr": call}), new_tok


def _jit_rule(e: Eqn, tok):
    """A nested jit with callbacks becomes a ``closed_call`` of the threaded callee
    (lowered inline)."""
    new_tok = Var(TOKEN_AVAL)
    call = _thread_sub(e.params["olympuspr"], 0, 0)
    return Eqn(closed_call_p, [tok, *e.invars], [new_tok, *e.outvars],
               {"call_olympuspr": call}, e.source_info), new_tok


def _rules() -> dict:
    table = {debug_callback_p: _callback_rule, io_callback_p: _callback_rule}
    for name, rule in (("cond", _cond_rule), ("while", _while_rule), ("scan", _scan_rule),
                       ("closed_call", _closed_call_rule), ("jit", _jit_rule)):
        table[primitives_by_name[name]] = rule
    return table


_token_rules = _rules()
