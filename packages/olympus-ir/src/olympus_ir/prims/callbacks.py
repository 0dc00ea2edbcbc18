"""Host callbacks: ``debug_callback``, ``pure_callback``, ``io_callback``, and the effects
that keep them alive and in order.

``debug_callback(*args; callback, effect)`` calls the Python function `callback` with the
values of `args` (as numpy arrays) when the program runs, and has no results. Its
`effect` marks it as side-effecting: olympusprs that contain one (at any depth) record
the effect in `Olympuspr.effects`, dead-code elimination keeps it, and the lowering
orders all such calls of one program in program order.

``pure_callback(*args; callback, result_avals, vmap_method, sharding)`` calls `callback`
(flat numpy arrays in, a flat sequence of arrays out) and returns values of
`result_avals`; it has no effect (unused, it is removed; JAX's contract is that the
function is pure). ``io_callback(*args; callback, result_avals, ordered, sharding)`` is
the same with an effect (`io_effect`, or `ordered_io_effect` when `ordered`): it is never
removed and runs in program order. `own_effect` gives the effect an equation has by
itself (from its `effect` param, or from io_callback's `ordered`).

`eqn_effects` / `olympuspr_effects` find the effects of an equation or an olympuspr by
walking sub-olympusprs too, so an olympuspr built by hand (without `effects` filled in)
still reports the effects of the callbacks it holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..avals import ShapedArray
from ..core import ClosedOlympuspr, Olympuspr, def_shape_rule, new_primitive
from ..pretty import def_pp_params

__all__ = [
    "debug_callback_p", "pure_callback_p", "io_callback_p", "Effect", "DebugEffect",
    "IOEffect", "debug_effect", "ordered_debug_effect", "io_effect", "ordered_io_effect",
    "VMAP_METHODS", "own_effect", "eqn_effects", "olympuspr_effects", "effect_rules",
    "EffectTypeSet", "control_flow_allowed_effects",
]

#: ``pure_callback``'s ways of running under vmap (None: vmap is an error).
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


class Effect:
    """A side effect of an equation: a named singleton, `ordered` or not."""

    __slots__ = ("name", "ordered")

    def __init__(self, name: str, ordered: bool):
        self.name = name
        self.ordered = ordered

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_effect_by_name, (self.name,))


class DebugEffect(Effect):
    """The effect of a debug callback: `debug_effect` (printed ``Debug``) or
    `ordered_debug_effect` (``OrderedDebug``)."""

    __slots__ = ()


class IOEffect(Effect):
    """The effect of an io_callback: `io_effect` (``IO``) or `ordered_io_effect`
    (``OrderedIO``)."""

    __slots__ = ()


class EffectTypeSet:
    """A set of effect types (JAX's ``effects.EffectTypeSet``): registries such as
    `control_flow_allowed_effects` say which kinds of effect a construct admits."""

    def __init__(self):
        self._types: set[type] = set()

    def add_type(self, effect_type: type) -> None:
        self._types.add(effect_type)

    def contains(self, eff) -> bool:
        return any(isinstance(eff, t) for t in self._types)

    def filter_in(self, effects) -> list:
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects) -> list:
        return [e for e in effects if not self.contains(e)]


#: The effect types a user may add for `cond`, `while_loop` and `scan` bodies to allow
#: (JAX's ``control_flow_allowed_effects``; a high-level type's effects go here).
control_flow_allowed_effects = EffectTypeSet()


debug_effect = DebugEffect("Debug", ordered=False)
ordered_debug_effect = DebugEffect("OrderedDebug", ordered=True)
io_effect = IOEffect("IO", ordered=False)
ordered_io_effect = IOEffect("OrderedIO", ordered=True)
_EFFECTS = {e.name: e for e in (debug_effect, ordered_debug_effect, io_effect,
                                ordered_io_effect)}


def _effect_by_name(name: str) -> Effect:
    return _EFFECTS[name]


debug_callback_p = new_primitive("debug_callback", multiple_results=True)

#: The value the lowering threads between ordered callbacks (see olympus_lower's
#: ``rules/callbacks.py``); it only appears in olympusprs rewritten for lowering.
TOKEN_AVAL = ShapedArray((), np.dtype(bool))


@def_shape_rule(debug_callback_p)
def debug_callback_shape_rule(*avals, callback, effect, token=False):
    if not callable(callback):
        raise TypeError(f"debug_callback callback must be callable, got {callback!r}.")
    if not isinstance(effect, DebugEffect):
        raise TypeError(f"debug_callback effect must be a DebugEffect, got {effect!r}.")
    if token:
        # The lowering's rewritten form: the first operand is the order token, and the
        # single result is the token after the call.
        if not avals or avals[0] != TOKEN_AVAL:
            raise TypeError("debug_callback with token=True takes a bool[] token first.")
        return [TOKEN_AVAL]
    return []


pure_callback_p = new_primitive("pure_callback", multiple_results=True)
io_callback_p = new_primitive("io_callback", multiple_results=True)


def _check_callback_params(name, callback, result_avals):
    if not callable(callback):
        raise TypeError(f"{name} callback must be callable, got {callback!r}.")
    if not isinstance(result_avals, tuple) or not all(
            isinstance(a, ShapedArray) for a in result_avals):
        raise TypeError(f"{name} result_avals must be a tuple of ShapedArray, got "
                        f"{result_avals!r}.")


@def_shape_rule(pure_callback_p)
def pure_callback_shape_rule(*avals, callback, result_avals, vmap_method=None,
                             sharding=None):
    _check_callback_params("pure_callback", callback, result_avals)
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise TypeError(f"pure_callback vmap_method must be None or one of {VMAP_METHODS}, "
                         f"got {vmap_method!r}.")
    return list(result_avals)


@def_shape_rule(io_callback_p)
def io_callback_shape_rule(*avals, callback, result_avals, ordered, sharding=None,
                           token=False):
    _check_callback_params("io_callback", callback, result_avals)
    if token:  # the lowering's rewritten form, as for debug_callback
        if not avals or avals[0] != TOKEN_AVAL:
            raise TypeError("io_callback with token=True takes a bool[] token first.")
        return [TOKEN_AVAL, *result_avals]
    return list(result_avals)


#: primitive -> ``rule(eqn) -> Effect or None``: the effect an equation of another family
#: has by itself (a side-effecting ``ffi_call``, a ref's ``get``/``swap``/``addupdate``).
effect_rules: dict[Any, Any] = {}


def own_effect(eqn: Any) -> Effect | None:
    """The effect `eqn` has by itself (not counting its sub-olympusprs)."""
    params = eqn.params
    eff = params.get("effect")
    if isinstance(eff, Effect):
        return eff
    if eqn.primitive is io_callback_p:
        return ordered_io_effect if params.get("ordered") else io_effect
    rule = effect_rules.get(eqn.primitive)
    return None if rule is None else rule(eqn)


@def_pp_params(debug_callback_p)
def _debug_callback_printed(eqn):
    """JAX's debug_callback has a `partitioned` param (False unless under shard_map), which
    Olympus's lacks: shown as JAX shows it. The lowering's `token` is not shown when off."""
    params = dict(eqn.params)
    if not params.get("token", False):
        params.pop("token", None)
    params.setdefault("partitioned", False)
    return params


def _sub_olympusprs(params: dict[str, Any]):
    for v in params.values():
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(x, ClosedOlympuspr):
                yield x.olympuspr
            elif isinstance(x, Olympuspr):
                yield x


def eqn_effects(eqn: Any) -> frozenset:
    """The effects of one equation: its own `effect` param, plus those of every
    sub-olympuspr it holds (cond branches, loop bodies, ...)."""
    params = eqn.params
    effects = set()
    eff = own_effect(eqn)
    if eff is not None:
        effects.add(eff)
    for j in _sub_olympusprs(params):
        effects |= olympuspr_effects(j)
    return frozenset(effects)


def olympuspr_effects(j: Olympuspr | ClosedOlympuspr) -> frozenset:
    """`j.effects` together with the effects of its equations (recursively)."""
    if isinstance(j, ClosedOlympuspr):
        j = j.olympuspr
    effects = set(j.effects)
    for e in j.eqns:
        effects |= eqn_effects(e)
    return frozenset(effects)
