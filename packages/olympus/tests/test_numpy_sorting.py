"""olympus.numpy sorting and searching against NumPy: sort, argsort, lexsort, partition,
argpartition, searchsorted, unique (eager and with size= under jit), sort_complex; plus
gradients and vmap of sort."""

from __future__ import annotations

import numpy as np
import pytest
from _transform_checks import assert_same, check_vmap

import olympus
import olympus.numpy as jnp
from olympus.errors import ConcretizationTypeError

rng = np.random.default_rng(0)


_same = assert_same


def _data(dtype, shape=(4, 7)):
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-5, 6, shape).astype(dtype)
    x = rng.integers(-4, 5, shape).astype(dtype)  # many ties
    return x + (rng.random(shape) > 0.7).astype(dtype) / 2


# --- sort / argsort -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_argsort(dtype, axis):
    x = _data(dtype)
    _same(jnp.sort(x, axis=axis), np.sort(x, axis=axis), dtype)
    _same(jnp.argsort(x, axis=axis), np.argsort(x, axis=axis, kind="stable"), np.int32)


def test_sort_nans_and_signed_zeros_last():
    x = np.array([3.0, np.nan, -1.0, np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    _same(jnp.sort(x), np.sort(x))
    _same(jnp.argsort(x), np.argsort(x, kind="stable"))


def test_sort_descending_is_stable():
    x = np.array([2, 1, 2, 3, 1, 2], np.int32)
    _same(jnp.sort(x, descending=True), np.sort(x)[::-1])
    idx = np.asarray(jnp.argsort(x, descending=True))
    # Equal keys keep their original order.
    _same(idx, [3, 0, 2, 5, 1, 4])


def test_sort_empty_and_errors():
    _same(jnp.sort(np.zeros((0, 3), np.float32), axis=0), np.zeros((0, 3), np.float32))
    _same(jnp.argsort(np.zeros((2, 0), np.float32)), np.zeros((2, 0), np.int32))
    with pytest.raises(TypeError):
        jnp.sort(np.float32(1.0), order="x")
    with pytest.raises(TypeError):
        jnp.sort([3, 1, 2])


def test_sort_complex():
    x = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 0j], np.complex64)
    _same(jnp.sort_complex(x), np.sort_complex(x))
    _same(jnp.sort(x), np.sort(x))


def test_sort_jit_grad_vmap():
    x = rng.standard_normal((3, 6)).astype(np.float32)
    _same(olympus.jit(lambda a: jnp.sort(a, axis=0))(x), np.sort(x, axis=0))
    w = np.arange(6, dtype=np.float32)
    g = olympus.grad(lambda a: jnp.sum(jnp.sort(a[0]) * w))(x)
    want = np.zeros_like(x)
    want[0, np.argsort(x[0])] = w
    np.testing.assert_allclose(np.asarray(g), want)
    check_vmap(lambda a: (jnp.sort(a), jnp.argsort(a)), (x,), 1)


def test_lexsort():
    k1 = rng.integers(0, 3, 20)
    k2 = rng.integers(0, 3, 20)
    k3 = rng.standard_normal(20).round(1).astype(np.float32)
    _same(jnp.lexsort((k3, k2, k1)), np.lexsort((k3, k2, k1)))
    a = rng.integers(0, 3, (3, 5)).astype(np.int32)
    b = rng.integers(0, 3, (3, 5)).astype(np.int32)
    _same(jnp.lexsort((a, b), axis=0), np.lexsort((a, b), axis=0))
    with pytest.raises(ValueError):
        jnp.lexsort((np.zeros(3), np.zeros(4)))


# --- partition ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
@pytest.mark.parametrize("kth", [0, 3, -1])
def test_partition(dtype, kth):
    x = _data(dtype, (3, 8))
    out = np.asarray(jnp.partition(x, kth, axis=1))
    idx = np.asarray(jnp.argpartition(x, kth, axis=1))
    k = kth % 8
    s = np.sort(x, axis=1)
    np.testing.assert_array_equal(out[:, k], s[:, k])
    assert (out[:, :k] <= out[:, k:k + 1]).all() and (out[:, k + 1:] >= out[:, k:k + 1]).all()
    np.testing.assert_array_equal(np.take_along_axis(x, idx, 1), out)
    np.testing.assert_array_equal(np.sort(out, axis=1), s)
    with pytest.raises(ValueError):
        jnp.partition(x, 8, axis=1)


