"""`olympus.experimental.hijax`: JAX's API for high-level types and primitives.

A user-defined type (`HiType`, registered for its value class with `register_hitype`)
lowers to several ordinary arrays; a user-defined operation on such values is a
`HiPrimitive` subclass or a `VJPHiPrimitive`. The machinery lives in
``olympus_trace.hitypes`` and ``olympus_trace.hi_primitives``; the other names are
Olympus's own objects (`ShapedArray`, `AbstractRef`, `Zero`, ...), re-exported here.
"""

from olympus_ir.prims.callbacks import control_flow_allowed_effects
from olympus_ir.prims.refs import AbstractRef
from olympus_trace.ad import Zero, is_undefined_primal
from olympus_trace.hi_primitives import HiPrimitive, VJPHiPrimitive, instantiate_zeros
from olympus_trace.hitypes import (
    AvalMutableQDD,
    AvalQDD,
    HiPspec,
    HiType,
    MutableHiType,
    aval_method,
    aval_property,
    register_hitype,
)

from .._src.refs import TransformedRef
from ..core import AbstractValue, ShapedArray

__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive",
           "HiPspec", "HiType", "MutableHiType", "ShapedArray", "TransformedRef",
           "VJPHiPrimitive", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal",
           "register_hitype"]
