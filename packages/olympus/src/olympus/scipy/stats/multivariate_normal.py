"""The multivariate normal distribution (`scipy.stats.multivariate_normal`)."""

from __future__ import annotations

import math

import olympus
import olympus.numpy as jnp
from olympus import lax

from .._util import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular: None = None):
    """log N(x; mean, cov); `cov` may be a scalar (isotropic) or a (batch of) matrices."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if mean.shape and cov.shape and (cov.ndim < 2 or cov.shape[-2:] != (mean.shape[-1],) * 2):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    return _logpdf(x, mean, cov)


@olympus.jit
def _logpdf(x, mean, cov):
    if not mean.shape:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (math.log(2 * math.pi) + jnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not cov.shape:
        return (-0.5 * jnp.sum(y * y, axis=-1) / cov
                - n / 2 * (math.log(2 * math.pi) + jnp.log(cov)))
    chol = lax.linalg.cholesky(cov)
    batch = jnp.broadcast_shapes(chol.shape[:-2], y.shape[:-1])
    chol_b = jnp.broadcast_to(chol, batch + (n, n))
    y_b = jnp.broadcast_to(y, batch + (n,))[..., None]
    z = lax.linalg.triangular_solve(chol_b, y_b, left_side=True, lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(z * z, axis=-1) - n / 2 * math.log(2 * math.pi) - log_det


def pdf(x, mean, cov):
    return jnp.exp(logpdf(x, mean, cov))
