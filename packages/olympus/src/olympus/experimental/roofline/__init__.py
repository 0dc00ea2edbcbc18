"""`olympus.experimental.roofline`: JAX's roofline analysis (flops, HBM and interconnect
bytes, interconnect latency and peak memory of a function, read off its olympuspr).
`analysis` holds the types, the rule table and the interpreter; `compute_rules` and
`collective_rules` the rules Olympus ships."""

from . import collective_rules as _collective_rules  # noqa: F401 - registers the rules
from . import compute_rules as _compute_rules  # noqa: F401 - registers the rules
from .analysis import (
    RooflineResult,
    RooflineRuleContext,
    RooflineShape,
    register_roofline,
    register_standard_roofline,
    roofline,
    roofline_and_grad,
)

__all__ = ["RooflineRuleContext", "RooflineShape", "RooflineResult", "roofline",
           "register_roofline", "register_standard_roofline", "roofline_and_grad"]
