"""Automatic differentiation: forward mode by a JVP trace, reverse mode by linearizing
(JVP, then partial evaluation with the primals known and the tangents unknown) and
transposing the linear part. This is JAX's design: every rule lives in a table keyed by
primitive (`jvp_rules`, `transpose_rules`), filled by `olympus_trace.ad_rules`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir.avals import ShapedArray
from olympus_ir.core import Literal, Primitive, Var

from . import lax_ops, olympuspr_utils
from .core import Trace, Tracer, bind, current_trace, get_aval, set_current_trace
from .olympuspr_utils import eval_olympuspr, partial_eval_olympuspr
from .staging import DebugInfo, trace_to_olympuspr

#: prim -> rule(primals, tangents, **params) -> (primal_out, tangent_out)
jvp_rules: dict[Primitive, Callable] = {}
#: prim -> rule(cotangent_out, *operands, **params) -> list of cotangents (None if not linear)
transpose_rules: dict[Primitive, Callable] = {}


# --- symbolic zeros ------------------------------------------------------------------------


class Zero:
    """A tangent or cotangent known to be zero: costs nothing until instantiated."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_value(x) -> Zero:
        return Zero(tangent_aval(get_aval(x)))

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def tangent_dtype(dt) -> np.dtype:
    return dt if dtypes.is_inexact(dt) else dtypes.float0


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    if dtypes.is_inexact(aval.dtype):
        return ShapedArray(aval.shape, aval.dtype, False)
    return _Float0Aval(aval.shape)


class _Float0Aval(ShapedArray):
    """The tangent type of integer and boolean values (never materialized on device)."""

    __slots__ = ()

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.dtype = dtypes.float0
        self.weak_type = False
        self._hash = None

    def str_short(self, short_dtypes: bool = True) -> str:
        return f"float0[{','.join(map(str, self.shape))}]"


def zeros_like_aval(aval: ShapedArray):
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return lax_ops.broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())


def instantiate(t):
    return zeros_like_aval(t.aval) if isinstance(t, Zero) else t


def add_tangents(a, b):
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    return lax_ops.add(a, b)


# --- the JVP trace -------------------------------------------------------------------------


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return get_aval(self.primal)

    def to_concrete_value(self):
        p = self.primal
        return p.to_concrete_value() if isinstance(p, Tracer) else p

    def _origin_msg(self) -> str:
        p = self.primal
        return p._origin_msg() if isinstance(p, Tracer) else ""


class JVPTrace(Trace):
    name = "jvp"

    def __init__(self, parent: Trace):
        super().__init__()
        self.parent = parent

    def to_primal_tangent(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_value(x)

    def process_primitive(self, prim, args, params):
        primals, tangents = zip(*map(self.to_primal_tangent, args)) if args else ((), ())
        if all(isinstance(t, Zero) for t in tangents):
            with set_current_trace(self.parent):
                return bind(prim, *primals, **params)
        rule = jvp_rules.get(prim)
        if rule is None:
            raise NotImplementedError(
                f"Differentiation rule for '{prim.name}' not implemented"
            )
        with set_current_trace(self.parent):
            primal_out, tangent_out = rule(list(primals), list(tangents), **params)
        if prim.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)


def _check_tangent(p, t, i):
    pa = get_aval(p)
    if isinstance(t, Zero):
        return
    ta = get_aval(t) if not (isinstance(t, np.ndarray) and t.dtype == dtypes.float0) else \
        _Float0Aval(t.shape)
    want = tangent_dtype(pa.dtype)
    if ta.dtype != want:
        raise TypeError(
            "primal and tangent arguments to olympus.jvp do not match; dtypes must be equal, "
            "or in case of int/bool primal dtype the tangent dtype must be float0. Got primal "
            f"dtype {pa.dtype.name} and so expected tangent dtype {np.dtype(want).name}, but "
            f"got tangent dtype {ta.dtype.name} instead."
        )
    if ta.shape != pa.shape:
        raise ValueError(
            "olympus.jvp called with different primal and tangent shapes;Got primal shape "
            f"{pa.shape} and tangent shape as {ta.shape}"
        )


def jvp_flat(fun: Callable, primals: Sequence, tangents: Sequence,
             instantiate_zeros: bool = True) -> tuple[list, list]:
    """Forward-mode: ``fun(*primals)`` and its directional derivative along `tangents`.

    `fun` takes and returns flat lists. Tangents may be `Zero`.
    """
    for i, (p, t) in enumerate(zip(primals, tangents)):
        _check_tangent(p, t, i)
    trace = JVPTrace(current_trace())
    tracers = [JVPTracer(trace, p, t if not (isinstance(t, np.ndarray) and t.dtype ==
                                              dtypes.float0) else Zero.from_value(p))
               for p, t in zip(primals, tangents)]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        pts = [trace.to_primal_tangent(o) for o in outs]
    finally:
        trace.invalidate()
    out_p = [p for p, _ in pts]
    out_t = [instantiate(t) if instantiate_zeros else t for _, t in pts]
    return out_p, out_t


