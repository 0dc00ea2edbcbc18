"""Functions of `olympus.scipy.special` built from elementary ones: the Box-Cox transforms
and the elementwise relative entropies."""

from __future__ import annotations

import numpy as np

import olympus
import olympus.numpy as jnp

from ._util import is_complex, promote_args_inexact


def _boxcox_of_log(log_x, lmbda):
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


@olympus.jit
def boxcox(x, lmbda):
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log(x) at lmbda = 0."""
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


@olympus.jit
def boxcox1p(x, lmbda):
    """The Box-Cox transform of 1 + x, accurate for small x."""
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


@olympus.jit
def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 at p = 0 <= q; inf otherwise."""
    from .special import xlogy

    p, q = promote_args_inexact("rel_entr", p, q)
    if is_complex(p):
        raise ValueError("rel_entr does not support complex-valued inputs.")
    both = (p > 0) & (q > 0)
    p_zero = (p == 0) & (q >= 0)
    sp = jnp.where(both, p, jnp.ones_like(p))
    sq = jnp.where(both, q, jnp.ones_like(q))
    val = xlogy(sp, sp) - xlogy(sp, sq)
    return jnp.where(both, val, jnp.where(p_zero, jnp.zeros_like(val),
                                          jnp.full_like(val, np.inf)))


@olympus.jit
def kl_div(p, q):
    """p log(p / q) - p + q, the elementwise Kullback-Leibler divergence."""
    p, q = promote_args_inexact("kl_div", p, q)
    if is_complex(p):
        raise ValueError("kl_div does not support complex-valued inputs.")
    return rel_entr(p, q) - p + q
