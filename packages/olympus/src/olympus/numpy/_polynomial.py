"""Discrete convolution and polynomial fitting: convolve, correlate (one XLA convolution
each, modes full/same/valid), polyfit (least squares on a column-scaled Vandermonde
matrix) and roots (eigenvalues of the companion matrix).

The other polynomial helpers (polyval, polyadd, polymul, ...) live in `_numeric`.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace.lax_ops import conv_general_dilated

from .._src.jit import jit
from . import _products
from . import _ufuncs as uf
from ._numeric import vander
from ._util import aval_of, concrete_or_error, ensure_arraylike, static_int

__all__ = ["convolve", "correlate", "polyfit", "roots"]


def _shape(x):
    return tuple(aval_of(x).shape)


def _dt(x):
    return aval_of(x).dtype


def _astype(x, dt):
    return lax.convert_element_type(x, dt, False)


# --- convolve / correlate -----------------------------------------------------------------------


def _conv_args(name, a, v, mode):
    a, v = ensure_arraylike(name, a, v)
    if len(_shape(a)) != 1 or len(_shape(v)) != 1:
        raise ValueError(f"{name}() only supports 1-dimensional inputs, got shapes "
                         f"{_shape(a)} and {_shape(v)}.")
    if _shape(a)[0] == 0 or _shape(v)[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {_shape(a)} and "
                         f"{_shape(v)}.")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be one of 'full', 'same' or 'valid', got "
                         f"{mode!r}.")
    a, v = prom.promote_dtypes(a, v)
    return _astype(a, _dt(a)), _astype(v, _dt(v))


@partial(jit, static_argnums=(2, 3, 4, 5, 6))
def _correlate_core(a, v, mode, conj, flip, precision, preferred_element_type):
    """sum_j a[j + k] * w[j] with w = v (conjugated if `conj`, reversed if `flip`), for
    ``len(a) >= len(v)``, over the shifts k that `mode` keeps."""
    n, m = _shape(a)[0], _shape(v)[0]
    dt = _dt(a)
    is_bool = dt == np.bool_
    if is_bool:
        a, v = _astype(a, np.dtype(np.int32)), _astype(v, np.dtype(np.int32))
    if conj and dtypes.is_complex(dt):
        v = lax.conj(v)
    if flip:
        v = lax.rev(v, (0,))
    if mode == "full":
        pad = (m - 1, m - 1)
    elif mode == "same":
        pad = (m // 2, m - 1 - m // 2)
    else:
        pad = (0, 0)
    out = conv_general_dilated(lax.reshape(a, (1, 1, n)), lax.reshape(v, (1, 1, m)), (1,),
                               [pad], precision=precision,
                               preferred_element_type=preferred_element_type)
    out = lax.reshape(out, (_shape(out)[2],))
    if is_bool:
        out = lax.ne(out, np.int32(0))
    return out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of 1-D `a` and `v` (modes 'full', 'same',
    'valid' as in NumPy)."""
    a, v = _conv_args("convolve", a, v, mode)
    if _shape(v)[0] > _shape(a)[0]:
        a, v = v, a
    return _correlate_core(a, v, mode, False, True, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of 1-D `a` and `v`
    (modes 'valid' (the default), 'same', 'full' as in NumPy)."""
    a, v = _conv_args("correlate", a, v, mode)
    if _shape(v)[0] > _shape(a)[0]:
        # c_av[k] = conj(c_va[-k]): correlate the other way round and reverse.
        out = _correlate_core(v, a, mode, True, False, precision, preferred_element_type)
        out = lax.rev(out, (0,))
        return lax.conj(out) if dtypes.is_complex(_dt(out)) else out
    return _correlate_core(a, v, mode, True, False, precision, preferred_element_type)


# --- polyfit ------------------------------------------------------------------------------------


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares fit of a polynomial of degree `deg` (coefficients highest power
    first) to the points (x, y); `y` may hold several data sets as columns.

    With `full`, also (residuals, rank, singular values, rcond); with `cov`, also the
    covariance matrix of the coefficients (scaled by ``residuals / (len(x) - deg - 1)``
    unless ``cov="unscaled"``)."""
    x, y = ensure_arraylike("polyfit", x, y)
    deg = static_int(deg, "the deg argument of olympus.numpy.polyfit")
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got deg={deg}.")
    if len(_shape(x)) != 1:
        raise TypeError(f"polyfit: expected a 1-D vector for x, got shape {_shape(x)}.")
    if _shape(x)[0] == 0:
        raise TypeError("polyfit: expected a non-empty vector for x.")
    if len(_shape(y)) not in (1, 2):
        raise TypeError(f"polyfit: expected a 1-D or 2-D array for y, got shape "
                        f"{_shape(y)}.")
    if _shape(x)[0] != _shape(y)[0]:
        raise TypeError(f"polyfit: expected x and y to have the same length, got "
                        f"{_shape(x)[0]} and {_shape(y)[0]}.")
    if w is not None:
        w = ensure_arraylike("polyfit", w)
        if len(_shape(w)) != 1:
            raise TypeError(f"polyfit: expected a 1-D vector for w, got shape {_shape(w)}.")
        if _shape(w)[0] != _shape(x)[0]:
            raise TypeError(f"polyfit: expected w and x to have the same length, got "
                            f"{_shape(w)[0]} and {_shape(x)[0]}.")
    n = _shape(x)[0]
    order = deg + 1
    if cov and cov != "unscaled" and n <= order:
        raise ValueError(f"polyfit: the number of data points ({n}) must exceed order "
                         f"({order}) to scale the covariance matrix.")
    return _polyfit_core(x, y, w, rcond, deg, bool(full), cov if cov == "unscaled" else
                         bool(cov))


@partial(jit, static_argnums=(4, 5, 6))
def _polyfit_core(x, y, w, rcond, deg, full, cov):
    from . import linalg as la

    n = _shape(x)[0]
    order = deg + 1
    x, y = prom.promote_dtypes_inexact(x, y)
    dt = _dt(x)
    if rcond is None:
        rcond = n * float(np.finfo(np.dtype(dtypes.finfo(dt).dtype)).eps)
    rcond = lax.convert_element_type(prom.to_operand(rcond), dtypes.finfo(dt).dtype,
                                     False)
    lhs = vander(_astype(x, dt), order)
    rhs = _astype(y, dt)
    if w is not None:
        (w,) = prom.promote_dtypes_inexact(w)
        w = _astype(w, dt)
        lhs = uf.multiply(lhs, lax.reshape(w, (n, 1)))
        rhs = uf.multiply(rhs, w if len(_shape(rhs)) == 1 else lax.reshape(w, (n, 1)))
    # Scale the columns to unit norm to improve the conditioning.
    absl = lax.abs(lhs) if dtypes.is_complex(dt) else lhs
    scale = lax.sqrt(lax.reduce_sum(lax.mul(absl, absl), (0,)))
    scale = _astype(scale, dtypes.finfo(dt).dtype) if dtypes.is_complex(dt) else scale
    one = np.ones((), _dt(scale))
    scale = lax.select(lax.eq(scale, lax.broadcast_in_dim(np.zeros((), _dt(scale)),
                                                          (order,), ())),
                       lax.broadcast_in_dim(one, (order,), ()), scale)
    lhs = uf.true_divide(lhs, lax.reshape(scale, (1, order)))
    c, resids, rank, s = la.lstsq(lhs, rhs, rcond)
    c = uf.true_divide(c, scale if len(_shape(c)) == 1 else lax.reshape(scale, (order, 1)))
    if full:
        return c, resids, rank, s, rcond
    if cov:
        lhs_h = lax.transpose(lax.conj(lhs) if dtypes.is_complex(dt) else lhs, (1, 0))
        vbase = la.inv(_products.matmul(lhs_h, lhs))
        vbase = uf.true_divide(vbase, uf.multiply(lax.reshape(scale, (order, 1)),
                                                    lax.reshape(scale, (1, order))))
        if cov == "unscaled":
            fac = np.ones((), dt)
        else:
            fac = uf.true_divide(resids, np.asarray(n - order, _dt(resids)))
        if len(_shape(y)) == 1:
            return c, uf.multiply(vbase, fac)
        k = _shape(y)[1]
        return c, uf.multiply(lax.reshape(vbase, (order, order, 1)),
                               prom.broadcast_to(fac, (k,)))
    return c


# --- roots --------------------------------------------------------------------------------------


def _companion_eigvals(p):
    from . import linalg as la

    if not hasattr(la, "eigvals"):
        raise NotImplementedError("olympus.numpy.roots needs olympus.numpy.linalg.eigvals, "
                                  "which this build does not provide.")
    n = _shape(p)[0] - 1
    lead = lax.slice(p, (0,), (1,))
    first = uf.negative(uf.true_divide(lax.slice(p, (1,), (n + 1,)), lead))
    if n == 1:
        return _astype(first, _complex_of(_dt(p)))
    # Companion matrix: first row -p[1:] / p[0], ones on the subdiagonal.
    sub = lax.pad(_eye(n - 1, _dt(p)), np.zeros((), _dt(p)), [(0, 0, 0), (0, 1, 0)])
    comp = lax.concatenate([lax.reshape(first, (1, n)), sub], 0)
    return la.eigvals(comp)


def _eye(n, dt):
    i = lax.iota(np.dtype(np.int32), n)
    eq = lax.eq(lax.broadcast_in_dim(i, (n, n), (0,)), lax.broadcast_in_dim(i, (n, n), (1,)))
    return _astype(eq, dt)


def _complex_of(dt):
    return np.dtype(np.complex128) if np.dtype(dt) in (np.float64, np.complex128) else \
        np.dtype(np.complex64)


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients `p` (highest power first), as complex
    numbers (the eigenvalues of its companion matrix, in LAPACK's order).

    Leading zeros of `p` are removed first, which needs concrete values; under `jit` pass
    ``strip_zeros=False``: a polynomial with k leading zeros then has k of its returned
    roots set to NaN."""
    p = ensure_arraylike("roots", p)
    if len(_shape(p)) == 0:
        p = lax.reshape(p, (1,))
    if len(_shape(p)) != 1:
        raise ValueError(f"roots: input must be a rank-1 array, got shape {_shape(p)}.")
    (p,) = prom.promote_dtypes_inexact(p)
    p = _astype(p, _dt(p))
    cdt = _complex_of(_dt(p))
    if strip_zeros:
        pv = concrete_or_error(
            p, "The error occurred in olympus.numpy.roots: stripping leading zeros needs "
               "concrete coefficients. Under jit, pass strip_zeros=False.")
        nz = np.flatnonzero(pv)
        if nz.size == 0:
            return lax.broadcast_in_dim(np.zeros((), cdt), (0,), ())
        # Leading zeros are dropped; trailing zeros are roots at 0 (kept: the companion
        # matrix has them as eigenvalues).
        p = lax.slice(p, (int(nz[0]),), (_shape(p)[0],))
        if _shape(p)[0] < 2:
            return lax.broadcast_in_dim(np.zeros((), cdt), (0,), ())
        return _roots_core(p)
    if _shape(p)[0] < 2:
        return lax.broadcast_in_dim(np.zeros((), cdt), (0,), ())
    return _roots_with_leading_zeros(p)


@jit
def _roots_core(p):
    return _astype(_companion_eigvals(p), _complex_of(_dt(p)))


@jit
def _roots_with_leading_zeros(p):
    """Roots of `p` with a traced number k of leading zeros: rotate them to the end (they
    become k spurious zero roots), then replace the k smallest-magnitude roots by NaN."""
    n = _shape(p)[0]
    iz = lax.eq(p, lax.broadcast_in_dim(np.zeros((), _dt(p)), (n,), ()))
    nonzero_pos = lax.select(lax.bitwise_not(iz), lax.iota(np.dtype(np.int32), n),
                             lax.broadcast_in_dim(np.int32(n), (n,), ()))
    k = lax.reduce_min(nonzero_pos, (0,))
    allzero = lax.eq(k, np.int32(n))
    k = lax.select(allzero, np.int32(n - 1), k)
    idx = lax.rem(lax.add(lax.iota(np.dtype(np.int32), n), lax.broadcast_in_dim(
        k, (n,), ())), np.int32(n))
    from ._sorting import _gather_1d

    q = _gather_1d(p, idx)
    q = lax.select(lax.broadcast_in_dim(allzero, (n,), ()),
                   lax.broadcast_in_dim(np.ones((), _dt(p)), (n,), ()), q)
    r = _astype(_companion_eigvals(q), _complex_of(_dt(p)))
    mag = lax.abs(r)
    iota = lax.iota(np.dtype(np.int32), n - 1)
    _, order = lax.sort((lax.neg(mag), iota), dimension=0, is_stable=True, num_keys=1)
    _, rank = lax.sort((order, iota), dimension=0, is_stable=True, num_keys=1)
    spurious = lax.ge(rank, lax.broadcast_in_dim(lax.sub(np.int32(n - 1), k), (n - 1,), ()))
    nan = np.asarray(complex(np.nan, np.nan), _dt(r))
    return lax.select(spurious, lax.broadcast_in_dim(nan, (n - 1,), ()), r)
