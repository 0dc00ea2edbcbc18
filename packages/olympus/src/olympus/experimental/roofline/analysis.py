"""Roofline analysis (JAX's ``jax.experimental.roofline``): what a function costs in flops,
HBM bytes, interconnect (ICI) bytes and latency, and peak live memory, read off its
olympuspr without compiling or running it.

The function is traced (inside `shard_map` when a mesh and specs are given, so the
per-device body is what is counted) and its olympuspr is walked once: each equation's
cost comes from the rule registered for its primitive (`register_roofline`; the rules
Olympus ships are in `compute_rules` and `collective_rules`), an equation that holds a
nested program (``olympuspr`` or ``call_olympuspr``: jit, scan, remat, shard_map, the
custom-derivative calls) is counted by walking that program once, and a primitive with no
rule is logged and counts nothing, as in JAX. Peak memory follows the bytes of the values
alive between equations."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import tree_util
from olympus.interpreters.partial_eval import dce_olympuspr
from olympus.sharding import NamedSharding
from olympus_ir import ClosedOlympuspr, Literal, Olympuspr, ShapedArray
from olympus_ir.dtypes import KeyDType
from olympus_ir.prims import collectives as C
from olympus_ir.prims.sharding import shard_map_p
from olympus_trace.tree_util import broadcast_prefix

__all__ = ["RooflineRuleContext", "RooflineShape", "RooflineResult", "roofline",
           "roofline_and_grad", "register_roofline", "register_standard_roofline",
           "roofline_rules"]

_log = logging.getLogger("olympus.experimental.roofline")


@dataclass(frozen=True, slots=True, kw_only=True)
class RooflineRuleContext:
    """What a rule knows about the equation it costs besides its operands' shapes.

    ``olympuspr_eqn_ctx`` is the equation's `SourceInfo` (Olympus equations carry their
    context, such as XLA metadata, there; JAX's field is ``jaxpr_eqn_ctx``)."""

    name_stack: str
    primitive: Any
    avals_in: Sequence[Any]
    avals_out: Sequence[Any]
    olympuspr_eqn_ctx: Any
    mesh: Any
    pin_lhs_in_vmem: bool
    pin_rhs_in_vmem: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class RooflineShape:
    """An array's shape and element type: all a cost rule needs of a value."""

    shape: tuple[int, ...]
    dtype: Any

    @classmethod
    def from_aval(cls, aval: Any) -> RooflineShape:
        if not isinstance(aval, ShapedArray):
            raise TypeError(f"Expected ShapedArray, got {type(aval)}.")
        if not isinstance(aval.dtype, (np.dtype, KeyDType)):
            raise TypeError(f"Expected numpy or prng.KeyTy dtype, got {type(aval.dtype)}.")
        return cls(shape=aval.shape, dtype=aval.dtype)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def bytes(self) -> int:
        return int(self.size * self.dtype.itemsize)

    @classmethod
    def total_bytes(cls, avals: Sequence[Any]) -> int:
        return sum(cls.from_aval(a).bytes for a in avals)


def _merge_axes(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}


@dataclass(frozen=True, slots=True, kw_only=True)
class RooflineResult:
    """Costs: ``flops``/``hbm_bytes`` count what stays after fusion (matmuls),
    ``unfused_*`` every operation on its own; ICI bytes and latency are per mesh axis;
    ``peak_hbm_bytes`` is the most memory alive at once. Results add (peaks take the max)
    and scale by a number."""

    flops: int = 0
    unfused_flops: int = 0
    ici_bytes: dict[str, int] = field(default_factory=dict)
    ici_latency: dict[str, int] = field(default_factory=dict)
    hbm_bytes: int = 0
    peak_hbm_bytes: int = 0
    unfused_hbm_bytes: int = 0

    @classmethod
    def zeros(cls) -> RooflineResult:
        return cls()

    def __add__(self, other: RooflineResult) -> RooflineResult:
        return RooflineResult(
            flops=self.flops + other.flops,
            unfused_flops=self.unfused_flops + other.unfused_flops,
            ici_bytes=_merge_axes(self.ici_bytes, other.ici_bytes),
            ici_latency=_merge_axes(self.ici_latency, other.ici_latency),
            hbm_bytes=self.hbm_bytes + other.hbm_bytes,
            peak_hbm_bytes=max(self.peak_hbm_bytes, other.peak_hbm_bytes),
            unfused_hbm_bytes=self.unfused_hbm_bytes + other.unfused_hbm_bytes,
        )

    def __mul__(self, constant: int | float) -> RooflineResult:
        def scale(v):
            return int(v * constant)

        return RooflineResult(
            flops=scale(self.flops),
            unfused_flops=scale(self.unfused_flops),
            ici_bytes={k: scale(v) for k, v in self.ici_bytes.items()},
            ici_latency={k: scale(v) for k, v in self.ici_latency.items()},
            hbm_bytes=scale(self.hbm_bytes),
            peak_hbm_bytes=scale(self.peak_hbm_bytes),
            unfused_hbm_bytes=scale(self.unfused_hbm_bytes),
        )

    def __rmul__(self, constant: int | float) -> RooflineResult:
        return self.__mul__(constant)


