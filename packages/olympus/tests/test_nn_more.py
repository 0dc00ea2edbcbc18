"""Tests for the later additions to `olympus.nn` (sparse_sigmoid, log1mexp, logmeanexp,
dot_product_attention) and `olympus.nn.initializers` (orthogonal, delta_orthogonal,
complex variance scaling): values against NumPy/SciPy references written out here,
gradients against finite differences or the closed-form derivative, and argument
errors."""

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


# --- dot_product_attention --------------------------------------------------------------------


def _np_attention(q, k, v, bias=None, visible=None, scale=None):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    g = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, g, axis=2), np.repeat(v, g, axis=2)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    if visible is not None:
        logits = np.where(visible, logits, -0.7 * np.finfo(np.float32).max)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", p, v)


RNG = np.random.default_rng(42)
B, T, S, N_HEADS, K_HEADS, H = 2, 5, 6, 4, 2, 8
Q = RNG.normal(size=(B, T, N_HEADS, H)).astype(np.float32)
KK = RNG.normal(size=(B, S, K_HEADS, H)).astype(np.float32)
V = RNG.normal(size=(B, S, K_HEADS, 3)).astype(np.float32)


def test_attention_basic_gqa_bias_scale():
    np.testing.assert_allclose(nn.dot_product_attention(Q, KK, V), _np_attention(Q, KK, V),
                               rtol=1e-5, atol=1e-5)
    bias = RNG.normal(size=(1, N_HEADS, T, S)).astype(np.float32)
    np.testing.assert_allclose(nn.dot_product_attention(Q, KK, V, bias, scale=0.3),
                               _np_attention(Q, KK, V, bias, scale=0.3), rtol=1e-5,
                               atol=1e-5)
    # Unbatched inputs, and multi-head attention with as many key heads as query heads.
    k4, v4 = np.repeat(KK, 2, axis=2), np.repeat(V, 2, axis=2)
    out = nn.dot_product_attention(Q[0], k4[0], v4[0], implementation="xla")
    assert out.shape == (T, N_HEADS, 3)
    np.testing.assert_allclose(out, _np_attention(Q, KK, V)[0], rtol=1e-5, atol=1e-5)


def test_attention_masks():
    t, s = np.arange(T)[:, None], np.arange(S)[None, :]
    mask = RNG.random((B, 1, T, S)) < 0.7
    mask[..., 0] = True  # every query sees at least one key
    causal = s <= t
    window = (s >= t - 1) & (s <= t + 2)
    got = nn.dot_product_attention(Q, KK, V, mask=jnp.asarray(mask), is_causal=True,
                                   local_window_size=(1, 2))
    want = _np_attention(Q, KK, V, visible=mask & causal & window)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    got = nn.dot_product_attention(Q, KK, V, local_window_size=1)
    want = _np_attention(Q, KK, V, visible=(s >= t - 1) & (s <= t + 1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_attention_sequence_lengths():
    ql, kl = np.array([3, 5]), np.array([4, 2])
    got = np.asarray(nn.dot_product_attention(Q, KK, V, query_seq_lengths=jnp.asarray(ql),
                                              key_value_seq_lengths=jnp.asarray(kl)))
    t, s = np.arange(T), np.arange(S)
    vis = ((t[None, :, None] < ql[:, None, None]) & (s[None, None, :] < kl[:, None, None]))
    want = _np_attention(Q, KK, V, visible=vis[:, None])
    want = want * (t[None, :, None, None] < ql[:, None, None, None])  # padded queries: 0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not got[0, 3:].any() and got[1].any()


def test_attention_gradient_and_jit_vmap():
    q, k, v = Q[:1, :3], KK[:1, :4], V[:1, :4]

    def loss(qq):
        return jnp.sum(nn.dot_product_attention(qq, k, v, is_causal=True) ** 2)

    g = np.asarray(olympus.jit(olympus.grad(loss))(jnp.asarray(q)))
    idx = [(0, 1, 2, 3), (0, 2, 0, 7), (0, 0, 3, 1)]
    for i in idx:
        def f(val, i=i):
            qq = q.astype(np.float64).copy()
            qq[i] = val
            return float(np.sum(_np_attention(qq, k, v, visible=np.tril(np.ones((3, 4),
                                                                                bool))) ** 2))
        fd = (f(q[i] + 1e-3) - f(q[i] - 1e-3)) / 2e-3
        np.testing.assert_allclose(g[i], fd, rtol=2e-3, atol=1e-4)
    batched = olympus.vmap(lambda qq: nn.dot_product_attention(qq, k[0], v[0]))(q[0][None])
    np.testing.assert_allclose(batched[0], _np_attention(q, k, v)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(query=Q[..., :4]), ValueError, "head dimension"),
    (dict(query=Q[:, :, :3]), ValueError, "multiple of the number of key/value heads"),
    (dict(value=V[:, :5]), ValueError, "same \\(B, S, K\\)"),
    (dict(query=Q[0]), ValueError, "rank 3"),
    (dict(mask=np.ones((B, 1, T, S), np.float32)), TypeError, "boolean"),
    (dict(bias=np.ones((3, 1, T, S), np.float32)), ValueError, "does not broadcast"),
    (dict(implementation="cudnn"), NotImplementedError, "CUDA"),
    (dict(implementation="fast"), ValueError, "unknown implementation"),
    (dict(local_window_size=(1, 2, 3)), ValueError, "local_window_size"),
])
def test_attention_errors(kwargs, exc, match):
    args = dict(query=Q, key=KK, value=V)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        nn.dot_product_attention(**args)


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
