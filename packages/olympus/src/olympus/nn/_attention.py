"""`olympus.nn.dot_product_attention`: the portable XLA formulation (einsum, mask, float32
softmax, einsum)."""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import numpy as jnp

__all__ = ["dot_product_attention"]


# --- attention --------------------------------------------------------------------------------


def _window(local_window_size):
    if local_window_size is None:
        return None
    if isinstance(local_window_size, (tuple, list)):
        if len(local_window_size) != 2:
            raise ValueError(f"dot_product_attention: `local_window_size` must be an int or "
                             f"a (left, right) pair, got {local_window_size!r}")
        left, right = (operator.index(w) for w in local_window_size)
    else:
        left = right = operator.index(local_window_size)
    if left < 0 or right < 0:
        raise ValueError(f"dot_product_attention: `local_window_size` must be nonnegative, "
                         f"got {local_window_size!r}")
    return left, right


def _to_bnts(name, x, shape4):
    x = jnp.asarray(x)
    if x.ndim > 4:
        raise ValueError(f"dot_product_attention: `{name}` must have rank <= 4 (broadcastable "
                         f"to (B, N, T, S) = {shape4}), got shape {x.shape}")
    try:
        np.broadcast_shapes(x.shape, shape4)
    except ValueError:
        raise ValueError(f"dot_product_attention: `{name}` of shape {x.shape} does not "
                         f"broadcast to (B, N, T, S) = {shape4}") from None
    return x


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None):
    """Scaled dot-product attention ``softmax(Q K^T * scale + bias) V`` per head.

    `query` is (B, T, N, H) or (T, N, H); `key` and `value` are (B, S, K, H) (or unbatched)
    with N a multiple of K (grouped-query attention: query head n attends with key/value
    head n // (N // K)). `bias` and the boolean `mask` broadcast to (B, N, T, S); `mask`,
    `is_causal` (query t sees keys s <= t), `local_window_size` (t - left <= s <= t +
    right) and the sequence lengths select the visible logits, the others are replaced by
    a large negative number. The softmax runs in float32. `scale` defaults to
    1 / sqrt(H). Only the portable XLA implementation exists (``implementation`` None or
    "xla")."""
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise NotImplementedError("dot_product_attention(implementation='cudnn') needs a "
                                      "CUDA GPU with cuDNN; Olympus runs on CPU only. Use "
                                      "implementation=None or 'xla'.")
        raise ValueError(f"dot_product_attention: unknown implementation "
                         f"{implementation!r}; expected None, 'xla' or 'cudnn'")
    q, k, v = jnp.asarray(query), jnp.asarray(key), jnp.asarray(value)
    if not (q.ndim == k.ndim == v.ndim) or q.ndim not in (3, 4):
        raise ValueError(f"dot_product_attention: query, key and value must all have rank 3 "
                         f"(T, N, H) or 4 (B, T, N, H), got shapes {q.shape}, {k.shape}, "
                         f"{v.shape}")
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    b, t, n, h = q.shape
    if k.shape[0] != b or v.shape[0] != b:
        raise ValueError(f"dot_product_attention: batch sizes differ: query {q.shape}, key "
                         f"{k.shape}, value {v.shape}")
    if k.shape[:3] != v.shape[:3]:
        raise ValueError(f"dot_product_attention: key and value must have the same (B, S, K) "
                         f"dimensions, got key {k.shape} and value {v.shape}")
    if k.shape[-1] != h:
        raise ValueError(f"dot_product_attention: query and key must have the same head "
                         f"dimension H, got query {q.shape} and key {k.shape}")
    s, kh = k.shape[1], k.shape[2]
    if kh == 0 or n % kh:
        raise ValueError(f"dot_product_attention: the number of query heads ({n}) must be a "
                         f"multiple of the number of key/value heads ({kh})")
    if n != kh:
        k = jnp.repeat(k, n // kh, axis=2)
        v = jnp.repeat(v, n // kh, axis=2)
    logits_dtype = jnp.promote_types(q.dtype, np.float32)
    logits = jnp.einsum("btnh,bsnh->bnts", q, k).astype(logits_dtype)
    scale = 1.0 / math.sqrt(h) if scale is None else scale
    logits = logits * jnp.asarray(scale, logits_dtype)
    shape4 = (b, n, t, s)
    if bias is not None:
        bias = _to_bnts("bias", bias, shape4)
        logits = (logits + bias).astype(logits_dtype)

    visible = None

    def both(m):
        return m if visible is None else jnp.logical_and(visible, m)

    if mask is not None:
        mask = jnp.asarray(mask)
        if mask.dtype != np.bool_:
            raise TypeError(f"dot_product_attention: `mask` must be a boolean array, got "
                            f"dtype {mask.dtype}")
        visible = both(_to_bnts("mask", mask, shape4))
    ti = np.arange(t)[:, None]
    si = np.arange(s)[None, :]
    if is_causal:
        visible = both(jnp.asarray(si <= ti))
    window = _window(local_window_size)
    if window is not None:
        visible = both(jnp.asarray((si >= ti - window[0]) & (si <= ti + window[1])))
    if query_seq_lengths is not None:
        ql = jnp.asarray(query_seq_lengths).reshape(b, 1, 1, 1)
        visible = both(jnp.asarray(ti)[None, None] < ql)
    if key_value_seq_lengths is not None:
        kl = jnp.asarray(key_value_seq_lengths).reshape(b, 1, 1, 1)
        visible = both(jnp.asarray(si)[None, None] < kl)
    if visible is not None:
        big_negative = jnp.asarray(-0.7 * float(jnp.finfo(logits_dtype).max), logits_dtype)
        logits = jnp.where(visible, logits, big_negative)

    from . import softmax

    probs = softmax(logits.astype(np.float32), axis=-1).astype(k.dtype)
    out = jnp.einsum("bnts,bsnh->btnh", probs, v)
    if query_seq_lengths is not None and key_value_seq_lengths is not None:
        keep = jnp.asarray(np.arange(t))[None, :, None, None] < jnp.asarray(
            query_seq_lengths).reshape(b, 1, 1, 1)
        out = out * keep.astype(out.dtype)
    return out[0] if unbatched else out
