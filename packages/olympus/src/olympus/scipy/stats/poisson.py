"""The Poisson distribution (`scipy.stats.poisson`)."""

from __future__ import annotations

import math

import olympus.numpy as jnp

from .. import special
from .._util import check_arraylike, promote_args_inexact, promote_dtypes_inexact
from ._common import where_neg_inf

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    y = k - loc
    val = special.xlogy(y, mu) - special.gammaln(y + 1) - mu
    return where_neg_inf((y < 0) | (jnp.round(k) != k), val)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    y = k - loc
    a, m = jnp.broadcast_arrays(jnp.floor(1 + y), mu)
    p = special.gammaincc(a, m)
    return jnp.where(y < 0, jnp.zeros_like(p), p)


def _entropy_by_sum(mu, terms, cutoff):
    """-sum_k p_k log p_k over k < min(terms, cutoff(mu))."""
    k = jnp.arange(terms, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    probs = jnp.where(k < jnp.ceil(cutoff)[None, :], probs, jnp.zeros_like(probs))
    return jnp.sum(special.entr(probs), axis=0)


def entropy(mu, loc=0):
    """The entropy of the distribution: exact sums for mu < 100, its asymptotic expansion
    in 1/mu beyond."""
    check_arraylike("poisson.entropy", mu, loc)
    mu, loc = promote_dtypes_inexact(mu, loc)
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    flat = jnp.ravel(mu)
    # Ten standard deviations past the mean leave out less than 1e-20 of the mass.
    summed = _entropy_by_sum(flat, 250, flat + 10 * jnp.sqrt(flat) + 20)
    inv = 1 / flat
    large = (0.5 * jnp.log(2 * math.pi * math.e * flat)
             - inv * (1 / 12 + inv * (1 / 24 + inv * 19 / 360)))
    out = jnp.where(flat < 100, summed, large)
    out = jnp.where(flat == 0, jnp.zeros_like(out), out)
    return jnp.broadcast_to(out.reshape(mu.shape), shape)
