"""The patched ArrayImpl: repr, conversions, protocols, deletion, pickling."""

from __future__ import annotations

import pickle

import ml_dtypes
import numpy as np
import pytest
from conftest import run_python
from jaxlib import _jax

import olympus_runtime as ort
from olympus_ir import ShapedArray
from olympus_runtime import Array


def put(x, **kw):
    return ort.device_put(x, **kw)


def test_array_is_jaxlibs_class():
    a = put(np.ones(2, np.float32))
    assert Array is _jax.ArrayImpl and type(a) is Array and isinstance(a, ort.Array)


def test_metadata():
    a = put(np.arange(6, dtype=np.int16).reshape(2, 3))
    assert a.shape == (2, 3) and a.dtype == np.int16 and a.ndim == 2 and a.size == 6
    assert a.itemsize == 2 and a.nbytes == 12 and not a.weak_type
    assert isinstance(a.aval, ShapedArray) and a.aval.str_short() == "i16[2,3]"
    assert a.sharding is ort.sharding_for(ort.default_device())
    assert a.device is ort.default_device() and a.devices() == {ort.default_device()}
    assert a.committed is False and put(1.0, device=ort.devices()[1]).committed is True
    assert a.block_until_ready() is a and a.is_ready()
    assert a.platform() == "cpu" and a.on_device_size_in_bytes() == 12
    assert a.__array_priority__ == 100


@pytest.mark.parametrize("value, expected", [
    (10, "Array(10, dtype=int32, weak_type=True)"),
    (2.5, "Array(2.5, dtype=float32, weak_type=True)"),
    (np.float32(3), "Array(3., dtype=float32)"),
    (True, "Array(True, dtype=bool)"),
    (np.array([1.0, 2.0], np.float32), "Array([1., 2.], dtype=float32)"),
    (np.array([True, False]), "Array([ True, False], dtype=bool)"),
    (np.array([1.5, 2], ml_dtypes.bfloat16), "Array([1.5, 2], dtype=bfloat16)"),
    (np.array(1.5, ml_dtypes.bfloat16), "Array(1.5, dtype=bfloat16)"),
    (np.array([1 + 2j], np.complex64), "Array([1.+2.j], dtype=complex64)"),
    (np.array([[1.0, 5.0, 9.0], [13.0, 17.0, 21.0]], np.float32),
     "Array([[ 1.,  5.,  9.],\n       [13., 17., 21.]], dtype=float32)"),
    (np.array([[1, 2], [3, 4]], np.uint8), "Array([[1, 2],\n       [3, 4]], dtype=uint8)"),
    (np.zeros((0, 3), np.float32), "Array([], shape=(0, 3), dtype=float32)"),
    (np.arange(30, dtype=np.float32),
     "Array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.,\n"
     "       13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25.,\n"
     "       26., 27., 28., 29.], dtype=float32)"),
    # The last line leaves no room for the dtype: JAX pads with len("Array(") spaces.
    (np.arange(13, dtype=np.float32) * 1001.5,
     "Array([    0. ,  1001.5,  2003. ,  3004.5,  4006. ,  5007.5,  6009. ,\n"
     "        7010.5,  8012. ,  9013.5, 10015. , 11016.5, 12018. ],      dtype=float32)"),
    (np.arange(2000, dtype=np.int32), "Array([   0,    1,    2, ..., 1997, 1998, 1999], dtype=int32)"),
])
def test_repr_matches_jax(value, expected):
    assert repr(put(value)) == expected


def test_str_and_format():
    a = put(np.array([[1.0, 2.5]], np.float32))
    assert str(a) == "[[1.  2.5]]"
    assert str(put(3)) == "3"
    assert f"{put(2.5):.3f}" == "2.500" and f"{put(7):>4}" == "   7"
    assert format(a) == str(np.array([[1.0, 2.5]], np.float32))
    with pytest.raises(TypeError):
        format(a, ".2f")  # numpy's behaviour for non-scalars


def test_scalar_conversions():
    assert float(put(2.5)) == 2.5 and int(put(7)) == 7 and complex(put(1 + 2j)) == 1 + 2j
    assert bool(put(True)) is True and bool(put(np.array([0.0]))) is False
    assert [10, 20, 30][put(1)] == 20 and put(np.int8(2)).__index__() == 2
    assert put(2.5).item() == 2.5 and type(put(np.array(1.5, ml_dtypes.bfloat16)).item()) is float
    assert put(np.arange(4).reshape(2, 2)).item(3) == 3
    assert put(np.arange(4).reshape(2, 2)).tolist() == [[0, 1], [2, 3]]
    assert put(np.arange(3, dtype=np.int8)).tobytes() == b"\x00\x01\x02"


