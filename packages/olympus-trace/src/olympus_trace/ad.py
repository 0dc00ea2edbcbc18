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
from olympus_ir.avals import AbstractToken, MemorySpace, ShapedArray
from olympus_ir.core import Eqn, Literal, Olympuspr, Primitive, Var, abstract_eval
from olympus_ir.prims.control_flow import closed_call_p, jit_p

from . import lax_ops, olympuspr_utils
from .core import Trace, Tracer, bind, current_trace, get_aval, set_current_trace
from .olympuspr_utils import eval_olympuspr, partial_eval_rules
from .staging import (
    DebugInfo,
    OlympusprTrace,
    OlympusprTracer,
    check_no_leaks,
    source_override,
)

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
        return f"Zero({self.aval})"  # JAX's: the aval's long form, `Zero(float32[2])`


def tangent_dtype(dt) -> np.dtype:
    return dt if dtypes.is_inexact(dt) else dtypes.float0


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    if type(aval) is AbstractToken:  # a token is its own tangent type, as in JAX
        return aval
    if dtypes.is_inexact(aval.dtype):
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type, aval.memory_space)
    return _Float0Aval(aval.shape)


class _Float0Aval(ShapedArray):
    """The tangent type of integer and boolean values (never materialized on device)."""

    __slots__ = ()

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.dtype = dtypes.float0
        self.weak_type = False
        self.memory_space = MemorySpace.Device
        self._hash = None

    def str_short(self, short_dtypes: bool = True) -> str:
        return f"float0[{','.join(map(str, self.shape))}]"


