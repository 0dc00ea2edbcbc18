"""Segment reductions (`olympus.ops.segment_sum` ...): one scatter of `data` into
``num_segments`` rows, as JAX's. Out-of-range segment ids are dropped (``FILL_OR_DROP``)
unless `mode` says otherwise; negative ids are out of range (never wrapped). With
`bucket_size`, rows are first reduced in buckets of that many consecutive elements and the
buckets are then combined, which keeps long sums and products more accurate."""

from __future__ import annotations

import math

import numpy as np

from olympus_ir import dtypes
from olympus_trace.core import concrete_or_error

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _identity(op: str, dt: np.dtype):
    if op == "add":
        return np.array(0, dt)
    if op == "mul":
        return np.array(1, dt)
    if dt == dtypes.bool_:
        return np.array(op == "min", dt)
    if dtypes.is_integer(dt):
        info = np.iinfo(dt)
        return np.array(info.max if op == "min" else info.min, dt)
    return np.array(np.inf if op == "min" else -np.inf, dt)


def _segment(name, op, reducer, data, segment_ids, num_segments, indices_are_sorted,
             unique_indices, bucket_size, mode):
    import olympus.numpy as jnp
    from olympus.numpy._indexing import _scatter
    from olympus.numpy._util import check_arraylike

    check_arraylike(name, data, segment_ids)
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    if mode is None:
        mode = "drop"
    if num_segments is None:
        num_segments = concrete_or_error(
            None, jnp.max(segment_ids), "segment_sum() `num_segments` argument.")
        num_segments = int(num_segments) + 1
    else:
        num_segments = concrete_or_error(None, num_segments,
                                         "segment_sum() `num_segments` argument.")
        num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    dt = data.dtype
    init = _identity(op, dt)
    if bucket_size is None:
        out = jnp.full((num_segments,) + data.shape[1:], init, dtype=dt)
        return _scatter(out, segment_ids, data, op, mode=mode,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        normalize=False)
    n = segment_ids.shape[0]
    num_buckets = math.ceil(segment_ids.size / bucket_size)
    out = jnp.full((num_buckets, num_segments) + data.shape[1:], init, dtype=dt)
    buckets = jnp.arange(n) // bucket_size
    out = _scatter(out, (buckets, segment_ids), data, op, mode=mode,
                   indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                   normalize=False)
    return reducer(out, axis=0).astype(dt)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Sums of the rows of `data` that share a segment id (empty segments are 0)."""
    import olympus.numpy as jnp

    return _segment("segment_sum", "add", jnp.sum, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """Products of the rows of `data` that share a segment id (empty segments are 1)."""
    import olympus.numpy as jnp

    return _segment("segment_prod", "mul", jnp.prod, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Maxima of the rows of `data` per segment (empty segments are the dtype's lowest)."""
    import olympus.numpy as jnp

    return _segment("segment_max", "max", jnp.max, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Minima of the rows of `data` per segment (empty segments are the dtype's highest)."""
    import olympus.numpy as jnp

    return _segment("segment_min", "min", jnp.min, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)
