"""Gaussian kernel density estimation (`scipy.stats.gaussian_kde`)."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

from .. import special
from .._util import check_arraylike, is_complex, promote_dtypes_inexact


@olympus.tree_util.register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """A Gaussian kernel density estimate of `dataset` (shape ``(d, n)``, or ``(n,)`` for
    one dimension), with Scott's or Silverman's bandwidth rule, a scalar factor or a
    callable of the estimator; a pytree, so it passes through `jit` and `vmap`."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if is_complex(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights ** 2))
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = neff ** (-1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = (neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif np.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                             "callable.")
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self._set("covariance", data_cov * factor ** 2)
        self._set("inv_cov", jnp.linalg.inv(data_cov) / factor ** 2)

    def _set(self, name, value):
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                               children):
            kde._set(name, value)
        return kde

    @property
    def d(self):
        return self.dataset.shape[0]

    @property
    def n(self):
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The density at `points` (shape ``(d, m)``)."""
        check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        return _kernel_sum(False, self.dataset.T, self.weights, points.T, self.inv_cov)

    __call__ = evaluate

    def pdf(self, x):
        """The density at `x` (`evaluate` under SciPy's other name)."""
        return self.evaluate(x)

    def logpdf(self, x):
        """The log density at `x`, summed in log space (no underflow far out)."""
        check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        return _kernel_sum(True, self.dataset.T, self.weights, x.T, self.inv_cov)

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times a Gaussian N(mean, cov)."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = lax.linalg.cholesky(self.covariance + cov)
        norm = 1.0 / (math.sqrt(2 * math.pi) ** self.d * jnp.prod(jnp.diag(chol)))
        return _convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """The probability mass between `low` and `high` (one-dimensional data)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        return _box_1d(self, low, high)

    def integrate_kde(self, other):
        """The integral of the product of this density and `other`'s."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = lax.linalg.cholesky(self.covariance + other.covariance)
        norm = 1.0 / (math.sqrt(2 * math.pi) ** self.d * jnp.prod(jnp.diag(chol)))
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = olympus.vmap(
            functools.partial(_convolve, chol, norm, large.dataset, large.weights),
            in_axes=1)(small.dataset)
        return jnp.sum(per_point * small.weights)

    def resample(self, key, shape=()):
        """Draws from the estimate: a data point chosen by weight plus kernel noise;
        shape ``(d,) + shape``."""
        return _resample(self, key, tuple(shape))

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not "
                                  "supported")

    def _reshape_points(self, points):
        if is_complex(points):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension "
                                 f"{self.d}")
        return points


@olympus.jit
def _box_1d(kde, low, high):
    sigma = jnp.squeeze(jnp.sqrt(kde.covariance))
    lo = jnp.squeeze((low - kde.dataset) / sigma)
    hi = jnp.squeeze((high - kde.dataset) / sigma)
    return jnp.sum(kde.weights * (special.ndtr(hi) - special.ndtr(lo)))


def _convolve(chol, norm, target, weights, mean):
    diff = target - mean[:, None]
    z = lax.linalg.triangular_solve(chol, diff, left_side=True, lower=True)
    return norm * jnp.sum(jnp.exp(-0.5 * jnp.sum(z * z, axis=0)) * weights)


@functools.partial(olympus.jit, static_argnums=(0,))
def _kernel_sum(in_log, points, weights, xi, precision):
    """sum_j w_j N(x_i; p_j, precision^-1) for every row x_i of `xi`, in whitened
    coordinates (the Cholesky factor of the precision)."""
    points, weights, xi, precision = promote_dtypes_inexact(points, weights, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    white = lax.linalg.cholesky(precision)
    points = points @ white
    xi = xi @ white
    log_norm = jnp.sum(jnp.log(jnp.diag(white))) - 0.5 * d * math.log(2 * math.pi)
    sq = jnp.sum((xi[:, None, :] - points[None, :, :]) ** 2, axis=-1)
    arg = log_norm - 0.5 * sq
    if in_log:
        return special.logsumexp(arg + jnp.log(weights)[None, :], axis=1)
    return jnp.sum(weights[None, :] * jnp.exp(arg), axis=1)


@functools.partial(olympus.jit, static_argnums=(2,))
def _resample(kde, key, shape):
    from olympus import random

    ind_key, eps_key = random.split(key)
    ind = random.choice(ind_key, kde.n, shape=shape, p=kde.weights)
    eps = random.multivariate_normal(eps_key, jnp.zeros(kde.d, kde.covariance.dtype),
                                     kde.covariance, shape=shape, dtype=kde.dataset.dtype)
    return kde.dataset[:, ind] + jnp.moveaxis(eps, -1, 0)
