"""The chi-squared distribution (`scipy.stats.chi2`)."""

from __future__ import annotations

import math

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2
    val = ((half - 1) * jnp.log(y) - y / 2 - special.gammaln(half) - half * math.log(2)
           - jnp.log(scale))
    return where_neg_inf(x < loc, val)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    y = jnp.maximum((x - loc) / (2 * scale), 0)
    a, y = jnp.broadcast_arrays(df / 2, y)
    return special.gammainc(a, y)


def logcdf(x, df, loc=0, scale=1):
    return jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    y = jnp.maximum((x - loc) / (2 * scale), 0)
    a, y = jnp.broadcast_arrays(df / 2, y)
    return special.gammaincc(a, y)


def logsf(x, df, loc=0, scale=1):
    return jnp.log(sf(x, df, loc, scale))
