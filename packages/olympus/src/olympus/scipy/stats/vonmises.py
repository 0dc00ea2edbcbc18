"""The von Mises distribution on the circle (`scipy.stats.vonmises`)."""

from __future__ import annotations

import math

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import where_nan

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    val = kappa * (jnp.cos(x) - 1) - jnp.log(2 * math.pi * special.i0e(kappa))
    return where_nan(~(kappa > 0), val)


def pdf(x, kappa):
    return jnp.exp(logpdf(x, kappa))
