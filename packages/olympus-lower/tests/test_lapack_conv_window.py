"""conv_general_dilated, reduce_window_*, the LAPACK decompositions, fft and top_k: lowered
(and verified), executed on the CPU and compared against numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, assert_close, run

from olympus_ir import primitives as P
from olympus_ir.prims.convolution import ConvDimensionNumbers as CDN
from olympus_ir.prims.linalg_lapack import FftType

rng = np.random.default_rng(7)
F32, C64 = np.dtype(np.float32), np.dtype(np.complex64)
LAPACK_TOL = {np.dtype(np.float32): dict(rtol=2e-4, atol=2e-4),
              np.dtype(np.complex64): dict(rtol=2e-4, atol=2e-4),
              np.dtype(np.float64): dict(rtol=1e-10, atol=1e-10)}


pytestmark = pytest.mark.usefixtures("lapack_targets")  # conftest.py


def _one(prim, *args, **params):
    """Lower, verify and execute ``prim(*args, **params)``; returns (text, outputs)."""
    b = Builder()
    vs = [b.arg(np.shape(a), np.asarray(a).dtype) for a in args]
    out = b.eqn(prim, *vs, **params)
    lowered, outs = run(b.build(out if prim.multiple_results else [out]), *args,
                        name=prim.name)
    return lowered.as_text(), outs


def _rand(shape, dt=F32):
    dt = np.dtype(dt)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


# --- convolution ----------------------------------------------------------------------------

def _conv_ref(x, w, strides, padding, lhs_dil, rhs_dil, fg):
    """NCHW x OIHW -> NCHW by explicit loops over output positions (float64)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    xd = np.zeros((n, c, (h - 1) * lhs_dil[0] + 1, (wd - 1) * lhs_dil[1] + 1))
    xd[:, :, ::lhs_dil[0], ::lhs_dil[1]] = x
    xp = np.pad(xd, ((0, 0), (0, 0)) + tuple((max(lo, 0), max(hi, 0)) for lo, hi in padding))
    crop = tuple(slice(max(-lo, 0), xp.shape[2 + k] - max(-hi, 0))
                 for k, (lo, hi) in enumerate(padding))
    xp = xp[(slice(None), slice(None)) + crop]
    kd = np.zeros((o, i, (kh - 1) * rhs_dil[0] + 1, (kw - 1) * rhs_dil[1] + 1))
    kd[:, :, ::rhs_dil[0], ::rhs_dil[1]] = w
    KH, KW = kd.shape[2:]
    oh = (xp.shape[2] - KH) // strides[0] + 1
    ow = (xp.shape[3] - KW) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    kg = kd.reshape(fg, o // fg, i, KH, KW)
    for a in range(oh):
        for b in range(ow):
            patch = xp[:, :, a * strides[0]:a * strides[0] + KH,
                       b * strides[1]:b * strides[1] + KW]
            patch = patch.reshape(n, fg, i, KH, KW)
            out[:, :, a, b] = np.einsum("ngikl,goikl->ngo", patch, kg).reshape(n, o)
    return out


NCHW = CDN((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))


@pytest.mark.parametrize("xs,ws,strides,padding,lhs_dil,rhs_dil,fg", [
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1),
    ((1, 2, 7, 7), (3, 2, 3, 3), (2, 1), ((1, 1), (2, 0)), (1, 1), (1, 2), 1),
    ((1, 4, 5, 6), (6, 2, 2, 3), (1, 2), ((1, -1), (0, 1)), (2, 1), (1, 1), 2),
])
def test_conv_general_dilated_nchw(xs, ws, strides, padding, lhs_dil, rhs_dil, fg):
    x, w = _rand(xs), _rand(ws)
    text, (out,) = _one(P.conv_general_dilated_p, x, w, window_strides=strides,
                        padding=padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
                        dimension_numbers=NCHW, feature_group_count=fg, batch_group_count=1,
                        precision=None, preferred_element_type=None)
    assert "stablehlo.convolution" in text
    assert_close(out, _conv_ref(x, w, strides, padding, lhs_dil, rhs_dil, fg),
                 rtol=1e-5, atol=1e-5)


