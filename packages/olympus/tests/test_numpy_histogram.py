"""olympus.numpy binning and interpolation against NumPy: histogram_bin_edges, histogram,
histogram2d, histogramdd, digitize, interp; eagerly and under jit, hypothesis-generated
inputs for digitize and interp, gradients of interp and of weighted histograms, argument
errors."""

from __future__ import annotations

import numpy as np
import pytest
from _transform_checks import assert_close, check_grads, x64
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import olympus
import olympus.numpy as jnp

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
rng = np.random.default_rng(0)


_close = assert_close


def _check_hist(got, x, bins=10, range=None, weights=None, density=None, dtype=np.float32):  # noqa: A002
    counts, edges = got
    want_counts, want_edges = np.histogram(x, bins=bins, range=range, weights=weights,
                                           density=density)
    _close(edges, want_edges, dtype=np.asarray(edges).dtype)
    # Counts exactly as NumPy bins the data with *our* (float32) edges.
    ref_counts, _ = np.histogram(x, bins=np.asarray(edges, np.float64), weights=weights,
                                 density=density)
    _close(counts, ref_counts, dtype=dtype)
    _close(counts, want_counts, rtol=1e-4, atol=1e-5)


# --- histogram / histogram_bin_edges --------------------------------------------------------


@pytest.mark.parametrize("dtype,shape", [(np.float32, (40,)), (np.int32, (5, 6)),
                                         (np.float32, ()), (np.float32, (0,)),
                                         (np.int32, (7,))])
def test_histogram_matches_numpy(dtype, shape):
    x = (rng.normal(size=shape) * 4).astype(dtype)
    _check_hist(jnp.histogram(x), x)
    _check_hist(jnp.histogram(x, bins=4, range=(-2, 3)), x, bins=4, range=(-2, 3))
    _close(jnp.histogram_bin_edges(x, bins=3), np.histogram_bin_edges(x, bins=3),
           dtype=np.float32)


def test_histogram_edges_weights_density():
    x = rng.normal(size=30).astype(np.float32)
    w = rng.random(30).astype(np.float32)
    bins = np.array([-2.0, -0.5, 0.0, 0.25, 3.0], np.float32)
    _check_hist(jnp.histogram(x, bins=bins), x, bins=bins)
    _check_hist(jnp.histogram(x, bins=bins, weights=w), x, bins=bins, weights=w)
    _check_hist(jnp.histogram(x, bins=bins, density=True), x, bins=bins, density=True)
    _check_hist(jnp.histogram(x, bins=5, weights=w, density=True), x, bins=5, weights=w,
                density=True)
    _close(jnp.histogram_bin_edges(x, bins=bins), bins)


def test_histogram_edge_cases():
    # The right edge is in the last bin; NaNs and values outside the range are dropped;
    # a zero-width range is widened by 0.5.
    x = np.array([0.0, 1.0, 2.0, 2.0, np.nan, 5.0, -1.0], np.float32)
    _check_hist(jnp.histogram(x, bins=4, range=(0, 2)), x, bins=4, range=(0, 2))
    c = np.array([3.0, 3.0, 3.0], np.float32)
    _check_hist(jnp.histogram(c, bins=2), c, bins=2)
    counts, edges = jnp.histogram(np.array([True, False, True]), bins=2)
    _close(counts, [1.0, 2.0])
    _close(edges, [0.0, 0.5, 1.0])


def test_histogram_under_jit_traced_range_and_edges():
    x = rng.normal(size=25).astype(np.float32)

    @olympus.jit
    def f(x, lo, hi, edges):
        return jnp.histogram(x, bins=6, range=(lo, hi)), jnp.histogram(x, bins=edges)

    edges = np.array([-1.0, 0.0, 1.0, 1.5], np.float32)
    (c1, e1), (c2, e2) = f(x, np.float32(-1.5), np.float32(2.0), edges)
    _check_hist((c1, e1), x, bins=6, range=(-1.5, 2.0))
    _check_hist((c2, e2), x, bins=edges)
    _check_hist(olympus.jit(lambda x: jnp.histogram(x, 7))(x), x, bins=7)


