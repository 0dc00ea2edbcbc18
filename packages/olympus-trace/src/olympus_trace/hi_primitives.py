"""High-level ("hijax") primitives: operations a user defines on high-level values.

Two styles, as in JAX. A `HiPrimitive` subclass gives `abstract_eval` (types in, type
out), `to_lojax` (the operation on values, in terms of ordinary operations) and the
autodiff rules `jvp` and `transpose`; ``p.bind(*args, **params)`` applies it. A
`VJPHiPrimitive` instance is one application's signature (`in_avals`, `out_aval`,
`params`) and gives `expand`, and for reverse mode `vjp_fwd`/`vjp_bwd` (or
`vjp_bwd_retval`), for forward mode `jvp`, optionally `transpose` and `batch`; calling the
instance applies it.

Either way the application is one equation whose operands and results are the low-level
arrays the high-level values lower to (`hitypes`); its type rule comes from the signature,
its JVP, transpose and batching rules call the user's methods on the values raised back
to high level, and it is evaluated and lowered as its expansion (the user's `to_lojax`
or `expand` traced on the low-level types). A batch with no user rule batches the
expansion.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from olympus_ir.core import ClosedOlympuspr, Literal, Olympuspr, Primitive, shape_rules
from olympus_ir.pretty import def_pp_params
from olympus_ir.prims.callbacks import effect_rules
from olympus_ir.prims.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from olympus_ir.prims.refs import AbstractRef, ref_effect

from . import tree_util
from .ad import (
    TangentTrace,
    UndefinedPrimal,
    Zero,
    add_tangents,
    is_undefined_primal,
    jvp_rules,
    tangent_aval,
    transpose_rules,
    zeros_like_aval,
)
from .batching import BatchTrace, BatchTracer, batching_rules
from .core import EvalTrace, bind, current_trace, set_current_trace
from .hitypes import HiType, hi_typeof, is_hi, lo_types, lower_value, raise_value
from .staging import trace_to_olympuspr
from .vma_types import olympuspr_out_vma

__all__ = ["HiPrimitive", "VJPHiPrimitive", "GradAccum", "NullAccum", "instantiate_zeros",
           "call_hi_primitive_p", "call_hi_primitive_linearized_p", "lower_high_level"]


# --- values between the two levels ------------------------------------------------------------


def _tangent_type(ty):
    return ty.to_tangent_aval() if is_hi(ty) else tangent_aval(ty)


def _ct_type(ty):
    return ty.to_ct_aval() if is_hi(ty) else tangent_aval(ty)


def instantiate_zeros(t):
    """`t`, or the zero value of its type if it is a symbolic `Zero` (a high-level type's
    zero is its `vspace_zero()`)."""
    if isinstance(t, Zero):
        return t.aval.vspace_zero() if isinstance(t.aval, HiType) else zeros_like_aval(t.aval)
    return t


def _chunks(tys, lo):
    it = iter(lo)
    out = []
    for ty in tys:
        n = len(lo_types(ty))
        out.append([next(it) for _ in range(n)])
    return out


def _raise_all(tys, lo) -> list:
    return [raise_value(ty, c) for ty, c in zip(tys, _chunks(tys, lo))]


def _lower_all(tys, his) -> list:
    out: list = []
    for ty, h in zip(tys, his):
        out.extend(lower_value(ty, h))
    return out


def _raise_linear(tys, lo, type_of) -> list:
    """Tangents or cotangents raised to high level: a `Zero` of the (co)tangent type when
    all its low-level parts are symbolic zeros."""
    out = []
    for ty, c in zip(tys, _chunks(tys, lo)):
        lty = type_of(ty)
        if all(isinstance(x, Zero) for x in c):
            out.append(Zero(lty))
        else:
            out.append(raise_value(lty, [instantiate_zeros(x) for x in c]))
    return out


def _lower_linear(tys, his, type_of) -> list:
    out: list = []
    for ty, h in zip(tys, his):
        lty = type_of(ty)
        if h is None or isinstance(h, Zero):
            out.extend(Zero(a) for a in lo_types(lty))
        else:
            out.extend(lower_value(lty, h))
    return out


class GradAccum:
    """Where a transpose rule puts the cotangent of a linear input: ``accum(ct)`` adds."""

    __slots__ = ("aval", "val")

    def __init__(self, aval):
        self.aval = aval
        self.val = None

    def accum(self, x) -> None:
        if x is None or isinstance(x, Zero):
            return
        if self.val is None:
            self.val = x
        elif is_hi(self.aval):
            self.val = self.aval.vspace_add(self.val, x)
        else:
            self.val = add_tangents(self.val, x)


class NullAccum:
    """The accumulator of an input that gets no cotangent (it is not differentiated)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def accum(self, x) -> None:
        return None