def test_partition_axis0_and_jit():
    x = rng.standard_normal((6, 3)).astype(np.float32)
    out = np.asarray(olympus.jit(lambda a: jnp.partition(a, 2, axis=0))(x))
    np.testing.assert_array_equal(out[2], np.sort(x, axis=0)[2])


# --- searchsorted -------------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 64])
def test_searchsorted(side, n):
    a = np.sort(rng.integers(0, 10, n)).astype(np.float32)
    v = np.array([[-1, 0, 3, 3.5], [9, 10, 11, 5]], np.float32)
    _same(jnp.searchsorted(a, v, side=side), np.searchsorted(a, v, side=side), np.int32)


def test_searchsorted_nan_int_sorter_jit():
    a = np.array([1.0, 2.0, 2.0, np.nan], np.float32)
    v = np.array([np.nan, 2.0, 0.0, np.inf], np.float32)
    for side in ("left", "right"):
        _same(jnp.searchsorted(a, v, side=side), np.searchsorted(a, v, side=side))
    ai = np.array([5, 1, 3, 3, 9], np.int32)
    sorter = np.argsort(ai, kind="stable")
    _same(jnp.searchsorted(ai, np.int32(3), sorter=sorter),
          np.searchsorted(ai, 3, sorter=sorter))
    got = olympus.jit(lambda x, y: jnp.searchsorted(x, y, side="right"))(
        np.arange(100, dtype=np.int32), np.array([-5, 0, 50, 99, 200], np.int32))
    _same(got, [0, 1, 51, 100, 100])
    with pytest.raises(ValueError):
        jnp.searchsorted(np.zeros((2, 2)), 1.0)


def test_searchsorted_vmap():
    a = np.sort(rng.standard_normal((4, 9)).astype(np.float32), axis=1)
    v = rng.standard_normal((4, 3)).astype(np.float32)
    check_vmap(jnp.searchsorted, (a, v), (0, 0))
    check_vmap(jnp.searchsorted, (a[0], v), (None, 0))


# --- unique -------------------------------------------------------------------------------------


def _np_unique(x, **kw):
    out = np.unique(x, **kw)
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("x", [
    np.array([3, 1, 2, 3, 1, 1, 7], np.int32),
    np.array([[2.5, np.nan, 1.0], [np.nan, 2.5, -0.0]], np.float32),
    np.array([True, False, True]),
    np.array([5], np.int32),
])
def test_unique_matches_numpy(x):
    for flags in [{}, {"return_index": True, "return_inverse": True, "return_counts": True}]:
        got = jnp.unique(x, **flags)
        got = got if isinstance(got, tuple) else (got,)
        want = _np_unique(x, **flags)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=False):
            np.testing.assert_array_equal(np.asarray(g), w)


def test_unique_with_size_under_jit():
    x = np.array([4, 1, 4, 2, 1, 4], np.int32)

    @olympus.jit
    def f(a):
        return jnp.unique(a, return_index=True, return_inverse=True, return_counts=True,
                          size=5, fill_value=-1)

    vals, idx, inv, cnt = f(x)
    _same(vals, [1, 2, 4, -1, -1])
    _same(idx, [1, 3, 0, 1, 1])
    _same(inv, [2, 0, 2, 1, 0, 2])
    _same(cnt, [2, 1, 3, 0, 0])
    vals = olympus.jit(lambda a: jnp.unique(a, size=2))(x)
    _same(vals, [1, 2])
    vals = olympus.jit(lambda a: jnp.unique(a, size=4))(x)
    _same(vals, [1, 2, 4, 1])  # default fill: the smallest value


def test_unique_single_flags():
    x = np.array([3, 1, 2, 3, 1, 1, 7], np.int32)
    for name in ("return_index", "return_inverse", "return_counts"):
        v, extra = jnp.unique(x, **{name: True})
        wv, wextra = np.unique(x, **{name: True})
        _same(v, wv)
        _same(extra, wextra)


def test_unique_requires_size_under_jit_and_handles_empty():
    with pytest.raises(ConcretizationTypeError, match="size"):
        olympus.jit(jnp.unique)(np.array([1, 2, 2], np.int32))
    _same(jnp.unique(np.zeros((0,), np.float32)), np.zeros((0,), np.float32))
    vals, cnt = jnp.unique_counts(np.array([2, 2, 3], np.int32))
    _same(vals, [2, 3])
    _same(cnt, [2, 1])
    _same(jnp.unique_values(np.array([[3, 3], [1, 3]], np.int32)), [1, 3])
    with pytest.raises(NotImplementedError):
        jnp.unique(np.zeros((2, 2)), axis=0)
