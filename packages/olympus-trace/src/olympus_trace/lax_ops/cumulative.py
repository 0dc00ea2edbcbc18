"""Wrappers of the cumulative reductions (`olympus_ir.prims.cumulative`): `cumsum`,
`cumprod`, `cummax`, `cummin` and `cumlogsumexp` along one axis."""

from __future__ import annotations

import builtins

from olympus_ir import primitives as P

from ..core import bind, get_aval

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]


def _shape(x):
    return get_aval(x).shape


def _cumulative(prim):
    def f(operand, axis: int = 0, reverse: bool = False):
        shape = _shape(operand)
        nd = len(shape)
        if not -builtins.max(nd, 1) <= int(axis) < builtins.max(nd, 1):
            raise ValueError(f"axis {axis} is out of bounds for array of shape {shape}")
        return bind(prim, operand, axis=int(axis) % builtins.max(nd, 1), reverse=bool(reverse))

    f.__name__ = prim.name
    return f


cumsum = _cumulative(P.cumsum_p)
cumprod = _cumulative(P.cumprod_p)
cummax = _cumulative(P.cummax_p)
cummin = _cumulative(P.cummin_p)
cumlogsumexp = _cumulative(P.cumlogsumexp_p)