def test_scalar_conversion_errors():
    v = put(np.array([1.0, 2.0], np.float32))
    with pytest.raises(TypeError, match=r"Only scalar arrays can be converted to Python scalars; got arr.ndim=1"):
        float(v)
    with pytest.raises(TypeError, match="Only scalar arrays"):
        int(put(np.array([1])))
    with pytest.raises(TypeError, match="Only integer scalar arrays can be converted to a scalar index."):
        [1, 2][put(1.0)]
    with pytest.raises(TypeError, match="Only integer scalar arrays"):
        [1, 2][put(np.array([1]))]
    with pytest.raises(ValueError, match="The truth value of an array with more than one element is ambiguous"):
        bool(v)
    with pytest.raises(ValueError, match="The truth value of an empty array is ambiguous"):
        bool(put(np.zeros(0)))


def test_len_and_iter():
    a = put(np.arange(6, dtype=np.float32).reshape(3, 2), device=ort.devices()[1])
    assert len(a) == 3
    rows = list(a)
    assert len(rows) == 3 and all(type(r) is Array for r in rows)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    assert all(r.device is ort.devices()[1] and r.committed for r in rows)
    scalars = list(put(np.array([1, 2], np.int32)))
    assert [repr(s) for s in scalars] == ["Array(1, dtype=int32)", "Array(2, dtype=int32)"]
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(put(1.0))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(put(1.0))


def test_numpy_interop():
    a = put(np.arange(3, dtype=np.float32))
    v = np.asarray(a)
    assert v.dtype == np.float32 and not v.flags.writeable
    np.testing.assert_array_equal(v, [0, 1, 2])
    assert np.asarray(a).ctypes.data == v.ctypes.data  # zero-copy
    f64 = np.array(a, dtype=np.float64)
    assert f64.dtype == np.float64 and f64.flags.writeable
    c = a.__array__(copy=True)
    assert c.flags.writeable and c.ctypes.data != v.ctypes.data
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        a.__array__(np.float64, copy=False)
    np.testing.assert_array_equal(np.sin(a), np.sin(np.arange(3, dtype=np.float32)))
    bf = put(np.array([1.0, 2.0], ml_dtypes.bfloat16))
    assert np.asarray(bf.__array__()).dtype == ml_dtypes.bfloat16


def test_dlpack():
    a = put(np.arange(4, dtype=np.int32))
    assert a.__dlpack_device__() == (1, 0)
    d = np.from_dlpack(a)
    np.testing.assert_array_equal(d, [0, 1, 2, 3])
    assert d.ctypes.data == a.unsafe_buffer_pointer()
    c = np.from_dlpack(a, copy=True)
    assert c.ctypes.data != a.unsafe_buffer_pointer()
    np.testing.assert_array_equal(c, [0, 1, 2, 3])


def test_pickle_round_trip():
    for value in (np.arange(6, dtype=np.float32).reshape(2, 3), 3, 2.5,
                  np.array([1.5, -2], ml_dtypes.bfloat16), np.zeros((0, 2), np.int8)):
        a = put(value)
        b = pickle.loads(pickle.dumps(a))
        assert type(b) is Array and b is not a
        assert (b.shape, b.dtype, b.weak_type) == (a.shape, a.dtype, a.weak_type)
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
        assert repr(b) == repr(a)
    s = ort.sharding_for(ort.devices()[1])
    assert pickle.loads(pickle.dumps(s)) is s


def test_setitem_and_hash():
    a = put(np.zeros(3, np.float32))
    with pytest.raises(TypeError) as e:
        a[0] = 1.0
    assert str(e.value) == (
        "OLYMPUS arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.olympus.dev/en/latest/_autosummary/olympus.numpy.ndarray.at.html"  # JAX 0.10.2's words
    )
    with pytest.raises(TypeError, match="unhashable type: 'Array'"):
        hash(a)
    with pytest.raises(TypeError, match="unhashable"):
        _ = {a: 1}


def test_deleted_array_raises_clearly():
    a = put(np.arange(3, dtype=np.float32))
    a.delete()
    assert a.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        repr(a)  # as JAX 0.10.2: a deleted array has no repr
    msg = r"Array has been deleted with shape=f32\[3\]"
    # Several of these crash the process (SIGSEGV) if they reach jaxlib unchecked.
    for f in (a.is_ready, a.clone, a.platform, a.block_until_ready, a.copy_to_host_async,
              a.on_device_size_in_bytes, a.unsafe_buffer_pointer, a.item, a.tolist,
              a.devices, a.__dlpack__, a.__dlpack_device__,
              lambda: a._pjrt_layout, lambda: a.device, lambda: np.asarray(a),
              a.__array__,
              lambda: str(a), lambda: list(a), lambda: pickle.dumps(a),
              lambda: ort.block_until_ready([a])):
        with pytest.raises(RuntimeError, match=msg):
            f()
    a.delete()  # deleting twice is fine
    live = put(np.ones(2, np.float32))
    ort.check_not_deleted(live, 1.0, np.ones(2), "other values are ignored")
    with pytest.raises(RuntimeError, match=msg):
        ort.check_not_deleted(live, a)