# --- the equation-level primitive ---------------------------------------------------------------


class HiLoPrimitive(Primitive):
    """The primitive of equations applying a high-level operation: its operands and results
    are low-level arrays. `hi` is the user's `HiPrimitive` (None for
    ``call_hi_primitive``, whose params name the `VJPHiPrimitive`)."""

    __slots__ = ("hi", "__dict__")
    high_level = True  # `Olympuspr.is_high`

    def __init__(self, name: str, hi):
        super().__init__(name, multiple_results=True)
        self._builtin = True  # evaluated (and lowered) as its expansion
        self.hi = hi

    def expansion(self, in_avals, params):
        """The operation on arrays of types `in_avals`, as a closed olympuspr."""
        closed, _ = trace_to_olympuspr(lambda *xs: _expand_lo(self, params, xs),
                                       list(in_avals))
        return closed

    def out_vmas(self, params, vmas, manual) -> list:
        """The manual mesh axes each result varies over inside a shard_map body: as its
        expansion computes them from the operands'."""
        in_tys, _ = _sig(self, params)
        closed = self.expansion([a for ty in in_tys for a in lo_types(ty)], params)
        return olympuspr_out_vma(closed, vmas, manual)

    def expansion_lowering(self, ctx, *args, **params):
        """The lowering rule: the expansion, inlined."""
        return ctx.lower_sub(self.expansion(ctx.avals_in, params), args)


def _sig(prim, params):
    if prim.hi is None:
        p = params["_prim"]
        return p.in_avals_flat, p.out_avals_flat
    return params["_in_tys"], params["_out_tys"]


def _user_params(params) -> dict:
    return {k: v for k, v in params.items() if k not in ("_in_tys", "_out_tys")}


def _expand_lo(prim, params, lo):
    in_tys, out_tys = _sig(prim, params)
    his = _raise_all(in_tys, lo)
    if prim.hi is None:
        p = params["_prim"]
        ans = p.expand(*tree_util.tree_unflatten(p.in_tree, his))
        outs = p.out_tree.flatten_up_to(ans)
    else:
        hp = prim.hi
        out = hp._expand(*his, **_user_params(params))
        outs = list(out) if hp.multiple_results else [out]
    return _lower_all(out_tys, outs)


def _shape_rule(prim, *avals, **params):
    _, out_tys = _sig(prim, params)
    return [a for ty in out_tys for a in lo_types(ty)]


def _overrides(obj, name: str) -> bool:
    return getattr(type(obj), name) is not getattr(VJPHiPrimitive, name)


