"""Wrappers of `dot_general` (`olympus_ir.prims.linalg`): `dot_general` and `dot`."""

from __future__ import annotations

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.prims.linalg import Precision, canonicalize_precision

from ..core import bind, get_aval

__all__ = ["Precision", "dot_general", "dot", "set_default_precision", "default_precision"]

#: The precision a matmul or convolution without one gets (``olympus_default_matmul_precision``
#: maps onto it): None, or a (lhs, rhs) pair of `Precision`.
_default_precision: tuple | None = None
#: The dot-algorithm names of that option that stand for a precision level; JAX's precision
#: names (``float32``, ``tensorfloat32``, ``bfloat16``, ...) are `Precision`'s own.
_ALGORITHM_LEVELS = {"F32_F32_F32": Precision.HIGHEST, "BF16_BF16_F32": Precision.DEFAULT,
                     "TF32_TF32_F32": Precision.HIGH}


def set_default_precision(name: str | None) -> None:
    """Set by ``olympus_default_matmul_precision``: JAX's names map onto the precision
    levels as JAX's canonicalization does (``float32`` -> HIGHEST, ``tensorfloat32`` ->
    HIGH, ``bfloat16`` -> DEFAULT); the other algorithm names leave matmuls unchanged."""
    global _default_precision
    level = None if name is None else _ALGORITHM_LEVELS.get(name)
    if level is None and name is not None:
        try:
            level = Precision(name)
        except ValueError:  # an algorithm name without a precision level
            level = None
    _default_precision = None if level is None else (level, level)


def default_precision(precision):
    """`precision`, or the configured default when it is None."""
    return _default_precision if precision is None else precision


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """A general dot product: `dimension_numbers` is `((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))`; the result is batch dims, then lhs free dims, then rhs free dims."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
          (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    return bind(P.dot_general_p, lhs, rhs, dimension_numbers=dn,
                precision=canonicalize_precision(default_precision(precision)),
                preferred_element_type=pet, out_sharding=None)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None):
    """`dot_general` with the contraction of a matrix/vector product implied when
    `dimension_numbers` is not given (1-D or 2-D operands only)."""
    if dimension_numbers is None:
        ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
        if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]):
            raise ValueError(
                "olympus.lax.dot: dimension_numbers must be specified when not performing "
                "simple un-batched matrix-matrix, matrix-vector, or vector-vector products;"
                f" got lhs_shape={ls} rhs_shape={rs}")
        dimension_numbers = (((len(ls) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)
