"""Cumulative reductions (cumsum, cumprod, cummax, cummin, cumlogsumexp).

Each is a ``stablehlo.reduce_window`` whose window spans the whole axis, padded with
``n - 1`` identity elements before the data (after it when ``reverse``), so output
``i`` reduces elements ``0..i`` (``i..n-1``). Identities: 0, 1, -inf/min, +inf/max,
-inf.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from .. import mlir_utils as mu
from ._registry import register_lowering


def _logaddexp(dt):
    def combine(a, b):
        # max + log1p(exp(min - max)), with -inf + -inf = -inf (not NaN).
        hi = hlo.maximum(a, b)
        lo = hlo.minimum(a, b)
        s = hlo.add(hi, hlo.log_plus_one(hlo.exponential(hlo.subtract(lo, hi))))
        neg_inf = mu.full((), -np.inf, dt)
        hi_is_ninf = mu.compare(hi, neg_inf, "EQ", dt)
        return hlo.select(hi_is_ninf, hi, s)

    return combine


_COMBINE = {
    "cumsum": (lambda dt: hlo.add, lambda dt: 0),
    "cumprod": (lambda dt: hlo.multiply, lambda dt: 1),
    "cummax": (lambda dt: hlo.maximum, mu.min_value),
    "cummin": (lambda dt: hlo.minimum, mu.max_value),
    "cumlogsumexp": (_logaddexp, lambda dt: -np.inf),
}


def _cumulative_rule(name):
    combine_of, init_of = _COMBINE[name]

    def rule(ctx, x, *, axis, reverse=False):
        aval = ctx.avals_in[0]
        dt = np.dtype(aval.dtype)
        axis = int(axis)
        n = aval.shape[axis]
        if type(n) is not int:
            raise NotImplementedError(
                f"{name} along an axis of symbolic size {n} cannot be lowered yet (its "
                "window would need stablehlo.dynamic_reduce_window)")
        if n <= 1:
            return [x]
        window = [1] * aval.ndim
        window[axis] = n
        padding = np.zeros((aval.ndim, 2), np.int64)
        padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
        return [mu.reduce_window(x, aval, dt, init_of(dt), combine_of(dt), window,
                                 [1] * aval.ndim, padding)]

    rule.__name__ = f"_{name}_lowering"
    register_lowering(name)(rule)
    return rule


for _name in _COMBINE:
    _cumulative_rule(_name)
del _name
