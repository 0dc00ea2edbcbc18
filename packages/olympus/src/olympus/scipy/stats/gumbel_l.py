"""The left-skewed Gumbel distribution (`scipy.stats.gumbel_l`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import log1mexp, where_nan

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return where_nan(~(scale > 0), special.xlogy(-1, scale) + z - jnp.exp(z))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
    return where_nan(~(scale > 0), log1mexp(jnp.exp((x - loc) / scale)))


def cdf(x, loc=0, scale=1):
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("gumbel_l.logsf", x, loc, scale)
    return where_nan(~(scale > 0), -jnp.exp((x - loc) / scale))


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    val = loc + scale * jnp.log(-jnp.log1p(-p))
    return where_nan(~((p > 0) & (p < 1)), val)
