"""`olympus.scipy`: SciPy-compatible functions (currently `special`)."""

from . import special  # noqa: F401

__all__ = ["special"]
