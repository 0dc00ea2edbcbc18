"""olympus.numpy reductions, cumulative reductions and statistics against NumPy:
hypothesis-generated inputs over axis/keepdims choices, where masks with initial values,
JAX's accumulation dtypes, NaN-ignoring variants, quantiles, empty inputs, errors, jit and
gradients."""

from __future__ import annotations

import numpy as np
import pytest
from _numpy_reference import check
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import olympus
import olympus.numpy as jnp

SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
SHAPE = (3, 4)
AXES = [None, 0, -1, (0, 1)]


def f32(shape=SHAPE, nan=False):
    elems = st.floats(-10, 10, width=32, allow_subnormal=False)
    if nan:
        elems = st.one_of(elems, st.just(np.float32(np.nan)))
    return hnp.arrays(np.float32, shape, elements=elems)


REDUCTIONS = ["sum", "prod", "mean", "var", "std", "min", "max", "amin", "amax", "ptp",
              "all", "any", "median", "count_nonzero", "argmin", "argmax"]


@pytest.mark.parametrize("name", REDUCTIONS)
@SETTINGS
@given(x=f32(), axis=st.sampled_from(AXES), keepdims=st.booleans())
def test_reductions_float32(name, x, axis, keepdims):
    if name == "prod":
        x = (x / 8).astype(np.float32)
    if name in ("argmin", "argmax") and isinstance(axis, tuple):
        axis = None
    kw = {"axis": axis, "keepdims": keepdims}
    want = getattr(np, name)(x.astype(np.float64) if name not in ("argmin", "argmax")
                             else x, **kw)
    exact = name in ("min", "max", "amin", "amax", "all", "any", "count_nonzero", "argmin",
                     "argmax", "ptp", "median")
    check(getattr(jnp, name)(x, **kw), want,
          dtype=np.float32 if np.asarray(want).dtype.kind == "f" else None,
          rtol=1e-6 if exact else 2e-5, atol=1e-6 if exact else 1e-4)


@pytest.mark.parametrize("name,dtype", [
    ("sum", np.int32), ("prod", np.int32), ("max", np.int8), ("min", np.int8),
    ("mean", np.float32), ("var", np.float32), ("all", np.bool_), ("any", np.bool_),
    ("argmax", np.int32),
])
@SETTINGS
@given(x=hnp.arrays(np.int8, SHAPE, elements=st.integers(-4, 4)),
       axis=st.sampled_from(AXES[:3]))
def test_reductions_int8_use_jax_accumulation_dtypes(name, dtype, x, axis):
    want = getattr(np, name)(x.astype(np.int64) if name in ("sum", "prod") else x,
                             axis=axis)
    check(getattr(jnp, name)(x, axis=axis), want, dtype=dtype, rtol=1e-6)


def test_bool_and_unsigned_accumulation():
    b = np.array([[True, False, True], [True, True, True]])
    check(jnp.sum(b), np.int32(5), dtype=np.int32)
    check(jnp.sum(b, axis=0), np.array([2, 1, 2]), dtype=np.int32)
    check(jnp.prod(b, axis=1), np.array([0, 1]), dtype=np.int32)
    check(jnp.max(b, axis=1), np.array([True, True]))
    check(jnp.min(b, axis=1), np.array([False, True]))
    u = np.array([200, 100, 255], np.uint8)
    check(jnp.sum(u), np.uint32(555), dtype=np.uint32)
    check(jnp.sum(u, dtype=jnp.uint8), np.uint8(555 % 256), dtype=np.uint8)
    check(jnp.sum(u, promote_integers=False), np.uint8(555 % 256), dtype=np.uint8)
    check(jnp.mean(u), np.float32(555 / 3), rtol=1e-6)
    h = np.array([1000.0, 1000.0, 24.0], np.float16)
    check(jnp.sum(h), np.float16(2024), dtype=np.float16)  # accumulated in float32
    check(jnp.mean(h), np.float16(2024 / 3), dtype=np.float16, rtol=1e-3)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "all", "any",
                                  "var", "std", "nansum", "nanmax"])
@SETTINGS
@given(x=f32(), mask=hnp.arrays(np.bool_, SHAPE), axis=st.sampled_from(AXES[:3]))
def test_where_masks(name, x, mask, axis):
    kw = {"axis": axis, "where": mask}
    if name in ("max", "min", "nanmax"):
        kw["initial"] = -50.0 if name != "min" else 50.0
    if name == "prod":
        x = (x / 8).astype(np.float32)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(np, name)(x.astype(np.float64) if name not in ("all", "any")
                                     else x, **kw)
    check(getattr(jnp, name)(x, **kw), want,
          dtype=np.float32 if np.asarray(want).dtype.kind == "f" else None,
          rtol=2e-5, atol=1e-4)


