"""The geometric distribution on 1, 2, ... (`scipy.stats.geom`)."""

from __future__ import annotations

import olympus.numpy as jnp

from .. import special
from .._util import promote_args_inexact
from ._common import where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    y = k - loc
    return where_neg_inf(y <= 0, special.xlog1py(y - 1, -p) + jnp.log(p))


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))
