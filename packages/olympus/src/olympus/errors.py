"""Olympus's exception types."""

from olympus_ir.shape_poly import InconclusiveDimensionOperation
from olympus_ir.verify import OlympusprTypeError
from olympus_runtime import XlaRuntimeError as OlympusRuntimeError
from olympus_trace.errors import (
    ConcretizationTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    OlympusIndexError,
    OlympusTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

# JAX's base classes (``JAXTypeError``, ``JAXIndexError``) under their renamed public names:
# every tracing TypeError/IndexError above derives from one of them.
OLYMPUSTypeError = OlympusTypeError
OLYMPUSIndexError = OlympusIndexError

__all__ = [
    "ConcretizationTypeError", "InconclusiveDimensionOperation", "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "OLYMPUSIndexError", "OLYMPUSTypeError", "OlympusIndexError", "OlympusprTypeError",
    "OlympusRuntimeError", "OlympusTypeError",
    "TracerArrayConversionError", "TracerBoolConversionError", "TracerIntegerConversionError",
    "UnexpectedTracerError",
]

# As in JAX (whose error classes report themselves as `jax.errors.X`), the public home of the
# tracing errors is this module: tracebacks then read `olympus.errors.TracerBoolConversionError:`
# and pickling resolves the class here. OlympusRuntimeError is jaxlib's own type and keeps its
# name.
for _cls in (ConcretizationTypeError, InconclusiveDimensionOperation, KeyReuseError,
             NonConcreteBooleanIndexError, OlympusTypeError, OlympusIndexError,
             OlympusprTypeError,
             TracerArrayConversionError, TracerBoolConversionError,
             TracerIntegerConversionError, UnexpectedTracerError):
    _cls.__module__ = __name__
del _cls
