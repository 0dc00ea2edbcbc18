"""Gradients of the gamma-family samplers with respect to their shape parameters (implicit
reparameterization through `olympus.lax.random_gamma_grad`): against finite differences
with the same key, E[d x / d a] = d E[x] / d a = 1, and log-space consistency."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus.random as R

# a = 1 is avoided: the sampler switches between its a < 1 and a >= 1 branches there, so
# finite differences across it compare different sampling paths.
A = np.array([0.3, 0.7, 2.5, 6.0])


x64 = olympus.enable_x64


def _column_means(sampler, n):
    key = R.PRNGKey(7)
    return olympus.jit(lambda a: jnp.mean(sampler(key, a, shape=(n, a.shape[0])), axis=0))


def _grad_of(means):
    return olympus.jit(olympus.grad(lambda a: jnp.sum(means(a))))


def test_gamma_sample_grad_is_the_implicit_derivative_float64():
    # each sample x_i depends on its own a_i only; its derivative holds the CDF value
    # P(a, x) fixed: d x / d a = -(dP/da) / (dP/dx), checked against SciPy
    special = pytest.importorskip("scipy.special")
    stats = pytest.importorskip("scipy.stats")
    a = np.repeat(A, 8)
    key = R.PRNGKey(5)
    with x64():
        x = np.asarray(R.gamma(key, a))
        got = np.asarray(olympus.grad(lambda a: jnp.sum(R.gamma(key, a)))(a))
        got_log = np.asarray(olympus.grad(lambda a: jnp.sum(R.loggamma(key, a)))(a))
        log_x = np.asarray(R.loggamma(key, a))
    h = 1e-6 * a
    dpda = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    want = -dpda / stats.gamma.pdf(x, a)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)
    # log space: d log x / d a at the log-space sample
    xl = np.exp(log_x)
    dpda = (special.gammainc(a + h, xl) - special.gammainc(a - h, xl)) / (2 * h)
    np.testing.assert_allclose(got_log, -dpda / stats.gamma.pdf(xl, a) / xl, rtol=1e-5,
                               atol=1e-8)


def test_gamma_grad_expectation_is_one_float32():
    # E[x] = a, so the mean over many samples of d x / d a is close to 1, and close to the
    # finite difference of the sample mean (the sampler's own noise-to-sample map differs
    # from the implicit one sample by sample, but not in expectation)
    a = np.array([0.3, 1.5, 4.0, 10.0], np.float32)
    means = _column_means(R.gamma, 4000)
    got = np.asarray(_grad_of(means)(a))
    np.testing.assert_allclose(got, 1.0, atol=0.06)
    h = 1e-2 * a
    fd = (np.asarray(means(a + h), np.float64) - np.asarray(means(a - h), np.float64)) / (2 * h)
    np.testing.assert_allclose(got, fd, atol=0.1)


def test_loggamma_grad_matches_gamma_grad_and_trigamma():
    key = R.PRNGKey(3)
    a = np.array([1.5, 3.0, 12.0], np.float32)
    # for a >= 1 the two samplers give the same samples, log x and x
    g_log = olympus.grad(lambda a: jnp.sum(R.loggamma(key, a, shape=(200, 3))))(a)
    g_lin = olympus.grad(lambda a: jnp.sum(jnp.log(R.gamma(key, a, shape=(200, 3)))))(a)
    np.testing.assert_allclose(g_log, g_lin, rtol=1e-4)
    # tiny a: the samples underflow in float32 but their logs (and gradients) are finite;
    # E[d log x / d a] = d E[log x] / d a = trigamma(a)
    special = pytest.importorskip("scipy.special")
    small = np.array([0.01, 0.05, 0.2], np.float32)
    got = np.asarray(_grad_of(_column_means(R.loggamma, 2000))(small))
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, special.polygamma(1, small), rtol=0.1)


def test_beta_and_dirichlet_grads_in_expectation():
    key = R.PRNGKey(11)
    n = 4000

    def beta_mean(ab):
        return jnp.mean(R.beta(key, ab[0], ab[1], shape=(n,)))

    a, b = 0.6, 2.5
    got = np.asarray(olympus.jit(olympus.grad(beta_mean))(np.array([a, b], np.float32)))
    # E[Beta(a, b)] = a / (a + b)
    np.testing.assert_allclose(got, [b / (a + b) ** 2, -a / (a + b) ** 2], atol=0.015)

    def dir_first(alpha):
        return jnp.mean(R.dirichlet(key, alpha, shape=(n,))[:, 0])

    alpha = np.array([0.5, 2.0, 3.0], np.float32)
    got = np.asarray(olympus.jit(olympus.grad(dir_first))(alpha))
    s = alpha.sum()
    # E[x_0] = alpha_0 / sum(alpha)
    want = np.array([(s - alpha[0]) / s ** 2, -alpha[0] / s ** 2, -alpha[0] / s ** 2])
    np.testing.assert_allclose(got, want, atol=0.015)
