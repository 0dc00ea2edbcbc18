"""olympus.numpy convolve, correlate, polyfit and roots against NumPy (eagerly and under
jit), gradients of convolve/correlate (both arguments), polyfit and polyval, argument
errors."""

from __future__ import annotations

import numpy as np
import pytest
from _transform_checks import assert_close, check_grads, x64

import olympus
import olympus.numpy as jnp
from olympus.errors import ConcretizationTypeError

rng = np.random.default_rng(0)
MODES = ["full", "same", "valid"]


def _close(got, want, rtol=1e-5, atol=1e-5, dtype=None):
    assert_close(got, want, rtol=rtol, atol=atol, dtype=dtype)


def _data(dtype, n):
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-5, 6, n).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype)
    return rng.normal(size=n).astype(dtype)


# --- convolve / correlate -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, np.bool_])
@pytest.mark.parametrize("lengths", [(6, 3), (3, 4), (1, 1)])
def test_conv_matches_numpy(name, dtype, lengths):
    a, v = _data(dtype, lengths[0]), _data(dtype, lengths[1])
    for mode in MODES:
        got = getattr(jnp, name)(a, v, mode)
        _close(got, getattr(np, name)(a, v, mode), dtype=dtype)


def test_conv_defaults_mixed_dtypes_and_jit():
    a = np.array([1, 2, 3, 4], np.int32)
    v = np.array([0.5, -1.0], np.float32)
    _close(jnp.convolve(a, v), np.convolve(a, v), dtype=np.float32)   # default 'full'
    _close(jnp.correlate(a, v), np.correlate(a, v), dtype=np.float32)  # default 'valid'
    f = olympus.jit(lambda a, v: (jnp.convolve(a, v, "same"), jnp.correlate(a, v, "full")))
    c1, c2 = f(a, v)
    _close(c1, np.convolve(a, v, "same"))
    _close(c2, np.correlate(a, v, "full"))
    # Convolution is polynomial multiplication.
    _close(jnp.convolve(a, v), jnp.polymul(a, v))


def test_conv_gradients_both_arguments():
    a = rng.normal(size=7)
    v = rng.normal(size=3)
    with x64():
        for mode in MODES:
            check_grads(lambda a, v, m=mode: jnp.convolve(a, v, m), (a, v))
            check_grads(lambda a, v, m=mode: jnp.correlate(v, a, m), (a, v))
        ac = a + 1j * rng.normal(size=7)
        vc = v + 1j * rng.normal(size=3)
        check_grads(lambda a, v: jnp.correlate(a, v, "full"), (ac, vc))
        # d/dv sum(convolve(a, v)) = sum(a) for every entry of v.
        g = olympus.grad(lambda v: jnp.sum(jnp.convolve(a, v)))(v)
    _close(g, np.full(3, a.sum()))


# --- polyfit ------------------------------------------------------------------------------------


@pytest.mark.parametrize("deg", [0, 1, 3])
def test_polyfit_matches_numpy(deg):
    x = np.linspace(-1, 2, 15)
    y = np.cos(2 * x) + 0.1 * rng.normal(size=15)
    _close(jnp.polyfit(x.astype(np.float32), y.astype(np.float32), deg), np.polyfit(x, y, deg),
           rtol=2e-3, atol=2e-3, dtype=np.float32)
    with x64():
        _close(jnp.polyfit(x, y, deg), np.polyfit(x, y, deg), rtol=1e-9, atol=1e-10,
               dtype=np.float64)


def test_polyfit_weights_2d_full_and_cov():
    x = np.linspace(0, 1, 12)
    y = np.stack([np.sin(3 * x), np.exp(x)], axis=1)
    w = rng.random(12) + 0.5
    with x64():
        _close(jnp.polyfit(x, y, 2, w=w), np.polyfit(x, y, 2, w=w), rtol=1e-9, atol=1e-10)
        c, res, rank, s, rcond = jnp.polyfit(x, y[:, 0], 3, full=True)
        wc, wres, wrank, ws, wrcond = np.polyfit(x, y[:, 0], 3, full=True)
        _close(c, wc, rtol=1e-9, atol=1e-10)
        _close(res, wres[0], rtol=1e-6, atol=1e-12)
        assert int(rank) == wrank
        _close(s, ws, rtol=1e-9)
        _close(rcond, wrcond)
        for cov in (True, "unscaled"):
            c, V = jnp.polyfit(x, y[:, 1], 2, cov=cov)
            wc, wV = np.polyfit(x, y[:, 1], 2, cov=cov)
            _close(V, wV, rtol=1e-7, atol=1e-14)
        c, V = jnp.polyfit(x, y, 1, w=w, cov=True)
        wc, wV = np.polyfit(x, y, 1, w=w, cov=True)
        _close(V, wV, rtol=1e-7, atol=1e-14)


def test_polyfit_under_jit_and_gradient():
    x = np.linspace(-1, 1, 9)
    y = 2 * x**2 - x + 0.5
    with x64():
        c = olympus.jit(lambda x, y: jnp.polyfit(x, y, 2))(x, y)
        _close(c, [2.0, -1.0, 0.5], rtol=1e-10, atol=1e-10)
        # polyfit is linear in y: its Jacobian is the pseudo-inverse of the Vandermonde
        # matrix; polyval of the fit at the nodes then differentiates to the hat matrix.
        J = olympus.jacfwd(lambda y: jnp.polyfit(x, y, 2))(y)
        _close(J, np.linalg.pinv(np.vander(x, 3)), rtol=1e-8, atol=1e-10)
        check_grads(lambda y: jnp.polyval(jnp.polyfit(x, y, 2), 0.3), (y,))