def _jvp_rule(prim, primals, tangents, **params):
    in_tys, out_tys = _sig(prim, params)
    p_hi = _raise_all(in_tys, primals)
    t_hi = _raise_linear(in_tys, tangents, _tangent_type)
    if prim.hi is None:
        p = params["_prim"]
        # Linearizing (grad, vjp, linearize) uses `lin` when given, else `vjp_fwd` (as JAX's
        # reverse mode does); forward mode (jvp, and the JVP of a jitted body that reverse
        # mode differentiates) uses `jvp`, else `lin`, else `vjp_fwd`, whose tangent can
        # only be transposed.
        linearizing = isinstance(current_trace(), TangentTrace)
        if linearizing and not _overrides(p, "lin"):
            return _linearize(p, p_hi, t_hi)  # JAX's error if there is no `vjp_fwd`
        if _overrides(p, "lin") and (linearizing or not _overrides(p, "jvp")):
            ans, res = p.lin(tree_util.tree_unflatten(p.in_tree, _nzs(t_hi)),
                             *tree_util.tree_unflatten(p.in_tree, p_hi))[:2]
            out_dot = p.linearized(res, *tree_util.tree_unflatten(
                p.in_tree, [instantiate_zeros(t) for t in t_hi]))
            out_hi = p.out_tree.flatten_up_to(ans)
            dot_hi = p.out_tree.flatten_up_to(out_dot)
            return (_lower_all(out_tys, out_hi),
                    _lower_linear(out_tys, dot_hi, _tangent_type))
        if _overrides(p, "vjp_fwd") and (linearizing or not _overrides(p, "jvp")):
            return _linearize(p, p_hi, t_hi)
        out, out_dot = p.jvp(tree_util.tree_unflatten(p.in_tree, p_hi),
                             tree_util.tree_unflatten(p.in_tree, t_hi))
        out_hi = p.out_tree.flatten_up_to(out)
        dot_hi = p.out_tree.flatten_up_to(out_dot)
    else:
        hp = prim.hi
        out, out_dot = hp.jvp(p_hi, t_hi, **_user_params(params))
        out_hi = list(out) if hp.multiple_results else [out]
        dot_hi = list(out_dot) if hp.multiple_results else [out_dot]
    return _lower_all(out_tys, out_hi), _lower_linear(out_tys, dot_hi, _tangent_type)


def _transpose_rule(prim, cts, *args, **params):
    in_tys, out_tys = _sig(prim, params)
    chunks = _chunks(in_tys, args)
    linear = [any(is_undefined_primal(x) for x in c) for c in chunks]
    cts_hi = _raise_linear(out_tys, cts, _ct_type)
    if prim.hi is None:
        p = params["_prim"]
        accums = [GradAccum(_ct_type(ty)) if lin else raise_value(ty, c)
                  for ty, c, lin in zip(in_tys, chunks, linear)]
        p.transpose(tree_util.tree_unflatten(p.out_tree, cts_hi),
                    *tree_util.tree_unflatten(p.in_tree, accums))
        in_cts = [a.val if lin else None for a, lin in zip(accums, linear)]
    else:
        hp = prim.hi
        args_hi = [UndefinedPrimal(ty) if lin else raise_value(ty, c)
                   for ty, c, lin in zip(in_tys, chunks, linear)]
        ct = cts_hi if hp.multiple_results else cts_hi[0]
        in_cts = list(hp.transpose(ct, *args_hi, **_user_params(params)))
        if len(in_cts) != len(in_tys):
            raise ValueError(f"transpose rule of {hp.name} returned {len(in_cts)} "
                             f"cotangents for {len(in_tys)} inputs")
    out: list = []
    for ty, c, lin in zip(in_tys, in_cts, linear):
        if not lin:
            out.extend([None] * len(lo_types(ty)))
        else:
            out.extend(_lower_linear([ty], [c], _ct_type))
    return out


def _batch_rule(prim, axis_data, vals, dims, **params):
    in_tys, out_tys = _sig(prim, params)
    p = params.get("_prim")
    if p is not None and _overrides(p, "batch") and not any(map(is_hi, in_tys)) \
            and not any(map(is_hi, out_tys)):
        args = tree_util.tree_unflatten(p.in_tree, list(vals))
        in_dims = tree_util.tree_unflatten(p.in_tree, list(dims))
        ans, out_dims = p.batch(axis_data, args, in_dims)
        return p.out_tree.flatten_up_to(ans), p.out_tree.flatten_up_to(out_dims)
    # No rule: batch the expansion, each result keeping the batch axis it gets.
    trace = BatchTrace(current_trace(), axis_data)
    tracers = [BatchTracer(trace, v, d) if d is not None else v for v, d in zip(vals, dims)]
    try:
        with set_current_trace(trace):
            outs = _expand_lo(prim, params, tracers)
        vals_dims = [trace.to_batch_info(o) for o in outs]
    finally:
        trace.invalidate()
    return [v for v, _ in vals_dims], [d for _, d in vals_dims]


def _printed_params(eqn) -> dict:
    """A high-level primitive's equation prints the user's params (the signature is in
    the operand and result types)."""
    return _user_params(eqn.params)


