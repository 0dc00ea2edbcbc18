"""The beta-binomial distribution (`scipy.stats.betabinom`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import where_nan, where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = jnp.floor(k) - loc
    log_comb = -(jnp.log1p(n) + special.betaln(n - y + 1, y + 1))
    val = log_comb + special.betaln(y + a, n - y + b) - special.betaln(a, b)
    val = jnp.where((y == 0) & (n == 0), jnp.zeros_like(val), val)
    val = where_neg_inf((y < -loc) | (y > n) | (y + a <= 0), val)
    return where_nan((n < 0) | (a <= 0) | (b <= 0), val)


def pmf(k, n, a, b, loc=0):
    return jnp.exp(logpmf(k, n, a, b, loc))