def test_initial_and_where_broadcasting():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(jnp.sum(x, axis=0, initial=10.0), np.sum(x, axis=0, initial=10.0))
    check(jnp.max(x, axis=1, initial=9.0), np.max(x, axis=1, initial=9.0))
    check(jnp.min(x, initial=-1.0), np.min(x, initial=-1.0))
    row = np.array([True, False, True, False])
    check(jnp.sum(x, axis=0, where=row), np.sum(x, axis=0, where=row))
    check(jnp.mean(x, axis=1, where=row, keepdims=True),
          np.mean(x, axis=1, where=row, keepdims=True))
    check(jnp.max(np.zeros((0, 3), np.float32), axis=0, initial=-2.0), np.full(3, -2.0))
    check(jnp.sum(np.zeros((0, 3), np.float32)), np.float32(0))
    check(jnp.prod(np.zeros((2, 0), np.float32), axis=1), np.ones(2))
    check(jnp.all(np.zeros((0,), bool)), np.True_)
    with pytest.warns(RuntimeWarning):
        want = np.mean(np.zeros((0,), np.float32))
    check(jnp.mean(np.zeros((0,), np.float32)), want)


NAN_FUNCS = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmin", "nanmax",
             "nanmedian", "nanargmin", "nanargmax", "nancumsum", "nancumprod"]


