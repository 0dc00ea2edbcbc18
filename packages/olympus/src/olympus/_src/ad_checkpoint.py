"""Rematerialization policies and residual inspection (JAX's ``jax.ad_checkpoint`` and
``jax.checkpoint_policies``).

A policy is called on each equation of a checkpointed function's forward pass whose outputs
the backward pass needs, as ``policy(prim, *input_avals, **params)``, and answers whether
those outputs are saved as residuals (True / `Saveable`) or recomputed in the backward pass
(False / `Recompute`); `Offloadable` asks to keep them in another memory space.
`print_saved_residuals` lists what reverse mode of a function would save, and where each
residual comes from, in JAX's format.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any, NamedTuple

from olympus_ir import primitives as P
from olympus_ir.core import Literal
from olympus_ir.prims.custom_derivatives import name_p
from olympus_trace import tree_util
from olympus_trace.make_olympuspr import arg_names_of, make_olympuspr
from olympus_trace.staging import precise_source_info

from .api import vjp

__all__ = ["Recompute", "Saveable", "Offloadable", "checkpoint_policies",
           "print_saved_residuals", "saved_residuals"]


class RecomputeType:
    """The answer of a policy that wants a value recomputed in the backward pass."""

    def __repr__(self) -> str:
        return "Recompute"


class SaveableType:
    """The answer of a policy that wants a value saved as a residual."""

    def __repr__(self) -> str:
        return "Saveable"


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
    """The answer of a policy that wants a value saved in memory kind `dst` (moved from
    `src`, e.g. ``"device"`` to ``"pinned_host"``)."""

    src: str
    dst: str


def everything_saveable(*_, **__) -> bool:
    """Save every value the backward pass needs (as without checkpoint)."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Recompute every value the backward pass needs (checkpoint's default)."""
    return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Save the results of matrix products (``dot_general``, and convolutions unless
    `only_if_no_batch_dims`); with `only_if_no_batch_dims`, only products without batch
    dimensions."""

    only_if_no_batch_dims: bool

    def __call__(self, prim, *avals, **params) -> bool:
        if prim is P.dot_general_p:
            if not self.only_if_no_batch_dims:
                return True
            _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
            return not lhs_batch and not rhs_batch
        return not self.only_if_no_batch_dims and prim is P.conv_general_dilated_p


dots_saveable = checkpoint_dots = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


def _check_memory_kinds(offload_src: str, offload_dst: str) -> None:
    """ValueError unless the default device has both memory kinds (offloading needs a
    backend with host memory: the CPU backend has ``pinned_host``)."""
    import olympus_runtime as rt

    dev = rt.default_device()
    kinds = [m.kind for m in dev.addressable_memories()]
    for what, kind in (("offload_src", offload_src), ("offload_dst", offload_dst)):
        if kind not in kinds:
            raise ValueError(
                f"checkpoint policy: {what}={kind!r} is not a memory kind of {dev} (its "
                f"memories are {', '.join(map(repr, kinds))}); residuals can only be "
                "offloaded between memories the backend has.")


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Like `dots_with_no_batch_dims_saveable`, but the products are offloaded to memory
    kind `offload_dst` instead of being kept."""
    _check_memory_kinds(offload_src, offload_dst)

    def policy(prim, *_, **params):
        if prim is P.dot_general_p:
            _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
            if not lhs_batch and not rhs_batch:
                return Offloadable(offload_src, offload_dst)
        return Recompute

    return policy


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save the values named (by ``checkpoint_name``) with one of `saveable_names`."""

    saveable_names: frozenset

    def __call__(self, prim, *_, **params) -> bool:
        return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save every named value except those named with one of `names`."""

    names: frozenset

    def __call__(self, prim, *_, **params) -> bool:
        return prim is name_p and params["name"] not in self.names


def save_only_these_names(*names_which_can_be_saved) -> SaveOnlyTheseNames:
    """Save only named values, and only among the names given."""
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_any_names_but_these(*names_not_to_save) -> SaveAnyNamesButThese:
    """Save only named values, except the names given."""
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_anything_except_these_names(*names_not_to_save):
    """Save any value, named or not (as JAX 0.10.2, the names given are not consulted)."""
    return lambda *_, **__: True


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src,
                                      offload_dst):
    """Save the values named with `names_which_can_be_saved`, offload (to memory kind
    `offload_dst`) those named with `names_which_can_be_offloaded`, recompute the rest."""
    saved = set(names_which_can_be_saved)
    offloaded = set(names_which_can_be_offloaded)
    both = saved & offloaded
    if both:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded={offloaded} "
            f"and the intersection={both}")
    _check_memory_kinds(offload_src, offload_dst)

    def policy(prim, *_, **params):
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(offload_src, offload_dst)
        return Recompute

    return policy


def save_from_both_policies(policy_1, policy_2):
    """A value is saveable if either policy saves it (both must answer with a bool)."""

    def policy(prim, *args, **params):
        a = policy_1(prim, *args, **params)
        b = policy_2(prim, *args, **params)
        if not (isinstance(a, bool) and isinstance(b, bool)):
            raise ValueError(
                "The return value of the policies should be a boolean. Got: "
                f"{a} and {b}. Please write a custom policy function directly, rather than "
                "using this helper function.")
        return a or b

    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
)


# --- residuals ----------------------------------------------------------------------------------


def saved_residuals(f: Callable, *args, **kwargs) -> list[tuple[Any, str]]:
    """What reverse mode of ``f(*args, **kwargs)`` saves: one ``(aval, where it comes
    from)`` per residual (an argument, a constant, a literal, or an equation's output,
    named by ``checkpoint_name`` or not, with its source line)."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))

    def flat_vjp(*xs):
        a, k = tree_util.tree_unflatten(in_tree, list(xs))
        return vjp(lambda *a_: f(*a_, **k), *a)

    with precise_source_info():
        closed, shapes = make_olympuspr(flat_vjp, return_shape=True)(*leaves)
    j = closed.olympuspr
    n_res = tree_util.tree_structure(shapes[1]).num_leaves
    res = j.outvars[len(j.outvars) - n_res:]
    names = arg_names_of(f, args, kwargs)
    if len(names) != len(j.invars):
        names = ("",) * len(j.invars)
    res_ids = {id(v) for v in res if not isinstance(v, Literal)}
    out: list[tuple[Any, str]] = [(v.aval, "from a literal") for v in res
                                  if isinstance(v, Literal)]
    out += [(v.aval, "from a constant") for v in j.constvars if id(v) in res_ids]
    for i, (v, name) in enumerate(zip(j.invars, names)):
        if id(v) in res_ids:
            out.append((v.aval, f"from the argument {name}" if name
                        else f"from the argument at flattened index {i}"))
    for e in j.eqns:
        for v in e.outvars:
            if id(v) not in res_ids:
                continue
            src = _summary(e.source_info)
            if e.primitive is name_p:
                out.append((v.aval, f"named '{e.params['name']}' from {src}"))
            else:
                out.append((v.aval, f"output of {e.primitive.name} from {src}"))
    return out


def _summary(src) -> str:
    if src is None:  # staged by a transformation, not by user code (JAX prints nothing)
        return ""
    summary = getattr(src, "summary", None)
    if summary is not None:
        return summary()
    return f"{src.file}:{src.line} ({src.function})"


def print_saved_residuals(f: Callable, *args, **kwargs) -> None:
    """Print `saved_residuals`, one line per residual: its type, then where it comes from."""
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {src}")
