"""The beta distribution (`scipy.stats.beta`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import where_nan, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    val = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b)
           - jnp.log(scale))
    val = where_neg_inf((x > loc + scale) | (x < loc), val)
    return where_nan((a <= 0) | (b <= 0) | (scale <= 0), val)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    y = jnp.clip((x - loc) / scale, 0, 1)
    a, b, y = jnp.broadcast_arrays(a, b, y)
    return special.betainc(a, b, y)


def logcdf(x, a, b, loc=0, scale=1):
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
    y = jnp.clip((x - loc) / scale, 0, 1)
    a, b, y = jnp.broadcast_arrays(a, b, y)
    return special.betainc(b, a, 1 - y)


def logsf(x, a, b, loc=0, scale=1):
    return jnp.log(sf(x, a, b, loc, scale))