def test_polyval_gradient_by_hand():
    p = np.array([3.0, -2.0, 0.5, 1.0])
    x = np.array([-1.5, 0.0, 0.7, 2.0])
    with x64():
        gx = olympus.grad(lambda x: jnp.sum(jnp.polyval(p, x)))(x)
        gp = olympus.grad(lambda p: jnp.polyval(p, 0.7))(p)
        check_grads(jnp.polyval, (p, x))
    _close(gx, np.polyval(np.polyder(p), x), rtol=1e-12)
    _close(gp, 0.7 ** np.arange(3, -1, -1), rtol=1e-12)


# --- roots --------------------------------------------------------------------------------------

needs_eig = pytest.mark.skipif(not hasattr(jnp.linalg, "eigvals"),
                               reason="olympus.numpy.linalg.eigvals is not available")


def _sorted_roots(r):
    r = np.asarray(r)
    return r[np.lexsort((np.round(r.imag, 4), np.round(r.real, 4)))]


@needs_eig
@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [2.0, 0.0, 1.0], [0.0, 0.0, 1.0, -6.0, 11.0, -6.0],
                               [1.0, -1.0, 0.0, 0.0], [4.0], [0.0, 5.0], [1.0, 2.0]])
def test_roots_matches_numpy(p):
    p = np.array(p, np.float32)
    got = jnp.roots(p)
    assert got.dtype == np.complex64
    want = np.roots(p)
    _close(_sorted_roots(got), _sorted_roots(want.astype(np.complex128)), rtol=1e-4,
           atol=1e-4)


@needs_eig
def test_roots_complex_x64_and_jit():
    with x64():
        p = np.array([1.0, 1j, -2.0, 3 - 1j])
        _close(_sorted_roots(jnp.roots(p)), _sorted_roots(np.roots(p)), rtol=1e-10)
        f = olympus.jit(lambda p: jnp.roots(p, strip_zeros=False))
        r = np.asarray(f(np.array([0.0, 0.0, 1.0, -5.0, 6.0, 0.0])))
        assert np.isnan(r).sum() == 2
        _close(_sorted_roots(r[~np.isnan(r)]), [0.0, 2.0, 3.0], rtol=1e-10, atol=1e-12)
        r = np.asarray(f(np.array([1.0, -5.0, 6.0])))
        _close(_sorted_roots(r), [2.0, 3.0], rtol=1e-10)
    with pytest.raises(ConcretizationTypeError, match="strip_zeros=False"):
        olympus.jit(jnp.roots)(np.array([1.0, 2.0]))


# --- errors -------------------------------------------------------------------------------------


def test_errors():
    a = np.arange(4.0)
    with pytest.raises(ValueError, match=r"convolve\(\) only supports 1-dimensional inputs, "
                                         r"got shapes \(2, 2\) and \(4,\)"):
        jnp.convolve(np.zeros((2, 2)), a)
    with pytest.raises(ValueError, match="correlate: inputs cannot be empty"):
        jnp.correlate(a, np.zeros(0))
    with pytest.raises(ValueError, match="mode must be one of 'full', 'same' or 'valid', got "
                                         "'middle'"):
        jnp.convolve(a, a, "middle")
    with pytest.raises(TypeError, match="convolve requires ndarray or scalar"):
        jnp.convolve([1, 2], a)
    with pytest.raises(ValueError, match="expected deg >= 0, got deg=-1"):
        jnp.polyfit(a, a, -1)
    with pytest.raises(TypeError, match=r"expected x and y to have the same length, got 4 "
                                        r"and 3"):
        jnp.polyfit(a, a[:3], 1)
    with pytest.raises(TypeError, match=r"expected a 1-D vector for x, got shape \(2, 2\)"):
        jnp.polyfit(np.zeros((2, 2)), np.zeros(2), 1)
    with pytest.raises(TypeError, match="expected w and x to have the same length"):
        jnp.polyfit(a, a, 1, w=np.ones(3))
    with pytest.raises(ValueError, match=r"number of data points \(4\) must exceed order "
                                         r"\(4\)"):
        jnp.polyfit(a, a, 3, cov=True)
    with pytest.raises(ValueError, match=r"roots: input must be a rank-1 array, got shape "
                                         r"\(2, 2\)"):
        jnp.roots(np.ones((2, 2)))


# --- matvec / vecmat ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_matvec_vecmat_match_numpy(dtype):
    if not hasattr(np, "matvec"):
        pytest.skip("NumPy < 2.2 has no matvec/vecmat")
    m = _data(dtype, 2 * 3 * 4).reshape(2, 3, 4)
    v4, v3 = _data(dtype, 4), _data(dtype, 3 * 2).reshape(2, 3)
    _close(jnp.matvec(m, v4), np.matvec(m, v4), dtype=dtype)
    _close(jnp.vecmat(v3[:, None, :], m), np.vecmat(v3[:, None, :], m), dtype=dtype)
    _close(jnp.vecmat(v3[0], m), np.vecmat(v3[0], m), dtype=dtype)
    with pytest.raises(ValueError, match=r"matvec: the last dimensions of x1 \(2, 3, 4\) and "
                                         r"x2 \(3,\) must match"):
        jnp.matvec(m, v3[0])
    with pytest.raises(ValueError, match="vecmat: x1 must be at least 1-D and x2 at least 2-D"):
        jnp.vecmat(v4, v4)
