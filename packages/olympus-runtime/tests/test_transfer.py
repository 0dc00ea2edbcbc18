"""device_put / device_get: dtypes, weak types, copy semantics, trees, errors."""

from __future__ import annotations

import collections

import ml_dtypes
import numpy as np
import pytest

import olympus_runtime as ort
from olympus_ir import ShapedArray, dtypes

X32 = {dtypes.int64: dtypes.int32, dtypes.uint64: dtypes.uint32,
       dtypes.float64: dtypes.float32, dtypes.complex128: dtypes.complex64}


def sample(dt: np.dtype, shape=(2, 3)) -> np.ndarray:
    """Values that exercise the dtype's range (exactly representable)."""
    n = int(np.prod(shape))
    if dt == dtypes.bool_:
        vals = np.arange(n) % 3 == 0
    elif dtypes.is_integer(dt):
        info = np.iinfo(dt)
        base = np.array([info.min, info.max, 0, 1, info.max // 3, info.min // 7 if
                         info.min else 5], dtype=dt)
        vals = np.resize(base, n)
    elif dtypes.is_complex(dt):
        vals = (np.arange(n) - 2.5) + 1j * (np.arange(n) * 0.25)
    else:
        vals = (np.arange(n) - 2.5) * 0.5
        if dt == dtypes.float64:
            vals = vals + 1e-12  # not representable in float32
    return np.asarray(vals).astype(dt).reshape(shape)


@pytest.mark.parametrize("dt", dtypes.ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (4, 0, 2)], ids=str)
def test_round_trip_x64_off(dt, shape):
    x = sample(dt, shape)
    a = ort.device_put(x)
    want = X32.get(dt, dt)
    assert a.dtype == want and a.shape == shape and not a.weak_type
    back = ort.device_get(a)
    assert back.dtype == want and back.shape == shape
    np.testing.assert_array_equal(back, x.astype(want))
    np.testing.assert_array_equal(np.asarray(a), x.astype(want))


@pytest.mark.parametrize("dt", dtypes.ALL_DTYPES, ids=lambda d: d.name)
def test_round_trip_x64_on(dt, x64):
    x = sample(dt)
    a = ort.device_put(x)
    assert a.dtype == dt
    back = ort.device_get(a)
    assert back.dtype == dt
    np.testing.assert_array_equal(back, x)  # exact, 64-bit values included


def test_float64_values_are_rounded_without_x64():
    a = ort.device_put(np.array([1 + 1e-12, 1 / 3]))
    assert a.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a), np.array([1 + 1e-12, 1 / 3], np.float32))


def test_int64_wraps_like_astype_without_x64():
    x = np.array([2**40 + 5, -3], np.int64)
    np.testing.assert_array_equal(np.asarray(ort.device_put(x)), x.astype(np.int32))


@pytest.mark.parametrize("value, dtype, weak", [
    (3, "int32", True), (2.5, "float32", True), (True, "bool", False),
    (1 + 2j, "complex64", True), (np.float64(2.5), "float32", False),
    (np.int8(-3), "int8", False), (np.bool_(False), "bool", False),
    (np.uint16(7), "uint16", False),
])
def test_scalars(value, dtype, weak):
    a = ort.device_put(value)
    assert (a.shape, a.dtype.name, a.weak_type) == ((), dtype, weak)
    assert a.item() == value


@pytest.mark.parametrize("value, dtype", [
    (3, "int64"), (2.5, "float64"), (1 + 2j, "complex128"), (True, "bool"),
])
def test_python_scalars_under_x64(value, dtype, x64):
    a = ort.device_put(value)
    assert a.dtype.name == dtype and a.weak_type == (dtype != "bool")
    assert a.item() == value


def test_large_python_int():
    with pytest.raises(OverflowError, match="Python int 10000000000 too large to convert to int32"):
        ort.device_put(10**10)
    assert ort.device_put(-(2**31)).item() == -(2**31)


def test_large_python_int_under_x64(x64):
    assert ort.device_put(10**10).item() == 10**10


