"""Wrappers of the cumulative reductions (`olympus_ir.prims.cumulative`): `cumsum`,
`cumprod`, `cummax`, `cummin` and `cumlogsumexp` along one axis."""

from __future__ import annotations

import builtins

from olympus_ir import primitives as P

from ..core import bind, get_aval

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]


def _shape(x):
    return get_aval(x).shape


def _cumulative(prim, what):
    def f(operand, axis: int = 0, reverse: bool = False):
        shape = _shape(operand)
        nd = len(shape)
        if not -builtins.max(nd, 1) <= int(axis) < builtins.max(nd, 1):
            raise ValueError(f"axis {axis} is out of bounds for array of shape {shape}")
        return bind(prim, operand, axis=int(axis) % builtins.max(nd, 1), reverse=bool(reverse))

    f.__name__ = prim.name
    f.__doc__ = (f"The running {what} of `operand` along `axis` (from the end when "
                 "`reverse`); the result has the operand's shape and dtype.")
    return f


cumsum = _cumulative(P.cumsum_p, "sum")
cumprod = _cumulative(P.cumprod_p, "product")
cummax = _cumulative(P.cummax_p, "maximum")
cummin = _cumulative(P.cummin_p, "minimum")
cumlogsumexp = _cumulative(P.cumlogsumexp_p, "log-sum-exp")
