"""`olympus.scipy.stats`: probability distributions (one submodule each, with SciPy's
function names and JAX's argument names and defaults) and summary statistics."""

from . import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from ._core import mode, rankdata, sem
from ._kde import gaussian_kde

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
    "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
    "logistic", "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto",
    "poisson", "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy",
]