def test_copy_semantics_aligned_source():
    # A 64-byte-aligned source would be aliased under ZERO_COPY; ours must copy.
    for n in (16, 1 << 16):
        src = np.zeros(n, np.float32)
        a = ort.device_put(src)
        src[:] = 5
        np.testing.assert_array_equal(np.asarray(a), np.zeros(n, np.float32))
        a2 = ort.put_numpy(src, ShapedArray((n,), np.float32), ort.default_device())
        src[:] = 7
        np.testing.assert_array_equal(np.asarray(a2), np.full(n, 5, np.float32))


def test_non_contiguous_and_byte_swapped_inputs():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(np.asarray(ort.device_put(x.T)), x.T)
    np.testing.assert_array_equal(np.asarray(ort.device_put(x[::2, 1::2])), x[::2, 1::2])
    be = np.arange(5, dtype=">i4")
    a = ort.device_put(be)
    assert a.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(a), [0, 1, 2, 3, 4])


def test_read_back_is_read_only_and_zero_copy():
    a = ort.device_put(np.arange(4, dtype=np.float32))
    v = ort.device_get(a)
    assert not v.flags.writeable
    assert ort.device_get(a).ctypes.data == v.ctypes.data  # the device buffer itself


def test_device_placement_and_commitment():
    d0, d1 = ort.devices()
    a = ort.device_put(np.ones(3, np.float32))
    assert a.device is d0 and not a.committed
    b = ort.device_put(np.ones(3, np.float32), d1)
    assert b.device is d1 and b.committed
    c = ort.device_put(1.0, ort.SingleDeviceSharding(d1))
    assert c.device is d1 and c.committed


def test_array_device_put():
    d0, d1 = ort.devices()
    a = ort.device_put(np.arange(3.0, dtype=np.float32))
    assert ort.device_put(a) is a
    # An explicit device commits an uncommitted array in place (JAX 0.10.2 does too); an
    # array already committed there is returned as is.
    a0 = ort.device_put(a, d0)
    assert a0.committed and not a.committed and a0.device is d0
    assert ort.device_put(a0, d0) is a0
    np.testing.assert_array_equal(np.asarray(a0), [0, 1, 2])
    b = ort.device_put(a, d1)
    assert b is not a and b.device is d1
    assert b.sharding is ort.sharding_for(d1)
    np.testing.assert_array_equal(np.asarray(b), [0, 1, 2])
    w = ort.device_put(2.0)
    w1 = ort.device_put(w, d1)
    assert w1.weak_type and w1.dtype == np.float32 and float(w1) == 2.0


def test_device_put_of_deleted_array():
    a = ort.device_put(np.ones(3, np.float32))
    a.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        ort.device_put(a, ort.devices()[1])
    with pytest.raises(RuntimeError, match="deleted"):
        ort.device_get(a)


def test_trees():
    Point = collections.namedtuple("Point", "x y")
    tree = {"a": [1, 2.0], "b": (np.arange(2), None), "c": Point(True, np.float32(3))}
    out = ort.device_put(tree)
    assert set(out) == {"a", "b", "c"} and type(out["a"]) is list
    assert type(out["c"]) is Point and out["b"][1] is None
    assert all(type(x) is ort.Array for x in (*out["a"], out["b"][0], *out["c"]))
    host = ort.device_get(out)
    assert host["a"][0] == 1 and host["a"][1] == 2.0 and host["c"].y == 3.0
    np.testing.assert_array_equal(host["b"][0], [0, 1])
    assert ort.device_get({"x": 1, "y": "s"}) == {"x": 1, "y": "s"}  # non-arrays pass through
    assert ort.block_until_ready(out) is out


@pytest.mark.parametrize("bad, name", [
    ("abc", "str"), (object(), "object"), (["a", 1], "str"), ({"k": b"x"}, "bytes"),
])
def test_rejects_unsupported_types(bad, name):
    with pytest.raises(TypeError, match=f"argument of type {name} is not a valid"):
        ort.device_put(bad)


