"""Tests for `olympus.nn.dot_product_attention`: values against a NumPy reference written
out here (grouped-query heads, bias, scale, masks, sequence lengths), gradients against
finite differences, jit and vmap, and argument errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import nn

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
