"""The Dirichlet distribution (`scipy.stats.dirichlet`); `x` holds the coordinates on
its first axis."""

from __future__ import annotations

import olympus
import olympus.numpy as jnp

from .. import special
from .._util import check_arraylike, promote_dtypes_inexact
from ._common import where_neg_inf

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    check_arraylike("dirichlet.logpdf", x, alpha)
    x, alpha = promote_dtypes_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    return _logpdf(x, alpha)


@olympus.jit
def _logpdf(x, alpha):
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    norm = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    val = jnp.sum(special.xlogy(a - 1, x), axis=0) - norm
    simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return where_neg_inf(~simplex, val)


def pdf(x, alpha):
    return jnp.exp(logpdf(x, alpha))
