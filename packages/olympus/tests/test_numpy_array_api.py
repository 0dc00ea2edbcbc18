"""The array API standard's surface of olympus.numpy and the names that completed it:
``__array_namespace__``, ``__array_namespace_info__``, ``to_device``, the ``unique_*``
named tuples, vecdot's checks and dtype, cumulative_sum's integer widening, pinv with an
array ``rtol``, ``r_``/``c_``, ``from_dlpack``/``olympus.dlpack``. Expected values come from
NumPy, or (reprs, messages, dtypes) from reference JAX 0.10.2's recorded output."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.dlpack
import olympus.numpy as jnp


def test_array_namespace_and_version():
    x = jnp.ones(3)
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2024.12") is jnp
    assert jnp.__array_api_version__ == "2024.12"
    # Recorded from JAX 0.10.2.
    with pytest.raises(ValueError, match=r"api_version='2023.12' is not available; "
                       r"available versions are: \['2024.12'\]"):
        x.__array_namespace__(api_version="2023.12")


def test_namespace_info():
    info = jnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False,
                                   "max dimensions": 64}
    assert info.default_device() is None
    assert info.devices() == [None, *olympus.devices()]
    assert info.default_dtypes() == {
        "real floating": np.dtype("float32"), "complex floating": np.dtype("complex64"),
        "integral": np.dtype("int32"), "indexing": np.dtype("int32")}
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "uint8", "uint16",
                                  "uint32", "float32", "complex64"}
    assert info.dtypes(kind=("bool", "real floating")) == {
        "bool": np.dtype(bool), "float32": np.dtype("float32")}
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "uint8", "uint16",
                                                 "uint32"}
    with pytest.raises(KeyError):
        info.dtypes(kind="foo")
    with olympus.enable_x64(True):
        assert info.default_dtypes()["integral"] == np.dtype("int64")
        assert "float64" in info.dtypes(kind="real floating")


def test_to_device():
    x = jnp.arange(3)
    y = x.to_device(olympus.devices()[0])
    np.testing.assert_array_equal(y, [0, 1, 2])
    assert y.committed
    with pytest.raises(NotImplementedError):
        x.to_device(olympus.devices()[0], stream=1)


def test_unique_named_tuples():
    x = np.array([[3, 1], [1, 2]])
    r = jnp.unique_all(x)
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    np.testing.assert_array_equal(r.values, [1, 2, 3])
    np.testing.assert_array_equal(r.indices, [1, 3, 0])
    np.testing.assert_array_equal(r.inverse_indices, [[2, 0], [0, 1]])
    np.testing.assert_array_equal(r.counts, [2, 1, 1])
    c = jnp.unique_counts(x)
    assert c._fields == ("values", "counts")
    np.testing.assert_array_equal(c.counts, [2, 1, 1])
    i = jnp.unique_inverse(x)
    assert i._fields == ("values", "inverse_indices")
    np.testing.assert_array_equal(i.values[i.inverse_indices], x)


def test_unsigned_integer_power():
    u = jnp.array([2, 3], dtype=jnp.uint8)
    r = u ** u
    assert r.dtype == np.uint8
    np.testing.assert_array_equal(r, [4, 27])


def test_vecdot_checks_and_dtypes():
    with pytest.raises(ValueError, match=r"axes must match; got shapes \(2, 3\) and \(2, 4\) "
                       r"with axis=-1"):
        jnp.vecdot(jnp.ones((2, 3)), jnp.ones((2, 4)))
    # JAX: uint8 x int8 -> int16 (the lattice), uint8 x uint8 stays uint8.
    assert jnp.vecdot(jnp.ones(3, jnp.uint8), jnp.ones(3, jnp.int8)).dtype == np.int16
    r = jnp.vecdot(np.full(3, 100, np.uint8), np.full(3, 1, np.uint8))
    assert r.dtype == np.uint8 and int(r) == 300 % 256
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 1)).astype(np.float32)
    np.testing.assert_allclose(jnp.vecdot(a, b[None], axis=1), (a * b[None]).sum(1),
                               rtol=1e-5, atol=1e-5)
    z = a + 1j * a[::-1]
    np.testing.assert_allclose(jnp.vecdot(z, a), (np.conj(z) * a).sum(-1), rtol=1e-5,
                               atol=1e-5)


def test_cumulative_sum_widens_small_integers():
    assert jnp.cumulative_sum(jnp.ones(3, jnp.uint8)).dtype == np.uint32
    assert jnp.cumulative_sum(jnp.ones(3, jnp.int8)).dtype == np.int32
    assert jnp.cumulative_sum(jnp.ones(3, bool)).dtype == np.int32
    assert jnp.cumulative_prod(jnp.ones(3, jnp.uint8)).dtype == np.uint8
    np.testing.assert_array_equal(
        jnp.cumulative_sum(np.full(3, 200, np.uint8), include_initial=True), [0, 200, 400, 600])


def test_pinv_array_rtol():
    m = np.random.default_rng(2).standard_normal((2, 3, 3)).astype(np.float32)
    rtol = np.array([0.1, 0.9], np.float32)
    np.testing.assert_allclose(jnp.linalg.pinv(m, rtol=jnp.asarray(rtol)),
                               np.linalg.pinv(m, rtol=rtol), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="rtol"):
        jnp.linalg.pinv(m, rtol=np.ones(3, np.float32))


def test_r_and_c():
    # Expected values recorded from JAX 0.10.2 (they are NumPy's too).
    r = jnp.r_[-1:5:1, 0, 0, jnp.array([1, 2, 3])]
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, np.r_[-1:5:1, 0, 0, np.array([1, 2, 3])])
    np.testing.assert_allclose(jnp.r_[-1:1:6j, 0], np.r_[-1:1:6j, 0], rtol=1e-6, atol=1e-6)
    w = jnp.r_[1, 2.0]
    assert w.dtype == np.float32 and w.weak_type
    for key in [("0,2", [1, 2, 3], [4, 5, 6]), ("0,2,0", [1, 2, 3], [4, 5, 6]),
                ("0,2,-2", [1, 2, 3], [4, 5, 6])]:
        np.testing.assert_array_equal(jnp.r_[key], np.r_[key])
    np.testing.assert_array_equal(jnp.r_["r", [1, 2, 3], [4, 5, 6]], [[1, 2, 3, 4, 5, 6]])
    np.testing.assert_array_equal(jnp.r_["c", [1, 2, 3], [4, 5, 6]],
                                  np.arange(1, 7)[:, None])
    a = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(jnp.c_[a, a], np.c_[a, a])
    np.testing.assert_array_equal(jnp.c_[[1, 2, 3], [4, 5, 6]], np.c_[[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(jnp.c_["0,2", [1, 2], [3, 4]], [[1], [2], [3], [4]])
    assert len(jnp.r_) == 0 and len(jnp.c_) == 0
    with pytest.raises(ValueError, match="could not understand directive 'x'"):
        jnp.r_["x", 1]
    with pytest.raises(ValueError, match="string directive must be placed at the beginning"):
        jnp.r_[1, "a"]
    # Traced items concatenate under jit; slice bounds must be concrete.
    np.testing.assert_array_equal(olympus.jit(lambda x: jnp.r_[x, 0:2])(jnp.ones(2)),
                                  [1, 1, 0, 1])


def test_numpy_type_aliases():
    assert jnp.object_ is np.object_
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning


def test_from_dlpack():
    x = jnp.from_dlpack(np.arange(3.0))
    # Recorded from JAX 0.10.2: canonicalized (float64 -> float32) and committed.
    assert x.dtype == np.float32 and x.committed
    np.testing.assert_array_equal(x, [0, 1, 2])
    y = jnp.from_dlpack(jnp.arange(3, dtype=jnp.bfloat16))
    assert y.dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(y, np.float32), [0, 1, 2])
    strided = np.arange(6).reshape(2, 3)[:, ::2]
    np.testing.assert_array_equal(jnp.from_dlpack(strided), strided)
    np.testing.assert_array_equal(jnp.from_dlpack(jnp.arange(6)[::2], copy=True), [0, 2, 4])
    np.testing.assert_array_equal(
        olympus.dlpack.from_dlpack(np.ones(2, np.int8), device=olympus.devices()[0]), [1, 1])
    with pytest.raises(TypeError, match="must have __dlpack__ and __dlpack_device__"):
        jnp.from_dlpack([1, 2])


def test_dlpack_is_supported_dtype():
    assert olympus.dlpack.is_supported_dtype(np.float32)
    assert olympus.dlpack.is_supported_dtype("bool")
    assert olympus.dlpack.is_supported_dtype(jnp.bfloat16)
    assert not olympus.dlpack.is_supported_dtype(np.dtype("U3"))
    with pytest.raises(TypeError, match="Expected a string or dtype-like object; got "
                       "dtype=None"):
        olympus.dlpack.is_supported_dtype(None)
