"""The binomial distribution (`scipy.stats.binom`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = special.gammaln(n + 1) - special.gammaln(y + 1) - special.gammaln(n - y + 1)
    linear = special.xlogy(y, p) + special.xlog1py(n - y, -p)
    val = comb + linear
    val = jnp.where(((y == 0) & (n == 0)) | (linear == 0), jnp.zeros_like(val), val)
    return where_neg_inf(~((k >= loc) & (k < loc + n + 1)), val)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