def zeros_like_aval(aval: ShapedArray):
    """Materialized zeros of `aval`'s type, weak type included (a weakly typed zero
    stays weak through the rules that use it, as JAX's zeros keep it)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    z = np.zeros((), aval.dtype)
    if aval.weak_type:
        py = lax_ops.elementwise._scalar_like(0, aval.dtype, True)
        z = py if dtypes.python_scalar_dtype(py) == aval.dtype else \
            lax_ops.convert_element_type(z, aval.dtype, True)
    return lax_ops.broadcast_in_dim(z, aval.shape, ())


def instantiate(t):
    return zeros_like_aval(t.aval) if isinstance(t, Zero) else t


def add_tangents(a, b):
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    return lax_ops.add_any(a, b)


# --- the JVP trace -------------------------------------------------------------------------


def _short(x) -> str:
    """How JAX shows a primal or tangent inside a tracer's repr: tracers by their own repr,
    values by `str`."""
    return repr(x) if isinstance(x, Tracer) else str(x)


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return get_aval(self.primal)

    def __repr__(self) -> str:
        return f"JVPTracer(primal={_short(self.primal)}, tangent={_short(self.tangent)})"

    def to_concrete_value(self):
        p = self.primal
        return p.to_concrete_value() if isinstance(p, Tracer) else p

    def _origin_msg(self) -> str:
        p = self.primal
        return p._origin_msg() if isinstance(p, Tracer) else ""


#: Primitives whose JVP rule runs even when every tangent is zero: ``new_ref`` (a ref
#: created from a constant may later hold differentiated values, so it needs a tangent ref).
jvp_always: set = set()


class JVPTrace(Trace):
    """Forward mode: rules run in `rule_trace` (the parent: primals and tangents are both
    values of the enclosing trace)."""

    name = "jvp"
    tracer_type = JVPTracer

    def __init__(self, parent: Trace):
        super().__init__()
        self.parent = parent
        self.rule_trace = parent

    def to_primal_tangent(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_value(x)

    def process_primitive(self, prim, args, params):
        primals, tangents = zip(*map(self.to_primal_tangent, args)) if args else ((), ())
        if all(isinstance(t, Zero) for t in tangents) and prim not in jvp_always:
            with set_current_trace(self.parent):
                return bind(prim, *primals, **params)
        rule = jvp_rules.get(prim)
        if rule is None:
            raise NotImplementedError(
                f"Differentiation rule for '{prim.name}' not implemented"
            )
        with set_current_trace(self.rule_trace):
            primal_out, tangent_out = rule(list(primals), list(tangents), **params)
        make = self.tracer_type
        if prim.multiple_results:
            return [make(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return make(self, primal_out, tangent_out)


def tangents_typed_as_primals(args: tuple, scalars_only: bool = False) -> tuple:
    """`args` as a function that JAX wraps in ``jit`` sees them under forward mode: the
    jitted body's tangent inputs have the primals' tangent types, so a tangent's weak type
    becomes its primal's (``jvp(jnp.sin, (1.,), (f32(1),))`` has a weak tangent out; a bare
    ``lax.sin`` keeps the strong one). With `scalars_only`, only the tangents of Python
    scalar primals (which JAX converts, tangent too, on the way in). A no-op outside a
    JVP trace."""
    trace = current_trace()
    if type(trace) is not JVPTrace:  # linearize makes its tangent inputs from the primals
        return args
    out = None
    for i, a in enumerate(args):
        if type(a) is not trace.tracer_type or a._trace is not trace or isinstance(
                a.tangent, Zero):
            continue
        if scalars_only and type(a.primal) not in (float, int, complex, bool):
            continue
        weak = get_aval(a.primal).weak_type
        ta = get_aval(a.tangent)
        if ta.weak_type == weak or not isinstance(ta, ShapedArray) or \
                ta.dtype == dtypes.float0:
            continue
        with set_current_trace(trace.rule_trace):
            t = lax_ops.convert_element_type(a.tangent, ta.dtype, weak)
        if out is None:
            out = list(args)
        out[i] = trace.tracer_type(trace, a.primal, t)
    return args if out is None else tuple(out)


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
            "or in case of int/bool primal dtype the tangent dtype must be float0.Got primal "
            f"dtype {pa.dtype.name} and so expected tangent dtype {np.dtype(want).name}, but "
            f"got tangent dtype {ta.dtype.name} instead."
        )
    if ta.shape != pa.shape:
        raise ValueError(
            "jvp called with different primal and tangent shapes;Got primal shape "
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
        return f"UndefinedPrimal({self.aval})"


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

    def without_values(self) -> LinearFunction:
        """The same linear map without its residual and known-tangent values (for a
        transpose given the residuals explicitly, e.g. by a pullback that is a pytree)."""
        return LinearFunction(self.olympuspr, None, None, self.out_unknowns, self.in_avals,
                              self.diff_mask, self.out_avals, self.out_diff)

    def transpose(self, cts_out: Sequence, residuals: Sequence | None = None) -> list:
        """Cotangents of the inputs (Zero where an input gets none)."""
        j = self.olympuspr
        residuals = self.residuals if residuals is None else residuals
        cts_diff = [ct for ct, d in zip(cts_out, self.out_diff) if d]
        cts_unknown = [ct for ct, u in zip(cts_diff, self.out_unknowns) if u]
        nres = len(residuals)
        lin_avals = [v.aval for v in j.invars[nres:]]
        cts_in = backward_pass(j, residuals, lin_avals, cts_unknown)
        it = iter(cts_in)
        return [next(it) if d else Zero(tangent_aval(a))
                for a, d in zip(self.in_avals, self.diff_mask)]


class LinearizeTracer(JVPTracer):
    """A value under `linearize`: its primal lives in the enclosing trace (a concrete value
    at top level, a jit tracer under jit, ...), its tangent is a tracer of the linear
    olympuspr being recorded (or a `Zero`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        t = self.tangent
        ta = t.aval if isinstance(t, (Zero, Tracer)) else get_aval(t)
        return f"GradTracer(primal={_short(self.primal)}, typeof(tangent)={ta.str_short()})"


class LinearizeTrace(JVPTrace):
    """Direct linearization: the JVP rules run with the current trace set to a
    `TangentTrace`, which evaluates what they compute from primals in the enclosing trace
    and records only what involves tangents (the linear part)."""

    name = "linearize"
    tracer_type = LinearizeTracer

    def __init__(self, parent: Trace, tangent_trace: TangentTrace):
        super().__init__(parent)
        self.rule_trace = tangent_trace


class TangentTrace(OlympusprTrace):
    """Records an equation only if an operand is one of its own tracers (a tangent);
    everything else is bound in the parent trace, where the primals live. An equation mixing
    primal and tangent operands whose primitive has a partial-evaluation rule (calls, `cond`,
    loops, `checkpoint`: their JVPs return primal outputs too) is split by that rule: the
    known part is bound in the parent, the unknown part recorded, its residuals (primal
    values) becoming constants of the linear olympuspr."""

    name = "tangent"

    def __init__(self, parent: Trace, debug_info: DebugInfo | None = None):
        super().__init__(parent, debug_info)
        self.record_source = False

    def process_primitive(self, prim, args, params):
        own = [type(a) is OlympusprTracer and a._trace is self for a in args]
        if not any(own):
            with set_current_trace(self.parent):
                return bind(prim, *args, **params)
        rule = partial_eval_rules.get(prim)
        if rule is not None and not all(own):
            return self._split(prim, args, params, own, rule)
        return OlympusprTrace.process_primitive(self, prim, args, params)

    def _split(self, prim, args, params, own, rule):
        in_vars = [Var(get_aval(a)) for a in args]
        out_aval = abstract_eval(prim, *(v.aval for v in in_vars), **params)
        out_avals = out_aval if prim.multiple_results else [out_aval]
        out_vars = [Var(a) for a in out_avals]
        split = rule(Eqn(prim, in_vars, out_vars, params, None), own)
        if split is None:
            return OlympusprTrace.process_primitive(self, prim, args, params)
        known_eqns, unknown_eqns, out_unknown = split
        env: dict[int, Any] = {id(v): a for v, a, o in zip(in_vars, args, own) if not o}
        atoms: dict[int, Var] = {id(v): a._var for v, a, o in zip(in_vars, args, own) if o}

        def read(v):
            return olympuspr_utils._literal_value(v) if isinstance(v, Literal) else env[id(v)]

        outer = source_override[0]
        try:
            with set_current_trace(self.parent):
                for e in known_eqns:
                    source_override[0] = e.source_info or outer
                    out = bind(e.primitive, *map(read, e.invars), **e.params)
                    for v, x in zip(e.outvars,
                                    out if e.primitive.multiple_results else [out]):
                        env[id(v)] = x
        finally:
            source_override[0] = outer
        for e in unknown_eqns:
            ins = [v if isinstance(v, Literal) else atoms[id(v)] if id(v) in atoms
                   else self.to_atom(env[id(v)]) for v in e.invars]
            self.eqns.append(Eqn(e.primitive, ins, list(e.outvars), e.params, None))
            for v in e.outvars:
                atoms[id(v)] = v
        outs = [self._new_tracer(v.aval, v) if u else env[id(v)]
                for v, u in zip(out_vars, out_unknown)]
        return outs if prim.multiple_results else outs[0]


def linearize_flat(fun: Callable, primals: Sequence, debug_info: DebugInfo | None = None,
                   *, has_aux: bool = False, primal_outputs_needed: bool = True):
    """Returns (primal outputs, LinearFunction). `fun` takes and returns flat lists.

    Direct linearization: `fun` runs once on `LinearizeTracer`s whose primals live in the
    current trace, so the primal computation happens there (op by op on concrete values at
    top level, so Python control flow on them works; staged under `jit`), while the tangent
    computation is recorded into the linear olympuspr (its constants are the residuals).

    With `has_aux`, `fun` returns ``(outputs, aux)`` (two flat lists); the aux values get
    no tangents and the result is ``(outputs, LinearFunction, aux)``.
    `primal_outputs_needed` is accepted for callers that do not use the outputs (the primal
    computation runs anyway, as in JAX; a staged program drops what is unused).
    """
    del primal_outputs_needed
    parent = current_trace()
    tangent_trace = TangentTrace(parent, debug_info)
    trace = LinearizeTrace(parent, tangent_trace)
    in_avals = [get_aval(p) for p in primals]
    diff_mask = [dtypes.is_inexact(a.dtype) for a in in_avals]
    tracers = [LinearizeTracer(trace, p, tangent_trace.new_arg(tangent_aval(a))) if d else p
               for p, a, d in zip(primals, in_avals, diff_mask)]
    try:
        with set_current_trace(trace):
            res = fun(*tracers)
        outs, aux = (res[0], res[1]) if has_aux else (res, ())
        pts = [trace.to_primal_tangent(o) for o in outs]
        aux_vals = [trace.to_primal_tangent(a)[0] for a in aux]
    finally:
        trace.invalidate()
    out_p = [p for p, _ in pts]
    out_avals = [get_aval(p) for p in out_p]
    out_diff = [dtypes.is_inexact(a.dtype) for a in out_avals]
    diff_t = [t for (_, t), d in zip(pts, out_diff) if d]
    out_unknowns = [type(t) is OlympusprTracer and t._trace is tangent_trace for t in diff_t]
    known_tangents = [t for t, u in zip(diff_t, out_unknowns) if not u]
    try:
        closed, _ = tangent_trace.to_olympuspr([t for t, u in zip(diff_t, out_unknowns) if u])
    finally:
        tangent_trace.invalidate()
    del tracers, res, outs, aux, pts, diff_t
    if tangent_trace.tracer_refs is not None:
        check_no_leaks(tangent_trace)
    j = closed.olympuspr
    # Only the residuals the linear map reads are kept.
    j, _ = dce_deep(j, [True] * len(j.outvars))
    live = {id(v) for v in j.constvars}
    residuals = [c for v, c in zip(closed.olympuspr.constvars, closed.consts) if id(v) in live]
    lin_j = Olympuspr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns, j.effects,
                      j.debug_info)
    lin = LinearFunction(lin_j, residuals, known_tangents, out_unknowns, in_avals, diff_mask,
                         out_avals, out_diff)
    if has_aux:
        return out_p, lin, aux_vals
    return out_p, lin


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


