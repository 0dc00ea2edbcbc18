"""Host callbacks: ``debug_callback`` and the effects that keep it alive and in order.

``debug_callback(*args; callback, effect)`` calls the Python function `callback` with the
values of `args` (as numpy arrays) when the program runs, and has no results. Its
`effect` marks it as side-effecting: olympusprs that contain one (at any depth) record
the effect in `Olympuspr.effects`, dead-code elimination keeps it, and the lowering
orders all such calls of one program in program order.

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
    "debug_callback_p", "DebugEffect", "debug_effect", "ordered_debug_effect",
    "eqn_effects", "olympuspr_effects",
]


class DebugEffect:
    """The effect of a debug callback. Two singletons: `debug_effect` (printed ``Debug``)
    and `ordered_debug_effect` (``OrderedDebug``)."""

    __slots__ = ("name", "ordered")

    def __init__(self, name: str, ordered: bool):
        self.name = name
        self.ordered = ordered

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_effect_by_name, (self.name,))


debug_effect = DebugEffect("Debug", ordered=False)
ordered_debug_effect = DebugEffect("OrderedDebug", ordered=True)
_EFFECTS = {e.name: e for e in (debug_effect, ordered_debug_effect)}


def _effect_by_name(name: str) -> DebugEffect:
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
    eff = params.get("effect")
    if isinstance(eff, DebugEffect):
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
