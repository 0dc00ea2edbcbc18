"""Cumulative reductions along one axis: ``cumsum(x; axis, reverse)`` and friends.

The result has the operand's type. ``reverse=True`` accumulates from the end.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import def_shape_rule, new_primitive

__all__ = ["cumsum_p", "cumprod_p", "cummax_p", "cummin_p", "cumlogsumexp_p", "CUMULATIVES"]


def _cumulative(name, ok, what):
    p = new_primitive(name)

    @def_shape_rule(p)
    def rule(x, *, axis, reverse=False):
        if not ok(x.dtype):
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}; it needs {what}.")
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) \
                or not 0 <= axis < x.ndim:
            raise TypeError(f"{name} axis {axis!r} is out of bounds for an operand of shape "
                            f"{x.shape}; it must be in range [0, {x.ndim}).")
        return x

    rule.__name__ = f"{name}_shape_rule"
    return p


def _number(dt):
    return not dtypes.is_bool(dt)


cumsum_p = _cumulative("cumsum", _number, "a number dtype")
cumprod_p = _cumulative("cumprod", _number, "a number dtype")
cummax_p = _cumulative("cummax", _number, "a number dtype")
cummin_p = _cumulative("cummin", _number, "a number dtype")
cumlogsumexp_p = _cumulative("cumlogsumexp", dtypes.is_float, "a floating dtype")

CUMULATIVES = (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p)