def _ref_effect(eqn):
    """A high-level primitive given refs reads or writes them (JAX asks the user to declare
    the effect; Olympus's ref effect is one, `Ref`)."""
    if any(isinstance(getattr(v, "aval", None), AbstractRef) for v in eqn.invars):
        return ref_effect
    return None


def _install_rules(lo: HiLoPrimitive) -> None:
    def_pp_params(lo)(_printed_params)
    effect_rules[lo] = _ref_effect
    shape_rules[lo] = partial(_shape_rule, lo)
    jvp_rules[lo] = partial(_jvp_rule, lo)
    transpose_rules[lo] = partial(_transpose_rule, lo)
    batching_rules[lo] = partial(_batch_rule, lo)


# --- old style: HiPrimitive --------------------------------------------------------------------


class HiPrimitive(Primitive):
    """The base of a high-level primitive: override `abstract_eval` (returning the result
    type and a set of effects), `to_lojax`, and for autodiff `jvp` and `transpose`."""

    multiple_results = False

    def __init__(self, name: str):
        self.name = name
        self._impl = None
        self._builtin = True
        self._lo = HiLoPrimitive(name, self)
        _install_rules(self._lo)

    def is_high(self, *avals, **params) -> bool:
        return True

    def is_effectful(self, params) -> bool:
        return False

    # JAX's base methods assert (an AssertionError saying "must override").
    def abstract_eval(self, *arg_avals, **params):
        raise AssertionError(f"must override: {type(self).__name__}.abstract_eval")

    def to_lojax(self, *args, **params):
        raise AssertionError(f"must override for {self}")

    # The same method under Olympus's name for it (code written for JAX and renamed
    # jax -> olympus defines `to_loolympus`): whichever the subclass overrides is used.
    def to_loolympus(self, *args, **params):
        return self.to_lojax(*args, **params)

    def _expand(self, *args, **params):
        if type(self).to_loolympus is not HiPrimitive.to_loolympus:
            return self.to_loolympus(*args, **params)
        return self.to_lojax(*args, **params)

    def jvp(self, primals, tangents, **params):
        raise AssertionError(f"must override: {type(self).__name__}.jvp")

    def transpose(self, *args, **params):
        raise AssertionError(f"must override: {type(self).__name__}.transpose")

    def bind(self, *args, **params):
        in_tys = tuple(_type_of(a) for a in args)
        out = self.abstract_eval(*in_tys, **params)
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], (set, frozenset)):
            out = out[0]
        out_tys = tuple(out) if self.multiple_results else (out,)
        if type(current_trace()) is EvalTrace:  # outside any transformation: run it
            return self._expand(*args, **params)
        leaves = _lower_all(in_tys, [instantiate_zeros(a) for a in args])
        outs = bind(self._lo, *leaves, _in_tys=in_tys, _out_tys=out_tys, **params)
        his = _raise_all(out_tys, outs)
        return his if self.multiple_results else his[0]

    def __repr__(self) -> str:
        return self.name


def _type_of(x):
    return x.aval if isinstance(x, Zero) else hi_typeof(x)


# --- new style: VJPHiPrimitive -----------------------------------------------------------------


call_hi_primitive_p = HiLoPrimitive("call_hi_primitive", None)
_install_rules(call_hi_primitive_p)


