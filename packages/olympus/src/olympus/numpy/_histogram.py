"""Binning and interpolation: histogram_bin_edges, histogram, histogram2d, histogramdd,
digitize, interp.

Everything has static output shapes: the number of bins is static (an int, or the length of
an edges array), while the data, the edges and the range may be traced. As in JAX, the
counts of a histogram are floating point (the inexact type of the data, or of the
weights), and bin edges of integer data are floats.
"""

from __future__ import annotations

import builtins
from functools import partial

import numpy as np

from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

from .._src.jit import jit
from . import _ufuncs as uf
from ._indexing import bincount, where
from ._reductions import max as _max
from ._reductions import min as _min
from ._reductions import sum as _sum
from ._sorting import _gather_1d, _ravel, searchsorted
from ._util import aval_of, concrete_value, ensure_arraylike, is_arraylike, static_int

__all__ = ["histogram_bin_edges", "histogram", "histogram2d", "histogramdd", "digitize",
           "interp"]

_I32 = np.dtype(np.int32)


def _shape(x):
    return tuple(aval_of(x).shape)


def _dt(x):
    return aval_of(x).dtype


def _inexact_dtype(dt):
    return dt if dtypes.is_inexact(dt) else dtypes.default_float()


def _astype(x, dt):
    return lax.convert_element_type(x, dt, False)


def _scalar(name, v, dt):
    v = ensure_arraylike(name, v)
    if len(_shape(v)) != 0:
        raise ValueError(f"{name}: expected a scalar, got an array of shape {_shape(v)}.")
    return _astype(v, dt)


def _check_increasing(edges, what):
    v = concrete_value(edges)
    if v is not None and v.size > 1 and np.any(np.diff(v) < 0):
        raise ValueError(f"{what} must increase monotonically, got {v!r}.")


def _edges_from_count(x, nbins, range_, dt):
    """`nbins + 1` evenly spaced edges over `range_` (a checked pair of operands; default:
    the data's min and max; a zero-width range is widened by 0.5 on each side, like
    NumPy)."""
    if range_ is None:
        if _shape(x)[0] == 0:
            lo, hi = np.zeros((), dt), np.ones((), dt)
        else:
            lo, hi = _min(x), _max(x)
    else:
        lo, hi = (lax.reshape(_astype(r, dt), ()) for r in range_)
    lo, hi = _astype(lo, dt), _astype(hi, dt)
    same = lax.eq(lo, hi)
    half = np.asarray(0.5, dt)
    lo = lax.select(same, lax.sub(lo, half), lo)
    hi = lax.select(same, lax.add(hi, half), hi)
    step = lax.div(lax.sub(hi, lo), np.asarray(nbins, dt))
    k = _astype(lax.iota(_I32, nbins + 1), dt)
    edges = lax.add(lax.mul(k, lax.broadcast_in_dim(step, (nbins + 1,), ())),
                    lax.broadcast_in_dim(lo, (nbins + 1,), ()))
    last = lax.eq(lax.iota(_I32, nbins + 1), np.int32(nbins))
    return lax.select(last, lax.broadcast_in_dim(hi, (nbins + 1,), ()), edges)


def _is_edges(bins):
    return is_arraylike(bins) and not isinstance(bins, (int, np.integer)) and \
        len(_shape(ensure_arraylike("bins", bins))) >= 1


def _bin_edges(x, bins, range_, dt):
    """Edges from a static bin count, or the given edges (both checked by `_static_bins`)."""
    if isinstance(bins, int):
        return _edges_from_count(x, bins, range_, dt)
    return bins


def _static_bins(name, bins):
    """`bins` as (edges array or None, static bin count or None), checked."""
    if isinstance(bins, str):
        raise NotImplementedError(f"olympus.numpy.{name}: string values for `bins` "
                                  f"({bins!r}) are not supported; pass a bin count or edges.")
    if isinstance(bins, (list, tuple)):
        raise TypeError(f"{name} requires ndarray or scalar arguments for bins, got "
                        f"{type(bins)}.")
    if _is_edges(bins):
        edges = ensure_arraylike(name, bins)
        if len(_shape(edges)) != 1:
            raise ValueError(f"{name}: `bins` must be 1-D when given as edges, got shape "
                             f"{_shape(edges)}.")
        _check_increasing(edges, f"{name}: `bins`")
        return edges, None
    nbins = static_int(bins, f"the bins argument of olympus.numpy.{name}")
    if nbins < 1:
        raise ValueError(f"{name}: `bins` must be positive when an integer, got {nbins}.")
    return None, nbins