def test_conv_general_dilated_nhwc():
    x, w = _rand((2, 6, 5, 3)), _rand((3, 2, 3, 4))  # NHWC, HWIO
    dn = CDN((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    _, (out,) = _one(P.conv_general_dilated_p, x, w, window_strides=(1, 1),
                     padding=((1, 1), (0, 0)), lhs_dilation=(1, 1), rhs_dilation=(1, 1),
                     dimension_numbers=dn)
    ref = _conv_ref(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1),
                    ((1, 1), (0, 0)), (1, 1), (1, 1), 1)
    assert_close(out, ref.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


# --- windowed reductions --------------------------------------------------------------------

_RW = {"reduce_window_sum": (np.sum, 0.0), "reduce_window_max": (np.max, -np.inf),
       "reduce_window_min": (np.min, np.inf)}


def _reduce_window_ref(x, op, init, window, strides, padding, base_dil, win_dil):
    x = x.astype(np.float64)
    xd = np.full(tuple((d - 1) * b + 1 for d, b in zip(x.shape, base_dil, strict=True)), init)
    xd[tuple(slice(None, None, b) for b in base_dil)] = x
    xp = np.pad(xd, padding, constant_values=init)
    span = tuple((w - 1) * d + 1 for w, d in zip(window, win_dil, strict=True))
    v = np.lib.stride_tricks.sliding_window_view(xp, span)
    nd = x.ndim
    v = v[tuple(slice(None, None, s) for s in strides)
          + tuple(slice(None, None, d) for d in win_dil)]
    return op(v, axis=tuple(range(nd, 2 * nd)))


@pytest.mark.parametrize("name", sorted(_RW))
@pytest.mark.parametrize("shape,window,strides,padding,base_dil,win_dil", [
    ((4, 6), (2, 3), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((5, 7), (3, 2), (2, 3), ((1, 1), (0, 2)), (1, 1), (1, 1)),
    ((4, 5), (2, 2), (1, 2), ((1, 0), (1, 1)), (2, 1), (1, 2)),
])
def test_reduce_window(name, shape, window, strides, padding, base_dil, win_dil):
    x = _rand(shape)
    prim = P.primitive_by_name(name)
    text, (out,) = _one(prim, x, window_dimensions=window, window_strides=strides,
                        padding=padding, base_dilation=base_dil, window_dilation=win_dil)
    assert '"stablehlo.reduce_window"' in text
    op, init = _RW[name]
    ref = _reduce_window_ref(x, op, init, window, strides, padding, base_dil, win_dil)
    assert out.shape == ref.shape
    assert_close(out, ref, rtol=1e-5, atol=1e-5)


# --- fft ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,shape,lengths,ref", [
    (FftType.FFT, (3, 8), (8,), lambda x: np.fft.fft(x)),
    (FftType.IFFT, (2, 4, 6), (4, 6), lambda x: np.fft.ifft2(x)),
    (FftType.RFFT, (3, 8), (8,), lambda x: np.fft.rfft(x)),
    (FftType.RFFT, (2, 4, 6), (4, 6), lambda x: np.fft.rfft2(x)),
    (FftType.IRFFT, (3, 5), (8,), lambda x: np.fft.irfft(x, n=8)),
    (FftType.IRFFT, (2, 4, 4), (4, 7), lambda x: np.fft.irfft2(x, s=(4, 7))),
])
def test_fft(kind, shape, lengths, ref):
    x = _rand(shape, F32 if kind == FftType.RFFT else C64)
    text, (out,) = _one(P.fft_p, x, fft_type=kind, fft_lengths=lengths)
    assert f"stablehlo.fft %arg0, type = {kind.name}" in text
    want = ref(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    assert out.shape == want.shape
    assert_close(out, want, rtol=1e-4, atol=1e-4)


# --- top_k ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [F32, np.dtype(np.int32)], ids=str)
def test_top_k(dt):
    x = rng.integers(-5, 5, (4, 9)).astype(dt)  # many ties: the lower index comes first
    text, (vals, idx) = _one(P.top_k_p, x, k=4)
    assert "chlo.top_k" in text
    order = np.argsort(-x.astype(np.int64), axis=-1, kind="stable")[:, :4]
    np.testing.assert_array_equal(vals, -np.sort(-x, axis=-1)[:, :4])
    np.testing.assert_array_equal(idx, order)
    assert idx.dtype == np.int32


# --- LAPACK ---------------------------------------------------------------------------------

def _spd(shape, dt):
    a = _rand(shape, dt)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dt)


@pytest.mark.parametrize("dt", [F32, C64], ids=str)
def test_cholesky(dt):
    x = _spd((2, 4, 4), dt)
    text, (l,) = _one(P.cholesky_p, x)
    assert "lapack_" in text and "potrf_ffi" in text
    assert_close(l, np.linalg.cholesky(x), **LAPACK_TOL[dt])
    # not positive definite: NaNs
    _, (bad,) = _one(P.cholesky_p, -np.eye(3, dtype=np.float32))
    assert np.isnan(bad).all()


@pytest.mark.parametrize("left_side,lower,transpose_a,unit", [
    (True, True, False, False), (True, False, True, False), (False, True, False, True),
    (False, False, True, False),
])
def test_triangular_solve(left_side, lower, transpose_a, unit):
    a = _rand((2, 4, 4)) + 4 * np.eye(4, dtype=np.float32)
    b = _rand((2, 4, 3) if left_side else (2, 3, 4))
    text, (out,) = _one(P.triangular_solve_p, a, b, left_side=left_side, lower=lower,
                        transpose_a=transpose_a, conjugate_a=False, unit_diagonal=unit)
    assert "lapack_strsm_ffi" in text
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = np.where(np.eye(4, dtype=bool), 1, t)
    op = np.swapaxes(t, -1, -2) if transpose_a else t
    a64 = op.astype(np.float64)
    if left_side:
        want = np.linalg.solve(a64, b)
    else:  # x op(a) = b  <=>  op(a)^T x^T = b^T
        want = np.swapaxes(np.linalg.solve(np.swapaxes(a64, -1, -2), np.swapaxes(b, -1, -2)),
                           -1, -2)
    assert_close(out, want, **LAPACK_TOL[F32])


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5)])
def test_lu(shape):
    x = _rand(shape)
    text, (lu, piv, perm) = _one(P.lu_p, x)
    assert "lapack_sgetrf_ffi" in text
    *_, m, n = shape
    k = min(m, n)
    l = np.tril(lu, -1)[..., :, :k] + np.eye(m, k, dtype=np.float32)
    u = np.triu(lu)[..., :k, :]
    # the permutation is the row swaps applied to iota
    for bi in np.ndindex(*shape[:-2]):
        p = np.arange(m)
        for i, j in enumerate(piv[bi]):
            p[[i, j]] = p[[j, i]]
        np.testing.assert_array_equal(perm[bi], p)
        assert_close(x[bi][perm[bi]], l[bi] @ u[bi], **LAPACK_TOL[F32])
    assert piv.dtype == perm.dtype == np.int32
    assert piv.shape == shape[:-2] + (k,) and perm.shape == shape[:-2] + (m,)


