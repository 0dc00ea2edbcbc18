"""`lax.convert_element_type` as JAX's public function: the trace layer's conversion, with
JAX's warning when a complex value is cast to a real or integer type (the trace layer's
own callers convert on purpose and stay silent)."""

from __future__ import annotations

import warnings

import numpy as np

from olympus_ir import dtypes
from olympus_trace import lax_ops
from olympus_trace.core import get_aval

__all__ = ["convert_element_type"]


def convert_element_type(operand, new_dtype, weak_type: bool = False):
    """Elementwise cast of `operand` to `new_dtype` (no equation when nothing changes).

    As in JAX, casting a complex value to a real or integer type keeps the real part and
    warns with `numpy.exceptions.ComplexWarning`.
    """
    if _complex_to_real(operand, new_dtype):
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=2)
    return lax_ops.convert_element_type(operand, new_dtype, weak_type)


def _complex_to_real(operand, new_dtype) -> bool:
    try:
        old, new = get_aval(operand).dtype, dtypes.canonicalize_dtype(new_dtype)
    except (TypeError, ValueError):
        return False  # the conversion itself reports a bad operand or dtype
    return dtypes.is_complex(old) and not dtypes.is_complex(new)
