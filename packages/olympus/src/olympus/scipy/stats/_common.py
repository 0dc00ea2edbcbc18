"""Shared pieces of the `olympus.scipy.stats` distributions."""

from __future__ import annotations

import numpy as np

import olympus.numpy as jnp


def where_nan(cond, x):
    """`x` with NaN where `cond` holds."""
    return jnp.where(cond, jnp.full_like(x, np.nan), x)


def where_neg_inf(cond, x):
    """`x` with -inf where `cond` holds."""
    return jnp.where(cond, jnp.full_like(x, -np.inf), x)


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate at both ends (Maechler's switch at log 2)."""
    return jnp.where(x > np.log(2.0), jnp.log1p(-jnp.exp(-x)), jnp.log(-jnp.expm1(-x)))
