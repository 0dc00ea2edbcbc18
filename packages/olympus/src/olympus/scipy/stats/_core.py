"""Summary statistics of `olympus.scipy.stats`: `mode`, `rankdata` and `sem`."""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

import olympus
import olympus.numpy as jnp

from .._util import canonicalize_axis, check_arraylike, default_float, promote_args_inexact

_NAN_POLICIES = ("propagate", "omit", "raise")


class ModeResult(NamedTuple):
    mode: olympus.Array
    count: olympus.Array


def _check_nan_policy(name, nan_policy):
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
            f"Please check if nans exist in `x` outside of the `{name}` function.")


def _mode_1d(x):
    """The most common value of 1-D `x` (the smallest on ties; NaNs count as equal) and
    its count, from the runs of the sorted values."""
    s = jnp.sort(x)
    n = s.shape[0]
    same = (s[1:] == s[:-1])
    if np.issubdtype(s.dtype, np.inexact):
        same = same | (jnp.isnan(s[1:]) & jnp.isnan(s[:-1]))
    starts = jnp.concatenate([jnp.ones((1,), bool), ~same])
    run = jnp.cumsum(starts) - 1
    counts = jnp.zeros(n, np.int32).at[run].add(1)
    best = jnp.argmax(counts)
    first = jnp.argmax(run == best)
    return s[first], counts[best]


def mode(a, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False):
    """The most common value along `axis` (flattened for None) and how often it occurs."""
    check_arraylike("mode", a)
    _check_nan_policy("mode", nan_policy)
    return _mode(a, axis, keepdims)


@functools.partial(olympus.jit, static_argnames=("axis", "keepdims"))
def _mode(a, axis, keepdims):
    x = jnp.atleast_1d(a)
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        x = x.ravel()
        axis = 0
    else:
        axis = canonicalize_axis(axis, x.ndim)
        out_shape = tuple(1 if (i == axis) else s for i, s in enumerate(x.shape)
                          if keepdims or i != axis)
    if x.size == 0:
        dt = default_float()
        return ModeResult(jnp.full(out_shape, np.nan, dt), jnp.zeros(out_shape, dt))
    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    vals, counts = olympus.vmap(_mode_1d, in_axes=1)(x)
    return ModeResult(vals.reshape(out_shape), counts.reshape(out_shape))


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate"):
    """Ranks 1..n of the data (ties resolved by `method`), as floats; NaN everywhere if
    the data hold a NaN."""
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    return _rankdata(a, method, axis)


def _rank_1d(a, method):
    out_dtype = default_float()
    n = a.shape[0]
    order = jnp.argsort(a, stable=True)
    s = a[order]
    inv = jnp.zeros(n, np.int32).at[order].set(jnp.arange(n, dtype=np.int32))
    if method == "ordinal":
        return (inv + 1).astype(out_dtype)
    starts = jnp.concatenate([jnp.ones((1,), bool), s[1:] != s[:-1]])
    dense = jnp.cumsum(starts)[inv]  # 1-based run number of each element
    if method == "dense":
        return dense.astype(out_dtype)
    # Start index of every run (padded with n): a run's ranks span [start, next_start).
    run_starts = jnp.nonzero(starts, size=n + 1, fill_value=n)[0].astype(out_dtype)
    lo = run_starts[dense - 1] + 1
    hi = run_starts[dense]
    if method == "min":
        return lo
    if method == "max":
        return hi
    return 0.5 * (lo + hi)


@functools.partial(olympus.jit, static_argnames=("method", "axis"))
def _rankdata(a, method, axis):
    a = jnp.asarray(a)
    if axis is not None:
        axis = canonicalize_axis(axis, a.ndim)
        moved = jnp.moveaxis(a, axis, -1)
        flat = moved.reshape(-1, moved.shape[-1])
        ranks = olympus.vmap(lambda r: _rankdata(r, method, None))(flat)
        return jnp.moveaxis(ranks.reshape(moved.shape), -1, axis)
    a = jnp.ravel(a)
    ranks = _rank_1d(a, method)
    has_nan = jnp.any(jnp.isnan(a)) if np.issubdtype(a.dtype, np.inexact) else False
    return jnp.where(has_nan, jnp.full_like(ranks, np.nan), ranks)


def sem(a, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False):
    """The standard error of the mean, std / sqrt(n)."""
    (b,) = promote_args_inexact("sem", a)
    if nan_policy not in ("propagate", "omit"):
        raise ValueError(f"{nan_policy} is not supported")
    return _sem(b, axis, ddof, nan_policy, keepdims)


@functools.partial(olympus.jit, static_argnames=("axis", "ddof", "nan_policy", "keepdims"))
def _sem(b, axis, ddof, nan_policy, keepdims):
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(
            jnp.asarray(size, b.dtype))
    count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
    return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)

