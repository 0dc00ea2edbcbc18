"""The generalized normal distribution (`scipy.stats.gennorm`)."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus import lax

from .. import special
from .._util import promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, beta):
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - lax.lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    a, y = jnp.broadcast_arrays(1 / beta, jnp.abs(x) ** beta)
    # Each half from the upper tail, which keeps its relative accuracy far out.
    half_tail = 0.5 * special.gammaincc(a, y)
    return jnp.where(x < 0, half_tail, 1 - half_tail)
