"""olympus.numpy set operations against NumPy: union1d, intersect1d (with return_indices),
setdiff1d (with assume_unique), setxor1d; eagerly and under jit with JAX's static size= /
fill_value=; hypothesis-generated inputs; argument errors."""

from __future__ import annotations

import numpy as np
import pytest
from _transform_checks import assert_same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import olympus
import olympus.numpy as jnp
from olympus.errors import ConcretizationTypeError

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
OPS = ["union1d", "intersect1d", "setdiff1d", "setxor1d"]
rng = np.random.default_rng(0)


_same = assert_same


def _padded(want, size, fill):
    want = np.asarray(want)
    out = np.full(size, fill, want.dtype)
    k = min(size, want.size)
    out[:k] = want[:k]
    return out


def _data(dtype, shape):
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-4, 5, shape).astype(dtype)


# Jitted versions are built once per (op, size) so hypothesis examples reuse compiles.
_JITS: dict = {}


def _jitted(name, size, **kw):
    key = (name, size, tuple(sorted(kw.items())))
    if key not in _JITS:
        fn = getattr(jnp, name)
        _JITS[key] = olympus.jit(lambda a, b: fn(a, b, size=size, **kw))
    return _JITS[key]


# --- eager against NumPy ------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype,shapes", [
    (np.int32, ((7,), (5,))), (np.float32, ((3, 4), (2, 3))), (np.bool_, ((4,), (3,))),
    (np.int32, ((0,), (4,))), (np.float32, ((), (3,))), (np.int32, ((0,), (0,)))])
def test_eager_matches_numpy(name, dtype, shapes):
    a, b = _data(dtype, shapes[0]), _data(dtype, shapes[1])
    got = getattr(jnp, name)(a, b)
    want = getattr(np, name)(a, b)
    _same(got, want, dtype)


@pytest.mark.parametrize("name", OPS)
def test_nans_and_mixed_dtypes(name):
    a = np.array([1, 3, 4, 3, 7, np.nan, np.nan, -0.0], np.float32)
    b = np.array([3, 1, 2, 1, 9, 0], np.int32)
    got = getattr(jnp, name)(a, b)
    want = getattr(np, name)(a, b)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), want.astype(np.float32))


def test_setdiff1d_keeps_ar1_dtype_and_order_with_assume_unique():
    a = np.array([5, 1, 9, 3], np.int32)
    b = np.array([9.0, 2.5], np.float32)
    _same(jnp.setdiff1d(a, b), np.setdiff1d(a, b).astype(np.int32), np.int32)
    _same(jnp.setdiff1d(a, b, assume_unique=True), [5, 1, 3], np.int32)
    _same(jnp.setdiff1d(a, b, assume_unique=True), np.setdiff1d(a, b, assume_unique=True))


def test_assume_unique_variants():
    a = np.array([7, 2, 5, 0], np.int32)
    b = np.array([5, 8, 0, 1], np.int32)
    for name in ("intersect1d", "setxor1d"):
        _same(getattr(jnp, name)(a, b, assume_unique=True),
              getattr(np, name)(a, b, assume_unique=True))


def test_complex_values():
    a = np.array([1 + 1j, 2, 3j, 2], np.complex64)
    b = np.array([2, 3j, -1j], np.complex64)
    for name in OPS:
        _same(getattr(jnp, name)(a, b), getattr(np, name)(a, b), np.complex64)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_intersect1d_return_indices(dtype):
    a = np.array([1, 1, 2, 3, 4, 3, 8], dtype)
    b = np.array([2, 1, 4, 6, 1, 2], dtype)
    got = jnp.intersect1d(a, b, return_indices=True)
    want = np.intersect1d(a, b, return_indices=True)
    for g, w in zip(got, want, strict=True):
        _same(g, w)
    assert got[1].dtype == np.int32 and got[2].dtype == np.int32
    # 2-D inputs: indices into the flattened arrays.
    a2 = a[:6].reshape(2, 3)
    got = jnp.intersect1d(a2, b, return_indices=True)
    want = np.intersect1d(a2, b, return_indices=True)
    for g, w in zip(got, want, strict=True):
        _same(g, w)


# --- size= / fill_value= under jit --------------------------------------------------------------


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("size", [0, 2, 9])
def test_size_and_fill_under_jit(name, size):
    a = np.array([4, 1, 4, 6, 2, 9], np.int32)
    b = np.array([6, 3, 1, 1, 7], np.int32)
    want = getattr(np, name)(a, b)
    default_fill = want[0] if want.size else 0
    _same(_jitted(name, size)(a, b), _padded(want, size, default_fill), np.int32)
    _same(_jitted(name, size, fill_value=-7)(a, b), _padded(want, size, -7), np.int32)
    # Eagerly, size= gives the same result.
    _same(getattr(jnp, name)(a, b, size=size, fill_value=-7), _padded(want, size, -7))