def test_weighted_histogram_gradient():
    x = rng.normal(size=12)
    w = rng.random(12)
    edges = np.array([-3.0, -0.5, 0.2, 3.0])
    with x64():
        g = olympus.grad(lambda w: jnp.sum(jnp.histogram(x, edges, weights=w)[0] *
                                           jnp.array([1.0, 2.0, 3.0])))(w)
    want = np.array([1.0, 2.0, 3.0])[np.digitize(x, edges) - 1]
    _close(g, want)


def test_histogram2d_and_dd():
    x = rng.normal(size=30).astype(np.float32)
    y = rng.normal(size=30).astype(np.float32)
    w = rng.random(30).astype(np.float32)
    h, xe, ye = jnp.histogram2d(x, y, bins=(3, 4), weights=w)
    wh, wxe, wye = np.histogram2d(x, y, bins=(np.asarray(xe, np.float64),
                                              np.asarray(ye, np.float64)), weights=w)
    _close(h, wh, dtype=np.float32)
    _close(xe, np.histogram2d(x, y, bins=(3, 4))[1])
    edges = np.array([-1.0, 0.0, 2.0], np.float32)
    h, xe, ye = jnp.histogram2d(x, y, bins=edges, density=True)
    _close(h, np.histogram2d(x, y, bins=edges, density=True)[0], rtol=1e-4)
    s = rng.normal(size=(20, 3)).astype(np.float32)
    bins = [2, np.array([-2.0, 0.0, 1.0, 4.0], np.float32), 3]
    rngs = [(-1, 1), None, (-3, 3)]
    h, es = olympus.jit(lambda s: jnp.histogramdd(s, bins=bins, range=rngs))(s)
    wh, wes = np.histogramdd(s, bins=[np.asarray(e, np.float64) for e in es])
    _close(h, wh, dtype=np.float32)
    for e, we in zip(es, np.histogramdd(s, bins=bins, range=rngs)[1], strict=True):
        _close(e, we)
    h, es = jnp.histogramdd(s[:, :2], bins=3, density=True)
    _close(h, np.histogramdd(s[:, :2], bins=[np.asarray(e, np.float64) for e in es],
                             density=True)[0], rtol=1e-4)


# --- digitize -----------------------------------------------------------------------------------


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("decreasing", [False, True])
@SETTINGS
@given(x=hnp.arrays(np.float32, (9,), elements=st.sampled_from(
           [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 7.0, np.inf, -np.inf, np.nan])),
       bins=hnp.arrays(np.float32, (5,), elements=st.sampled_from(
           [-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])))
def test_digitize_hypothesis(right, decreasing, x, bins):
    bins = np.sort(bins)[::-1] if decreasing else np.sort(bins)
    want = np.digitize(x, bins, right=right)
    got = jnp.digitize(x, bins, right=right)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(_JIT_DIGITIZE[right](x, bins)), want)


_JIT_DIGITIZE = {r: olympus.jit(lambda x, b, r=r: jnp.digitize(x, b, right=r))
                 for r in (False, True)}


@pytest.mark.parametrize("xshape", [(), (0,), (2, 3)])
def test_digitize_shapes_and_ints(xshape):
    x = rng.integers(-3, 4, xshape).astype(np.int32)
    bins = np.array([-2, 0, 0, 3], np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.digitize(x, bins)), np.digitize(x, bins))
    np.testing.assert_array_equal(np.asarray(jnp.digitize(x, np.zeros(0, np.int32))),
                                  np.digitize(x, np.zeros(0, np.int32)))


# --- interp -------------------------------------------------------------------------------------


@st.composite
def _interp_case(draw):
    xp = np.unique(draw(hnp.arrays(np.float32, (6,), elements=st.floats(
        -10, 10, width=32, allow_subnormal=False))))
    fp = draw(hnp.arrays(np.float32, xp.shape, elements=st.floats(
        -5, 5, width=32, allow_subnormal=False)))
    x = draw(hnp.arrays(np.float32, (7,), elements=st.floats(
        -12, 12, width=32, allow_subnormal=False)))
    return x, xp, fp


_JIT_INTERP = olympus.jit(lambda x, xp, fp: jnp.interp(x, xp, fp, left=-100.0, right=100.0))