def _static_range(name, range_):
    """`range_` checked (a finite, ordered pair when concrete) as a pair of operands."""
    if range_ is None:
        return None
    if not isinstance(range_, (tuple, list)) or len(range_) != 2:
        raise ValueError(f"{name}: range must be a pair (min, max), got {range_!r}.")
    lo, hi = (ensure_arraylike(f"{name} range", r) for r in range_)
    clo, chi = concrete_value(lo), concrete_value(hi)
    if clo is not None and chi is not None:
        if not (np.all(np.isfinite(clo)) and np.all(np.isfinite(chi))):
            raise ValueError(f"{name}: range parameter must be finite, got ({clo}, {chi}).")
        if np.any(clo > chi):
            raise ValueError(f"{name}: max must be larger than min in range parameter, got "
                             f"range=({clo}, {chi}).")
    return (lo, hi)


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The edges of the bins `histogram` would use (`weights` is accepted and unused)."""
    a = ensure_arraylike("histogram_bin_edges", a)
    edges, nbins = _static_bins("histogram_bin_edges", bins)
    if edges is not None:
        return edges
    return _bin_edges_jit(a, nbins, _static_range("histogram_bin_edges", range))


@partial(jit, static_argnums=(1,))
def _bin_edges_jit(a, bins, range):  # noqa: A002
    x = _ravel(a)
    dt = _inexact_dtype(_dt(x))
    return _bin_edges(_astype(x, dt), bins, range, dt)


def _bin_index(x, edges):
    """Per value, 1 + the index of its bin among ``len(edges) - 1`` bins; 0 below the first
    edge, ``len(edges)`` above the last (or NaN). The last bin includes its right edge."""
    nb = _shape(edges)[0] - 1
    idx = searchsorted(edges, x, side="right")
    last = lax.reshape(lax.slice(edges, (nb,), (nb + 1,)), ())
    on_edge = lax.eq(x, lax.broadcast_in_dim(last, _shape(x), ()))
    return lax.select(on_edge, lax.broadcast_in_dim(np.int32(nb), _shape(x), ()), idx)


def _weights(name, w, x_shape, flat_n):
    if w is None:
        return None
    w = ensure_arraylike(name, w)
    if _shape(w) != tuple(x_shape):
        try:
            ok = prom.broadcast_shapes(_shape(w), tuple(x_shape)) == tuple(x_shape)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name}: weights should have the same shape as the data (or "
                             f"broadcast to it), got {_shape(w)} and {tuple(x_shape)}.")
        w = prom.broadcast_to(w, tuple(x_shape))
    return lax.reshape(w, (flat_n,))


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, bin_edges) of the values of `a` (flattened) in the given bins; values
    outside the range (and NaNs) are not counted."""
    a = ensure_arraylike("histogram", a)
    edges, nbins = _static_bins("histogram", bins)
    w = _weights("histogram", weights, _shape(a), int(np.prod(_shape(a), dtype=np.int64)))
    return _histogram_jit(a, edges, _static_range("histogram", range), w, nbins,
                          bool(density))