class _RooflineRule(Protocol):
    def __call__(self, ctx: RooflineRuleContext, *args: RooflineShape,
                 **params: Any) -> RooflineResult: ...


#: primitive -> rule(ctx, *operand RooflineShapes, **equation params) -> RooflineResult
roofline_rules: dict[Any, _RooflineRule] = {}


def register_roofline(prim: Any) -> Callable[[_RooflineRule], _RooflineRule]:
    """Decorator: `rule` costs the equations of `prim` (replacing any earlier rule)."""
    def register(rule: _RooflineRule) -> _RooflineRule:
        roofline_rules[prim] = rule
        return rule

    return register


def _zero_rule(ctx: RooflineRuleContext, *args: Any, **params: Any) -> RooflineResult:
    return RooflineResult.zeros()


def register_standard_roofline(prim: Any) -> None:
    """Give `prim` the rule that counts nothing (a known primitive that moves no data of
    note, as opposed to one without a rule, which is logged)."""
    roofline_rules[prim] = _zero_rule


# --- the interpreter --------------------------------------------------------------------------

_NESTED_PROGRAM_PARAMS = ("olympuspr", "call_olympuspr")


def _open(program: Any) -> Olympuspr:
    return program.olympuspr if isinstance(program, ClosedOlympuspr) else program


def _last_uses(program: Olympuspr, eqns: Sequence[Any]) -> dict[int, Any]:
    """id(var) -> the last of `eqns` reading it (None for the program's outputs, which
    stay alive to the end)."""
    last: dict[int, Any] = {id(v): None for v in program.outvars if not isinstance(v, Literal)}
    for eqn in reversed(eqns):
        for v in eqn.invars:
            if not isinstance(v, Literal) and id(v) not in last:
                last[id(v)] = eqn
    return last


def _nbytes(aval: Any) -> int:
    return RooflineShape.from_aval(aval).bytes


def _interpret(f_name: str, program: Any, mesh: Any, *, pin_lhs_in_vmem: bool,
               pin_rhs_in_vmem: bool) -> RooflineResult:
    program = _open(program)
    name_stack = f"roofline({f_name})"
    result = RooflineResult.zeros()
    live: dict[int, int] = {}  # id(var) -> bytes, for the values alive now
    for v in (*program.constvars, *program.invars):
        live[id(v)] = _nbytes(v.aval)
    eqns = _fold_multi_axis_reductions(program.eqns)
    last = _last_uses(program, eqns)
    current = sum(live.values())
    peak = current
    for eqn in eqns:
        stack = "/".join(s for s in (name_stack, _eqn_name_stack(eqn)) if s)
        nested = next((eqn.params[k] for k in _NESTED_PROGRAM_PARAMS if k in eqn.params),
                      None)
        if nested is not None:
            result += _interpret(f"{eqn.primitive.name}({f_name})", nested, mesh,
                                 pin_lhs_in_vmem=pin_lhs_in_vmem,
                                 pin_rhs_in_vmem=pin_rhs_in_vmem)
        elif eqn.primitive not in roofline_rules:
            _log.warning("No roofline rule for %s, skipping...\n%r", eqn.primitive, eqn)
        else:
            ctx = RooflineRuleContext(
                name_stack=stack, primitive=eqn.primitive,
                avals_in=[v.aval for v in eqn.invars],
                avals_out=[v.aval for v in eqn.outvars],
                olympuspr_eqn_ctx=eqn.source_info, mesh=mesh,
                pin_lhs_in_vmem=pin_lhs_in_vmem, pin_rhs_in_vmem=pin_rhs_in_vmem)
            operands = [RooflineShape.from_aval(v.aval) for v in eqn.invars]
            result += roofline_rules[eqn.primitive](ctx, *operands, **eqn.params)
        for v in eqn.outvars:
            b = _nbytes(v.aval)
            current += b
            live[id(v)] = b
        # An operand read twice by its last reader is released twice, as JAX counts it.
        dead = [v for v in eqn.invars if not isinstance(v, Literal) and last[id(v)] is eqn]
        current -= sum(live[id(v)] for v in dead)
        for v in dead:
            live.pop(id(v), None)
        peak = max(peak, current)
    return result + RooflineResult(peak_hbm_bytes=peak)


def _eqn_name_stack(eqn: Any) -> str:
    info = eqn.source_info
    return getattr(info, "name_stack", "") if info is not None else ""


