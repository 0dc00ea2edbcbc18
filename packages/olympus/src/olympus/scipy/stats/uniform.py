"""The uniform distribution on [loc, loc + scale] (`scipy.stats.uniform`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .._util import promote_args_inexact
from ._common import where_nan, where_neg_inf

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    out = -jnp.log(scale) + jnp.zeros_like(x)
    return where_neg_inf((x > loc + scale) | (x < loc), out)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    y = (x - loc) / scale
    zero, one = jnp.zeros_like(y), jnp.ones_like(y)
    hi = loc + scale
    # Below, above, inside; anything else (NaN) is 0, as JAX's select gives.
    return jnp.where(x < loc, zero, jnp.where(x > hi, one, jnp.where(x >= loc, y, zero)))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return where_nan(jnp.isnan(q) | (q < 0) | (q > 1), loc + scale * q)
