"""`ragged_dot` and `ragged_dot_general` for the grouped-matmul case (the lhs ragged in a
non-contracting dimension, the rhs holding one matrix per group): every row of the lhs
is multiplied by its group's matrix. A composition: the products with every group are
masked by group membership and summed, which is exact and differentiable."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace.core import get_aval

__all__ = ["ragged_dot", "ragged_dot_general"]

_BASIC = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """``out[i] = lhs[i] @ rhs[g(i)]`` for lhs ``(m, k)``, rhs ``(g, k, n)``, where row i
    belongs to group g(i) by the consecutive sizes `group_sizes` (``(g,)``); rows past
    the groups' total are zero."""
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision=precision,
                              preferred_element_type=preferred_element_type,
                              group_offset=group_offset, out_sharding=out_sharding)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """Ragged matrix multiplication with dimension numbers. Olympus computes the mode
    where the lhs ragged dimension is its (one) non-contracting dimension and the rhs
    has a group dimension (``[m, k], [g, k, n], [g] -> [m, n]`` and the same with shared
    leading batch dimensions); the other modes raise NotImplementedError."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported")
    dn = ragged_dot_dimension_numbers
    la, ra, ga = get_aval(lhs), get_aval(rhs), get_aval(group_sizes)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    nb = len(lb)
    if not (dtypes.is_integer(ga.dtype)):
        raise TypeError(f"ragged_dot requires group_sizes to have an integer dtype, got "
                        f"{ga.dtype}")
    if (tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(1, nb + 1))
            or la.ndim != nb + 2 or ra.ndim != nb + 3 or tuple(lc) != (nb + 1,)
            or tuple(rc) != (nb + 1,) or tuple(dn.lhs_ragged_dimensions) != (nb,)
            or tuple(dn.rhs_group_dimensions) != (0,)):
        raise NotImplementedError(
            "ragged_dot_general: Olympus supports the lhs ragged in its non-contracting "
            "dimension with rhs group dimension 0 ([b..., m, k], [g, b..., k, n], [g]), "
            f"got {dn}")
    g = ra.shape[0]
    m = la.shape[nb]
    if ga.shape != (g,):
        raise ValueError(f"ragged_dot requires group_sizes of shape ({g},), got {ga.shape}")
    if la.shape[nb + 1] != ra.shape[nb + 1] or la.shape[:nb] != ra.shape[1:nb + 1]:
        raise TypeError(f"ragged_dot: incompatible shapes {la.shape} and {ra.shape}")
    # group of each row: the number of group ends at or before it (g when past them all)
    ends = lax.cumsum(lax.convert_element_type(group_sizes, np.int32), 0)
    rows = lax.iota(np.int32, m)
    below = lax.le(lax.broadcast_in_dim(ends, (m, g), (1,)),
                   lax.broadcast_in_dim(rows, (m, g), (0,)))
    gid = lax.reduce_sum(lax.convert_element_type(below, np.int32), (1,))
    member = lax.eq(lax.broadcast_in_dim(gid, (m, g), (0,)),
                    lax.broadcast_in_dim(lax.iota(np.int32, g), (m, g), (1,)))
    # every row times every group's matrix: [b..., m, g, n]
    batch = tuple(range(nb))
    prod = lax.dot_general(lhs, rhs, (((nb + 1,), (nb + 1,)), (batch, tuple(range(1, nb + 1)))),
                           precision=precision, preferred_element_type=preferred_element_type)
    pa = get_aval(prod)
    mask = lax.broadcast_in_dim(member, pa.shape, (nb, nb + 1))
    kept = lax.select(mask, prod, lax.broadcast_in_dim(np.zeros((), pa.dtype), pa.shape, ()))
    return lax.reduce_sum(kept, (nb + 1,))
