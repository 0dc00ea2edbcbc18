"""Numerical helpers: gradient, unwrap, vander, window functions, cov/corrcoef,
polynomials (polyval, polyadd, polysub, polymul, polydiv, polyder, polyint, poly), and
bit packing (packbits/unpackbits)."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

from . import _creation, _indexing, _shape
from . import _ufuncs as uf
from ._util import (
    aval_of,
    canonicalize_axis,
    concrete_or_error,
    ensure_arraylike,
    promote_dtypes_inexact,
    static_int,
)


def _slice_axis(x, axis, lo, hi):
    from ._shape import _slice_axis as sl

    return sl(x, axis, lo, hi)


# --- differences --------------------------------------------------------------------------------


def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences in the interior and one-sided differences at the edges, along
    each axis (spacings: scalars or 1-D coordinate arrays)."""
    from ._shape import concatenate

    f = ensure_arraylike("gradient", f)
    (f,) = promote_dtypes_inexact(f)
    nd = aval_of(f).ndim
    if edge_order not in (None, 1):
        raise NotImplementedError("The 'edge_order' argument to olympus.numpy.gradient is "
                                  "only supported for edge_order=1.")
    axes = tuple(range(nd)) if axis is None else tuple(
        canonicalize_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else
                                           (axis,)))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments to gradient")
    outs = []
    for ax, h in zip(axes, spacing):
        n = aval_of(f).shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least 2 elements are required.")
        if np.ndim(h) == 0:
            h = _creation.astype(ensure_arraylike("gradient", h), aval_of(f).dtype)
            mid = uf.true_divide(uf.subtract(_slice_axis(f, ax, 2, n),
                                               _slice_axis(f, ax, 0, n - 2)),
                                  uf.multiply(2, h))
            first = uf.true_divide(uf.subtract(_slice_axis(f, ax, 1, 2),
                                                 _slice_axis(f, ax, 0, 1)), h)
            last = uf.true_divide(uf.subtract(_slice_axis(f, ax, n - 1, n),
                                                _slice_axis(f, ax, n - 2, n - 1)), h)
        else:
            x = _creation.astype(ensure_arraylike("gradient", h), aval_of(f).dtype)
            if aval_of(x).shape != (n,):
                raise ValueError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            dx = uf.subtract(_slice_axis(x, 0, 1, n), _slice_axis(x, 0, 0, n - 1))
            shape = [1] * nd
            shape[ax] = n - 1
            dx = lax.reshape(dx, tuple(shape))
            dx1 = _slice_axis(dx, ax, 0, n - 2)
            dx2 = _slice_axis(dx, ax, 1, n - 1)
            a = uf.true_divide(uf.negative(dx2), uf.multiply(dx1, uf.add(dx1, dx2)))
            b = uf.true_divide(uf.subtract(dx2, dx1), uf.multiply(dx1, dx2))
            c = uf.true_divide(dx1, uf.multiply(dx2, uf.add(dx1, dx2)))
            mid = uf.add(uf.add(uf.multiply(a, _slice_axis(f, ax, 0, n - 2)),
                                  uf.multiply(b, _slice_axis(f, ax, 1, n - 1))),
                          uf.multiply(c, _slice_axis(f, ax, 2, n)))
            first = uf.true_divide(uf.subtract(_slice_axis(f, ax, 1, 2),
                                                 _slice_axis(f, ax, 0, 1)),
                                    _slice_axis(dx, ax, 0, 1))
            last = uf.true_divide(uf.subtract(_slice_axis(f, ax, n - 1, n),
                                                _slice_axis(f, ax, n - 2, n - 1)),
                                   _slice_axis(dx, ax, n - 2, n - 1))
        outs.append(concatenate([first, mid, last], axis=ax) if n > 2 else
                    concatenate([first, last], axis=ax))
    return outs[0] if len(outs) == 1 else outs


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Unwrap by replacing jumps larger than ``max(discont, period / 2)`` by their period
    complement."""
    from ._reductions import cumsum
    from ._shape import concatenate

    p = ensure_arraylike("unwrap", p)
    (p,) = promote_dtypes_inexact(p)
    nd = aval_of(p).ndim
    axis = canonicalize_axis(axis, nd)
    n = aval_of(p).shape[axis]
    if n < 2:
        return p
    dt = aval_of(p).dtype
    if discont is None:
        discont = period / 2
    interval = period / 2
    d = uf.subtract(_slice_axis(p, axis, 1, n), _slice_axis(p, axis, 0, n - 1))
    ddmod = uf.subtract(uf.remainder(uf.add(d, interval), period), interval)
    ddmod = _indexing.where(uf.bitwise_and(uf.equal(ddmod, -interval), uf.greater(d, 0)),
                      np.array(interval, dt)[()], ddmod)
    corr = uf.subtract(ddmod, d)
    corr = _indexing.where(uf.less(uf.absolute(d), discont), np.array(0, dt)[()], corr)
    first = _slice_axis(p, axis, 0, 1)
    rest = uf.add(_slice_axis(p, axis, 1, n), cumsum(corr, axis=axis))
    return concatenate([first, rest], axis=axis)


def vander(x, N=None, increasing=False):
    """Columns of powers of the 1-D `x` (decreasing powers unless `increasing`)."""
    from ._reductions import cumprod
    from ._shape import concatenate, flip

    x = ensure_arraylike("vander", x)
    if aval_of(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = aval_of(x).shape[0]
    N = n if N is None else static_int(N, "the N argument of olympus.numpy.vander")
    if N < 0:
        raise ValueError("N must be nonnegative")
    if N == 0:
        return lax.broadcast_in_dim(np.array(0, aval_of(x).dtype)[()], (n, 0), ())
    ones = prom.broadcast_to(np.array(1, aval_of(x).dtype), (n, 1))
    if N == 1:
        out = ones
    else:
        powers = cumprod(prom.broadcast_to(lax.reshape(x, (n, 1)), (n, N - 1)), axis=1)
        out = concatenate([ones, powers], axis=1)
    return out if increasing else flip(out, 1)


# --- windows ------------------------------------------------------------------------------------


def _window(M, fn):
    M = static_int(M, "the M argument of the window function")
    dt = dtypes.default_float()
    if M < 1:
        return lax.broadcast_in_dim(np.array(0, dt)[()], (0,), ())
    if M == 1:
        return lax.broadcast_in_dim(np.array(1, dt)[()], (1,), ())
    n = lax.convert_element_type(lax.iota(dtypes.int32, M), dt)
    return fn(n, M)


def bartlett(M):
    """The Bartlett (triangular) window."""
    return _window(M, lambda n, M: uf.subtract(1, uf.absolute(uf.subtract(
        uf.true_divide(uf.multiply(2, n), M - 1), 1))))


def blackman(M):
    """The Blackman window."""
    return _window(M, lambda n, M: uf.add(uf.subtract(
        0.42, uf.multiply(0.5, uf.cos(uf.true_divide(uf.multiply(2 * np.pi, n), M - 1)))),
        uf.multiply(0.08, uf.cos(uf.true_divide(uf.multiply(4 * np.pi, n), M - 1)))))


def hamming(M):
    """The Hamming window."""
    return _window(M, lambda n, M: uf.subtract(0.54, uf.multiply(0.46, uf.cos(
        uf.true_divide(uf.multiply(2 * np.pi, n), M - 1)))))


def hanning(M):
    """The Hann window."""
    return _window(M, lambda n, M: uf.subtract(0.5, uf.multiply(0.5, uf.cos(
        uf.true_divide(uf.multiply(2 * np.pi, n), M - 1)))))


# --- covariance ----------------------------------------------------------------------------------


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows (or columns) of `m` (and `y`)."""
    from ._products import dot
    from ._reductions import sum as _sum
    from ._shape import atleast_2d, concatenate

    m = ensure_arraylike("cov", m)
    if aval_of(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    X = atleast_2d(m)
    if not rowvar and aval_of(X).shape[0] != 1:
        X = lax.transpose(X, (1, 0))
    if aval_of(X).shape[0] == 0:
        return lax.broadcast_in_dim(np.array(np.nan, dtypes.default_float())[()], (0, 0), ())
    if y is not None:
        y = atleast_2d(ensure_arraylike("cov", y))
        if not rowvar and aval_of(y).shape[0] != 1:
            y = lax.transpose(y, (1, 0))
        X = concatenate([X, y], axis=0)
    (X,) = promote_dtypes_inexact(X)
    dt = aval_of(X).dtype
    if ddof is None:
        ddof = 0 if bias else 1
    nobs = aval_of(X).shape[1]
    w = None
    if fweights is not None:
        w = _creation.astype(ensure_arraylike("cov", fweights), dt)
    if aweights is not None:
        aw = _creation.astype(ensure_arraylike("cov", aweights), dt)
        w = aw if w is None else uf.multiply(w, aw)
    if w is None:
        avg = uf.true_divide(_sum(X, axis=1, keepdims=True), nobs)
        fact = nobs - ddof
    else:
        w_sum = _sum(w)
        avg = uf.true_divide(_sum(uf.multiply(X, w), axis=1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = uf.subtract(w_sum, ddof)
        else:
            fact = uf.subtract(w_sum, uf.true_divide(uf.multiply(ddof, _sum(uf.multiply(
                w, _creation.astype(ensure_arraylike("cov", aweights), dt)))), w_sum))
    Xc = uf.subtract(X, avg)
    Xw = Xc if w is None else uf.multiply(Xc, w)
    c = dot(Xw, uf.conj(lax.transpose(Xc, (1, 0))))
    c = uf.true_divide(c, fact)
    shape = aval_of(c).shape
    return lax.squeeze(c, tuple(i for i, d in enumerate(shape) if d == 1))


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients."""
    from ._linalg_basic import diagonal

    c = cov(x, y, rowvar)
    if aval_of(c).ndim == 0:
        return uf.true_divide(c, c)
    d = diagonal(c)
    stddev = uf.sqrt(uf.real(d))
    c = uf.true_divide(c, lax.reshape(stddev, (aval_of(d).shape[0], 1)))
    c = uf.true_divide(c, lax.reshape(stddev, (1, aval_of(d).shape[0])))
    if dtypes.is_complex(aval_of(c).dtype):
        return lax.complex(uf.clip(uf.real(c), -1, 1), uf.clip(uf.imag(c), -1, 1))
    return uf.clip(c, -1, 1)


# --- polynomials ------------------------------------------------------------------------------


def _poly1d(name, p):
    p = ensure_arraylike(name, p)
    if aval_of(p).ndim == 0:
        p = lax.reshape(p, (1,))
    if aval_of(p).ndim != 1:
        raise ValueError(f"{name}: polynomial coefficients must be 1-D")
    return p


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients `p` (highest power first) at `x` (Horner's
    method)."""
    p = _poly1d("polyval", p)
    x = ensure_arraylike("polyval", x)
    p, x = prom.promote_dtypes(p, x)
    n = aval_of(p).shape[0]
    y = prom.broadcast_to(np.array(0, aval_of(p).dtype), aval_of(x).shape)
    for i in range(n):
        y = uf.add(uf.multiply(y, x), p[i])
    return y


def _trim_pad(a, n):
    k = aval_of(a).shape[0]
    if k < n:
        return lax.pad(a, np.array(0, aval_of(a).dtype)[()], [(n - k, 0, 0)])
    return a


def polyadd(a1, a2):
    """The sum of two polynomials."""
    a1, a2 = _poly1d("polyadd", a1), _poly1d("polyadd", a2)
    a1, a2 = prom.promote_dtypes(a1, a2)
    n = max(aval_of(a1).shape[0], aval_of(a2).shape[0])
    return uf.add(_trim_pad(a1, n), _trim_pad(a2, n))


def polysub(a1, a2):
    """The difference of two polynomials."""
    a1, a2 = _poly1d("polysub", a1), _poly1d("polysub", a2)
    a1, a2 = prom.promote_dtypes(a1, a2)
    n = max(aval_of(a1).shape[0], aval_of(a2).shape[0])
    return uf.subtract(_trim_pad(a1, n), _trim_pad(a2, n))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (a full discrete convolution of the coefficients)."""
    from ._indexing import _scatter

    a1, a2 = _poly1d("polymul", a1), _poly1d("polymul", a2)
    a1, a2 = prom.promote_dtypes(a1, a2)
    n, m = aval_of(a1).shape[0], aval_of(a2).shape[0]
    prod = uf.multiply(lax.reshape(a1, (n, 1)), lax.reshape(a2, (1, m)))
    idx = (np.arange(n)[:, None] + np.arange(m)[None, :]).astype(np.int32)
    out = lax.broadcast_in_dim(np.array(0, aval_of(prod).dtype)[()], (n + m - 1,), ())
    return _scatter(out, (idx,), prod, "add")


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of polynomial division (the remainder keeps u's length unless
    `trim_leading_zeros`, which needs concrete values)."""
    from ._indexing import _scatter

    u, v = _poly1d("polydiv", u), _poly1d("polydiv", v)
    u, v = promote_dtypes_inexact(u, v)
    m, n = aval_of(u).shape[0] - 1, aval_of(v).shape[0] - 1
    scale = uf.true_divide(1.0, _indexing.getitem(v, 0))
    q = prom.broadcast_to(np.array(0, aval_of(u).dtype), (max(m - n + 1, 1),))
    r = u
    for k in range(0, m - n + 1):
        d = uf.multiply(scale, _indexing.getitem(r, k))
        q = _scatter(q, (k,), d, "set")
        r = _scatter(r, (slice(k, k + n + 1),), uf.negative(uf.multiply(d, v)), "add")
    if trim_leading_zeros:
        rv = concrete_or_error(r, "polydiv: trim_leading_zeros needs concrete values")
        nz = np.flatnonzero(np.abs(rv) > 1e-14 * max(1.0, float(np.max(np.abs(rv)))))
        r = _indexing.getitem(r, slice(int(nz[0]) if nz.size else len(rv) - 1, None))
    return q, r


def polyder(p, m=1):
    """The m-th derivative of a polynomial."""
    p = _poly1d("polyder", p)
    m = static_int(m, "the m argument of olympus.numpy.polyder")
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = aval_of(p).shape[0]
    if m >= n:
        return prom.broadcast_to(np.array(0, aval_of(p).dtype), (0,))
    coeff = np.ones(n - m)
    for k in range(m):
        coeff = coeff * np.arange(n - 1 - k, m - 1 - k, -1)
    dt = aval_of(p).dtype if not dtypes.is_integer(aval_of(p).dtype) else aval_of(p).dtype
    return uf.multiply(lax.slice(p, (0,), (n - m,)), coeff.astype(dt))


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial (integration constants `k`)."""
    from ._shape import concatenate

    p = _poly1d("polyint", p)
    m = static_int(m, "the m argument of olympus.numpy.polyint")
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    (p,) = promote_dtypes_inexact(p)
    dt = aval_of(p).dtype
    ks = np.zeros(m) if k is None else np.broadcast_to(
        concrete_or_error(k, "polyint: k must be concrete"), (m,))
    for i in range(m):
        n = aval_of(p).shape[0]
        p = uf.true_divide(p, np.arange(n, 0, -1).astype(dt))
        p = concatenate([p, np.array([ks[i]], dt)])
    return p


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given (1-D) roots."""
    z = ensure_arraylike("poly", seq_of_zeros)
    if aval_of(z).ndim != 1:
        raise NotImplementedError("olympus.numpy.poly supports only 1-D sequences of roots "
                                  "(the characteristic polynomial of a matrix needs "
                                  "eigenvalues).")
    (z,) = promote_dtypes_inexact(z)
    dt = aval_of(z).dtype
    a = np.ones(1, dt)
    a = prom.broadcast_to(a, (1,))
    for i in range(aval_of(z).shape[0]):
        a = polymul(a, uf.subtract(np.array([1, 0], dt), uf.multiply(
            np.array([0, 1], dt), z[i])))
    return a


# --- bit packing --------------------------------------------------------------------------------


def packbits(a, axis=None, bitorder="big"):
    """Pack the truth values of `a` into the bits of uint8 bytes along `axis`."""
    from ._reductions import sum as _sum
    from ._shape import moveaxis, pad

    a = ensure_arraylike("packbits", a)
    if not (dtypes.is_integer(aval_of(a).dtype) or aval_of(a).dtype == dtypes.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = _creation.astype(_creation.astype(a, bool), dtypes.uint8)
    if axis is None:
        bits = _shape.ravel(bits)
        axis = 0
    bits = moveaxis(bits, axis, -1)
    n = aval_of(bits).shape[-1]
    rem = (-n) % 8
    if rem:
        bits = pad(bits, [(0, 0)] * (aval_of(bits).ndim - 1) + [(0, rem)])
    shape = aval_of(bits).shape
    bits = lax.reshape(bits, shape[:-1] + (shape[-1] // 8, 8))
    shifts = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1]
    packed = _sum(lax.shift_left(bits, prom.broadcast_to(shifts, aval_of(bits).shape)),
                  axis=-1, dtype=dtypes.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Unpack the bits of uint8 values into a uint8 array of 0s and 1s along `axis`."""
    from ._shape import moveaxis

    a = ensure_arraylike("unpackbits", a)
    if aval_of(a).dtype != dtypes.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    shifts = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1]
    if axis is None:
        a = _shape.ravel(a)
        axis = 0
    a = moveaxis(a, axis, -1)
    shape = aval_of(a).shape
    x = lax.broadcast_in_dim(a, shape + (8,), tuple(range(len(shape))))
    bits = lax.bitwise_and(lax.shift_right_logical(x, prom.broadcast_to(shifts, shape + (8,))),
                           np.uint8(1))
    bits = lax.reshape(bits, shape[:-1] + (shape[-1] * 8,))
    if count is not None:
        count = static_int(count, "the count argument of olympus.numpy.unpackbits")
        total = shape[-1] * 8
        if count <= total:
            bits = lax.slice(bits, (0,) * len(shape), shape[:-1] + (count,)) if count >= 0 \
                else lax.slice(bits, (0,) * len(shape), shape[:-1] + (total + count,))
        else:
            bits = lax.pad(bits, np.uint8(0), [(0, 0, 0)] * (len(shape) - 1) +
                           [(0, count - total, 0)])
    return moveaxis(bits, -1, axis)
