"""`olympus.ffi`: a C++ kernel written against XLA's FFI headers (``ffi.include_dir()``),
built with the system compiler at test time, registered with `register_ffi_target` and
called with `ffi_call` eagerly, under jit and under vmap; values against numpy.

The printed olympusprs and the error messages were recorded from reference JAX 0.10.2
(``jax.ffi`` with the same kernel, in its own process).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import ffi

KERNEL = textwrap.dedent("""
    #include <cstdint>
    #include "xla/ffi/api/ffi.h"
    namespace ffi = xla::ffi;

    // out = x * factor + y (elementwise, any shape).
    static ffi::Error ScaleAddImpl(ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> y,
                                   float factor, ffi::ResultBuffer<ffi::F32> out) {
      if (x.element_count() != y.element_count())
        return ffi::Error::InvalidArgument("scale_add: x and y differ in size");
      for (size_t i = 0; i < x.element_count(); ++i)
        out->typed_data()[i] = x.typed_data()[i] * factor + y.typed_data()[i];
      return ffi::Error::Success();
    }
    XLA_FFI_DEFINE_HANDLER_SYMBOL(ScaleAdd, ScaleAddImpl,
        ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Arg<ffi::Buffer<ffi::F32>>()
            .Attr<float>("factor").Ret<ffi::Buffer<ffi::F32>>());

    // (cumulative sum of the rows of x plus offset, number of rows): two results and an
    // int64 attribute; the last axis is the row.
    static ffi::Error RowCumsumImpl(ffi::Buffer<ffi::S32> x, int64_t offset,
                                    ffi::ResultBuffer<ffi::S32> out,
                                    ffi::ResultBuffer<ffi::S32> rows) {
      auto dims = x.dimensions();
      if (dims.size() == 0) return ffi::Error::InvalidArgument("row_cumsum: x is a scalar");
      size_t n = dims.back(), m = x.element_count() / (n ? n : 1);
      for (size_t r = 0; r < m; ++r) {
        int32_t acc = static_cast<int32_t>(offset);
        for (size_t c = 0; c < n; ++c) {
          acc += x.typed_data()[r * n + c];
          out->typed_data()[r * n + c] = acc;
        }
      }
      rows->typed_data()[0] = static_cast<int32_t>(m);
      return ffi::Error::Success();
    }
    XLA_FFI_DEFINE_HANDLER_SYMBOL(RowCumsum, RowCumsumImpl,
        ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::S32>>().Attr<int64_t>("offset")
            .Ret<ffi::Buffer<ffi::S32>>().Ret<ffi::Buffer<ffi::S32>>());