class VJPHiPrimitive:
    """The base of a new-style high-level primitive: an instance is one signature; its
    ``__init__`` sets `in_avals` (a tuple of types), `out_aval` (a pytree of types) and
    `params` (a dict of hashable values, also set as attributes), then calls
    ``super().__init__()``."""

    effects: frozenset = frozenset()

    def __init__(self):
        for attr in ("in_avals", "out_aval", "params"):
            if not hasattr(self, attr):
                raise AttributeError(f"subclass __init__ should set `self.{attr}`")
        if _overrides(self, "vjp_bwd") and _overrides(self, "vjp_bwd_retval"):
            raise AttributeError(f"subclass {type(self)} should not override both "
                                 "`vjp_bwd` and `vjp_bwd_retval`")
        self.in_avals_flat, self.in_tree = tree_util.tree_flatten(self.in_avals)
        self.out_avals_flat, self.out_tree = tree_util.tree_flatten(self.out_aval)
        self.__dict__.update(self.params)
        self.check(*self.in_avals)

    def expand(self, *args):
        raise NotImplementedError(f"subclass {type(self)} must implement `expand`")

    def vjp_fwd(self, nzs_in, /, *args):
        raise NotImplementedError(f"for grad support, subclass {type(self)} must "
                                  "implement `vjp_fwd`")

    def vjp_bwd(self, res, outgrad, /, *arg_accums):
        args_grad = self.vjp_bwd_retval(res, outgrad)
        flat_accums = self.in_tree.flatten_up_to(arg_accums)
        flat_grads = self.in_tree.flatten_up_to(tuple(args_grad))
        for acc, g in zip(flat_accums, flat_grads):
            if isinstance(acc, GradAccum):
                acc.accum(g)

    def vjp_bwd_retval(self, res, outgrad, /):
        raise NotImplementedError(f"for grad support, subclass {type(self)} must "
                                  "implement `vjp_bwd` or `vjp_bwd_retval`")

    def jvp(self, primals, tangents):
        raise NotImplementedError(f"for jvp support, subclass {type(self)} must "
                                  "implement `jvp`")

    def lin(self, nzs_in, *primals):
        raise NotImplementedError(f"for linearize support, subclass {type(self)} "
                                  "must implement `lin` and `linearized`")

    def linearized(self, residuals, *tangents):
        raise NotImplementedError(f"for linearize support, subclass {type(self)} "
                                  "must implement `lin` and `linearized`")

    def transpose(self, out_ct, *maybe_accums):
        raise NotImplementedError(f"for transpose support, subclass {type(self)} "
                                  "must implement `transpose`")

    def batch(self, axis_data, args, dims):
        raise NotImplementedError(f"for vmap support, subclass {type(self)} must "
                                  "implement `batch`")

    def check(self, *arg_tys):
        return None

    def __call__(self, *args):
        if type(current_trace()) is EvalTrace:  # outside any transformation: run it
            return self.expand(*args)
        args_flat = self.in_tree.flatten_up_to(args)
        lo = _lower_all(self.in_avals_flat, [instantiate_zeros(a) for a in args_flat])
        outs = bind(call_hi_primitive_p, *lo, _prim=self)
        return tree_util.tree_unflatten(self.out_tree, _raise_all(self.out_avals_flat, outs))

    def __repr__(self) -> str:
        return f"{type(self).__name__}[{self.params}]"

    # Equal applications share compiled code, so the signature's types take part too (an
    # application to f32[3] is not one to f32[]).
    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.params.items()), self.effects,
                     tuple(self.in_avals_flat), tuple(self.out_avals_flat)))

    def __eq__(self, other) -> bool:
        return (type(self) is type(other) and self.params == other.params
                and self.effects == other.effects
                and tuple(self.in_avals_flat) == tuple(other.in_avals_flat)
                and tuple(self.out_avals_flat) == tuple(other.out_avals_flat))


# --- reverse mode of a VJPHiPrimitive: vjp_fwd now, vjp_bwd when transposed -----------------

class _LinearizedPrimitive(Primitive):
    """The tangent of a `VJPHiPrimitive` known only by `vjp_fwd`/`vjp_bwd`: it can be
    transposed, never evaluated (forward mode needs the primitive's `jvp`)."""

    __slots__ = ()

    @staticmethod
    def _no_forward(*args, _prim, **params):
        raise NotImplementedError(f"for jvp support, subclass {type(_prim)} must "
                                  "implement `jvp`")

    def expansion_lowering(self, ctx, *args, _prim, **params):
        self._no_forward(_prim=_prim)


call_hi_primitive_linearized_p = _LinearizedPrimitive("call_hi_primitive_linearized",
                                                      multiple_results=True)
call_hi_primitive_linearized_p.def_impl(_LinearizedPrimitive._no_forward)


def _nzs(tangents) -> list[bool]:
    return [not isinstance(t, Zero) for t in tangents]


