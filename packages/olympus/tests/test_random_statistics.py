"""Statistical tests of the samplers of `olympus.random._transformed` and `_binomial`
(binomial, multinomial, f, wald, triangular, weibull_min, double_sided_maxwell,
generalized_normal, ball, orthogonal), which are not checked against recorded JAX streams.

The checks are statistical, with fixed keys: Kolmogorov-Smirnov tests against the
scipy.stats distribution for continuous samplers, chi-square goodness-of-fit tests against
the exact pmf for binomial counts, and exact identities (row sums, orthonormality). Each
test fails only if its p-value is below P_MIN, so a correct sampler passes with
overwhelming probability while a wrong distribution (a bias of a few percent with these
sample sizes) fails. Compiles dominate the run time, so every sampler is compiled for as
few shapes as possible: the vmap checks reuse the samples of the statistical checks.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats

import olympus
import olympus.numpy as jnp
from olympus import random as R

P_MIN = 1e-4
N = 6000
KEY = R.PRNGKey(20240611)


def _ks(x, cdf):
    x = np.asarray(x, np.float64).ravel()
    assert np.all(np.isfinite(x))
    p = stats.kstest(x, cdf).pvalue
    assert p > P_MIN, f"KS p-value {p:.3g}"


def _chisq_counts(x, pmf_support, pmf):
    """Chi-square goodness of fit of the integer samples `x` to `pmf` on `pmf_support`,
    pooling the bins with expected count < 5 into their neighbours."""
    x = np.asarray(x, np.float64).ravel()
    assert np.all(x == np.floor(x))
    n = len(x)
    observed = np.array([(x == k).sum() for k in pmf_support], np.float64)
    assert observed.sum() == n, "samples outside the support"
    expected = n * pmf
    obs_b, exp_b, o, e = [], [], 0.0, 0.0
    for oi, ei in zip(observed, expected):
        o, e = o + oi, e + ei
        if e >= 5:
            obs_b.append(o)
            exp_b.append(e)
            o = e = 0.0
    if e > 0:
        obs_b[-1] += o
        exp_b[-1] += e
    obs_b, exp_b = np.array(obs_b), np.array(exp_b)
    exp_b *= obs_b.sum() / exp_b.sum()
    p = stats.chisquare(obs_b, exp_b).pvalue
    assert p > P_MIN, f"chi-square p-value {p:.3g}"


# --- binomial ---------------------------------------------------------------------------------

# (n, p): inversion (n*p <= 10), BTRS, BTRS with p > 1/2 (flipped), and a large n.
BINOM_N = np.array([5.0, 20.0, 60.0, 1000.0, 200000.0], np.float32)
BINOM_P = np.array([0.5, 0.2, 0.7, 0.3, 0.01], np.float32)


@functools.cache
def _binomial_samples():
    keys = R.split(KEY, 2)
    sample = functools.partial(R.binomial, n=jnp.asarray(BINOM_N), p=jnp.asarray(BINOM_P),
                               shape=(N, 5))
    batched = olympus.jit(olympus.vmap(lambda k: sample(k)))(keys)
    direct = sample(keys[1])
    return np.asarray(batched), np.asarray(direct)


def test_binomial_shape_dtype_and_vmap():
    batched, direct = _binomial_samples()
    assert batched.shape == (2, N, 5) and batched.dtype == np.float32
    np.testing.assert_array_equal(batched[1], direct)
    assert not np.array_equal(batched[0], batched[1])


@pytest.mark.parametrize("col", range(5))
def test_binomial_distribution(col):
    batched, _ = _binomial_samples()
    x = batched[:, :, col].ravel()
    n, p = int(BINOM_N[col]), float(BINOM_P[col])
    lo, hi = stats.binom.ppf(1e-9, n, p), stats.binom.ppf(1 - 1e-9, n, p)
    assert x.min() >= 0 and x.max() <= n
    support = np.arange(min(lo, x.min()), max(hi, x.max()) + 1)
    _chisq_counts(x, support, stats.binom.pmf(support, n, p))


def test_binomial_broadcasting_and_edge_cases():
    # n (4, 1) against p (4,): the default shape is the broadcast (4, 4).
    n = jnp.asarray([[np.nan], [np.inf], [7.9], [-1.0]])
    p = jnp.asarray([0.0, 1.0, 1.5, 0.3])
    x = np.asarray(R.binomial(R.key(3), n, p))  # a typed key works as well
    assert x.shape == (4, 4) and x.dtype == np.float32
    # NaN or negative n, or p outside [0, 1]: NaN.
    assert np.all(np.isnan(x[0])) and np.all(np.isnan(x[3])) and np.all(np.isnan(x[:, 2]))
    # Infinite n: inf; p = 0 and p = 1 are deterministic; a fractional n is floored.
    np.testing.assert_array_equal(x[1, [0, 1, 3]], np.inf)
    np.testing.assert_array_equal(x[2, [0, 1]], [0.0, 7.0])
    assert x[2, 3] == np.floor(x[2, 3]) and 0 <= x[2, 3] <= 7


# --- multinomial ------------------------------------------------------------------------------

MULTI_P = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.0, 0.5, 0.25]], np.float32)
MULTI_N = np.array([50.0, 50.0], np.float32)


@functools.cache
def _multinomial_samples():
    keys = R.split(R.fold_in(KEY, 1), 2)

    def sample(k, p=MULTI_P, unroll=1):
        return R.multinomial(k, jnp.asarray(MULTI_N), jnp.asarray(p), shape=(N // 2, 2),
                             unroll=unroll)

    batched = olympus.jit(olympus.vmap(sample))(keys)
    # Unrolling the loop over outcomes does not change the counts.
    direct = sample(keys[0], unroll=2)
    # The same probabilities, unnormalized: the same compiled program, same counts.
    scaled = sample(keys[0], MULTI_P * 3.0, unroll=2)
    return np.asarray(batched), np.asarray(direct), np.asarray(scaled)


def test_multinomial_shape_sums_and_vmap():
    batched, direct, scaled = _multinomial_samples()
    assert batched.shape == (2, N // 2, 2, 4) and batched.dtype == np.float32
    np.testing.assert_array_equal(batched[0], direct)
    np.testing.assert_array_equal(scaled, direct)
    np.testing.assert_array_equal(batched.sum(-1), 50.0)
    assert np.all(batched >= 0)
    assert np.all(batched[..., 1, 1] == 0)  # a zero-probability outcome never occurs


@pytest.mark.parametrize("row", range(2))
def test_multinomial_distribution(row):
    batched, _, _ = _multinomial_samples()
    x = batched[:, :, row].reshape(-1, 4)
    p = MULTI_P[row].astype(np.float64)
    # Each count is Binomial(n, p_i); the covariances are -n p_i p_j.
    for i in range(4):
        if p[i] > 0:
            support = np.arange(0, 51)
            _chisq_counts(x[:, i], support, stats.binom.pmf(support, 50, p[i]))
    cov = 50.0 * (np.diag(p) - np.outer(p, p))
    sd = np.sqrt(np.outer(np.diag(cov), np.diag(cov)) + cov ** 2)  # sd of x_i x_j products
    np.testing.assert_allclose(np.cov(x.T), cov, atol=float(5 * sd.max() / math.sqrt(len(x))))


# --- continuous samplers: KS tests ------------------------------------------------------------


def test_weibull_min():
    scale, conc = jnp.asarray([1.0, 2.0]), jnp.asarray([0.5, 3.0])
    x = np.asarray(R.weibull_min(R.fold_in(KEY, 2), scale, conc, (N, 2)))
    assert x.shape == (N, 2) and x.dtype == np.float32
    _ks(x[:, 0], stats.weibull_min(0.5, scale=1.0).cdf)
    _ks(x[:, 1], stats.weibull_min(3.0, scale=2.0).cdf)


def test_double_sided_maxwell():
    loc, scale = jnp.asarray([0.0, 1.0]), jnp.asarray([1.0, 2.0])
    x = np.asarray(R.double_sided_maxwell(R.fold_in(KEY, 3), loc, scale, (N,)))
    # The shape argument is prepended to the parameters' broadcast shape.
    assert x.shape == (N, 2)
    for j, (m, s) in enumerate([(0.0, 1.0), (1.0, 2.0)]):
        _ks(x[:, j], lambda t, m=m, s=s: 0.5 + 0.5 * np.sign(t - m) * stats.maxwell.cdf(
            np.abs(t - m) / s))
        assert abs(np.mean(x[:, j] > m) - 0.5) < 5 * 0.5 / math.sqrt(N)


def test_f():
    x = np.asarray(R.f(R.fold_in(KEY, 4), jnp.asarray([5.0, 2.0]), 7.0, (N, 2)))
    assert x.shape == (N, 2)
    _ks(x[:, 0], stats.f(5, 7).cdf)
    _ks(x[:, 1], stats.f(2, 7).cdf)


def test_wald():
    x = np.asarray(R.wald(R.fold_in(KEY, 5), jnp.asarray([0.5, 3.0]), (N, 2)))
    assert x.shape == (N, 2) and np.all(x > 0)
    _ks(x[:, 0], stats.invgauss(0.5).cdf)
    _ks(x[:, 1], stats.invgauss(3.0).cdf)


def test_triangular_and_jit():
    left, mode, right = jnp.asarray([0.0, -1.0]), jnp.asarray([0.3, -1.0]), 2.0

    def sample(k):
        return R.triangular(k, left, mode, right, (N, 2))

    k = R.fold_in(KEY, 6)
    x = np.asarray(sample(k))
    np.testing.assert_array_equal(np.asarray(olympus.jit(sample)(k)), x)
    assert np.all((x >= np.asarray(left)) & (x <= 2.0))
    _ks(x[:, 0], stats.triang(0.3 / 2.0, loc=0.0, scale=2.0).cdf)
    _ks(x[:, 1], stats.triang(0.0, loc=-1.0, scale=3.0).cdf)


@pytest.mark.parametrize("p", [1.5, 1.0])
def test_generalized_normal(p):
    # p is a dynamic argument: both values share one compiled program.
    x = np.asarray(R.generalized_normal(R.fold_in(KEY, 7), p, (N,)))
    assert x.shape == (N,) and x.dtype == np.float32
    _ks(x, stats.gennorm(p).cdf)


@pytest.mark.parametrize("p", [2.0, 1.0])
def test_ball(p):
    x = np.asarray(R.ball(R.fold_in(KEY, 8), 3, p, (N,)))
    assert x.shape == (N, 3)
    norm = (np.abs(x.astype(np.float64)) ** p).sum(-1) ** (1 / p)
    assert np.all(norm <= 1 + 1e-6)
    # Uniform in the d-dimensional Lp ball: ||x||_p ** d is Uniform(0, 1) ...
    _ks(norm ** 3, stats.uniform().cdf)
    # ... and the coordinates are symmetric and exchangeable.
    np.testing.assert_allclose(x.mean(0), 0.0, atol=5 * x.std() / math.sqrt(N))
    np.testing.assert_allclose(np.abs(x).mean(0), np.abs(x).mean(), rtol=0.05)


# --- orthogonal -------------------------------------------------------------------------------


def test_orthogonal_haar():
    q = np.asarray(R.orthogonal(R.fold_in(KEY, 9), 3, (N // 2,)), np.float64)
    assert q.shape == (N // 2, 3, 3)
    eye = np.eye(3)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(eye, q.shape),
                               atol=1e-5)
    # Haar measure on O(3): every column is uniform on the sphere, so (Archimedes) every
    # entry is Uniform(-1, 1); and det = +1 or -1 with probability 1/2 each.
    for i, j in [(0, 0), (1, 2), (2, 1)]:
        _ks(q[:, i, j], stats.uniform(-1, 2).cdf)
    det = np.linalg.det(q)
    np.testing.assert_allclose(np.abs(det), 1.0, atol=1e-5)
    assert abs(np.mean(det > 0) - 0.5) < 5 * 0.5 / math.sqrt(len(det))


@pytest.mark.parametrize("n,m", [(2, 5), (5, 2)])
def test_orthogonal_semi(n, m):
    q = np.asarray(R.orthogonal(R.PRNGKey(1), n, (4,), m=m), np.float64)
    assert q.shape == (4, n, m)
    if n <= m:
        gram = q @ np.swapaxes(q, -1, -2)
    else:
        gram = np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(min(n, m)), gram.shape),
                               atol=1e-5)


def test_orthogonal_complex_is_unitary():
    q = np.asarray(R.orthogonal(R.PRNGKey(2), 3, (2,), dtype=jnp.complex64))
    assert q.dtype == np.complex64 and q.shape == (2, 3, 3)
    np.testing.assert_allclose(q @ np.conj(np.swapaxes(q, -1, -2)),
                               np.broadcast_to(np.eye(3), q.shape), atol=1e-5)
    assert np.abs(q.imag).max() > 0.01


# --- argument checking ------------------------------------------------------------------------


K0 = R.PRNGKey(0)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: R.binomial(K0, 10, 0.5, dtype=jnp.int32), ValueError, "float dtype"),
    (lambda: R.binomial(K0, jnp.ones(3), 0.5, shape=(2,)), ValueError, "broadcast"),
    (lambda: R.binomial(K0, 10, jnp.ones(2, jnp.complex64)), TypeError, "`p`"),
    (lambda: R.binomial(R.split(K0, 2), 10, 0.5), ValueError, "single key"),
    (lambda: R.multinomial(K0, 10, 0.5), ValueError, "at least one axis"),
    (lambda: R.multinomial(K0, jnp.ones(3), jnp.ones((2, 4)) / 4), ValueError, "broadcast"),
    (lambda: R.multinomial(K0, 10, jnp.ones((2, 4)) / 4, shape=(3,)), ValueError,
     "broadcast"),
    (lambda: R.multinomial(K0, 10, jnp.ones(4) / 4, dtype=jnp.int32), ValueError,
     "float dtype"),
    (lambda: R.weibull_min(K0, 1.0, 1.0, dtype=jnp.int32), ValueError, "float dtype"),
    (lambda: R.f(K0, jnp.ones(3), 1.0, shape=(2,)), ValueError, "broadcast"),
    (lambda: R.wald(K0, jnp.ones(3), shape=(3, 2)), ValueError, "broadcast"),
    (lambda: R.triangular(K0, 0.0, jnp.ones(2) / 2, 1.0, shape=(3,)), ValueError,
     "broadcast"),
    (lambda: R.generalized_normal(K0, jnp.ones(3), shape=(2,)), ValueError, "broadcast"),
    (lambda: R.ball(K0, 2.5), TypeError, "`d` must be an integer"),
    (lambda: R.ball(K0, -1), ValueError, "`d` must be nonnegative"),
    (lambda: R.ball(K0, 3, p=jnp.ones(2)), ValueError, "`p` must be a scalar"),
    (lambda: R.orthogonal(K0, 3.0), TypeError, "`n` must be an integer"),
    (lambda: R.orthogonal(K0, 3, m=-2), ValueError, "`m` must be nonnegative"),
    (lambda: R.orthogonal(K0, 3, dtype=jnp.int32), ValueError, "float or complex"),
    (lambda: R.double_sided_maxwell(K0, 0.0, 1.0, dtype=jnp.int32), ValueError,
     "float dtype"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_orthogonal_traced_n_needs_concrete():
    with pytest.raises(Exception, match="Concretization|concrete|traced"):
        olympus.jit(lambda n: R.orthogonal(K0, n))(3)