@pytest.mark.parametrize("bad, dtype", [
    (np.array([object()]), "object"), (np.array(["a"]), "<U1"),
    (np.zeros(2, np.float128) if hasattr(np, "float128") else np.zeros(2, "M8[s]"), None),
])
def test_rejects_unsupported_numpy_dtypes(bad, dtype):
    with pytest.raises(TypeError, match=f"numpy arrays of dtype {dtype or bad.dtype}"):
        ort.device_put(bad)


def test_device_argument_type():
    with pytest.raises(ValueError, match="only accepts `None`, `olympus.sharding.Sharding`, "
                                         "`olympus.Device`"):  # JAX 0.10.2's ValueError
        ort.device_put(1.0, "cpu:0")


def test_bfloat16_values():
    x = np.array([[1.5, -2.25], [3.0, 1e30]], ml_dtypes.bfloat16)
    a = ort.device_put(x)
    assert a.dtype == dtypes.bfloat16
    back = ort.device_get(a)
    assert back.dtype == dtypes.bfloat16 and not back.flags.writeable
    np.testing.assert_array_equal(back.astype(np.float32), x.astype(np.float32))
    assert a.tolist() == [[1.5, -2.25], [3.0, float(x[1, 1])]]


# --- The narrow dtypes ------------------------------------------------------------------

#: The narrow dtypes jaxlib's CPU client holds and reads back (float8 through DLPack, the
#: sub-byte ones widened on the device first).
HELD_NARROW = [d for d in dtypes.NARROW_DTYPES
               if d not in dtypes.FLOAT6_DTYPES and d not in (dtypes.int1, dtypes.uint1)]


def _narrow_values(dt, n):
    if dtypes.is_integer(dt):
        info = dtypes.iinfo(dt)
        return np.resize(np.arange(int(info.min), int(info.max) + 1), n).astype(dt)
    if dt == dtypes.float8_e8m0fnu:
        return (2.0 ** (np.arange(n) % 9 - 4)).astype(dt)
    return np.resize(np.array([-6, -1.5, -0.5, 0, 0.5, 1, 2, 4]), n).astype(dt)


@pytest.mark.parametrize("dt", HELD_NARROW, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(3, 5), (), (0, 2), (7,)], ids=str)
def test_narrow_round_trip(dt, shape):
    """Put and read back exactly, every value of the integer types and a spread of each
    float format's values (odd lengths exercise the packing of two 4-bit values a byte)."""
    x = _narrow_values(dt, int(np.prod(shape))).reshape(shape)
    a = ort.device_put(x)
    assert a.dtype == dt and a.shape == shape and not a.weak_type
    back = ort.device_get(a)
    assert back.dtype == dt and back.shape == shape
    np.testing.assert_array_equal(back.astype(np.float32), x.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(a).astype(np.float32), x.astype(np.float32))
    assert not np.asarray(a).flags.writeable


@pytest.mark.parametrize("dt", dtypes.FLOAT6_DTYPES, ids=lambda d: d.name)
def test_float6_cannot_be_put(dt):
    """jaxlib's CPU client has no float6 buffers; the put fails with the error reference JAX
    0.10.2 gets from ``jax.device_put`` (recorded)."""
    with pytest.raises(ort.XlaRuntimeError, match=f"Unknown NumPy dtype dtype\\({dt.name}\\)"):
        ort.device_put(np.zeros(2, dt))


def test_float6_programs_are_refused_before_xla():
    """XLA aborts the process compiling a float6 constant (reference JAX 0.10.2 does, with
    ``jit(lambda: jnp.ones(2, jnp.float6_e2m3fn))()``); any float6 program is refused before
    XLA sees it, with the error JAX gets for the float6 programs XLA rejects (recorded)."""
    text = """
module @f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> tensor<2xf32> {
    %c = stablehlo.constant dense<1.000000e+00> : tensor<2xf6E2M3FN>
    %0 = stablehlo.convert %c : (tensor<2xf6E2M3FN>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}"""
    with pytest.raises(ort.XlaRuntimeError,
                       match=r"INVALID_ARGUMENT: Invalid XLA PrimitiveType: 36 \(F6E2M3FN\)"):
        ort.compile(text, in_avals=[], out_avals=[ShapedArray((2,), np.float32)])
