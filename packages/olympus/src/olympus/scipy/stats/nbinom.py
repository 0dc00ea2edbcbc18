"""The negative binomial distribution (`scipy.stats.nbinom`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    comb = special.gammaln(y + n) - special.gammaln(n) - special.gammaln(y + 1)
    val = comb + special.xlogy(n, p) + special.xlogy(y, 1 - p)
    return where_neg_inf(k < loc, val)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