# --- linearize and transpose ------------------------------------------------------------------


class UndefinedPrimal:
    """A linear input of a transpose rule: only its type is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x) -> bool:
    return isinstance(x, UndefinedPrimal)


class LinearFunction:
    """The linear map a `linearize` produced: residuals plus a linear olympuspr."""

    def __init__(self, lin_olympuspr, residuals, known_tangents, out_unknowns, in_avals,
                 diff_mask, out_avals, out_diff):
        self.olympuspr = lin_olympuspr          # invars: residuals + differentiable tangents
        self.residuals = residuals
        self.known_tangents = known_tangents    # values of tangent outputs that are constant
        self.out_unknowns = out_unknowns        # per tangent output: from the olympuspr?
        self.in_avals = in_avals
        self.diff_mask = diff_mask              # per input: does it get a tangent?
        self.out_avals = out_avals
        self.out_diff = out_diff                # per output: does it have a tangent?

    def jvp(self, tangents: Sequence) -> list:
        ts = [instantiate(t) for t, d in zip(tangents, self.diff_mask) if d]
        outs = iter(eval_olympuspr(self.olympuspr, [], *self.residuals, *ts))
        known = iter(self.known_tangents)
        diff = iter([next(outs) if u else next(known) for u in self.out_unknowns])
        return [next(diff) if d else Zero(tangent_aval(a))
                for a, d in zip(self.out_avals, self.out_diff)]

    def transpose(self, cts_out: Sequence) -> list:
        """Cotangents of the inputs (Zero where an input gets none)."""
        j = self.olympuspr
        cts_diff = [ct for ct, d in zip(cts_out, self.out_diff) if d]
        cts_unknown = [ct for ct, u in zip(cts_diff, self.out_unknowns) if u]
        nres = len(self.residuals)
        lin_avals = [v.aval for v in j.invars[nres:]]
        cts_in = backward_pass(j, self.residuals, lin_avals, cts_unknown)
        it = iter(cts_in)
        return [next(it) if d else Zero(tangent_aval(a))
                for a, d in zip(self.in_avals, self.diff_mask)]


def linearize_flat(fun: Callable, primals: Sequence, debug_info: DebugInfo | None = None,
                   *, has_aux: bool = False, primal_outputs_needed: bool = True):
    """Returns (primal outputs, LinearFunction). `fun` takes and returns flat lists.

    The JVP of `fun` is staged into one olympuspr with the primals and the tangents as
    inputs, then split by partial evaluation: the known part (primal outputs and the
    residuals the tangent computation needs) runs now, in the current trace; the unknown
    part is the linear map, kept as an olympuspr.

    With `has_aux`, `fun` returns ``(outputs, aux)`` (two flat lists); the aux values get
    no tangents and the result is ``(outputs, LinearFunction, aux)``. Without
    `primal_outputs_needed` the computations only the primal outputs need are dropped
    (dead-code eliminated) and the outputs are returned as None (e.g. for `grad`).
    """
    in_avals = [get_aval(p) for p in primals]
    diff_mask = [dtypes.is_inexact(a.dtype) for a in in_avals]
    tan_avals = [tangent_aval(a) for a, d in zip(in_avals, diff_mask) if d]
    n = len(primals)
    out_info = []
    naux: list[int] = []

    def fun_all(*xs):
        res = fun(*xs)
        if not has_aux:
            naux.append(0)
            return res
        outs, aux = res
        naux.append(len(aux))
        return list(outs) + list(aux)

    def jvp_fun(*args):
        ps = args[:n]
        it = iter(args[n:])
        ts = [next(it) if d else Zero(tangent_aval(a)) for a, d in zip(in_avals, diff_mask)]
        out_p, out_t = jvp_flat(fun_all, ps, ts, instantiate_zeros=False)
        m = len(out_p) - naux[-1]
        out_diff = [dtypes.is_inexact(get_aval(p).dtype) for p in out_p[:m]]
        out_info.append(([get_aval(p) for p in out_p[:m]], out_diff))
        return list(out_p) + [instantiate(t) for t, d in zip(out_t[:m], out_diff) if d]

    closed, _ = trace_to_olympuspr(jvp_fun, in_avals + tan_avals, debug_info)
    out_avals, out_diff = out_info[0]
    m, k = len(out_avals), naux[0]
    unknowns = [False] * n + [True] * len(tan_avals)
    known, unknown, out_unknowns, nres = partial_eval_olympuspr(closed.olympuspr, unknowns)
    if any(out_unknowns[:m + k]):  # pragma: no cover - primal outputs never depend on tangents
        raise AssertionError("linearize: a primal output depends on the tangents")
    # Dead-code elimination that also prunes the unused outputs of calls and conds (e.g.
    # primal values only the primal outputs needed).
    used = [primal_outputs_needed] * m + [True] * (len(known.outvars) - m)
    known, _ = dce_deep(known, used)
    known = known.replace(constvars=closed.olympuspr.constvars)
    known_outs = eval_olympuspr(known, closed.consts, *primals)
    if not primal_outputs_needed:
        known_outs = [None] * m + list(known_outs)
    nk = len(known_outs) - nres
    known_vals, residuals = known_outs[:nk], known_outs[nk:]
    lin = LinearFunction(unknown, residuals, known_vals[m + k:], out_unknowns[m + k:],
                         in_avals, diff_mask, out_avals, out_diff)
    if has_aux:
        return known_vals[:m], lin, known_vals[m:m + k]
    return known_vals[:m], lin


#: prim -> rule(eqn, used_outputs) -> (new eqn computing only the used outputs (its outvars
#: are those of `eqn` that are used), used_inputs per input of the new eqn). For primitives
#: holding sub-olympusprs (calls, cond), so dead code inside them is removed too.
dce_rules: dict[Primitive, Callable] = {}


def dce_deep(olympuspr, used_outputs: Sequence[bool], prune_invars: bool = False):
    """`olympuspr_utils.dce_olympuspr`, recursing into primitives with a `dce_rules`
    entry. Returns (new olympuspr, used flag per original input); the constvars of the
    result are those still used."""
    return olympuspr_utils.dce_olympuspr(olympuspr, used_outputs, prune_invars,
                                         rules=dce_rules)


def backward_pass(olympuspr, residuals: Sequence, lin_avals, cts_out: Sequence) -> list:
    """Transpose a linear olympuspr (invars: residuals + linear inputs).

    Returns one cotangent (possibly Zero) per linear input.
    """
    nres = len(residuals)
    env: dict[int, Any] = {}
    for v, r in zip(olympuspr.invars[:nres], residuals):
        env[id(v)] = r
    linear: set[int] = {id(v) for v in olympuspr.invars[nres:]}
    for e in olympuspr.eqns:
        if any(isinstance(v, Var) and id(v) in linear for v in e.invars):
            linear.update(id(v) for v in e.outvars)
        else:
            # A non-linear equation (on residuals only): evaluate it forward.
            vals = [v.val if isinstance(v, Literal) else env[id(v)] for v in e.invars]
            out = bind(e.primitive, *vals, **e.params)
            for v, x in zip(e.outvars, out if e.primitive.multiple_results else [out]):
                env[id(v)] = x

    cts: dict[int, Any] = {}

    def add_ct(v, ct):
        if isinstance(ct, Zero) or ct is None:
            return
        prev = cts.get(id(v))
        cts[id(v)] = ct if prev is None else lax_ops.add(prev, ct)

    for v, ct in zip(olympuspr.outvars, cts_out):
        if isinstance(v, Var) and id(v) in linear:
            add_ct(v, ct)

    for e in reversed(olympuspr.eqns):
        if not any(id(v) in linear for v in e.outvars):
            continue
        ct_out = [cts.pop(id(v), None) for v in e.outvars]
        if all(c is None for c in ct_out):
            continue
        ct_out = [Zero(v.aval) if c is None else c for v, c in zip(e.outvars, ct_out)]
        invals = [
            v.val if isinstance(v, Literal)
            else UndefinedPrimal(v.aval) if id(v) in linear else env[id(v)]
            for v in e.invars
        ]
        rule = transpose_rules.get(e.primitive)
        if rule is None:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for '{e.primitive.name}' "
                "not implemented"
            )
        ct_arg = ct_out if e.primitive.multiple_results else ct_out[0]
        cts_in = rule(ct_arg, *invals, **e.params)
        for v, ct in zip(e.invars, cts_in):
            if isinstance(v, Var) and id(v) in linear:
                add_ct(v, ct)

    out = []
    for v, a in zip(olympuspr.invars[nres:], lin_avals):
        ct = cts.get(id(v))
        out.append(Zero(a) if ct is None else ct)
    return out


def vjp_flat(fun: Callable, primals: Sequence, debug_info: DebugInfo | None = None,
             *, has_aux: bool = False, primal_outputs_needed: bool = True):
    """Returns (primal outputs, vjp function mapping output cotangents to input ones), and
    the aux values with `has_aux` (see `linearize_flat`)."""
    res = linearize_flat(fun, primals, debug_info, has_aux=has_aux,
                         primal_outputs_needed=primal_outputs_needed)
    outs, lin = res[0], res[1]

    def vjp(cts):
        return lin.transpose(list(cts))

    return (outs, vjp, res[2]) if has_aux else (outs, vjp)


def zeros_like(x):
    return zeros_like_aval(get_aval(x))


__all__ = [
    "Zero", "JVPTrace", "JVPTracer", "jvp_flat", "linearize_flat", "vjp_flat",
    "backward_pass", "UndefinedPrimal", "is_undefined_primal", "jvp_rules",
    "transpose_rules", "instantiate", "add_tangents", "tangent_aval", "zeros_like",
    "LinearFunction", "Tracer", "Trace", "dce_deep", "dce_rules",
]
