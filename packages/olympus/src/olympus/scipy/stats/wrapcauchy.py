"""The wrapped Cauchy distribution on [0, 2 pi] (`scipy.stats.wrapcauchy`)."""

from __future__ import annotations

import math

import olympus.numpy as jnp

from .._util import promote_args_inexact
from ._common import where_nan, where_neg_inf

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    val = (jnp.log(1 - c * c) - math.log(2 * math.pi)
           - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
    val = where_neg_inf(~((x >= 0) & (x <= 2 * math.pi)), val)
    return where_nan(~((c > 0) & (c < 1)), val)


def pdf(x, c):
    return jnp.exp(logpdf(x, c))
