"""Tests for `olympus.scipy.special` against `scipy.special` (skipped when SciPy is not
installed): values across dtypes and shapes (including 0-d and empty), the tails of the
normal-distribution functions, gradients against finite differences, jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.scipy import special as S

ss = pytest.importorskip("scipy.special")


x64 = olympus.enable_x64


def _rng(seed=0):
    return np.random.default_rng(seed)


#: name -> (olympus fn, scipy fn, input sampler(rng, shape) in float64)
UNARY = {
    "erf": (S.erf, ss.erf, lambda r, s: r.standard_normal(s) * 2),
    "erfc": (S.erfc, ss.erfc, lambda r, s: r.standard_normal(s) * 2),
    "erfinv": (S.erfinv, ss.erfinv, lambda r, s: r.uniform(-0.999, 0.999, s)),
    "gammaln": (S.gammaln, ss.gammaln, lambda r, s: r.uniform(0.1, 30, s)),
    "digamma": (S.digamma, ss.digamma, lambda r, s: r.uniform(0.1, 30, s)),
    "expit": (S.expit, ss.expit, lambda r, s: r.standard_normal(s) * 5),
    "logit": (S.logit, ss.logit, lambda r, s: r.uniform(0.001, 0.999, s)),
    "ndtr": (S.ndtr, ss.ndtr, lambda r, s: r.standard_normal(s) * 4),
    "log_ndtr": (S.log_ndtr, ss.log_ndtr, lambda r, s: r.standard_normal(s) * 6),
    "ndtri": (S.ndtri, ss.ndtri, lambda r, s: r.uniform(0.0001, 0.9999, s)),
    "entr": (S.entr, ss.entr, lambda r, s: r.uniform(0, 5, s)),
}

BINARY = {
    "xlogy": (S.xlogy, ss.xlogy, lambda r, s: (r.uniform(0, 3, s), r.uniform(0.01, 5, s))),
    "xlog1py": (S.xlog1py, ss.xlog1py,
                lambda r, s: (r.uniform(-3, 3, s), r.uniform(-0.99, 5, s))),
    "betaln": (S.betaln, ss.betaln, lambda r, s: (r.uniform(0.2, 10, s), r.uniform(0.2, 10, s))),
}

_RTOL32 = {"gammaln": 2e-5, "digamma": 2e-5, "betaln": 5e-5, "log_ndtr": 2e-5,
           "erfinv": 1e-5, "ndtri": 1e-5, "logit": 1e-5}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(), (0,), (9,), (2, 3)])
def test_unary_float32(name, shape):
    f, ref, sample = UNARY[name]
    x = sample(_rng(), shape).astype(np.float32)
    got = f(x)
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_allclose(np.asarray(got, np.float64), ref(x.astype(np.float64)),
                               rtol=_RTOL32.get(name, 3e-6), atol=1e-6)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float64(name):
    f, ref, sample = UNARY[name]
    with x64():
        x = sample(_rng(1), (40,))
        got = f(x)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, ref(x), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shape", [(), (0,), (9,), (2, 3)])
def test_binary_float32(name, shape):
    f, ref, sample = BINARY[name]
    a, b = (v.astype(np.float32) for v in sample(_rng(2), shape))
    got = f(a, b)
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_allclose(np.asarray(got, np.float64),
                               ref(a.astype(np.float64), b.astype(np.float64)),
                               rtol=_RTOL32.get(name, 3e-6), atol=1e-6)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float64_and_broadcasting(name):
    f, ref, sample = BINARY[name]
    with x64():
        a, b = sample(_rng(3), (4, 1))
        b = b.reshape(1, 4)
        got = f(a, b)
        assert got.shape == (4, 4)
        np.testing.assert_allclose(got, ref(a, b), rtol=1e-10)


def test_integer_inputs_promote_to_float():
    assert S.erf(np.array([0, 1])).dtype == np.float32
    np.testing.assert_allclose(S.gammaln(np.arange(1, 6)), ss.gammaln(np.arange(1, 6)),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(S.xlogy(2, 3), 2 * np.log(3), rtol=1e-6)


def test_special_values():
    np.testing.assert_array_equal(S.xlogy(np.float32(0), np.float32(0)), 0.0)
    np.testing.assert_array_equal(S.xlog1py(np.float32(0), np.float32(-1)), 0.0)
    assert float(S.xlogy(np.float32(1), np.float32(0))) == -np.inf
    np.testing.assert_array_equal(S.entr(np.array([0.0, -1.0], np.float32)), [0.0, -np.inf])
    np.testing.assert_array_equal(S.logit(np.array([0.0, 1.0, 0.5], np.float32)),
                                  [-np.inf, np.inf, 0.0])
    np.testing.assert_array_equal(S.ndtri(np.array([0.0, 1.0, 0.5], np.float32)),
                                  [-np.inf, np.inf, 0.0])
    assert np.isnan(np.asarray(S.ndtri(np.array([-0.5, 1.5, np.nan], np.float32)))).all()
    np.testing.assert_array_equal(S.erfinv(np.array([-1.0, 1.0], np.float32)),
                                  [-np.inf, np.inf])
    np.testing.assert_array_equal(S.ndtr(np.array([-np.inf, np.inf], np.float32)), [0, 1])
    assert float(S.log_ndtr(np.float32(-np.inf))) == -np.inf
    assert float(S.log_ndtr(np.float32(np.inf))) == 0.0


def test_normal_tails():
    # ndtri keeps full relative accuracy far into the tails (where 2p - 1 rounds to -1).
    p = np.logspace(-37, -2, 36).astype(np.float32)
    np.testing.assert_allclose(S.ndtri(p), ss.ndtri(p.astype(np.float64)), rtol=2e-6)
    np.testing.assert_allclose(S.ndtri(1 - np.float32(1e-6)), ss.ndtri(1 - 1e-6), rtol=1e-3)
    x = np.linspace(-40, 12, 105).astype(np.float32)
    np.testing.assert_allclose(S.log_ndtr(x), ss.log_ndtr(x.astype(np.float64)), rtol=1e-5,
                               atol=0)
    # (XLA's CPU code flushes float32 subnormals to zero: compare above the smallest normal.)
    # (XLA's float32 erfc is accurate to a few 1e-6 in the far tail.)
    np.testing.assert_allclose(S.ndtr(x), ss.ndtr(x.astype(np.float64)), rtol=1e-5,
                               atol=float(np.finfo(np.float32).tiny))
    with x64():
        p = np.logspace(-300, -1, 50)
        np.testing.assert_allclose(S.ndtri(p), ss.ndtri(p), rtol=1e-11)
        x = np.linspace(-60, 30, 181)
        np.testing.assert_allclose(S.log_ndtr(x), ss.log_ndtr(x), rtol=1e-10, atol=0)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp(axis, keepdims):
    a = _rng(4).standard_normal((3, 4)).astype(np.float32) * 10
    b = _rng(5).uniform(0.1, 2, (3, 4)).astype(np.float32)
    np.testing.assert_allclose(S.logsumexp(a, axis=axis, keepdims=keepdims),
                               ss.logsumexp(a, axis=axis, keepdims=keepdims), rtol=2e-6)
    np.testing.assert_allclose(S.logsumexp(a, axis=axis, b=b, keepdims=keepdims),
                               ss.logsumexp(a, axis=axis, b=b, keepdims=keepdims), rtol=2e-6)
    signed = b - 1.0
    out, sign = S.logsumexp(a, axis=axis, b=signed, keepdims=keepdims, return_sign=True)
    ref, ref_sign = ss.logsumexp(a, axis=axis, b=signed, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    np.testing.assert_array_equal(sign, ref_sign)


def test_softmax_log_softmax_default_all_axes():
    x = _rng(6).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(S.softmax(x), ss.softmax(x), rtol=1e-6)
    np.testing.assert_allclose(S.softmax(x, axis=1), ss.softmax(x, axis=1), rtol=1e-6)
    np.testing.assert_allclose(S.log_softmax(x), ss.log_softmax(x), rtol=1e-5, atol=1e-6)


# --- gradients ----------------------------------------------------------------------------

GRAD_UNARY = {
    "erf": (S.erf, lambda r: r.standard_normal(20)),
    "erfc": (S.erfc, lambda r: r.standard_normal(20)),
    "erfinv": (S.erfinv, lambda r: r.uniform(-0.9, 0.9, 20)),
    "gammaln": (S.gammaln, lambda r: r.uniform(0.5, 10, 20)),
    "expit": (S.expit, lambda r: r.standard_normal(20) * 3),
    "logit": (S.logit, lambda r: r.uniform(0.05, 0.95, 20)),
    "ndtr": (S.ndtr, lambda r: r.standard_normal(20) * 3),
    "log_ndtr": (S.log_ndtr, lambda r: r.standard_normal(20) * 4),
    "ndtri": (S.ndtri, lambda r: r.uniform(0.01, 0.99, 20)),
    "entr": (S.entr, lambda r: r.uniform(0.1, 3, 20)),
}


@pytest.mark.parametrize("name", sorted(GRAD_UNARY))
def test_unary_gradients(name):
    f, sample = GRAD_UNARY[name]
    with x64():
        x = sample(_rng(7))
        g = np.asarray(olympus.grad(lambda x: f(x).sum())(x))
        eps = 1e-6
        fd = (np.asarray(f(x + eps)) - np.asarray(f(x - eps))) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=2e-6, atol=1e-8)


def test_digamma_gradient_if_polygamma_available():
    with x64():
        x = np.array([0.5, 2.0, 7.0])
        try:
            g = np.asarray(olympus.grad(lambda x: S.digamma(x).sum())(x))
        except NotImplementedError as e:  # pragma: no cover - depends on the AD rules
            pytest.skip(f"digamma has no derivative rule: {e}")
        np.testing.assert_allclose(g, ss.polygamma(1, x), rtol=1e-8)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradients(name):
    f, _, sample = BINARY[name]
    with x64():
        a, b = sample(_rng(8), (10,))
        a = np.where(np.abs(a) < 0.05, 0.1, a)
        ga, gb = olympus.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(a, b)
        eps = 1e-6
        fda = (np.asarray(f(a + eps, b)) - np.asarray(f(a - eps, b))) / (2 * eps)
        fdb = (np.asarray(f(a, b + eps)) - np.asarray(f(a, b - eps))) / (2 * eps)
        np.testing.assert_allclose(ga, fda, rtol=2e-6, atol=1e-8)
        np.testing.assert_allclose(gb, fdb, rtol=2e-6, atol=1e-8)


def test_xlogy_gradients_are_finite_at_zero():
    g = olympus.grad(lambda x, y: S.xlogy(x, y).sum(), argnums=(0, 1))(
        np.array([0.0, 1.0], np.float32), np.array([0.0, 2.0], np.float32))
    assert np.all(np.isfinite(np.asarray(g[0]))) and np.all(np.isfinite(np.asarray(g[1])))


def test_logsumexp_gradient_with_weights():
    with x64():
        a = _rng(9).standard_normal(5)
        b = _rng(10).uniform(0.5, 2, 5)
        g = np.asarray(olympus.grad(lambda a: S.logsumexp(a, b=b))(a))
        w = b * np.exp(a)
        np.testing.assert_allclose(g, w / w.sum(), rtol=1e-12)


# --- transformations ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["erf", "gammaln", "ndtri", "log_ndtr", "logit"])
def test_jit_and_vmap(name):
    f, ref, sample = UNARY[name]
    x = sample(_rng(11), (3, 4)).astype(np.float32)
    eager = np.asarray(f(x))
    np.testing.assert_allclose(olympus.jit(f)(x), eager, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(olympus.vmap(f)(x), eager, rtol=1e-6, atol=1e-7)
    lse = olympus.vmap(lambda r: S.logsumexp(r))(jnp.asarray(x))
    np.testing.assert_allclose(lse, ss.logsumexp(x, axis=1), rtol=1e-6)
