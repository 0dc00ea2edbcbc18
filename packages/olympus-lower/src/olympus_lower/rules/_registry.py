"""The lowering-rule table: one rule per primitive.

A rule has the signature ``rule(ctx, *operands, **params) -> list[ir.Value]`` where
`operands` are the MLIR values of the equation's inputs, `params` its parameters, and
`ctx` a `LoweringRuleContext` (``avals_in``, ``avals_out``, ``source_info``,
``lower_sub(closed_olympuspr, operands)``). The rule builds ops at the current
insertion point and returns one value per equation output.

Rules may be registered for a primitive object, or by name for a primitive the IR
does not define yet; a by-name rule is bound to the primitive the first time that
primitive is looked up (or when `resolve_pending` runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olympus_ir import Primitive
from olympus_ir.core import primitives_by_name

__all__ = ["lowering_rules", "register_lowering", "get_lowering_rule", "resolve_pending",
           "pending_rules"]

LoweringRule = Callable[..., list]

#: primitive -> lowering rule.
lowering_rules: dict[Primitive, LoweringRule] = {}
#: name -> rule, for primitives not (yet) defined by olympus_ir.
pending_rules: dict[str, LoweringRule] = {}


def register_lowering(prim: Primitive | str) -> Callable[[LoweringRule], LoweringRule]:
    """Decorator: ``@register_lowering(add_p)`` (or ``@register_lowering("add")``)."""

    def register(rule: LoweringRule) -> LoweringRule:
        p = prim
        if isinstance(p, str):
            p = primitives_by_name.get(p, p)
        if isinstance(p, str):
            pending_rules[p] = rule
        else:
            lowering_rules[p] = rule
        return rule

    return register


def resolve_pending() -> None:
    """Bind by-name rules whose primitive now exists."""
    for name in list(pending_rules):
        p = primitives_by_name.get(name)
        if p is not None:
            lowering_rules.setdefault(p, pending_rules.pop(name))


def get_lowering_rule(prim: Primitive) -> LoweringRule:
    """The rule for `prim`; ``NotImplementedError`` if there is none."""
    rule = lowering_rules.get(prim)
    if rule is not None:
        return rule
    rule = pending_rules.pop(prim.name, None)
    if rule is not None:
        lowering_rules[prim] = rule
        return rule
    raise NotImplementedError(f"No lowering rule for primitive '{prim.name}'")


def _describe(rule: Any) -> str:  # pragma: no cover - debugging aid
    return getattr(rule, "__qualname__", repr(rule))