@partial(jit, static_argnums=(4, 5))
def _histogram_jit(a, edges, range, w, nbins, density):  # noqa: A002
    bins = edges if edges is not None else nbins
    x = _ravel(a)
    n = _shape(x)[0]
    dt = _inexact_dtype(_dt(x))
    x = _astype(x, dt)
    cdt = dt if w is None else dtypes.promote_types(dt, _dt(w))
    cdt = _inexact_dtype(cdt)
    edges = _bin_edges(x, bins, range, dt)
    x, edges = prom.promote_dtypes(x, edges)
    nb = _shape(edges)[0] - 1
    idx = _bin_index(x, edges)
    w = lax.broadcast_in_dim(np.ones((), cdt), (n,), ()) if w is None else _astype(w, cdt)
    counts = bincount(idx, w, length=nb + 2)
    counts = lax.slice(counts, (1,), (nb + 1,))
    if density:
        widths = uf.subtract(lax.slice(edges, (1,), (nb + 1,)), lax.slice(edges, (0,), (nb,)))
        counts = uf.true_divide(uf.true_divide(counts, widths), _sum(counts))
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, [edges per dimension]) of the N points in the (N, D) `sample`."""
    sample = ensure_arraylike("histogramdd", sample)
    if len(_shape(sample)) == 1:
        sample = lax.reshape(sample, _shape(sample) + (1,))
    if len(_shape(sample)) != 2:
        raise ValueError(f"histogramdd: sample must be a 2-D array of shape (N, D), got "
                         f"shape {_shape(sample)}.")
    n, d = _shape(sample)
    if isinstance(bins, (list, tuple)):
        if len(bins) != d:
            raise ValueError(f"histogramdd: the dimension of bins ({len(bins)}) must equal "
                             f"the dimension of the sample ({d}).")
        bins_d = [_static_bins("histogramdd", b) for b in bins]
    else:
        if not isinstance(bins, str) and _is_edges(bins):
            raise ValueError("histogramdd: give one edges array per dimension (a list of "
                             "length D) or an integer number of bins.")
        bins_d = [_static_bins("histogramdd", bins)] * d
    if range is None:
        ranges = [None] * d
    else:
        if len(range) != d:
            raise ValueError(f"histogramdd: range must have one (min, max) pair per "
                             f"dimension ({d}), got {len(range)}.")
        ranges = [_static_range("histogramdd", r) for r in range]
    w = _weights("histogramdd", weights, (n,), n)
    return _histogramdd_jit(sample, [e for e, _ in bins_d], ranges, w,
                            tuple(k for _, k in bins_d), bool(density))


@partial(jit, static_argnums=(4, 5))
def _histogramdd_jit(sample, edges_d, ranges, w, nbins_d, density):
    n, d = _shape(sample)
    dt = _inexact_dtype(_dt(sample))
    sample = _astype(sample, dt)
    bins_d = [e if e is not None else k for e, k in zip(edges_d, nbins_d, strict=True)]
    cdt = _inexact_dtype(dt if w is None else dtypes.promote_types(dt, _dt(w)))
    edges, flat = [], None
    strides = []
    nbs = []
    for i in builtins.range(d):
        col = lax.reshape(lax.slice(sample, (0, i), (n, i + 1)), (n,))
        e = _bin_edges(col, bins_d[i], ranges[i], dt)
        col, e = prom.promote_dtypes(col, e)
        edges.append(e)
        nbs.append(_shape(e)[0] - 1)
        idx = _bin_index(col, e)
        strides.append(idx)
    dims = [nb + 2 for nb in nbs]
    for i, idx in enumerate(strides):
        stride = int(np.prod(dims[i + 1:], dtype=np.int64))
        term = lax.mul(idx, np.int32(stride))
        flat = term if flat is None else lax.add(flat, term)
    total = int(np.prod(dims, dtype=np.int64))
    w = lax.broadcast_in_dim(np.ones((), cdt), (n,), ()) if w is None else _astype(w, cdt)
    if flat is None:
        flat = lax.broadcast_in_dim(np.int32(0), (n,), ())
    hist = lax.reshape(bincount(flat, w, length=total), tuple(dims))
    hist = lax.slice(hist, (1,) * d, tuple(x - 1 for x in dims))
    if density:
        hist = uf.true_divide(hist, _sum(hist))
        for i, e in enumerate(edges):
            nb = nbs[i]
            width = uf.subtract(lax.slice(e, (1,), (nb + 1,)), lax.slice(e, (0,), (nb,)))
            shp = [1] * d
            shp[i] = nb
            hist = uf.true_divide(hist, lax.reshape(width, tuple(shp)))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, x_edges, y_edges) of the points (x[i], y[i])."""
    x, y = ensure_arraylike("histogram2d", x, y)
    if len(_shape(x)) != 1 or _shape(x) != _shape(y):
        raise ValueError(f"histogram2d: x and y must be 1-D arrays of the same length, got "
                         f"shapes {_shape(x)} and {_shape(y)}.")
    x, y = prom.promote_dtypes(x, y)
    sample = lax.concatenate([lax.reshape(x, _shape(x) + (1,)),
                              lax.reshape(y, _shape(y) + (1,))], 1)
    if not isinstance(bins, (list, tuple)) and _is_edges(bins):
        bins = [bins, bins]
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


def digitize(x, bins, right=False, *, method=None):
    """For each value, the index of the bin it falls in (bins increasing or decreasing):
    ``bins[i-1] <= x < bins[i]`` (``<`` and ``<=`` swapped when `right`), as int32."""
    x, bins = ensure_arraylike("digitize", x, bins)
    if len(_shape(bins)) != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array, got shape "
                         f"{_shape(bins)}.")
    if method is not None and method not in ("scan", "sort", "compare_all",
                                             "scan_unrolled"):
        raise ValueError(f"digitize: unknown method {method!r}.")
    m = _shape(bins)[0]
    if m == 0:
        return lax.broadcast_in_dim(np.int32(0), _shape(x), ())
    return _digitize_jit(x, bins, bool(right))


