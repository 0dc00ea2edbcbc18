"""The normal distribution truncated to [a, b] in standard units
(`scipy.stats.truncnorm`)."""

from __future__ import annotations

import numpy as np

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from . import norm
from ._common import where_nan

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(log_p, log_q):
    """log(exp(log_p) - exp(log_q)) for log_p >= log_q."""
    return log_p + jnp.log(-jnp.expm1(log_q - log_p))


def _log_mass(a, b):
    """log(Phi(b) - Phi(a)): in the tail containing [a, b] by differences of log_ndtr,
    around the center as log1p of the two excluded tails."""
    a, b = jnp.broadcast_arrays(a, b)
    left = b <= 0
    right = a > 0
    lo = jnp.where(right, -b, a)
    hi = jnp.where(right, -a, b)
    tail = _log_diff(special.log_ndtr(hi), special.log_ndtr(lo))
    central = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return jnp.where(left | right, tail, central)


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = norm.logpdf(x, loc, scale) - _log_mass(a, b)
    z = (x - loc) / scale
    val = jnp.where((z < a) | (z > b), jnp.full_like(val, -np.inf), val)
    return where_nan(a >= b, val)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = (x - loc) / scale
    total = _log_mass(a, b)
    z_in = jnp.clip(z, a, b)
    lcdf = _log_mass(a, z_in) - total
    lsf = _log_mass(z_in, b) - total
    # Near 1 the complement is the accurate form.
    val = jnp.where(lcdf > -0.1, jnp.log1p(-jnp.exp(lsf)), lcdf)
    val = jnp.where(z >= b, jnp.zeros_like(val), val)
    val = jnp.where(z <= a, jnp.full_like(val, -np.inf), val)
    return where_nan(a >= b, val)


def cdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    return jnp.exp(logsf(x, a, b, loc, scale))