def test_intersect1d_indices_padding_under_jit():
    a = np.array([5, 3, 3, 1], np.int32)
    b = np.array([3, 0, 5], np.int32)
    vals, i1, i2 = _jitted("intersect1d", 4, return_indices=True)(a, b)
    _same(vals, [3, 5, 3, 3])
    _same(i1, [1, 0, 4, 4])   # padded with len(a)
    _same(i2, [0, 2, 3, 3])   # padded with len(b)


def test_empty_result_default_fill_is_zero():
    a = np.array([1.5, 2.5], np.float32)
    b = np.array([1.5, 2.5, 7.0], np.float32)
    _same(jnp.setdiff1d(a, b, size=3), np.zeros(3, np.float32), np.float32)
    _same(jnp.intersect1d(np.zeros(0, np.int32), b, size=2), np.zeros(2, np.float32))


@pytest.mark.parametrize("name", OPS)
def test_size_none_under_jit_raises(name):
    f = olympus.jit(getattr(jnp, name))
    with pytest.raises(ConcretizationTypeError, match=f"{name}.*size="):
        f(np.arange(3), np.arange(2))


def test_vmap_with_size():
    a = rng.integers(0, 6, (3, 5)).astype(np.int32)
    b = rng.integers(0, 6, (3, 4)).astype(np.int32)
    got = olympus.vmap(lambda x, y: jnp.union1d(x, y, size=9, fill_value=-1))(a, b)
    want = np.stack([_padded(np.union1d(x, y), 9, -1) for x, y in zip(a, b, strict=True)])
    _same(got, want)


def test_results_are_new_arrays_and_differentiable():
    x = np.array([3.0, 1.0, 2.0], np.float32)
    y = np.array([2.0, 5.0], np.float32)

    def f(x):
        return jnp.sum(jnp.union1d(x, y, size=4) ** 2)

    g = olympus.grad(f)(x)
    # union = [1, 2, 3, 5]: each value of x appears once (2.0 comes from x, the first
    # occurrence in the concatenation), so d/dx sum(u**2) = 2 x.
    np.testing.assert_allclose(np.asarray(g), 2 * x)


# --- hypothesis ---------------------------------------------------------------------------------


def _ints(n):
    return hnp.arrays(np.int32, (n,), elements=st.integers(-6, 6))


@pytest.mark.parametrize("name", OPS)
@SETTINGS
@given(a=_ints(7), b=_ints(5))
def test_hypothesis_int32(name, a, b):
    want = getattr(np, name)(a, b)
    _same(getattr(jnp, name)(a, b), want, np.int32)
    _same(_jitted(name, 12, fill_value=99)(a, b), _padded(want, 12, 99))


def _floats(n):
    return hnp.arrays(np.float32, (n,), elements=st.sampled_from(
        [-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, -np.inf, np.nan]))


@pytest.mark.parametrize("name", OPS)
@SETTINGS
@given(a=_floats(6), b=_floats(4))
def test_hypothesis_float32(name, a, b):
    want = getattr(np, name)(a, b)
    _same(getattr(jnp, name)(a, b), want, np.float32)
    _same(_jitted(name, 10, fill_value=-9.0)(a, b), _padded(want, 10, -9.0))


@SETTINGS
@given(a=_ints(6), b=_ints(6))
def test_hypothesis_intersect_indices(a, b):
    got = jnp.intersect1d(a, b, return_indices=True)
    want = np.intersect1d(a, b, return_indices=True)
    for g, w in zip(got, want, strict=True):
        _same(g, w)


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPS)
def test_list_arguments_rejected(name):
    with pytest.raises(TypeError, match=f"{name} requires ndarray or scalar"):
        getattr(jnp, name)([1, 2], np.arange(3))


def test_bad_size_and_fill_value():
    with pytest.raises(ValueError, match="size must be non-negative, got size=-1"):
        jnp.union1d(np.arange(3), np.arange(2), size=-1)
    with pytest.raises(TypeError):
        jnp.union1d(np.arange(3), np.arange(2), size=2.5)
    with pytest.raises(ValueError, match=r"fill_value must be a scalar, got an array of "
                                         r"shape \(2,\)"):
        jnp.setxor1d(np.arange(3), np.arange(2), size=4, fill_value=np.zeros(2))
