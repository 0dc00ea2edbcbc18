"""Olympus's exception types."""

from olympus_runtime import XlaRuntimeError as OlympusRuntimeError
from olympus_trace.errors import (
    ConcretizationTypeError,
    KeyReuseError,
    OlympusTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError", "KeyReuseError", "OlympusRuntimeError", "OlympusTypeError",
    "TracerArrayConversionError", "TracerBoolConversionError", "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
