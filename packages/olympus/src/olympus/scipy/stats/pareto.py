"""The Pareto distribution (`scipy.stats.pareto`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .._util import promote_args_inexact
from ._common import where_nan, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    z = (x - loc) / scale
    val = -(jnp.log(scale / b) + (b + 1) * jnp.log(z))
    return where_neg_inf(x < loc + scale, val)


def pdf(x, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    val = 1 - ((x - loc) / scale) ** (-b)
    return jnp.where(x < loc + scale, jnp.zeros_like(val), val)


def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    val = jnp.log1p(-(((x - loc) / scale) ** (-b)))
    return where_neg_inf(x < loc + scale, val)


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    val = -b * jnp.log((x - loc) / scale)
    return jnp.where(x < loc + scale, jnp.zeros_like(val), val)


def sf(x, b, loc=0, scale=1):
    return jnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    val = loc + scale * (1 - q) ** (-1 / b)
    return where_nan(jnp.isnan(q) | (q < 0) | (q > 1), val)