@pytest.mark.parametrize("name", NAN_FUNCS)
@SETTINGS
@given(x=f32(nan=True), axis=st.sampled_from([None, 0, 1]))
def test_nan_functions(name, x, axis):
    import warnings

    x = (x / 4).astype(np.float32) if name in ("nanprod", "nancumprod") else x
    if name in ("nanargmin", "nanargmax"):
        # NumPy raises for all-NaN slices; OLYMPUS (like JAX) returns -1 there.
        x = x.copy()
        x[0, :] = np.where(np.isnan(x[0, :]), 1.0, x[0, :])
        x[:, 0] = np.where(np.isnan(x[:, 0]), 1.0, x[:, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(x.astype(np.float64) if "arg" not in name else x,
                                 axis=axis)
    check(getattr(jnp, name)(x, axis=axis), want,
          dtype=np.float32 if np.asarray(want).dtype.kind == "f" else None,
          rtol=2e-5, atol=1e-4)


def test_nan_functions_all_nan_slices():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
    check(jnp.nanmax(x, axis=1), np.array([np.nan, 1.0]))
    check(jnp.nanargmax(x, axis=1), np.array([-1, 0]), dtype=np.int32)
    check(jnp.nanmean(x, axis=1), np.array([np.nan, 1.0]))
    check(jnp.nanvar(x, axis=1), np.array([np.nan, 0.0]))
    check(jnp.nansum(x), np.float32(1.0))
    check(jnp.nanmedian(x, axis=1), np.array([np.nan, 1.0]))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
@SETTINGS
@given(x=f32(), q=st.sampled_from([0.0, 0.3, 0.5, 1.0]), axis=st.sampled_from(AXES))
def test_quantile_methods(method, x, q, axis):
    check(jnp.quantile(x, q, axis=axis, method=method),
          np.quantile(x.astype(np.float64), q, axis=axis, method=method),
          dtype=np.float32, rtol=1e-6, atol=1e-6)


def test_quantile_percentile_median_variants():
    x = np.arange(12, dtype=np.float32).reshape(SHAPE) ** 1.5
    q = np.array([0.1, 0.5, 0.95], np.float32)
    check(jnp.quantile(x, q, axis=(0, 1)), np.quantile(x, q, axis=(0, 1)), rtol=1e-6)
    check(jnp.quantile(x, q, axis=1, keepdims=True),
          np.quantile(x, q, axis=1, keepdims=True), rtol=1e-6)
    check(jnp.percentile(x, np.array([10., 90.]), axis=0),
          np.percentile(x, [10., 90.], axis=0), rtol=1e-6)
    check(jnp.median(x, axis=None, keepdims=True), np.median(x, keepdims=True), rtol=1e-6)
    check(jnp.median(np.arange(5)), np.float32(2.0), dtype=np.float32)
    xn = x.copy()
    xn[1, 2] = np.nan
    check(jnp.median(xn, axis=1), np.median(xn, axis=1), rtol=1e-6)
    check(jnp.nanquantile(xn, 0.4, axis=1), np.nanquantile(xn, 0.4, axis=1), rtol=1e-6)
    check(jnp.nanpercentile(xn, 40, axis=None), np.nanpercentile(xn, 40), rtol=1e-6)
    # Traced q: the positions are computed on the device.
    check(olympus.jit(lambda q: jnp.quantile(x, q, axis=1))(np.float32(0.3)),
          np.quantile(x, 0.3, axis=1), rtol=1e-6)
    with pytest.raises(ValueError, match="method can only be"):
        jnp.quantile(x, 0.5, method="weibull")


CUMULATIVE = ["cumsum", "cumprod"]


@pytest.mark.parametrize("name", CUMULATIVE)
@SETTINGS
@given(x=f32(), axis=st.sampled_from([None, 0, 1, -1]))
def test_cumulative_float32(name, x, axis):
    x = (x / 8).astype(np.float32) if name == "cumprod" else x
    check(getattr(jnp, name)(x, axis=axis), getattr(np, name)(x.astype(np.float64),
                                                              axis=axis),
          dtype=np.float32, rtol=2e-5, atol=1e-5)


def test_cumulative_dtypes_and_variants():
    b = np.array([[True, False], [True, True]])
    check(jnp.cumsum(b), np.cumsum(b), dtype=np.int32)
    i8 = np.array([100, 100, 100], np.int8)
    check(jnp.cumsum(i8), np.cumsum(i8).astype(np.int8), dtype=np.int8)  # as in JAX
    check(jnp.cumsum(i8, dtype=jnp.int32), np.cumsum(i8.astype(np.int32)), dtype=np.int32)
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    check(jnp.cumulative_sum(x, axis=1), np.cumulative_sum(x, axis=1))
    check(jnp.cumulative_sum(x, axis=0, include_initial=True),
          np.cumulative_sum(x, axis=0, include_initial=True))
    check(jnp.cumulative_prod(x[0], include_initial=True),
          np.cumulative_prod(x[0], include_initial=True))
    check(jnp.cumsum(np.zeros((0, 2), np.float32), axis=0), np.zeros((0, 2)))
    check(jnp.cumsum(np.float32(3.0)), np.array([3.0]))
    with pytest.raises(ValueError, match="axis must be specified"):
        jnp.cumulative_sum(x)


def test_average():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    w = np.array([1.0, 2.0, 0.5, 3.0], np.float32)
    check(jnp.average(x), np.average(x))
    check(jnp.average(x, axis=1, weights=w), np.average(x, axis=1, weights=w), rtol=1e-6)
    check(jnp.average(x, axis=0, weights=x + 1), np.average(x, axis=0, weights=x + 1),
          rtol=1e-6)
    avg, s = jnp.average(x, axis=1, weights=w, returned=True)
    wavg, ws = np.average(x, axis=1, weights=w, returned=True)
    check(avg, wavg, rtol=1e-6)
    check(s, ws)
    check(jnp.average(np.arange(4), axis=0), np.float32(1.5), dtype=np.float32)
    with pytest.raises(ValueError, match="Axis must be specified"):
        jnp.average(x, weights=w)
    with pytest.raises(ValueError, match="Length of weights not compatible"):
        jnp.average(x, axis=0, weights=w)


def test_var_std_options():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) ** 2
    check(jnp.var(x, ddof=1), np.var(x, ddof=1), rtol=1e-6)
    check(jnp.std(x, axis=0, correction=1), np.std(x, axis=0, ddof=1), rtol=1e-6)
    check(jnp.var(x, axis=1, dtype=jnp.float32, keepdims=True), np.var(x, axis=1,
                                                                      keepdims=True),
          rtol=1e-6)
    z = (x + 1j * x[::-1]).astype(np.complex64)
    check(jnp.var(z, axis=0), np.var(z, axis=0), dtype=np.float32, rtol=1e-6)
    check(jnp.var(np.arange(5, dtype=np.int32)), np.float32(2.0), dtype=np.float32)
    with pytest.raises(ValueError, match="ddof and correction"):
        jnp.var(x, ddof=1, correction=1)


def test_var_std_with_ddof_at_least_the_count_are_nan():
    """Issue 17: no degrees of freedom left gives nan (JAX 0.10.2's values, recorded in its
    own process), not inf (ddof == n) or -0.0 (empty), with or without `where`, jitted."""
    outs = [jnp.std(jnp.arange(3.0), ddof=3), jnp.std(jnp.arange(3.0), ddof=4),
            jnp.var(jnp.ones((0,)), ddof=1), jnp.var(jnp.ones((1,)), ddof=1),
            jnp.var(jnp.arange(4), ddof=4),
            jnp.var(jnp.arange(4.0), where=np.array([True, False, False, False]), ddof=1),
            olympus.jit(lambda x: jnp.var(x, ddof=3))(jnp.ones(3))]
    for out in outs:
        assert out.dtype == np.float32 and np.isnan(float(out))
    assert jnp.var(jnp.ones(3, jnp.float16), ddof=3).dtype == np.float16
    np.testing.assert_array_equal(jnp.var(jnp.ones((2, 3)), axis=1, ddof=3), [np.nan] * 2)
    check(jnp.var(jnp.arange(4.0), ddof=3), np.float32(5.0), dtype=np.float32)


def test_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="axis -3 is out of bounds"):
        jnp.mean(x, axis=-3)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        jnp.sum(x, axis=(0, 0))
    with pytest.raises(ValueError, match="zero-size array to reduction operation max which "
                                         "has no identity"):
        jnp.max(jnp.zeros((0, 2)), axis=0)
    with pytest.raises(ValueError, match="does not have an identity, so to use a where mask"):
        jnp.min(x, where=x > 0)
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        jnp.argmin(jnp.zeros((0,)))
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.sum(x, out=x)
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
        jnp.sum([1, 2, 3])
    with pytest.raises(ValueError, match="initial value must be a scalar"):
        jnp.sum(x, initial=np.ones(2))


