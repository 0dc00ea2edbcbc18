"""Student's t distribution (`scipy.stats.t`)."""

from __future__ import annotations

import math

import olympus.numpy as jnp
from olympus import lax

from .._util import promote_args_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half = df / 2
    norm = (lax.lgamma(half) + 0.5 * jnp.log(df * math.pi * scale * scale)
            - lax.lgamma(half + 0.5))
    return -(norm + (half + 0.5) * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))