@partial(jit, static_argnums=(2,))
def _digitize_jit(x, bins, right):
    m = _shape(bins)[0]
    x, bins = prom.promote_dtypes(x, bins)
    x, bins = _astype(x, _dt(x)), _astype(bins, _dt(bins))
    side = "left" if right else "right"
    inc = searchsorted(bins, x, side=side)
    dec = lax.sub(np.int32(m), searchsorted(lax.rev(bins, (0,)), x, side=side))
    first = lax.reshape(lax.slice(bins, (0,), (1,)), ())
    last = lax.reshape(lax.slice(bins, (m - 1,), (m,)), ())
    increasing = lax.bitwise_not(lax.lt(last, first))
    return lax.select(lax.broadcast_in_dim(increasing, _shape(x), ()), inc, dec)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation of the points (xp, fp) at `x`
    (`xp` increasing; with `period`, periodic and in any order)."""
    x, xp, fp = ensure_arraylike("interp", x, xp, fp)
    if len(_shape(xp)) != 1 or len(_shape(fp)) != 1:
        raise ValueError(f"interp: xp and fp must be one-dimensional arrays, got shapes "
                         f"{_shape(xp)} and {_shape(fp)}.")
    if _shape(xp)[0] != _shape(fp)[0]:
        raise ValueError(f"interp: xp and fp must have the same length, got "
                         f"{_shape(xp)[0]} and {_shape(fp)[0]}.")
    if _shape(xp)[0] == 0:
        raise ValueError("interp: the array of sample points xp is empty.")
    if period is not None:
        period = ensure_arraylike("interp", period)
        p = concrete_value(period)
        if p is not None and np.all(p == 0):
            raise ValueError("interp: period must be a non-zero value.")
        left = right = None
    left = None if left is None else ensure_arraylike("interp", left)
    right = None if right is None else ensure_arraylike("interp", right)
    return _interp_jit(x, xp, fp, left, right, period)


@jit
def _interp_jit(x, xp, fp, left, right, period):
    x, xp = prom.promote_dtypes_inexact(x, xp)
    (fp,) = prom.promote_dtypes_inexact(fp)
    x, xp, fp = (_astype(v, _dt(v)) for v in (x, xp, fp))
    if period is not None:
        period = uf.abs(_scalar("interp period", period, _dt(x)))
        x = uf.remainder(x, period)
        xp = uf.remainder(xp, period)
        iota = lax.iota(_I32, _shape(xp)[0])
        order = lax.sort((xp, iota), dimension=0, is_stable=True, num_keys=1)[1]
        xp = _gather_1d(xp, order)
        fp = _gather_1d(fp, order)
        n = _shape(xp)[0]
        xp = lax.concatenate([uf.subtract(lax.slice(xp, (n - 1,), (n,)), period), xp,
                              uf.add(lax.slice(xp, (0,), (1,)), period)], 0)
        fp = lax.concatenate([lax.slice(fp, (n - 1,), (n,)), fp, lax.slice(fp, (0,), (1,))], 0)
        left = right = None
    n = _shape(xp)[0]
    if n == 1:
        f = prom.broadcast_to(lax.reshape(fp, ()), _shape(x))
        if period is None:
            f = _apply_bounds(f, x, xp, fp, left, right)
        return f
    i = lax.clamp(np.int32(1), searchsorted(xp, x, side="right"), np.int32(n - 1))
    im1 = lax.sub(i, np.int32(1))
    xp0, xp1 = _gather_1d(xp, im1), _gather_1d(xp, i)
    fp0, fp1 = _gather_1d(fp, im1), _gather_1d(fp, i)
    dx = lax.sub(xp1, xp0)
    eps = np.asarray(np.spacing(np.finfo(_dt(xp)).eps), _dt(xp))
    flat = lax.le(lax.abs(dx), lax.broadcast_in_dim(eps, _shape(dx), ()))
    safe_dx = lax.select(flat, lax.broadcast_in_dim(np.ones((), _dt(dx)), _shape(dx), ()), dx)
    t = lax.div(lax.sub(x, xp0), safe_dx)
    f = uf.add(fp0, uf.multiply(t, uf.subtract(fp1, fp0)))
    f = where(flat, fp0, f)
    if period is None:
        f = _apply_bounds(f, x, xp, fp, left, right)
    return f


def _apply_bounds(f, x, xp, fp, left, right):
    n = _shape(xp)[0]
    dt = _dt(f)
    lo_val = lax.slice(fp, (0,), (1,)) if left is None else _scalar("interp left", left, dt)
    hi_val = lax.slice(fp, (n - 1,), (n,)) if right is None else \
        _scalar("interp right", right, dt)
    lo_val = lax.reshape(_astype(lo_val, dt), ())
    hi_val = lax.reshape(_astype(hi_val, dt), ())
    xlo = lax.reshape(lax.slice(xp, (0,), (1,)), ())
    xhi = lax.reshape(lax.slice(xp, (n - 1,), (n,)), ())
    f = where(uf.less(x, xlo), lo_val, f)
    return where(uf.greater(x, xhi), hi_val, f)
