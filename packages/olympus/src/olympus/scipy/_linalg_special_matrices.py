"""The special-matrix constructors of `olympus.scipy.linalg`: `block_diag`, Toeplitz,
Hankel, circulant, Leslie, companion and Fiedler matrices, convolution matrices, and the
fixed families (Hilbert, Pascal, Helmert, Hadamard, DFT) with their inverses.

Batched inputs (leading axes) give batches of matrices, as JAX's do. The integer families
(`invhilbert`, `pascal`, `invpascal`) are built from exact integer arithmetic."""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

import olympus
import olympus.numpy as jnp

from ._util import (
    check_arraylike,
    default_complex,
    default_float,
    promote_args_inexact,
    promote_dtypes,
)


def block_diag(*arrs):
    """The block-diagonal matrix of the (at most 2-D) arguments, in their common dtype."""
    if not arrs:
        arrs = (jnp.zeros((1, 0)),)
    arrs = promote_dtypes(*arrs)
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ValueError("Arguments to olympus.scipy.linalg.block_diag must have at most 2 "
                             f"dimensions, got {a} at argument {i}.")
    mats = [jnp.atleast_2d(a) for a in arrs]
    total = sum(m.shape[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        rows.append(jnp.pad(m, ((0, 0), (col, total - col - m.shape[1]))))
        col += m.shape[1]
    return jnp.concatenate(rows, axis=0)


def _toeplitz_2d(c, r):
    m, n = c.shape[0], r.shape[0]
    dtype = jnp.result_type(c, r)
    if m == 0 or n == 0:
        return jnp.zeros((m, n), dtype)
    vals = jnp.concatenate([c[::-1], r[1:]]).astype(dtype)  # vals[m-1 + j - i]
    idx = (m - 1) + jnp.arange(n)[None, :] - jnp.arange(m)[:, None]
    return vals[idx]


def _hankel_2d(c, r):
    m, n = c.shape[0], r.shape[0]
    dtype = jnp.result_type(c, r)
    if m == 0 or n == 0:
        return jnp.zeros((m, n), dtype)
    vals = jnp.concatenate([c, r[1:]]).astype(dtype)  # vals[i + j]
    return vals[jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column `c` and first row `r` (``conj(c)`` by default;
    the diagonal is ``c[0]``). Leading axes of `c` and `r` are batch axes."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = jnp.conjugate(jnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    c = jnp.atleast_1d(jnp.asarray(c))
    r = jnp.atleast_1d(jnp.asarray(r))
    return jnp.vectorize(_toeplitz_2d, signature="(m),(n)->(m,n)")(c, r)


def hankel(c, r=None):
    """The Hankel matrix with first column `c` and last row `r` (zeros by default; r[0] is
    ignored). Leading axes are batch axes."""
    if r is None:
        check_arraylike("hankel", c)
        c = jnp.asarray(c)
        r = jnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c, r = jnp.asarray(c), jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    return jnp.vectorize(_hankel_2d, signature="(m),(n)->(m,n)")(c, r)


def circulant(c):
    """The circulant matrix whose first column is `c` (batched over leading axes)."""
    check_arraylike("circulant", c)
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    idx = (jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n
    return c[..., idx]


def leslie(f, s):
    """The Leslie matrix: fecundities `f` on the first row, survival rates `s` on the
    subdiagonal."""
    check_arraylike("leslie", f, s)
    f = jnp.atleast_1d(f)
    s = jnp.atleast_1d(s)
    if f.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got "
                         f"shape {f.shape}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis "
                         "must be one less than the length of f; got f shape "
                         f"{f.shape} and s shape {s.shape}.")
    f, s = promote_dtypes(f, s)
    n = f.shape[-1]

    def one(f, s):
        out = jnp.zeros((n, n), f.dtype)
        out = out.at[jnp.arange(1, n), jnp.arange(n - 1)].set(s)
        return out.at[0].set(f)

    return jnp.vectorize(one, signature="(n),(m)->(n,n)")(f, s)


def companion(a):
    """The companion matrix of the polynomial with coefficients `a` (highest first)."""
    (a,) = promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got "
                         f"shape {a.shape}.")
    m = a.shape[-1] - 1

    def one(a):
        return jnp.eye(m, m, k=-1, dtype=a.dtype).at[0].set(-a[1:] / a[0])

    return jnp.vectorize(one, signature="(n)->(m,m)")(a)


def fiedler(a):
    """The symmetric Fiedler matrix |a_i - a_j|."""
    check_arraylike("fiedler", a)
    a = jnp.atleast_1d(a)
    return jnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial with coefficients `a`."""
    (a,) = promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {a.shape}.")
    n = a.shape[-1] - 1

    def one(a):
        if n == 0:
            return jnp.zeros((0, 0), a.dtype)
        a = a / a[0]
        if n == 1:
            return -a[1:].reshape(1, 1)
        out = jnp.zeros((n, n), a.dtype)
        out = out.at[0, 0].set(-a[1]).at[1, 0].set(1)
        # Even rows i: -a[i+2] at (i, i+1) and 1 at (i, i+2); odd rows i >= 3: 1 at
        # (i, i-2); even rows i >= 2: -a[i+1] at (i, i-1).
        for i in range(0, n, 2):
            if i + 1 < n:
                out = out.at[i, i + 1].set(-a[min(i + 2, n)])
            if i + 2 < n:
                out = out.at[i, i + 2].set(1)
            if i >= 2:
                out = out.at[i, i - 1].set(-a[min(i + 1, n)])
        for i in range(3, n, 2):
            out = out.at[i, i - 2].set(1)
        return out

    return jnp.vectorize(one, signature="(n)->(m,m)")(a)


@functools.partial(olympus.jit, static_argnames=("n", "mode"))
def _convolution_matrix(a, n, mode):
    m = a.shape[-1]
    pad = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    az = jnp.pad(a, pad)
    raz = jnp.pad(jnp.flip(a, axis=-1), pad)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    col0 = az[..., tb:length - te]
    row0 = raz[..., length - n - tb:length - tb]
    return toeplitz(col0, row0)


def convolution_matrix(a, n: int, mode: str = "full"):
    """The matrix A with ``A @ v == convolve(a, v, mode)`` for vectors v of length `n`."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a = jnp.asarray(a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a "
                         "scalar.")
    if a.shape[-1] < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    return _convolution_matrix(a, n, mode)


def hilbert(n: int):
    """The Hilbert matrix 1 / (i + j + 1)."""
    i = np.arange(n, dtype=np.float64)
    return jnp.asarray((1 / (i[:, None] + i[None, :] + 1)).astype(default_float()))


def _exact(values):
    with np.errstate(over="ignore"):
        return jnp.asarray(np.array([[float(v) for v in row] for row in values],
                                    np.float64).reshape(len(values), -1)
                           .astype(default_float()))


def invhilbert(n: int):
    """The inverse of the n x n Hilbert matrix (exact integers, as floats)."""
    n = operator.index(n)
    vals = [[(-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
             * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2 for j in range(n)]
            for i in range(n)]
    return _exact(vals) if n else jnp.zeros((0, 0), default_float())


def pascal(n: int, kind: str | None = None):
    """The Pascal matrix: binomial coefficients, lower or upper triangular or the
    symmetric product of the two."""
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be on of: {valid}; got {kind}")
    n = operator.index(n)
    if kind == "lower":
        vals = [[math.comb(i, j) for j in range(n)] for i in range(n)]
    elif kind == "upper":
        vals = [[math.comb(j, i) for j in range(n)] for i in range(n)]
    else:
        vals = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    return _exact(vals) if n else jnp.zeros((0, 0), default_float())


def invpascal(n: int, kind: str | None = None):
    """The inverse of `pascal(n, kind)` (exact integers, as floats)."""
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be one of: {valid}; got {kind}")
    n = operator.index(n)
    low = [[(-1) ** (i - j) * math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "lower":
        vals = low
    elif kind == "upper":
        vals = [list(col) for col in zip(*low)]
    else:  # (L L^T)^-1 = L^-T L^-1
        vals = [[sum(low[k][i] * low[k][j] for k in range(n)) for j in range(n)]
                for i in range(n)]
    return _exact(vals) if n else jnp.zeros((0, 0), default_float())


def helmert(n: int, full: bool = False):
    """The Helmert matrix (orthonormal rows orthogonal to the ones vector; with `full`,
    that normalized ones vector as the first row)."""
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    h = np.zeros((n - 1, n))
    for i in range(n - 1):
        k = i + 1
        denom = math.sqrt(k * (k + 1))
        h[i, :k] = 1 / denom
        h[i, k] = -k / denom
    if full:
        h = np.concatenate([np.full((1, n), 1 / math.sqrt(n)), h])
    return jnp.asarray(h.astype(default_float()))


def hadamard(n: int, dtype=int):
    """The Sylvester-construction Hadamard matrix of order n (a power of 2)."""
    n = operator.index(n)
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = np.ones((1, 1), np.int64)
    for _ in range(int(math.log2(n))):
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


def dft(n: int, scale: str | None = None, *, dtype=None):
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n), optionally divided
    by sqrt(n) ('sqrtn') or n ('n')."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = default_complex()
    else:
        dtype = np.dtype(jnp.dtype(dtype))
        if not np.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
        if dtype == np.complex128 and default_complex() == np.complex64:
            dtype = np.dtype(np.complex64)
    n = operator.index(n)
    k = np.arange(n)
    # The exponent reduced modulo n exactly in integers before the trigonometric functions.
    w = np.exp(-2j * np.pi * ((k[:, None] * k[None, :]) % max(n, 1)) / max(n, 1))
    if scale == "sqrtn":
        w = w / math.sqrt(n)
    elif scale == "n":
        w = w / n
    return jnp.asarray(w.astype(dtype))

