"""Comparing an olympus result with NumPy's (shape, 32-bit canonical dtype, weak type,
values): the helper of the differential test_numpy_* tests."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import olympus

X32 = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32),
       np.dtype(np.uint64): np.dtype(np.uint32),
       np.dtype(np.complex128): np.dtype(np.complex64)}


def canon(dt) -> np.dtype:
    """The 32-bit dtype Olympus uses for `dt` (x64 disabled)."""
    dt = np.dtype(dt)
    return X32.get(dt, dt)


def check(got, want, dtype=None, rtol=1e-6, atol=0.0, weak=None):
    """`got` is an olympus Array (or tuple/list of them) matching the NumPy `want`: same
    shape, the given dtype (default: `want`'s dtype canonicalized to 32 bits), values close
    (NaNs must match)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), type(got)
        assert len(got) == len(want), (len(got), len(want))
        for g, w in zip(got, want):
            check(g, w, dtype, rtol, atol, weak)
        return
    assert isinstance(got, olympus.Array), type(got)
    want = np.asarray(want)
    want_dtype = np.dtype(dtype) if dtype is not None else canon(want.dtype)
    assert got.dtype == want_dtype, (got.dtype, want_dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if weak is not None:
        assert got.weak_type is weak, repr(got)
    g = np.asarray(got)
    if g.dtype.kind in "fc" or g.dtype == ml_dtypes.bfloat16:
        wide = np.complex128 if g.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(g.astype(wide), want.astype(wide), rtol=rtol, atol=atol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want.astype(g.dtype) if want.dtype != g.dtype
                                      else want)
