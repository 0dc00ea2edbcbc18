"""The multinomial distribution (`scipy.stats.multinomial`); counts on the last axis."""

from __future__ import annotations

import numpy as np

import olympus
import olympus.numpy as jnp

from .. import special
from .._util import check_arraylike, promote_dtypes, promote_dtypes_inexact
from ._common import where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    check_arraylike("multinomial.logpmf", p)
    (p,) = promote_dtypes_inexact(p)
    check_arraylike("multinomial.logpmf", x, n)
    x, n = promote_dtypes(x, n)
    if x.dtype == np.bool_:
        x, n = x.astype(np.int32), n.astype(np.int32)
    if not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    return _logpmf(x, n, p)


@olympus.jit
def _logpmf(x, n, p):
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    val = (special.gammaln(n + 1)
           + jnp.sum(special.xlogy(x, p) - special.gammaln(x + 1), axis=-1))
    return where_neg_inf(jnp.sum(x, axis=-1) != n, val)


def pmf(x, n, p):
    return jnp.exp(logpmf(x, n, p))