@pytest.mark.parametrize("shape,full,dt", [
    ((5, 3), True, F32), ((5, 3), False, F32), ((3, 5), True, F32), ((2, 4, 3), True, C64),
])
def test_qr(shape, full, dt):
    x = _rand(shape, dt)
    text, (q, r) = _one(P.qr_p, x, full_matrices=full)
    assert "geqrf_ffi" in text and "gqr_ffi" in text
    nq, nr = np.linalg.qr(x, mode="complete" if full else "reduced")
    assert (q.shape, r.shape) == (nq.shape, nr.shape)
    tol = LAPACK_TOL[dt]
    assert_close(q @ r, x, **tol)
    eye = np.eye(q.shape[-1])
    assert_close(np.conj(np.swapaxes(q, -1, -2)) @ q, np.broadcast_to(eye, q.shape[:-2]
                                                                      + eye.shape), **tol)
    np.testing.assert_array_equal(r, np.triu(r))
    # unique up to the phase of each column of Q / row of R
    assert_close(np.abs(r), np.abs(nr), **tol)


@pytest.mark.parametrize("dt,lower", [(F32, True), (F32, False), (C64, True)], ids=str)
def test_eigh(dt, lower):
    x = _spd((2, 4, 4), dt) - 3 * np.eye(4, dtype=dt)
    # only the `lower` (or upper) triangle is read: garbage in the other one
    junk = np.triu(_rand((2, 4, 4), dt), 1)
    xin = x + (junk if lower else np.conj(np.swapaxes(junk, -1, -2)))
    text, (v, w) = _one(P.eigh_p, xin, lower=lower, sort_eigenvalues=True)
    assert "evd_ffi" in text
    tol = LAPACK_TOL[dt]
    assert_close(w, np.linalg.eigvalsh(x), **tol)
    assert w.dtype == np.float32
    assert_close(x @ v, v * w[..., None, :], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("shape,full,dt", [
    ((4, 6), True, F32), ((6, 4), False, F32), ((2, 3, 5), False, C64),
])
def test_svd(shape, full, dt):
    x = _rand(shape, dt)
    text, (s, u, vt) = _one(P.svd_p, x, full_matrices=full, compute_uv=True)
    assert "gesdd_ffi" in text
    nu, ns, nvt = np.linalg.svd(x, full_matrices=full)
    assert (s.shape, u.shape, vt.shape) == (ns.shape, nu.shape, nvt.shape)
    tol = LAPACK_TOL[dt]
    assert_close(s, ns, **tol)
    k = s.shape[-1]
    assert_close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], x, **tol)
    _, (s_only,) = _one(P.svd_p, x, full_matrices=full, compute_uv=False)
    assert_close(s_only, ns, **tol)


def test_lapack_float64(x64):
    x = _spd((3, 3), np.float64)
    _, (l,) = _one(P.cholesky_p, x)
    assert_close(l, np.linalg.cholesky(x), **LAPACK_TOL[np.dtype(np.float64)])
    _, (s, u, vt) = _one(P.svd_p, x)
    assert_close(s, np.linalg.svd(x, compute_uv=False), **LAPACK_TOL[np.dtype(np.float64)])
