"""Give the runtime's Array the same array methods and operators that tracers have."""

from __future__ import annotations

import olympus_runtime as rt
from olympus_trace.array_methods import ARRAY_METHODS


def install() -> None:
    rt.register_array_methods(ARRAY_METHODS)
