"""`approx_max_k` / `approx_min_k`. JAX lowers them to XLA's ApproxTopK, which the CPU
backend computes exactly by sorting; Olympus composes the same exact result from a stable
sort (ties keep index order) and a slice, with XLA's own output size when the top k is not
aggregated (``jaxlib``'s ``approx_top_k_reduction_output_size``)."""

from __future__ import annotations

import operator

import numpy as np

from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace.core import get_aval

__all__ = ["approx_max_k", "approx_min_k"]


def _approx_top_k(operand, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    a = get_aval(operand)
    k = operator.index(k)
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if a.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {a.shape}")
    dim = operator.index(reduction_dimension)
    if not -a.ndim <= dim < a.ndim:
        raise ValueError(f"reduction_dimension {dim} is out of bounds for an operand of "
                         f"rank {a.ndim}")
    dim %= a.ndim
    n = a.shape[dim]
    if n < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {n}, got {k}")
    if not dtypes.is_float(a.dtype):
        raise ValueError("operand must be a floating type")
    if aggregate_to_topk:
        size = k
    else:
        from jaxlib import _jax

        size = _jax.approx_top_k_reduction_output_size(
            n, a.ndim, k, float(recall_target), False, int(reduction_input_size_override))[0]
    idx = lax.broadcasted_iota(np.int32, a.shape, dim)
    keys = lax.neg(operand) if is_max_k else operand
    _, vals, idx = lax.sort((keys, operand, idx), dim, is_stable=True, num_keys=1)
    start, limit = [0] * a.ndim, list(a.shape)
    limit[dim] = size
    return [lax.slice(vals, start, limit), lax.slice(idx, start, limit)]


def approx_max_k(operand, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True):
    """The `k` largest values along `reduction_dimension` and their indices (exact on
    CPU, as in JAX)."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, True,
                         reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True):
    """The `k` smallest values along `reduction_dimension` and their indices (exact on
    CPU, as in JAX)."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, False,
                         reduction_input_size_override, aggregate_to_topk)