def test_under_jit():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5

    @olympus.jit
    def f(x):
        return (jnp.var(x, axis=0), jnp.median(x, axis=1), jnp.cumsum(x, axis=1),
                jnp.max(x, axis=1, where=x > 0, initial=0.0), jnp.nanmean(x),
                jnp.quantile(x, 0.25), jnp.average(x, axis=1, weights=jnp.arange(4.0)),
                jnp.count_nonzero(x > 0, axis=0), jnp.ptp(x, axis=0))

    got = f(x)
    want = (np.var(x, axis=0), np.median(x, axis=1), np.cumsum(x, axis=1),
            np.max(x, axis=1, where=x > 0, initial=0.0), np.nanmean(x), np.quantile(x, 0.25),
            np.average(x, axis=1, weights=np.arange(4.0)), np.count_nonzero(x > 0, axis=0),
            np.ptp(x, axis=0))
    for g, w in zip(got, want):
        check(g, w, rtol=1e-6, atol=1e-6)


def test_gradients():
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
    g = olympus.grad(lambda v: jnp.var(v))(x)
    check(g, 2 * (x - x.mean()) / x.size, rtol=1e-5, atol=1e-7)
    g = olympus.grad(lambda v: jnp.sum(jnp.std(v, axis=1)))(x)
    m = x.mean(axis=1, keepdims=True)
    check(g, (x - m) / (x.shape[1] * x.std(axis=1, keepdims=True)), rtol=1e-5)
    g = olympus.grad(lambda v: jnp.mean(v, where=v > 0))(x)
    check(g, (x > 0) / np.sum(x > 0), rtol=1e-6)
    g = olympus.grad(lambda v: jnp.sum(jnp.cumsum(v, axis=1) ** 2))(x)
    c = np.cumsum(x, axis=1)
    check(g, 2 * np.cumsum(c[:, ::-1], axis=1)[:, ::-1], rtol=1e-5)
    g = olympus.grad(lambda v: jnp.max(v))(x)
    check(g, (x == x.max()).astype(np.float32))
    g = olympus.grad(lambda v: jnp.sum(jnp.median(v, axis=1)))(x)
    check(g, (x == np.median(x, axis=1, keepdims=True)).astype(np.float32))


def test_integer_dtype_mean_divides_integers():
    """Found by the fuzzer: with an integer `dtype=` the sum and the division are integer
    (JAX's lax.div; values recorded from reference JAX 0.10.2), not rounded floats."""
    x = jnp.array([1073741824, -2], jnp.int32)
    out = jnp.mean(x, dtype=jnp.int32)
    assert out.dtype == np.int32 and int(out) == 536870911
    assert int(jnp.mean(jnp.array([3.7, 4.9]), dtype=jnp.int32)) == 3
