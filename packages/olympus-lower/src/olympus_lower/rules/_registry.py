"""The lowering-rule table: one rule per primitive.

A rule has the signature ``rule(ctx, *operands, **params) -> list[ir.Value]`` where
`operands` are the MLIR values of the equation's inputs, `params` its parameters, and
`ctx` a `LoweringRuleContext` (``avals_in``, ``avals_out``, ``source_info``,
``lower_sub(closed_olympuspr, operands)``). The rule builds ops at the current
insertion point and returns one value per equation output.

Every primitive is defined by `olympus_ir.prims` (imported before any rule module), so a
rule is registered for its primitive object, or by the primitive's name, looked up at once.
"""

from __future__ import annotations

from collections.abc import Callable

from olympus_ir import Primitive
from olympus_ir.core import primitive_by_name

__all__ = ["lowering_rules", "platform_lowering_rules", "register_lowering",
           "get_lowering_rule"]

LoweringRule = Callable[..., list]

#: primitive -> lowering rule.
lowering_rules: dict[Primitive, LoweringRule] = {}


def register_lowering(prim: Primitive | str) -> Callable[[LoweringRule], LoweringRule]:
    """Decorator: ``@register_lowering(add_p)`` (or ``@register_lowering("add")``; an
    unknown name is a ValueError)."""
    p = primitive_by_name(prim) if isinstance(prim, str) else prim

    def register(rule: LoweringRule) -> LoweringRule:
        lowering_rules[p] = rule
        return rule

    return register


#: platform ("cpu", "cuda", ...) -> primitive -> rule: rules registered for one platform
#: (JAX's ``register_lowering(prim, rule, platform=...)``); they take precedence over
#: `lowering_rules` when lowering for that platform.
platform_lowering_rules: dict[str, dict[Primitive, LoweringRule]] = {}


def get_lowering_rule(prim: Primitive, platforms: tuple[str, ...] = ("cpu",)) -> LoweringRule:
    """The rule for `prim` when lowering for `platforms`; JAX's ``NotImplementedError``
    if a platform has none. A module lowered for several platforms needs one rule for
    them all (Olympus does not dispatch on the platform index per primitive)."""
    rules = []
    for platform in platforms:
        specific = platform_lowering_rules.get(platform)
        rule = specific.get(prim) if specific else None
        if rule is None:
            rule = lowering_rules.get(prim)
        if rule is None:  # a high-level operation's equation: lowered as its expansion
            rule = getattr(prim, "expansion_lowering", None)
        if rule is None:
            raise NotImplementedError(
                f"MLIR translation rule for primitive '{prim.name}' not found for "
                f"platform {platform}")
        rules.append(rule)
    if any(r != rules[0] for r in rules[1:]):
        raise NotImplementedError(
            f"primitive '{prim.name}' has different lowering rules for the platforms "
            f"{', '.join(platforms)}: lowering it for several platforms at once is not "
            "supported")
    return rules[0]