def _fold_multi_axis_reductions(eqns: Sequence[Any]) -> list[Any]:
    """Olympus binds a reduction over several mesh axes (``psum(x, ('x', 'y'))``) as one
    equation per axis, where JAX has one equation over all of them; the ring model costs
    a collective over several axes differently from a chain of single-axis ones, so such a
    chain (same primitive and source line, each result read only by the next) is counted
    as the one equation JAX has."""
    uses: dict[int, int] = {}
    for eqn in eqns:
        for v in eqn.invars:
            if not isinstance(v, Literal):
                uses[id(v)] = uses.get(id(v), 0) + 1
    out: list[Any] = []
    for eqn in eqns:
        prev = out[-1] if out else None
        if (prev is not None and eqn.primitive is prev.primitive
                and eqn.primitive in (C.psum_invariant_p, C.pmin_p, C.pmax_p)
                and eqn.source_info is not None and eqn.source_info == prev.source_info
                and len(eqn.invars) == 1 and eqn.invars[0] is prev.outvars[0]
                and uses.get(id(prev.outvars[0])) == 1):
            key = "axes" if eqn.primitive is C.psum_invariant_p else "axis_name"
            axes = (*_axis_tuple(prev.params[key]), *_axis_tuple(eqn.params[key]))
            out[-1] = prev.replace(outvars=eqn.outvars, params={**prev.params, key: axes})
            continue
        out.append(eqn)
    return out


def _axis_tuple(name: Any) -> tuple:
    return tuple(name) if isinstance(name, (tuple, list)) else (name,)


# --- the public entry points ------------------------------------------------------------------


def _with_vjp(f: Callable) -> Callable:
    """`f`'s backward pass: its VJP applied to bfloat16 cotangents of its outputs."""
    @functools.wraps(f)
    def wrapped(*args):
        primals, f_vjp = olympus.vjp(f, *args)
        return f_vjp(tree_util.tree_map(jnp.bfloat16, primals))

    return wrapped


def _qual_name(f: Any) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or str(f)


def roofline(f: Callable, mesh: Any = None, in_specs: Any = None, out_specs: Any = None, *,
             pin_lhs_in_vmem: bool = False, pin_rhs_in_vmem: bool = False,
             vjp: bool = False, print_olympuspr: bool = False,
             ) -> Callable[..., tuple[Any, RooflineResult]]:
    """`f` transformed to return ``(output shapes, RooflineResult)`` for its arguments
    (arrays or `ShapeDtypeStruct`s). With `mesh`, `in_specs` and `out_specs`, `f` is the
    per-device body of a `shard_map` and the output shapes carry their `NamedSharding`;
    `vjp` costs `f`'s backward pass instead; `pin_lhs_in_vmem`/`pin_rhs_in_vmem` leave a
    matmul's operand (and, for lhs, its result) out of its HBM bytes."""
    @functools.wraps(f)
    def wrapped(*args):
        fn = f
        if in_specs is not None and out_specs is not None and mesh is not None:
            fn = olympus.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
        if vjp:
            fn = _with_vjp(fn)
        closed, out_shapes = olympus.make_olympuspr(fn, return_shape=True)(*args)
        if out_specs is not None and mesh is not None:
            specs = broadcast_prefix(out_specs, out_shapes)
            leaves, treedef = tree_util.tree_flatten(out_shapes)
            leaves = [olympus.ShapeDtypeStruct(s.shape, s.dtype,
                                               sharding=NamedSharding(mesh, spec))
                      for s, spec in zip(leaves, specs, strict=True)]
            out_shapes = tree_util.tree_unflatten(treedef, leaves)
        program, _ = dce_olympuspr(closed.olympuspr, (True,) * len(closed.olympuspr.outvars))
        bodies = [e for e in program.eqns if e.primitive is shard_map_p]
        if bodies:
            program = _open(bodies[-1].params["olympuspr"])
        if print_olympuspr:
            print(program)
        return out_shapes, _interpret(_qual_name(f), program, mesh,
                                      pin_lhs_in_vmem=pin_lhs_in_vmem,
                                      pin_rhs_in_vmem=pin_rhs_in_vmem)

    return wrapped


def roofline_and_grad(f: Callable, mesh: Any, in_specs: Any, out_specs: Any, *,
                      pin_lhs_in_vmem: bool = False, pin_rhs_in_vmem: bool = False,
                      print_olympuspr: bool = False,
                      ) -> Callable[..., tuple[Any, RooflineResult, RooflineResult]]:
    """`f` transformed to return ``(output shapes, forward cost, backward cost)``; the
    backward pass is costed with every non-int32 argument (and cotangent) in bfloat16."""
    kw = dict(pin_lhs_in_vmem=pin_lhs_in_vmem, pin_rhs_in_vmem=pin_rhs_in_vmem,
              print_olympuspr=print_olympuspr)

    @functools.wraps(f)
    def wrapped(*args):
        shapes, fwd = roofline(f, mesh, in_specs, out_specs, **kw)(*args)
        bwd_args = tree_util.tree_map(
            lambda x: olympus.ShapeDtypeStruct(
                x.shape, jnp.int32 if x.dtype == jnp.int32 else jnp.bfloat16,
                sharding=x.sharding),
            args)
        _, bwd = roofline(f, mesh, in_specs, out_specs, vjp=True, **kw)(*bwd_args)
        return shapes, fwd, bwd

    return wrapped
