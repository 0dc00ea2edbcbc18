"""Tests for `olympus.nn` (activations, softmax family, one_hot, standardize, sparse_sigmoid,
log1mexp, logmeanexp) and `olympus.nn.initializers` (orthogonal, delta_orthogonal and
complex variance scaling included): values against NumPy/SciPy references across dtypes
and shapes (including 0-d and empty), gradients against finite differences or closed
forms, jit and vmap, argument errors. (dot_product_attention: test_nn_attention.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special as sp

import olympus
import olympus.numpy as jnp
from olympus import nn
from olympus import random as R
from olympus.nn import initializers as init

x64 = olympus.enable_x64


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(x, 0)


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

#: name -> (olympus function, NumPy reference in float64)
UNARY = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "sigmoid": (nn.sigmoid, _sigmoid),
    "softplus": (nn.softplus, _softplus),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -_softplus(-x)),
    "silu": (nn.silu, lambda x: x * _sigmoid(x)),
    "swish": (nn.swish, lambda x: x * _sigmoid(x)),
    "gelu_tanh": (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi)
                                                             * (x + 0.044715 * x ** 3)))),
    "gelu_exact": (lambda x: nn.gelu(x, approximate=False),
                   lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "elu": (nn.elu, _elu),
    "elu_alpha": (lambda x: nn.elu(x, 0.5), lambda x: _elu(x, 0.5)),
    "celu": (lambda x: nn.celu(x, 2.0),
             lambda x: np.maximum(x, 0) + 2.0 * np.expm1(np.minimum(x, 0) / 2.0)),
    "selu": (nn.selu, lambda x: _SELU_S * _elu(x, _SELU_A)),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "leaky_relu_0.2": (lambda x: nn.leaky_relu(x, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "mish": (nn.mish, lambda x: x * np.tanh(_softplus(x))),
    "squareplus": (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    "sparse_plus": (nn.sparse_plus, lambda x: np.where(x <= -1, 0, np.where(
        x >= 1, x, (x + 1) ** 2 / 4))),
    "tanh": (nn.tanh, np.tanh),
}

#: Functions with kinks: finite differences are taken away from these points.
KINKS = {"relu": [0], "relu6": [0, 6], "leaky_relu": [0], "leaky_relu_0.2": [0],
         "hard_tanh": [-1, 1], "hard_sigmoid": [-3, 3], "hard_silu": [-3, 3],
         "sparse_plus": [-1, 1], "elu": [0], "elu_alpha": [0], "selu": [0], "soft_sign": [0],
         "celu": [0]}


def _sample(shape, dtype, seed=0, scale=4.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(dtype)


_TOL = {np.float32: 2e-6, np.float64: 1e-13, np.float16: 2e-3, jnp.bfloat16: 2e-2}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4)])
def test_unary_values_float32(name, shape):
    f, ref = UNARY[name]
    x = _sample(shape, np.float32)
    got = f(x)
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_allclose(np.asarray(got, np.float64), ref(x.astype(np.float64)),
                               rtol=5e-6, atol=5e-6)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_float64(name):
    f, ref = UNARY[name]
    with x64():
        x = _sample((50,), np.float64)
        got = f(x)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, ref(x), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16])
def test_unary_values_low_precision(name, dtype):
    f, ref = UNARY[name]
    x = _sample((20,), np.float32, scale=2.0).astype(dtype)
    got = f(x)
    assert got.dtype == np.dtype(dtype)
    tol = 1e-2 if dtype == np.float16 else 6e-2
    np.testing.assert_allclose(np.asarray(got, np.float64),
                               ref(np.asarray(x, np.float64)), rtol=tol, atol=tol)


def test_integer_inputs():
    x = np.array([-2, 0, 3], np.int32)
    r = nn.relu(x)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, [0, 0, 3])
    np.testing.assert_array_equal(nn.relu6(np.array([-1, 3, 9])), [0, 3, 6])
    s = nn.sigmoid(x)
    assert s.dtype == np.float32
    np.testing.assert_allclose(s, _sigmoid(x.astype(np.float64)), rtol=1e-6)


def test_nan_and_inf_propagation():
    x = np.array([np.nan, np.inf, -np.inf, 0.0], np.float32)
    r = np.asarray(nn.relu(x))
    assert np.isnan(r[0]) and r[1] == np.inf and r[2] == 0 and r[3] == 0
    assert np.signbit(r[3]) == np.signbit(np.maximum(np.float32(0), np.float32(0)))
    r6 = np.asarray(nn.relu6(x))
    assert np.isnan(r6[0]) and r6[1] == 6 and r6[2] == 0
    sp = np.asarray(nn.softplus(np.array([-1000.0, 1000.0, 0.0], np.float32)))
    np.testing.assert_allclose(sp, [0.0, 1000.0, np.log(2)], rtol=1e-6)
    ls = np.asarray(nn.log_sigmoid(np.array([-1000.0, 1000.0], np.float32)))
    np.testing.assert_allclose(ls, [-1000.0, 0.0])


# --- gradients -------------------------------------------------------------------------------


def _away_from_kinks(x, kinks, margin=1e-3):
    for k in kinks:
        x = np.where(np.abs(x - k) < margin, x + 3 * margin, x)
    return x


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradients_match_finite_differences(name):
    f, _ = UNARY[name]
    with x64():
        x = _away_from_kinks(_sample((40,), np.float64, seed=1, scale=3.0), KINKS.get(name, []))
        g = np.asarray(olympus.grad(lambda x: f(x).sum())(x))
        eps = 1e-6
        fd = (np.asarray(f(x + eps)) - np.asarray(f(x - eps))) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
        # Forward mode agrees with reverse mode.
        _, t = olympus.jvp(lambda x: f(x), (x,), (np.ones_like(x),))
        np.testing.assert_allclose(t, g, rtol=1e-12, atol=1e-14)


def test_gradients_at_kinks_follow_jax():
    g = olympus.grad(lambda x: nn.relu(x).sum())(np.array([0.0, -1.0, 2.0], np.float32))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])
    g = olympus.grad(lambda x: nn.relu6(x).sum())(np.array([0.0, 6.0, 3.0, 7.0], np.float32))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0, 0.0])
    g = olympus.grad(lambda x: nn.leaky_relu(x).sum())(np.array([0.0, -1.0], np.float32))
    np.testing.assert_allclose(g, [1.0, 0.01])
    g = olympus.grad(lambda x: nn.softplus(x).sum())(np.array([0.0, -200.0, 200.0],
                                                                np.float32))
    np.testing.assert_allclose(g, [0.5, 0.0, 1.0])
    assert np.all(np.isfinite(olympus.grad(lambda x: nn.elu(x).sum())(
        np.array([-200.0, 200.0], np.float32))))
    g = olympus.grad(lambda x: nn.hard_tanh(x).sum())(np.array([0.5, 2.0, -2.0], np.float32))
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0])


# --- softmax, log_softmax, logsumexp ----------------------------------------------------------


def _np_softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
def test_softmax_and_log_softmax(axis):
    x = _sample((3, 4), np.float32)
    s = np.asarray(nn.softmax(x, axis=axis))
    ref = _np_softmax(x.astype(np.float64), axis)
    np.testing.assert_allclose(s, ref, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(s.sum(axis=axis), 1.0, rtol=1e-6)
    ls = np.asarray(nn.log_softmax(x, axis=axis))
    np.testing.assert_allclose(ls, np.log(ref), rtol=2e-6, atol=2e-6)


def test_softmax_is_stable_and_handles_edge_shapes():
    big = np.array([1000.0, 1001.0, 1002.0], np.float32)
    np.testing.assert_allclose(nn.softmax(big), _np_softmax(big.astype(np.float64), -1),
                               rtol=1e-6)
    np.testing.assert_allclose(nn.log_softmax(-big), np.log(_np_softmax(
        -big.astype(np.float64), -1)), rtol=1e-6)
    assert nn.softmax(np.zeros((0, 3), np.float32)).shape == (0, 3)
    np.testing.assert_array_equal(nn.softmax(np.float32(3.0), axis=None), 1.0)
    inf = np.asarray(nn.softmax(np.array([-np.inf, 0.0], np.float32)))
    np.testing.assert_array_equal(inf, [0.0, 1.0])


def test_softmax_where():
    x = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], np.float32)
    w = np.array([[True, False, True], [True, True, False]])
    s = np.asarray(nn.softmax(x, where=w))
    np.testing.assert_allclose(s[0], [np.exp(1) / (np.exp(1) + np.exp(3)), 0,
                                      np.exp(3) / (np.exp(1) + np.exp(3))], rtol=1e-6)
    np.testing.assert_allclose(s[1], [0.5, 0.5, 0.0], rtol=1e-6)
    ls = np.asarray(nn.log_softmax(x, where=w))
    assert ls[0, 1] == -np.inf and ls[1, 2] == -np.inf
    np.testing.assert_allclose(ls[1, :2], np.log(0.5), rtol=1e-6)


def test_softmax_gradients():
    with x64():
        x = _sample((4,), np.float64, seed=3)
        v = _sample((4,), np.float64, seed=4)
        s = _np_softmax(x, -1)
        jac = np.diag(s) - np.outer(s, s)
        g = np.asarray(olympus.grad(lambda x: (nn.softmax(x) * v).sum())(x))
        np.testing.assert_allclose(g, jac.T @ v, rtol=1e-12)
        g = np.asarray(olympus.grad(lambda x: (nn.log_softmax(x) * v).sum())(x))
        np.testing.assert_allclose(g, v - s * v.sum(), rtol=1e-12)
        g = np.asarray(olympus.grad(lambda x: nn.logsumexp(x))(x))
        np.testing.assert_allclose(g, s, rtol=1e-12)
        # Large inputs: the stop-gradient shift keeps the gradient exact.
        g = np.asarray(olympus.grad(lambda x: nn.logsumexp(x))(x + 1e4))
        np.testing.assert_allclose(g, s, rtol=1e-9)


def _np_logsumexp(a, axis=None, b=None, keepdims=False):
    a = np.asarray(a, np.float64)
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(a - m) * (1 if b is None else b)
    s = e.sum(axis=axis, keepdims=True)
    out = np.log(np.abs(s)) + m
    sign = np.sign(s)
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
        sign = np.squeeze(sign, axis=axis) if axis is not None else sign.reshape(())
    return out, sign


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp(axis, keepdims):
    a = _sample((3, 5), np.float32)
    got = nn.logsumexp(a, axis=axis, keepdims=keepdims)
    ref, _ = _np_logsumexp(a, axis=axis, keepdims=keepdims)
    assert got.shape == ref.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, ref, rtol=2e-6)


def test_logsumexp_weights_sign_and_where():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    ref, sign = _np_logsumexp(a, b=b)
    out, s = nn.logsumexp(a, b=b, return_sign=True)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    assert float(s) == sign
    # A negative sum without return_sign is NaN.
    assert np.isnan(float(nn.logsumexp(a, b=-np.abs(b))))
    # Zero weights exclude elements, even infinite ones.
    np.testing.assert_allclose(nn.logsumexp(np.array([0.0, np.inf], np.float32),
                                            b=np.array([1.0, 0.0], np.float32)), 0.0)
    w = np.array([True, False, True])
    np.testing.assert_allclose(nn.logsumexp(a, where=w), np.logaddexp(1.0, 3.0), rtol=1e-6)
    # Edge values: all -inf gives -inf, +inf gives inf, 0-d and empty inputs.
    assert float(nn.logsumexp(np.array([-np.inf, -np.inf], np.float32))) == -np.inf
    assert float(nn.logsumexp(np.array([np.inf, 0.0], np.float32))) == np.inf
    np.testing.assert_allclose(nn.logsumexp(np.float32(2.5)), 2.5)
    assert float(nn.logsumexp(np.zeros((0,), np.float32))) == -np.inf
    assert nn.logsumexp(np.zeros((0, 3), np.float32), axis=0).shape == (3,)
    assert nn.logsumexp(np.array([1, 2], np.int32)).dtype == np.float32


# --- one_hot, standardize, glu -----------------------------------------------------------------


def test_one_hot():
    x = np.array([0, 2, 5, -1])
    oh = np.asarray(nn.one_hot(x, 4))
    assert oh.dtype == np.float32 and oh.shape == (4, 4)
    np.testing.assert_array_equal(oh, [[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    oh0 = np.asarray(nn.one_hot(np.array([[1, 0]]), 3, axis=0, dtype=jnp.int32))
    assert oh0.dtype == np.int32 and oh0.shape == (3, 1, 2)
    np.testing.assert_array_equal(oh0[:, 0, :], [[0, 1], [1, 0], [0, 0]])
    np.testing.assert_array_equal(nn.one_hot(2, 3), [0, 0, 1])
    assert nn.one_hot(np.zeros((0,), np.int32), 3).shape == (0, 3)
    batched = olympus.vmap(lambda i: nn.one_hot(i, 3))(np.array([2, 1]))
    np.testing.assert_array_equal(batched, [[0, 0, 1], [0, 1, 0]])
    jitted = olympus.jit(lambda i: nn.one_hot(i, 3, dtype=jnp.bool_))(np.array([1]))
    np.testing.assert_array_equal(jitted, [[False, True, False]])


@pytest.mark.parametrize("algorithm", ["fast", "stable"])
@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_standardize(axis, algorithm):
    x = _sample((4, 6), np.float32, scale=3.0) + 2.0
    got = np.asarray(nn.standardize(x, axis=axis, algorithm=algorithm))
    x64_ = x.astype(np.float64)
    m = x64_.mean(axis=axis, keepdims=True)
    v = x64_.var(axis=axis, keepdims=True)
    np.testing.assert_allclose(got, (x64_ - m) / np.sqrt(v + 1e-5), rtol=1e-4, atol=1e-5)


def test_standardize_given_stats_and_where():
    x = np.array([[1.0, 2.0, 3.0, 100.0]], np.float32)
    got = nn.standardize(x, mean=0.0, variance=1.0, epsilon=0.0)
    np.testing.assert_allclose(got, x)
    w = np.array([[True, True, True, False]])
    got = np.asarray(nn.standardize(x, where=w))
    np.testing.assert_allclose(got[0, :3], (np.array([1, 2, 3]) - 2) / np.sqrt(2 / 3 + 1e-5),
                               rtol=1e-5)
    with pytest.raises(ValueError):
        nn.standardize(x, algorithm="slow")


def test_glu():
    x = _sample((2, 6), np.float32)
    got = nn.glu(x)
    np.testing.assert_allclose(got, x[:, :3] * _sigmoid(x[:, 3:].astype(np.float64)),
                               rtol=1e-6)
    np.testing.assert_allclose(nn.glu(x, axis=0), x[:1] * _sigmoid(x[1:].astype(np.float64)),
                               rtol=1e-6)
    with pytest.raises(ValueError):
        nn.glu(np.zeros((3,), np.float32))


# --- transformations ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["relu", "gelu_tanh", "softplus", "silu", "elu", "relu6"])
def test_jit_and_vmap(name):
    f, ref = UNARY[name]
    x = _sample((3, 5), np.float32)
    np.testing.assert_allclose(olympus.jit(f)(x), f(x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(olympus.vmap(f)(x), f(x), rtol=1e-6, atol=1e-7)
    sm = olympus.vmap(lambda r: nn.softmax(r))(x)
    np.testing.assert_allclose(sm, nn.softmax(x, axis=-1), rtol=1e-6)
    lse = olympus.jit(olympus.vmap(lambda r: nn.logsumexp(r)))(x)
    np.testing.assert_allclose(lse, nn.logsumexp(x, axis=1), rtol=1e-6)


def test_hessian_of_log_softmax_objective():
    with x64():
        x = _sample((3,), np.float64, seed=5)
        h = np.asarray(olympus.hessian(lambda x: nn.logsumexp(x))(x))
        s = _np_softmax(x, -1)
        np.testing.assert_allclose(h, np.diag(s) - np.outer(s, s), rtol=1e-10, atol=1e-12)


# --- initializers ----------------------------------------------------------------------------


def test_constant_initializers():
    k = R.PRNGKey(0)
    z = init.zeros(k, (2, 3))
    assert z.dtype == np.float32 and z.shape == (2, 3) and not np.asarray(z).any()
    o = init.ones(k, (4,), jnp.float16)
    assert o.dtype == np.float16 and (np.asarray(o) == 1).all()
    c = init.constant(-7.0)(k, (2, 2))
    np.testing.assert_array_equal(c, np.full((2, 2), -7.0))
    c = init.constant(3, dtype=jnp.int32)(k, (3,))
    assert c.dtype == np.int32
    assert init.zeros(k, ()).shape == ()
    with x64():
        assert init.zeros(k, (1,)).dtype == np.float64


def test_simple_random_initializers_follow_random():
    k = R.PRNGKey(1)
    np.testing.assert_array_equal(init.uniform(0.5)(k, (3, 4)),
                                  np.asarray(R.uniform(k, (3, 4))) * np.float32(0.5))
    np.testing.assert_array_equal(init.normal(2.0)(k, (5,)),
                                  np.asarray(R.normal(k, (5,))) * np.float32(2.0))
    np.testing.assert_array_equal(init.truncated_normal(0.1)(k, (5,)),
                                  np.asarray(R.truncated_normal(k, -2.0, 2.0, (5,)))
                                  * np.float32(0.1))
    assert init.normal()(k, (2,), jnp.float16).dtype == np.float16
    assert init.uniform(dtype=jnp.bfloat16)(k, (2,)).dtype == jnp.bfloat16


def test_compute_fans():
    assert init._compute_fans((3, 4)) == (3, 4)
    assert init._compute_fans((5, 5, 3, 8)) == (75, 200)  # conv HWIO kernel
    assert init._compute_fans((2, 3, 4), in_axis=1, out_axis=2, batch_axis=0) == (3, 4)
    assert init._compute_fans((2, 3, 4), in_axis=(0, 1), out_axis=2) == (6, 4)
    with pytest.raises(ValueError):
        init._compute_fans((3,))


VS = {
    "glorot_uniform": (init.glorot_uniform, lambda fi, fo: 2 / (fi + fo)),
    "glorot_normal": (init.glorot_normal, lambda fi, fo: 2 / (fi + fo)),
    "xavier_uniform": (init.xavier_uniform, lambda fi, fo: 2 / (fi + fo)),
    "lecun_uniform": (init.lecun_uniform, lambda fi, fo: 1 / fi),
    "lecun_normal": (init.lecun_normal, lambda fi, fo: 1 / fi),
    "he_uniform": (init.he_uniform, lambda fi, fo: 2 / fi),
    "he_normal": (init.he_normal, lambda fi, fo: 2 / fi),
    "kaiming_normal": (init.kaiming_normal, lambda fi, fo: 2 / fi),
    "vs_fan_out_normal": (lambda: init.variance_scaling(3.0, "fan_out", "normal"),
                          lambda fi, fo: 3 / fo),
    "vs_geo_uniform": (lambda: init.variance_scaling(1.0, "fan_geo_avg", "uniform"),
                       lambda fi, fo: 1 / math.sqrt(fi * fo)),
}


@pytest.mark.parametrize("name", sorted(VS))
def test_variance_scaling_statistics(name):
    factory, variance = VS[name]
    shape = (200, 150)
    w = np.asarray(factory()(R.PRNGKey(2), shape), np.float64)
    assert w.shape == shape
    np.testing.assert_allclose(w.var(), variance(*shape), rtol=0.05)
    assert abs(w.mean()) < 5 * math.sqrt(variance(*shape) / w.size)
    if "uniform" in name:
        limit = math.sqrt(3 * variance(*shape))
        assert np.abs(w).max() <= limit
    if name in ("glorot_normal", "lecun_normal", "he_normal"):
        # Truncated at two (untruncated) standard deviations.
        assert np.abs(w).max() < 2 * math.sqrt(variance(*shape)) / .87962566103423978


def test_variance_scaling_formula_matches_random():
    k = R.PRNGKey(3)
    shape = (3, 5)
    var = np.float32(1.0 / ((3 + 5) / 2))
    want = np.asarray(R.uniform(k, shape, jnp.float32, -1)) * np.sqrt(np.float32(3) * var)
    np.testing.assert_allclose(init.glorot_uniform()(k, shape), want, rtol=1e-7)
    want = (np.asarray(R.truncated_normal(k, -2, 2, shape)) * np.sqrt(np.float32(2 / 3))
            / np.float32(.87962566103423978))
    np.testing.assert_allclose(init.he_normal()(k, shape), want, rtol=1e-6)


def test_initializers_under_jit_and_vmap_and_errors():
    k = R.PRNGKey(4)
    f = olympus.jit(lambda k: init.he_uniform()(k, (4, 3)))
    np.testing.assert_array_equal(f(k), init.he_uniform()(k, (4, 3)))
    ws = olympus.vmap(lambda k: init.lecun_normal()(k, (2, 2)))(R.split(k, 3))
    assert ws.shape == (3, 2, 2)
    np.testing.assert_allclose(ws[1], init.lecun_normal()(R.split(k, 3)[1], (2, 2)),
                               rtol=1e-6)
    with x64():
        assert init.glorot_normal()(k, (2, 2)).dtype == np.float64
    assert init.glorot_normal(dtype=jnp.float16)(k, (2, 2)).dtype == np.float16
    with pytest.raises(ValueError):
        init.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError):
        init.glorot_uniform()(k, (5,))
    typed = init.glorot_uniform()(R.key(4), (4, 3))
    np.testing.assert_array_equal(typed, init.glorot_uniform()(R.PRNGKey(4), (4, 3)))


# --- the jax.nn namespace; sparse_sigmoid, log1mexp, logmeanexp; more initializers ----------

# jax.nn's public functions (jax 0.10 docs) other than the cuDNN-only block-scaled matmul
# helpers (scaled_matmul, scaled_dot_general, get_scaled_dot_general_config).
JAX_NN_NAMES = """
relu relu6 sigmoid softplus sparse_plus sparse_sigmoid soft_sign silu swish log_sigmoid
leaky_relu hard_sigmoid hard_silu hard_swish hard_tanh tanh elu celu selu gelu glu squareplus
mish identity softmax log_softmax logmeanexp logsumexp standardize one_hot
dot_product_attention log1mexp initializers
""".split()

JAX_INIT_NAMES = """
constant delta_orthogonal glorot_normal glorot_uniform he_normal he_uniform kaiming_normal
kaiming_uniform lecun_normal lecun_uniform normal ones orthogonal truncated_normal uniform
variance_scaling xavier_normal xavier_uniform zeros Initializer
""".split()


def test_namespace_covers_jax_nn():
    assert [n for n in JAX_NN_NAMES if not hasattr(nn, n)] == []
    assert [n for n in JAX_INIT_NAMES if not hasattr(init, n)] == []
    assert set(JAX_NN_NAMES) <= set(nn.__all__)


def _fd_grad(f, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    return np.array([(f(xi + eps) - f(xi - eps)) / (2 * eps) for xi in x])


# --- sparse_sigmoid, log1mexp -----------------------------------------------------------------


def test_sparse_sigmoid_values_and_gradient():
    x = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0], np.float32)
    want = np.where(x <= -1, 0.0, np.where(x >= 1, 1.0, (x + 1) / 2))
    np.testing.assert_allclose(nn.sparse_sigmoid(x), want, rtol=1e-6)
    g = olympus.vmap(olympus.grad(nn.sparse_sigmoid))(jnp.asarray([-3.0, -0.5, 0.25, 2.0]))
    np.testing.assert_allclose(g, [0.0, 0.5, 0.5, 0.0])
    # sparse_sigmoid is the derivative of sparse_plus.
    xs = jnp.asarray([-0.7, 0.1, 0.9])
    np.testing.assert_allclose(olympus.vmap(olympus.grad(nn.sparse_plus))(xs),
                               nn.sparse_sigmoid(xs), rtol=1e-6)
    assert nn.sparse_sigmoid(jnp.asarray([1, 2])).dtype == np.float32


def test_log1mexp_values_and_gradient():
    x = np.array([1e-6, 1e-3, 0.3, math.log(2), 0.9, 5.0, 20.0], np.float64)
    want = np.log(-np.expm1(-x))
    got = np.asarray(nn.log1mexp(x.astype(np.float32)), np.float64)
    np.testing.assert_allclose(got, want, rtol=2e-6)
    # d/dx log(1 - exp(-x)) = 1 / expm1(x); finite everywhere on x > 0.
    g = np.asarray(olympus.vmap(olympus.grad(nn.log1mexp))(jnp.asarray(x, np.float32)))
    np.testing.assert_allclose(g, 1 / np.expm1(x), rtol=1e-4)
    assert np.isnan(np.asarray(nn.log1mexp(jnp.asarray([-1.0])))).all()
    assert np.asarray(nn.log1mexp(jnp.asarray([0.0])))[0] == -np.inf


# --- logmeanexp -------------------------------------------------------------------------------


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ((0, 2), True),
                                           (-1, True)])
def test_logmeanexp(axis, keepdims):
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32) * 5
    ax = axis
    count = x.size if ax is None else (
        x.shape[ax] if isinstance(ax, int) else math.prod(x.shape[a] for a in ax))
    want = sp.logsumexp(x.astype(np.float64), axis=ax, keepdims=keepdims) - math.log(count)
    got = nn.logmeanexp(x, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_logmeanexp_where_and_gradient():
    x = np.array([[1000.0, 1001.0, -3.0], [0.5, -0.5, 2.0]], np.float32)
    w = np.array([[True, True, False], [True, False, True]])
    got = np.asarray(nn.logmeanexp(x, axis=1, where=w))
    want = [1000 + np.log((1 + np.e) / 2), np.log((np.exp(0.5) + np.exp(2.0)) / 2)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # The gradient is the softmax over the selected elements.
    g = np.asarray(olympus.grad(lambda v: nn.logmeanexp(v, where=jnp.asarray(w[1])))(
        jnp.asarray(x[1])))
    e = np.where(w[1], np.exp(x[1].astype(np.float64)), 0)
    np.testing.assert_allclose(g, e / e.sum(), rtol=1e-5)


# --- initializers -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape,column_axis", [((4, 4), -1), ((6, 3), -1), ((2, 7), -1),
                                               ((3, 4, 5), -1), ((3, 4, 5), 0),
                                               ((2, 3, 2, 8), 1)])
def test_orthogonal_initializer(shape, column_axis):
    w = init.orthogonal(scale=2.0, column_axis=column_axis)(R.PRNGKey(0), shape)
    assert w.shape == shape and w.dtype == np.float32
    w = np.asarray(w, np.float64)
    n_cols = shape[column_axis]
    m = np.moveaxis(w, column_axis, -1).reshape(-1, n_cols) / 2.0
    if m.shape[0] >= n_cols:
        np.testing.assert_allclose(m.T @ m, np.eye(n_cols), atol=1e-5)  # Q^T Q = I
    else:
        np.testing.assert_allclose(m @ m.T, np.eye(m.shape[0]), atol=1e-5)


def test_orthogonal_initializer_dtype_jit_vmap_and_spread():
    k = R.PRNGKey(1)
    f = init.orthogonal(dtype=jnp.float16)
    assert f(k, (3, 3)).dtype == np.float16
    w = init.orthogonal()(k, (4, 4))
    np.testing.assert_allclose(olympus.jit(lambda kk: init.orthogonal()(kk, (4, 4)))(k), w,
                               rtol=1e-6, atol=1e-6)
    ws = np.asarray(olympus.jit(olympus.vmap(lambda kk: init.orthogonal()(kk, (4, 4))))(
        R.split(k, 200)))
    np.testing.assert_allclose(ws[0], init.orthogonal()(R.split(k, 200)[0], (4, 4)),
                               rtol=1e-5, atol=1e-6)
    # Haar: every entry has mean 0 and variance 1/n over many draws.
    assert abs(ws.mean()) < 5 * 0.5 / math.sqrt(ws.size)
    np.testing.assert_allclose(ws.var(), 1 / 4, rtol=0.1)


@pytest.mark.parametrize("shape", [(3, 4, 4), (3, 5, 2, 6), (1, 3, 4, 3, 3)])
def test_delta_orthogonal(shape):
    w = np.asarray(init.delta_orthogonal(scale=1.5)(R.PRNGKey(2), shape), np.float64)
    assert w.shape == shape
    centre = tuple((k - 1) // 2 for k in shape[:-2])
    mat = w[centre] / 1.5
    np.testing.assert_allclose(mat @ mat.T, np.eye(shape[-2]), atol=1e-5)
    rest = w.copy()
    rest[centre] = 0
    assert not rest.any()


@pytest.mark.parametrize("call,exc,match", [
    (lambda: init.orthogonal()(R.PRNGKey(0), (5,)), ValueError, "rank >= 2"),
    (lambda: init.orthogonal(column_axis=2)(R.PRNGKey(0), (5, 3)), ValueError,
     "out of range"),
    (lambda: init.orthogonal(column_axis=1.0)(R.PRNGKey(0), (5, 3)), TypeError,
     "must be an integer"),
    (lambda: init.delta_orthogonal()(R.PRNGKey(0), (4, 4)), ValueError, "3D, 4D or 5D"),
    (lambda: init.delta_orthogonal()(R.PRNGKey(0), (3, 5, 4)), ValueError,
     "fan_in <= fan_out"),
    (lambda: init.variance_scaling(1.0, "fan_in", "normal")(R.PRNGKey(0), (2, 2), jnp.int32),
     TypeError, "float or complex"),
])
def test_initializer_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("distribution", ["normal", "uniform", "truncated_normal"])
def test_complex_variance_scaling(distribution):
    shape = (300, 200)
    z = np.asarray(init.variance_scaling(2.0, "fan_in", distribution)(R.PRNGKey(3), shape,
                                                                      jnp.complex64))
    assert z.dtype == np.complex64 and z.shape == shape
    var = 2.0 / 300
    np.testing.assert_allclose((np.abs(z.astype(np.complex128)) ** 2).mean(), var,
                               rtol=0.03)
    assert abs(z.mean()) < 5 * math.sqrt(var / z.size)
    # Circular symmetry: real and imaginary parts have equal variance, no correlation.
    np.testing.assert_allclose(z.real.var(), z.imag.var(), rtol=0.05)
    assert abs(np.corrcoef(z.real.ravel(), z.imag.ravel())[0, 1]) < 0.02
    r = np.abs(z)
    if distribution == "uniform":
        assert r.max() <= math.sqrt(2 * var) * (1 + 1e-6)
    if distribution == "truncated_normal":
        mean_sq = (1 - 5 * math.exp(-4.0)) / -math.expm1(-4.0)
        assert r.max() <= 2 * math.sqrt(var / mean_sq) * (1 + 1e-6)


def test_relu_of_a_weak_value_is_weak():
    """Found by the fuzzer: relu keeps a weakly typed input weak (JAX 0.10.2's result),
    NaN propagating, gradient 0 at 0."""
    out = nn.relu(jnp.asarray(3.0))
    assert out.weak_type and float(out) == 3.0
    assert nn.relu(jnp.asarray(-3.0)).weak_type and not nn.relu(jnp.float32(2)).weak_type
    assert np.isnan(float(nn.relu(jnp.asarray(float("nan")))))
    assert float(olympus.grad(nn.relu)(0.0)) == 0.0
