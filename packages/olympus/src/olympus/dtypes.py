"""``olympus.dtypes``: dtype queries and the abstract dtype classes, as ``jax.dtypes``.

Everything here is defined once, in ``olympus_ir.dtypes`` (the IR owns dtypes) or in
``olympus.numpy`` (whose ``result_type`` knows arrays, tracers and weak types).
"""

from olympus_ir import dtypes as _ir_dtypes
from olympus_ir.dtypes import (
    TypePromotionError,
    bfloat16,
    extended,
    finfo,
    float0,
    iinfo,
    issubdtype,
    itemsize_bits,
    prng_key,
    scalar_type_of,
)

from .numpy import result_type


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False):
    """The dtype Olympus computes in for `dtype` (32-bit unless x64 is enabled)."""
    if not isinstance(dtype, (type, str)) and issubdtype(dtype, extended):
        if allow_extended_dtype:
            return dtype
        raise ValueError(f"Internal: canonicalize_dtype called on extended dtype {dtype} "
                         "with allow_extended_dtype=False")
    return _ir_dtypes.canonicalize_dtype(dtype)


__all__ = [
    "TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo", "float0",
    "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type", "scalar_type_of",
]
