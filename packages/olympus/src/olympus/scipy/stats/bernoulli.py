"""The Bernoulli distribution (`scipy.stats.bernoulli`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import where_nan, where_neg_inf

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    y = k - loc
    val = special.xlogy(y, p) + special.xlog1py(1 - y, -p)
    return where_neg_inf((y < 0) | (y > 1), val)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    one = jnp.ones_like(k + p)
    val = jnp.where(k < 0, 0 * one, jnp.where(k < 1, one - p, one))
    return where_nan(jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1), val)


def ppf(q, p):
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    one = jnp.ones_like(q + p)
    val = jnp.where(q <= 1 - p, 0 * one, one)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return where_nan(bad, val)