""")


def _compiler():
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler (c++, g++ or clang++) on PATH to build the FFI kernel")
    if not os.path.exists(os.path.join(ffi.include_dir(), "xla", "ffi", "api", "ffi.h")):
        pytest.skip(f"jaxlib ships no FFI headers under {ffi.include_dir()}")
    d = tmp_path_factory.mktemp("ffi_kernel")
    src, lib = d / "kernel.cc", d / "libkernel.so"
    src.write_text(KERNEL)
    subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-w",
                    f"-I{ffi.include_dir()}", str(src), "-o", str(lib)],
                   check=True, timeout=300, capture_output=True)
    so = ctypes.cdll.LoadLibrary(str(lib))
    ffi.register_ffi_target("olympus_test_scale_add", ffi.pycapsule(so.ScaleAdd),
                            platform="cpu")
    ffi.register_ffi_target("olympus_test_row_cumsum", ffi.pycapsule(so.RowCumsum))
    return so


def scale_add(x, y, factor=2.0, vmap_method="sequential"):
    return ffi.ffi_call("olympus_test_scale_add", olympus.ShapeDtypeStruct(x.shape, x.dtype),
                        vmap_method=vmap_method)(x, y, factor=np.float32(factor))


def row_cumsum(x, offset=0, vmap_method="sequential"):
    return ffi.ffi_call("olympus_test_row_cumsum",
                        (olympus.ShapeDtypeStruct(x.shape, x.dtype),
                         olympus.ShapeDtypeStruct((1,), np.int32)),
                        vmap_method=vmap_method)(x, offset=offset)


X = np.arange(6, dtype=np.float32).reshape(2, 3)
Y = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def test_eager_and_jit(kernels):
    want = X * 3 + Y
    np.testing.assert_allclose(scale_add(jnp.asarray(X), jnp.asarray(Y), 3.0), want)
    np.testing.assert_allclose(olympus.jit(scale_add, static_argnums=2)(X, Y, 3.0), want)


def test_two_results_and_int_attribute(kernels):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out, rows = row_cumsum(jnp.asarray(x), offset=5)
    assert isinstance(out, olympus.Array) and out.dtype == np.int32
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1) + 5)
    np.testing.assert_array_equal(rows, [3])
    out, rows = olympus.jit(lambda x: row_cumsum(x, offset=-1))(x)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1) - 1)


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all"])
def test_vmap_methods(kernels, method):
    xs = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    if method != "expand_dims":  # which hands the kernel a (1, 2, 3) y beside a (4, 2, 3) x
        got = olympus.vmap(lambda x, y: scale_add(x, y, 0.5, method), in_axes=(0, None))(xs, Y)
        np.testing.assert_allclose(got, xs * 0.5 + Y)
    got = olympus.jit(olympus.vmap(lambda x, y: scale_add(x, y, 2.0, method)))(xs, xs)
    np.testing.assert_allclose(got, xs * 3)


def test_vmap_sequential_sees_one_member(kernels):
    """The row count the kernel reports is per member: each call sees one (3, 4) array."""
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    out, rows = olympus.vmap(row_cumsum)(x)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=2))
    np.testing.assert_array_equal(rows, [[3], [3]])
    out, rows = olympus.vmap(lambda x: row_cumsum(x, vmap_method="expand_dims"))(x)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=2))
    assert int(rows[0, 0]) == 6  # one call saw all 2 * 3 rows (it writes only rows[0])


def test_olympuspr_as_jax_prints_it(kernels):
    """Recorded from ``jax.make_jaxpr`` of the same call (target name aside)."""
    text = str(olympus.make_olympuspr(scale_add)(X, Y))
    assert text == """\
{ lambda ; a:f32[2,3] b:f32[2,3]. let
    c:f32[2,3] = ffi_call[
      attributes=(('factor', np.float32(2.0)),)
      custom_call_api_version=4
      has_side_effect=False
      input_layouts=((1, 0), (1, 0))
      input_output_aliases=()
      legacy_backend_config=None
      output_layouts=((1, 0),)
      result_avals=(ShapedArray(float32[2,3]),)
      target_name=olympus_test_scale_add
      vmap_method=sequential
    ] a b
  in (c,) }"""
    text = str(olympus.make_olympuspr(olympus.vmap(scale_add))(X, Y))
    assert "scan[" in text and "input_layouts=((0,), (0,))" in text and "length=2" in text


def test_side_effect_is_an_effect_and_kept(kernels):
    def f(x):
        ffi.ffi_call("olympus_test_scale_add", olympus.ShapeDtypeStruct(x.shape, x.dtype),
                     has_side_effect=True)(x, x, factor=np.float32(1))
        return x

    closed = olympus.make_olympuspr(f)(X)
    assert [str(e) for e in closed.effects] == ["FFI"]
    text = olympus.jit(f).lower(X).as_text()
    assert "custom_call @olympus_test_scale_add" in text and "has_side_effect = true" in text
    assert not olympus.make_olympuspr(scale_add)(X, X).effects


def test_errors(kernels):
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        ffi.ffi_call("olympus_test_scale_add", olympus.ShapeDtypeStruct((2,), np.float32),
                     vmap_method="bad")
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        olympus.vmap(lambda x: ffi.ffi_call(
            "olympus_test_scale_add", olympus.ShapeDtypeStruct(x.shape, x.dtype))(
                x, x, factor=np.float32(1)))(X)
    with pytest.raises(ValueError, match="The FFI call to `olympus_test_scale_add` cannot "
                                         "be differentiated"):
        olympus.grad(lambda x: scale_add(x, x).sum())(X)
    with pytest.raises(TypeError, match="Non-hashable keyword argument to ffi_call factor"):
        ffi.ffi_call("olympus_test_scale_add", olympus.ShapeDtypeStruct((2, 3), np.float32))(
            X, Y, factor=[1, 2])
    with pytest.raises(Exception, match="No FFI handler registered for olympus_no_such"):
        ffi.ffi_call("olympus_no_such", olympus.ShapeDtypeStruct((2, 3), np.float32))(X)
    with pytest.raises(Exception, match="scale_add: x and y differ in size"):
        scale_add(X, Y[0])
    with pytest.raises(ValueError, match="legacy_backend_config parameter requires"):
        ffi.ffi_call("t", olympus.ShapeDtypeStruct((), np.float32), legacy_backend_config="")


def test_aliasing_checks(kernels):
    with pytest.raises(ValueError, match="with input index 3 outside the range"):
        ffi.ffi_call("olympus_test_scale_add", olympus.ShapeDtypeStruct((2, 3), np.float32),
                     input_output_aliases={3: 0})(X, Y, factor=np.float32(1))
    got = ffi.ffi_call("olympus_test_scale_add", olympus.ShapeDtypeStruct((2, 3), np.float32),
                       input_output_aliases={1: 0})(X, Y, factor=np.float32(2))
    np.testing.assert_allclose(got, X * 2 + Y)


def test_helpers():
    assert os.path.isdir(ffi.include_dir())
    cap = ffi.pycapsule(ctypes.cast(ctypes.pythonapi.Py_IncRef, ctypes.c_void_p).value)
    assert type(cap).__name__ == "PyCapsule"
    with pytest.raises(ValueError, match="register_ffi_type_id is not supported"):
        ffi.register_ffi_type_id("x", cap)
    assert callable(ffi.ffi_lowering("olympus_test_scale_add"))