_SPLIT_CALLS = (jit_p, closed_call_p)


def _split_nonlinear(e: Eqn, lin_in: list[bool]):
    """A call with linear and non-linear operands some of whose results do not depend on
    the linear ones (e.g. the JVP of a nested jit inside a checkpoint, whose primal
    results feed non-linear code): (known equations, run forward; unknown equations, the
    linear part) by its partial-evaluation rule, or None to transpose it whole."""
    if e.primitive not in _SPLIT_CALLS or all(lin_in):
        return None
    split = partial_eval_rules[e.primitive](e, lin_in)
    if split is None or all(split[2]):
        return None
    return split[0], split[1]


#: ``hook(olympuspr) -> (olympuspr, extra leading residuals)``, run before transposing: the
#: ref discharge (installed by olympus), which turns a linear program's tangent refs into
#: values so that only pure primitives are transposed.
discharge_hooks: list[Callable] = []


def backward_pass(olympuspr, residuals: Sequence, lin_avals, cts_out: Sequence,
                  initial_cts: Sequence = ()) -> list:
    """Transpose a linear olympuspr (invars: residuals + linear inputs).

    Returns one cotangent (possibly Zero) per linear input. `initial_cts` are values the
    first linear inputs' cotangents start from (each contribution is added to it where it
    is made, as a loop's cotangent accumulator is).
    """
    for hook in discharge_hooks:  # refs in the linear program become values first
        olympuspr, extra = hook(olympuspr)
        residuals = [*extra, *residuals]
    nres = len(residuals)
    env: dict[int, Any] = {}
    for v, r in zip(olympuspr.invars[:nres], residuals):
        env[id(v)] = r
    linear: set[int] = {id(v) for v in olympuspr.invars[nres:]}
    # A linear input is typed as its cotangent accumulates (`lin_avals`), as JAX types it:
    # e.g. a loop's carry by the cotangent it is given, weak or not.
    in_avals = {id(v): a for v, a in zip(olympuspr.invars[nres:], lin_avals)}
    eqns: list[Eqn] = []

    def forward(e):
        # A non-linear equation (on residuals only): evaluate it forward.
        vals = [olympuspr_utils._literal_value(v) if isinstance(v, Literal) else env[id(v)]
                for v in e.invars]
        out = bind(e.primitive, *vals, **e.params)
        for v, x in zip(e.outvars, out if e.primitive.multiple_results else [out]):
            env[id(v)] = x

    for e in olympuspr.eqns:
        lin_in = [isinstance(v, Var) and id(v) in linear for v in e.invars]
        if not any(lin_in):
            forward(e)
            continue
        split = _split_nonlinear(e, lin_in)
        if split is None:
            eqns.append(e)
            linear.update(id(v) for v in e.outvars)
            continue
        known, unknown = split
        for k in known:
            forward(k)
        for u in unknown:
            eqns.append(u)
            linear.update(id(v) for v in u.outvars)

    cts: dict[int, Any] = {id(v): c for v, c in zip(olympuspr.invars[nres:], initial_cts)}

    def add_ct(v, ct):
        if isinstance(ct, Zero) or ct is None:
            return
        prev = cts.get(id(v))
        cts[id(v)] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(olympuspr.outvars, cts_out):
        if isinstance(v, Var) and id(v) in linear:
            add_ct(v, ct)

    for e in reversed(eqns):
        if not any(id(v) in linear for v in e.outvars):
            continue
        ct_out = [cts.pop(id(v), None) for v in e.outvars]
        if all(c is None for c in ct_out):
            continue
        ct_out = [Zero(v.aval) if c is None else c for v, c in zip(e.outvars, ct_out)]
        invals = [
            olympuspr_utils._literal_value(v) if isinstance(v, Literal)
            else UndefinedPrimal(in_avals.get(id(v), v.aval)) if id(v) in linear
            else env[id(v)]
            for v in e.invars
        ]
        rule = transpose_rules.get(e.primitive)
        if rule is None:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for '{e.primitive.name}' "
                "not implemented"
            )
        ct_arg = ct_out if e.primitive.multiple_results else ct_out[0]
        si = e.source_info
        if si is not None and si.xla_metadata:
            # The cotangent equations carry the forward equation's XLA metadata (JAX
            # transposes under the equation's context).
            outer = source_override[0]
            source_override[0] = si
            try:
                cts_in = rule(ct_arg, *invals, **e.params)
            finally:
                source_override[0] = outer
        else:
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
    "LinearFunction", "Tracer", "Trace", "dce_deep", "dce_rules", "LinearizeTrace",
    "LinearizeTracer", "TangentTrace", "tangents_typed_as_primals",
]
