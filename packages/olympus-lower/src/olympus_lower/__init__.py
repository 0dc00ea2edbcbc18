"""olympus-lower: lowering of olympusprs to StableHLO modules with ``jaxlib.mlir``.

``lower_olympuspr(closed, name=...)`` returns a `LoweredModule` (``.module``,
``.as_text()``, ``.to_bytecode()``, ``.portable_artifact()``). Per-primitive rules live
in `olympus_lower.rules.lowering_rules`. Depends on olympus_ir, numpy and jaxlib only.
"""

from .__about__ import __version__
from .context import get_context, make_context
from .lowering import (
    DEFAULT_CONST_HOIST_THRESHOLD,
    LoweredModule,
    LoweringError,
    LoweringRuleContext,
    lower_olympuspr,
    portable_artifact_target,
)
from .rules import get_lowering_rule, lowering_rules, register_lowering

__all__ = [
    "__version__", "get_context", "make_context", "lower_olympuspr", "LoweredModule",
    "LoweringError", "LoweringRuleContext", "DEFAULT_CONST_HOIST_THRESHOLD",
    "portable_artifact_target", "lowering_rules", "register_lowering", "get_lowering_rule",
]
