"""The exponential distribution (`scipy.stats.expon`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .._util import promote_args_inexact
from ._common import where_nan, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    return where_neg_inf(x < loc, -(x - loc) / scale - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)
    y = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(y), y)


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    y = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(y), -jnp.expm1(y))


def logcdf(x, loc=0, scale=1):
    return jnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    return where_nan(jnp.isnan(q) | (q < 0) | (q > 1), loc - scale * jnp.log1p(-q))
