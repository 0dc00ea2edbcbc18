"""Wrappers of `dot_general` (`olympus_ir.prims.linalg`): `dot_general` and `dot`."""

from __future__ import annotations

from olympus_ir import dtypes
from olympus_ir import primitives as P

from ..core import bind, get_aval

__all__ = ["dot_general", "dot"]


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
          (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    return bind(P.dot_general_p, lhs, rhs, dimension_numbers=dn, precision=precision,
                preferred_element_type=pet, out_sharding=None)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    la, ra = get_aval(lhs), get_aval(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(
            f"lax.dot requires 1-D or 2-D operands, got shapes {la.shape} and {ra.shape}."
        )
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)
