"""``eig`` lowers to jaxlib's LAPACK geev FFI kernel (``lapack_<s|d|c|z>geev_ffi``) and
the executed results satisfy the eigen-equations and match numpy's eigenvalues."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _lower_util import Builder, run

from olympus_ir import primitives as P

rng = np.random.default_rng(11)
TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4,
       np.dtype(np.float64): 1e-10, np.dtype(np.complex128): 1e-10}
PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
          np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


pytestmark = pytest.mark.usefixtures("lapack_targets")  # conftest.py


def _rand(shape, dt):
    dt = np.dtype(dt)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def _eig(x, left=True, right=True, x64=None):
    b = Builder()
    v = b.arg(x.shape, x.dtype)
    out = b.eqn(P.eig_p, v, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    lowered, outs = run(b.build(out), x, name="eig", x64=x64)
    return lowered.as_text(), outs


def match_order(w, ref):
    """`ref` reordered (per batch member) to pair each of its entries with the nearest
    entry of `w`. numpy computes single-precision eig in double precision, so near-ties
    may come out of LAPACK in another order than in float32."""
    w, ref = np.asarray(w), np.asarray(ref)
    out = np.empty_like(ref)
    for idx in np.ndindex(w.shape[:-1]):
        left = list(ref[idx])
        for k, z in enumerate(w[idx]):
            j = int(np.argmin([abs(z - r) for r in left]))
            out[idx + (k,)] = left.pop(j)
    return out


def _H(v):
    return np.conj(np.swapaxes(v, -1, -2))


@pytest.mark.parametrize("dt", [np.float32, np.complex64, np.float64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5)], ids=str)
def test_eig_matches_numpy_and_satisfies_eigen_equations(dt, shape, request):
    dt = np.dtype(dt)
    if dt in (np.float64, np.complex128):
        request.getfixturevalue("x64")
    x = _rand(shape, dt)
    text, (w, vl, vr) = _eig(x)
    assert f"stablehlo.custom_call @lapack_{PREFIX[dt]}geev_ffi(%arg0)" in text
    assert "compute_left = 86 : ui8" in text and "compute_right = 86 : ui8" in text
    cdt = np.result_type(dt, np.complex64)
    assert w.dtype == vl.dtype == vr.dtype == cdt
    assert w.shape == shape[:-1] and vl.shape == vr.shape == shape
    tol = TOL[dt]
    ref = np.linalg.eigvals(x)
    if dt in (np.float64, np.complex128):
        # the same LAPACK routine as numpy's in the same precision: the same order
        np.testing.assert_allclose(w, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(w, match_order(w, ref), rtol=tol, atol=tol)
    scale = np.abs(x).max()
    np.testing.assert_allclose(x @ vr, vr * w[..., None, :], atol=tol * 10 * scale)
    np.testing.assert_allclose(_H(vl) @ x, w[..., :, None] * _H(vl), atol=tol * 10 * scale)
    np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), 1.0, rtol=tol)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=-2), 1.0, rtol=tol)


def test_real_input_with_complex_eigenvalues():
    # a rotation by 90 degrees scaled by 2: eigenvalues +-2i, joined from the real and
    # imaginary parts geev returns
    x = np.array([[0.0, -2.0], [2.0, 0.0]], np.float32)
    text, (w, vr) = _eig(x, left=False)
    assert "stablehlo.complex" in text
    np.testing.assert_allclose(sorted(w, key=lambda z: z.imag), [-2j, 2j], atol=1e-6)
    np.testing.assert_allclose(x @ vr, vr * w[None, :], atol=1e-5)


@pytest.mark.parametrize("left,right", [(False, False), (True, False), (False, True)])
def test_optional_eigenvectors(left, right):
    x = _rand((3, 4, 4), np.float32)
    text, outs = _eig(x, left=left, right=right)
    assert f"compute_left = {ord('V' if left else 'N')} : ui8" in text
    assert f"compute_right = {ord('V' if right else 'N')} : ui8" in text
    assert len(outs) == 1 + left + right
    w = outs[0]
    np.testing.assert_allclose(w, match_order(w, np.linalg.eigvals(x)), rtol=2e-4, atol=2e-4)
    if right:
        vr = outs[-1]
        np.testing.assert_allclose(x @ vr, vr * outs[0][..., None, :], atol=2e-4 * 20)
    if left:
        vl = outs[1]
        np.testing.assert_allclose(_H(vl) @ x, outs[0][..., :, None] * _H(vl), atol=2e-4 * 20)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 2, 2)], ids=str)
def test_empty_operands_need_no_kernel(shape):
    x = np.zeros(shape, np.float32)
    text, (w, vl, vr) = _eig(x)
    assert "geev" not in text
    assert w.shape == shape[:-1] and vr.shape == vl.shape == shape
    assert w.dtype == np.complex64


def test_one_by_one():
    x = np.array([[[-3.5]], [[2.0]]], np.float32)
    _, (w, vl, vr) = _eig(x)
    np.testing.assert_allclose(w, [[-3.5], [2.0]])
    np.testing.assert_allclose(np.abs(vr), 1.0)
    np.testing.assert_allclose(np.abs(vl), 1.0)


def test_failed_factorization_gives_nan():
    # geev cannot converge on NaN input: info != 0 and the outputs are NaN
    x = np.full((2, 3, 3), np.nan, np.float32)
    x[1] = np.diag([1.0, 2.0, 3.0])
    _, (w, _, vr) = _eig(x)
    assert np.isnan(w[0]).all() and np.isnan(vr[0]).all()
    np.testing.assert_allclose(sorted(w[1].real), [1.0, 2.0, 3.0])


def test_matrix_layouts_are_column_major():
    text, _ = _eig(_rand((2, 3, 3), np.float32))
    call = next(line for line in text.splitlines() if "geev_ffi" in line)
    assert re.search(r"operand_layouts = \[dense<\[1, 2, 0\]>", call)
    assert "result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : " \
           "tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : " \
           "tensor<3xindex>, dense<0> : tensor<1xindex>]" in call