@SETTINGS
@given(case=_interp_case())
def test_interp_hypothesis(case):
    x, xp, fp = case
    want = np.interp(x, xp, fp)
    got = jnp.interp(x, xp, fp)
    assert got.dtype == np.float32
    _close(got, want, rtol=1e-4, atol=2e-4)
    _close(_JIT_INTERP(x, xp, fp), np.interp(x, xp, fp, left=-100.0, right=100.0),
           rtol=1e-4, atol=2e-4)


def test_interp_period_complex_and_dtypes():
    xp = np.array([350.0, 10.0, 90.0, 180.0, 270.0], np.float32)
    fp = np.array([1.0, 3.0, -2.0, 0.5, 4.0], np.float32)
    x = np.array([-30.0, 0.0, 5.0, 355.0, 400.0, 720.0, 135.0], np.float32)
    _close(jnp.interp(x, xp, fp, period=360), np.interp(x, xp, fp, period=360), rtol=1e-5,
           atol=1e-5)
    fpc = (fp + 1j * fp[::-1]).astype(np.complex64)
    xi = np.sort(xp)
    got = jnp.interp(x, xi, fpc)
    assert got.dtype == np.complex64
    _close(got, np.interp(x, xi, fpc), rtol=1e-5, atol=1e-5)
    # int inputs give the default float type; a single sample point is constant.
    got = jnp.interp(np.array([0, 2, 5], np.int32), np.array([1, 3], np.int32),
                     np.array([10, 20], np.int32))
    _close(got, [10.0, 15.0, 20.0], dtype=np.float32)
    _close(jnp.interp(np.float32(3.0), np.array([1.0], np.float32),
                      np.array([2.0], np.float32), right=-1.0), -1.0)
    _close(jnp.interp(np.zeros((2, 0), np.float32), xi, fp), np.zeros((2, 0)))


def test_interp_gradients():
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, -1.0, 3.0, 0.0])
    x = np.array([0.3, 1.2, 2.0, 3.9])
    with x64():
        check_grads(lambda x, xp, fp: jnp.interp(x, xp, fp), (x, xp, fp))
        gx = olympus.grad(lambda x: jnp.sum(jnp.interp(x, xp, fp)))(x)
    slopes = np.diff(fp) / np.diff(xp)
    _close(gx, slopes[np.searchsorted(xp, x, side="right") - 1])


# --- errors -------------------------------------------------------------------------------------


def test_errors():
    x = np.arange(5, dtype=np.float32)
    with pytest.raises(TypeError, match="histogram requires ndarray or scalar"):
        jnp.histogram([1, 2, 3])
    with pytest.raises(ValueError, match="`bins` must be positive when an integer, got 0"):
        jnp.histogram(x, bins=0)
    with pytest.raises(NotImplementedError, match="string values for `bins`"):
        jnp.histogram(x, bins="auto")
    with pytest.raises(ValueError, match=r"max must be larger than min in range parameter, "
                                         r"got range=\(3, 1\)"):
        jnp.histogram(x, range=(3, 1))
    with pytest.raises(ValueError, match="bins` must increase monotonically"):
        jnp.histogram(x, bins=np.array([0.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match=r"weights should have the same shape as the data "
                                         r"\(or broadcast to it\), got \(3,\) and \(5,\)"):
        jnp.histogram(x, weights=np.ones(3))
    with pytest.raises(ValueError, match=r"sample must be a 2-D array.*\(2, 2, 2\)"):
        jnp.histogramdd(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="x and y must be 1-D arrays of the same length"):
        jnp.histogram2d(x, x[:3])
    with pytest.raises(ValueError, match=r"digitize: bins must be a 1-dimensional array, got "
                                         r"shape \(2, 2\)"):
        jnp.digitize(x, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="xp and fp must have the same length, got 3 and 2"):
        jnp.interp(x, np.arange(3.0), np.arange(2.0))
    with pytest.raises(ValueError, match=r"xp and fp must be one-dimensional.*\(2, 2\)"):
        jnp.interp(x, np.zeros((2, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="sample points xp is empty"):
        jnp.interp(x, np.zeros(0), np.zeros(0))
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        jnp.interp(x, np.arange(3.0), np.arange(3.0), period=0)