def _linearize(p: VJPHiPrimitive, p_hi, t_hi):
    nzs = _nzs(t_hi)
    res_out = p.vjp_fwd(tree_util.tree_unflatten(p.in_tree, nzs),
                        *tree_util.tree_unflatten(p.in_tree, p_hi))
    ans, res = res_out[0], res_out[1]
    out_hi = p.out_tree.flatten_up_to(ans)
    res_leaves, res_tree = tree_util.tree_flatten(res)
    lin = _lower_all([_tangent_type(ty) for ty, nz in zip(p.in_avals_flat, nzs) if nz],
                     [t for t, nz in zip(t_hi, nzs) if nz])
    outs_dot = bind(call_hi_primitive_linearized_p, *res_leaves, *lin, _prim=p,
                    res_tree=res_tree, nz_in=tuple(nzs))
    return _lower_all(p.out_avals_flat, out_hi), outs_dot


@partial(shape_rules.__setitem__, call_hi_primitive_linearized_p)
def _linearized_shape_rule(*avals, _prim, res_tree, nz_in):
    return [a for ty in _prim.out_avals_flat for a in lo_types(_tangent_type(ty))]


def _linearized_transpose(cts, *args, _prim, res_tree, nz_in):
    p = _prim
    n = res_tree.num_leaves
    res = tree_util.tree_unflatten(res_tree, list(args[:n]))
    accums = [GradAccum(_ct_type(ty)) if nz else NullAccum(_ct_type(ty))
              for ty, nz in zip(p.in_avals_flat, nz_in)]
    cts_hi = _raise_linear(p.out_avals_flat, cts, _ct_type)
    p.vjp_bwd(res, tree_util.tree_unflatten(p.out_tree, cts_hi),
              *tree_util.tree_unflatten(p.in_tree, accums))
    out: list = [None] * n
    for ty, a, nz in zip(p.in_avals_flat, accums, nz_in):
        if nz:
            out.extend(_lower_linear([ty], [a.val], _ct_type))
    return out


def _linearized_jvp(primals, tangents, *, _prim, **params):
    _LinearizedPrimitive._no_forward(_prim=_prim)


transpose_rules[call_hi_primitive_linearized_p] = _linearized_transpose
jvp_rules[call_hi_primitive_linearized_p] = _linearized_jvp


# --- the low-level form of a program (JAX's lojax) -------------------------------------------


def lower_high_level(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """`closed` with every high-level primitive application replaced by its expansion, and
    every custom_jvp/custom_vjp call of a high-level function inlined (JAX's ``lojax``); a
    program with none is returned as it is."""
    for _ in range(_MAX_LOWERING_ROUNDS):  # an expansion may apply other primitives
        j = closed.olympuspr
        if not j.is_high:
            return closed
        closed, _ = trace_to_olympuspr(
            lambda *xs, j=j, consts=closed.consts: _eval_lowering(j, consts, xs),
            [v.aval for v in j.invars], j.debug_info)
    raise RecursionError("high-level primitives kept expanding to high-level primitives "
                         f"after {_MAX_LOWERING_ROUNDS} rounds")


_MAX_LOWERING_ROUNDS = 100


def _lower_param(v):
    if isinstance(v, ClosedOlympuspr) and v.olympuspr.is_high:
        return lower_high_level(v)
    if isinstance(v, (tuple, list)) and any(isinstance(x, ClosedOlympuspr) for x in v):
        return type(v)(_lower_param(x) for x in v)
    return v


def _eval_lowering(j: Olympuspr, consts, args) -> list:
    env: dict[int, Any] = {}

    def read(a):
        return a.val if isinstance(a, Literal) else env[id(a)]

    for v, x in zip(j.constvars, consts):
        env[id(v)] = x
    for v, x in zip(j.invars, args):
        env[id(v)] = x
    for e in j.eqns:
        ins = [read(a) for a in e.invars]
        call = e.params.get("call_olympuspr")
        if getattr(e.primitive, "high_level", False):
            outs = _expand_lo(e.primitive, e.params, ins)
        elif e.primitive in (custom_jvp_call_p, custom_vjp_call_p) and call.olympuspr.is_high:
            outs = _eval_lowering(call.olympuspr, call.consts, ins)
        else:
            params = {k: _lower_param(v) for k, v in e.params.items()}
            outs = bind(e.primitive, *ins, **params)
            if not e.primitive.multiple_results:
                outs = [outs]
        for v, x in zip(e.outvars, outs):
            env[id(v)] = x
    return [read(a) for a in j.outvars]