def test_deleting_keeps_live_views_valid():
    a = put(np.arange(1000, dtype=np.float32))
    v = np.asarray(a)
    a.delete()
    _ = [put(np.full(1000, 7, np.float32)) for _ in range(20)]
    np.testing.assert_array_equal(v, np.arange(1000, dtype=np.float32))


def test_copy_to_host_async_and_clone():
    a = put(np.arange(3, dtype=np.float32))
    assert a.copy_to_host_async() is None
    b = a.clone()
    assert type(b) is Array and b.aval is a.aval
    np.testing.assert_array_equal(np.asarray(b), [0, 1, 2])


def test_register_array_methods():
    ort.register_array_methods({"_test_double": lambda self: np.asarray(self) * 2,
                                "_test_prop": property(lambda self: "p")})
    a = put(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(a._test_double(), [0, 2, 4])
    assert a._test_prop == "p"
    ort.register_array_methods({"_test_prop": property(lambda self: "q")})  # ours: may replace
    assert a._test_prop == "q"
    with pytest.raises(ValueError, match="already has 'shape'"):
        ort.register_array_methods({"shape": property(lambda self: None)})
    with pytest.raises(ValueError, match="'aval' cannot be replaced"):
        ort.register_array_methods({"aval": None}, override=True)
    assert a.shape == (3,)


def test_import_refuses_a_patched_arrayimpl():
    for patch in ("_jax.ArrayImpl.dummy = 1",
                  "_jax.ArrayImpl.shape = property(lambda self: self.aval.shape)",
                  "_jax.ArrayImpl.is_ready = lambda self: True"):
        r = run_python(f"""
            from jaxlib import _jax
            {patch}
            try:
                import olympus_runtime
            except ImportError as e:
                print("IMPORT-ERROR:", e)
            else:
                print("imported")
        """)
        assert r.returncode == 0, r.stderr
        assert "IMPORT-ERROR: olympus_runtime cannot share a process with jax: jaxlib's " \
               "ArrayImpl class has already been patched by another library" in r.stdout, patch
        name = patch.split(".")[2].split(" ")[0]
        assert f"attributes not defined by jaxlib: {name}" in r.stdout


def test_import_twice_is_fine():
    r = run_python("""
        import importlib, sys, numpy as np
        import olympus_runtime, olympus_runtime.array
        importlib.reload(olympus_runtime.array)
        for m in [m for m in sys.modules if m.startswith("olympus_runtime")]:
            del sys.modules[m]
        import olympus_runtime as ort
        a = ort.device_put(np.arange(3, dtype=np.float32))
        print(repr(a), a.block_until_ready() is a, a.is_ready())
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Array([0., 1., 2.], dtype=float32) True True"


def test_no_jax_import_attempts():
    """No path used here makes jaxlib's C++ try to import jax (JAXLIB.md §13)."""
    r = run_python("""
        import sys, pickle
        attempts = []
        class Blocker:
            def find_spec(self, name, path=None, target=None):
                if name == "jax" or name.startswith("jax."):
                    attempts.append(name)
                    raise ImportError("blocked " + name)
        sys.meta_path.insert(0, Blocker())
        import numpy as np, ml_dtypes, olympus_runtime as ort
        from mlir_helpers import binary_module
        x = ort.device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
        bf = ort.device_put(np.ones(3, ml_dtypes.bfloat16))
        exe = ort.compile(binary_module("add", shape=(2, 3)))
        y = exe.execute([x, x])[0]
        z = ort.device_put(y, ort.devices()[1])
        for a in (x, y, z, bf):
            repr(a); str(a); a.tolist(); list(a); a.copy_to_host_async(); a.clone()
            pickle.loads(pickle.dumps(a)); a.unsafe_buffer_pointer(); a.platform()
            ort.device_get(a); a.block_until_ready()
        np.from_dlpack(y); float(ort.device_put(2.0)); a.delete(); a.is_deleted()
        # Several devices: split and replicated puts, gathers, an SPMD executable.
        import jaxlib.xla_client as xc
        from mlir_helpers import parse
        from test_multidevice import SPMD_SIN
        split = ort.GSPMDSharding(ort.devices(), xc.HloSharding.iota_tile([2]))
        rep = ort.GSPMDSharding(ort.devices(), xc.HloSharding.replicate())
        s = ort.device_put(np.arange(8, dtype=np.float32), split)
        r = ort.device_put(np.arange(8, dtype=np.float32), rep)
        outs = ort.compile(parse(SPMD_SIN), num_partitions=2).execute([s])
        for a in (s, r, *outs, ort.device_put(s, ort.devices()[0])):
            repr(a); a.tolist(); ort.device_get(a); pickle.loads(pickle.dumps(a))
            list(a) if a.ndim else float(a)
        print("attempts:", attempts)
    """, env={"OLYMPUS_NUM_CPU_DEVICES": "2"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "attempts: []"
