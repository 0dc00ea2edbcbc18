"""olympus.numpy array creation and dtype utilities against NumPy: array/asarray dtype
inference (weak Python scalars, 32-bit defaults, x64), zeros/ones/full (and *_like),
ranges (arange, linspace, logspace, geomspace, traced bounds), eye/tri/tril/triu/diag,
meshgrid/indices/mgrid/ogrid/fromfunction, copy/astype, result_type/promote_types/can_cast/
issubdtype/isdtype/finfo/iinfo/iscomplexobj/isscalar/ndim/shape/size, and comparisons of
whole arrays (isclose, allclose, array_equal, array_equiv, isin)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from _numpy_reference import check

import olympus
import olympus.numpy as jnp


def test_array_dtype_inference():
    check(jnp.array([1, 2, 3]), np.array([1, 2, 3], np.int32), weak=False)
    check(jnp.array([1.0, 2]), np.array([1.0, 2.0], np.float32), weak=False)
    check(jnp.array([[True], [False]]), np.array([[True], [False]]))
    check(jnp.array([1 + 2j]), np.array([1 + 2j], np.complex64))
    check(jnp.array(3), np.int32(3), weak=True)
    check(jnp.array(3.5), np.float32(3.5), weak=True)
    check(jnp.array(True), np.True_, weak=False)
    check(jnp.array(np.float64(2.5)), np.float32(2.5), weak=False)
    check(jnp.array(np.arange(3, dtype=np.int64)), np.arange(3, dtype=np.int32))
    check(jnp.array([np.float16(1), 2.0]), np.array([1, 2], np.float16))  # weak 2.0
    check(jnp.array([np.int8(1), np.uint8(2)]), np.array([1, 2], np.int16))
    check(jnp.array([1, 2], dtype=jnp.uint8), np.array([1, 2], np.uint8))
    check(jnp.array([1, 2], dtype="float16"), np.array([1, 2], np.float16))
    check(jnp.array([1, 2], dtype=float), np.array([1, 2], np.float32))
    check(jnp.array([[1, 2]], ndmin=4), np.array([[1, 2]], ndmin=4))
    check(jnp.array([]), np.zeros((0,), np.float32))
    check(jnp.array([jnp.ones(2), np.zeros(2)]), np.array([[1, 1], [0, 0]], np.float32))
    check(jnp.array([jnp.int8(1), 2]), np.array([1, 2], np.int8))
    x = jnp.arange(3.0)
    y = jnp.array(x)
    assert y is not x
    check(y, np.arange(3.0))
    assert jnp.asarray(x) is x
    check(jnp.asarray(x, dtype=jnp.int32), np.arange(3, dtype=np.int32))
    check(jnp.array(x, dtype=jnp.bfloat16), np.arange(3.0).astype(ml_dtypes.bfloat16))
    check(jnp.copy(x), np.arange(3.0))
    check(jnp.astype(x, jnp.int8), np.arange(3, dtype=np.int8))
    check(jnp.frombuffer(np.arange(4, dtype=np.int16).tobytes(), dtype=np.int16),
          np.arange(4, dtype=np.int16))
    with pytest.raises(OverflowError, match="Python int 3000000000 too large to convert to "
                                            "int32"):
        jnp.array([1, 3000000000])
    with pytest.raises(TypeError, match="unsupported element types"):
        jnp.array([1, "a"])
    with pytest.raises(TypeError, match="Unexpected input type for array"):
        jnp.array({1: 2})


def test_x64_mode():
    olympus.config.update("olympus_enable_x64", True)
    try:
        check(jnp.array([1, 2]), np.array([1, 2], np.int64), dtype=np.int64)
        check(jnp.array([1.5]), np.array([1.5]), dtype=np.float64)
        check(jnp.arange(3), np.arange(3), dtype=np.int64)
        check(jnp.zeros(2), np.zeros(2), dtype=np.float64)
        check(jnp.sum(np.array([1, 2], np.int32)), np.int64(3), dtype=np.int64)
        check(jnp.mean(np.array([1, 2], np.int32)), np.float64(1.5), dtype=np.float64)
        check(jnp.sin(np.array([1, 2], np.int32)), np.sin([1, 2]), dtype=np.float64,
              rtol=1e-14)
        assert jnp.result_type(1.0) == np.float64
        assert jnp.add(np.ones(2, np.float32), 1.0).dtype == np.float32
        check(jnp.linspace(0, 1, 5), np.linspace(0, 1, 5), dtype=np.float64)
        check(jnp.nonzero(np.array([0, 3]))[0], np.array([1]), dtype=np.int64)
    finally:
        olympus.config.update("olympus_enable_x64", False)
    assert jnp.array([1, 2]).dtype == np.int32


def test_filled_arrays():
    check(jnp.zeros((2, 3)), np.zeros((2, 3), np.float32), weak=False)
    check(jnp.zeros(3, jnp.int16), np.zeros(3, np.int16))
    check(jnp.ones((), bool), np.ones((), bool))
    check(jnp.empty((2, 0)), np.empty((2, 0), np.float32))
    check(jnp.full((2, 2), 7), np.full((2, 2), 7, np.int32), weak=True)
    check(jnp.full((2,), 7.5, jnp.float16), np.full(2, 7.5, np.float16), weak=False)
    check(jnp.full((), 2.0), np.float32(2.0), weak=True)
    check(jnp.full((2, 3), np.arange(3)), np.broadcast_to(np.arange(3), (2, 3)))
    check(jnp.full((2, 2), [1.0, 2.0]), np.full((2, 2), [1.0, 2.0]))
    base = jnp.ones((2, 3), jnp.int16)
    check(jnp.zeros_like(base), np.zeros((2, 3), np.int16))
    check(jnp.ones_like(base, dtype=jnp.float32), np.ones((2, 3), np.float32))
    check(jnp.full_like(base, 4, shape=(4,)), np.full(4, 4, np.int16))
    check(jnp.empty_like(base), np.zeros((2, 3), np.int16))
    check(jnp.zeros_like(jnp.asarray(2.0)), np.float32(0), weak=True)
    check(jnp.full_like(np.arange(3.0), np.nan), np.full(3, np.nan, np.float32))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        jnp.zeros((2, 1.5))
    with pytest.raises(TypeError, match="zeros_like requires ndarray or scalar arguments"):
        jnp.zeros_like([1, 2])


@pytest.mark.parametrize("args,kwargs", [
    ((5,), {}), ((2, 10, 3), {}), ((5, 0, -2), {}), ((0, 1, 0.25), {}), ((5.0,), {}),
    ((4,), {"dtype": np.float32}), ((0,), {}), ((-3,), {}), ((1, 4), {"dtype": np.uint8}),
    ((np.int16(7),), {}), ((2.5,), {}),
])
def test_arange(args, kwargs):
    want = np.arange(*args, **kwargs)
    if isinstance(args[0], np.int16):
        want = want.astype(np.int16)  # JAX: the dtype of the (strong) bound
    check(jnp.arange(*args, **kwargs), want)


def test_arange_traced_bounds_error():
    with pytest.raises(olympus.errors.ConcretizationTypeError,
                       match="It arose in the olympus.numpy.arange argument 'stop'"):
        olympus.jit(lambda n: jnp.arange(0, n))(3)
    check(olympus.jit(lambda: jnp.arange(4))(), np.arange(4))


@pytest.mark.parametrize("fn", [
    lambda m: m.linspace(0, 1, 7),
    lambda m: m.linspace(0, 1, 7, endpoint=False),
    lambda m: m.linspace(2, -3, 1),
    lambda m: m.linspace(0, 1, 0),
    lambda m: m.linspace(0, 10, 4, dtype=np.int32),
    lambda m: m.linspace(np.array([0.0, 1.0]), np.array([1.0, 3.0]), 5, axis=1),
    lambda m: m.linspace(0, 1, 6, retstep=True),
    lambda m: m.logspace(0, 2, 5),
    lambda m: m.logspace(0, 3, 4, base=2.0, endpoint=False),
    lambda m: m.geomspace(1, 1000, 4),
    lambda m: m.geomspace(-2, -32, 5),
    lambda m: m.eye(3),
    lambda m: m.eye(3, 4, 1, dtype=np.int32),
    lambda m: m.eye(4, 2, -1),
    lambda m: m.identity(2, dtype=bool),
    lambda m: m.tri(3, 4, -1),
    lambda m: m.tri(3, dtype=np.int8),
    lambda m: m.tril(np.arange(24.0).reshape(2, 3, 4), 1),
    lambda m: m.triu(np.arange(12.0).reshape(3, 4), -1),
    lambda m: m.diag(np.arange(1.0, 4.0), 1),
    lambda m: m.diag(np.arange(1.0, 4.0), -2),
    lambda m: m.diag(np.arange(12.0).reshape(3, 4), 1),
    lambda m: m.diagflat(np.arange(4.0).reshape(2, 2), -1),
    lambda m: m.meshgrid(np.arange(3.0), np.arange(2.0)),
    lambda m: m.meshgrid(np.arange(3.0), np.arange(2.0), np.arange(4.0), indexing="ij",
                         sparse=True),
    lambda m: m.indices((2, 3)),
    lambda m: m.indices((2, 3), sparse=True),
    lambda m: m.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=np.float32),
    lambda m: m.mgrid[0:2, 0:3],
    lambda m: m.mgrid[0:1:5j],
    lambda m: m.ogrid[0:2, 0:3],
])
def test_creation_functions(fn):
    check(fn(jnp), fn(np), rtol=1e-6, atol=1e-7)


def test_creation_under_jit_with_traced_values():
    @olympus.jit
    def f(a, b, k):
        return (jnp.linspace(a, b, 5), jnp.logspace(a, b, 3), jnp.geomspace(b, 2 * b, 3),
                jnp.eye(3, k=k), jnp.tri(3, k=k), jnp.full((2,), a), jnp.zeros_like(a),
                jnp.linspace(a, b, 4, endpoint=False, retstep=True)[1])

    got = f(np.float32(1.0), np.float32(2.0), 1)
    want = (np.linspace(1, 2, 5), np.logspace(1, 2, 3), np.geomspace(2, 4, 3),
            np.eye(3, k=1), np.tri(3, k=1), np.full(2, 1.0), np.float32(0),
            np.float32(0.25))
    for g, w in zip(got, want):
        check(g, w, dtype=np.float32, rtol=2e-6)


def test_dtype_functions():
    assert jnp.result_type(np.int8, np.uint8) == np.int16
    assert jnp.result_type(jnp.ones(2, jnp.float16), 1.0) == np.float16
    assert jnp.result_type(1, 2.0) == np.float32
    assert jnp.result_type(np.float64) == np.float32
    assert jnp.promote_types(jnp.bfloat16, jnp.float16) == np.float32
    assert jnp.promote_types(np.uint32, np.int32) == np.int32  # int64 canonicalized
    assert jnp.can_cast(np.int8, np.int16) and not jnp.can_cast(np.float32, np.int32)
    assert jnp.can_cast(jnp.ones(2, jnp.int8), np.float32)
    assert jnp.can_cast(np.float32, np.int32, casting="unsafe")
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.issubdtype(jnp.bfloat16, jnp.inexact)
    assert not jnp.issubdtype(jnp.int32, jnp.floating)
    assert jnp.isdtype(jnp.float32, "real floating")
    assert jnp.isdtype(np.dtype(np.uint8), ("bool", "unsigned integer"))
    assert jnp.isdtype(np.int8, "numeric") is not False
    with pytest.raises(ValueError, match="Unrecognized data type kind"):
        jnp.isdtype(np.int8, "foo")
    assert jnp.finfo(jnp.bfloat16).bits == 16
    assert jnp.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert jnp.iinfo(jnp.int8).min == -128
    assert jnp.iscomplexobj(jnp.ones(2, jnp.complex64)) and not jnp.iscomplexobj([1.0])
    assert jnp.isrealobj(np.ones(2))
    assert jnp.isscalar(3.0) and jnp.isscalar(jnp.float32(2)) and not jnp.isscalar([1])
    assert not jnp.isscalar(jnp.ones(2))
    assert jnp.ndim([[1, 2]]) == 2 and jnp.shape(jnp.ones((2, 3))) == (2, 3)
    assert jnp.size(jnp.ones((2, 3))) == 6 and jnp.size(jnp.ones((2, 3)), 1) == 3
    assert jnp.dtype("float32") == np.float32
    assert jnp.int_ == jnp.int64 and jnp.single == jnp.float32
    assert jnp.newaxis is None and jnp.pi == np.pi


def test_whole_array_comparisons():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 100.0], np.float32)
    b = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 0.0, 100.01], np.float32)
    check(jnp.isclose(a, b), np.isclose(a, b))
    check(jnp.isclose(a, b, equal_nan=True, rtol=1e-3), np.isclose(a, b, equal_nan=True,
                                                                   rtol=1e-3))
    check(jnp.isclose(np.arange(3), np.array([0, 1, 3])), np.array([True, True, False]))
    check(jnp.isclose(a.astype(np.complex64), b.astype(np.complex64)),
          np.isclose(a.astype(np.complex64), b.astype(np.complex64)))
    check(jnp.allclose(a[:1], b[:1]), np.True_)
    check(jnp.allclose(a, b, equal_nan=True), np.False_)
    check(jnp.array_equal(a, a), np.False_)
    check(jnp.array_equal(a, a, equal_nan=True), np.True_)
    check(jnp.array_equal(np.ones(2), np.ones(3)), np.False_)
    check(jnp.array_equiv(np.ones((2, 3)), np.ones(3)), np.True_)
    check(jnp.array_equiv(np.ones((2, 3)), np.ones(2)), np.False_)
    check(jnp.isin(np.arange(6).reshape(2, 3), np.array([1, 4, 9])),
          np.isin(np.arange(6).reshape(2, 3), [1, 4, 9]))


def test_python_scalars_out_of_the_requested_integer_range_raise():
    """Issue 17: Python numbers are converted to the requested dtype directly (NumPy's
    checks), not wrapped through int64: JAX 0.10.2's exception types and messages, recorded
    from reference JAX in its own process."""
    import re

    for make, err, msg in (
            (lambda: jnp.array(-1, dtype=jnp.uint8), OverflowError,
             "Python integer -1 out of bounds for uint8"),
            (lambda: jnp.array(300, dtype=jnp.int8), OverflowError,
             "Python integer 300 out of bounds for int8"),
            (lambda: jnp.asarray([-1, 2], dtype=jnp.uint32), OverflowError,
             "Python integer -1 out of bounds for uint32"),
            (lambda: jnp.array([[1, 256]], dtype=jnp.uint8), OverflowError,
             "Python integer 256 out of bounds for uint8"),
            (lambda: jnp.array(float("inf"), dtype=jnp.int32), OverflowError,
             "cannot convert float infinity to integer"),
            (lambda: jnp.array(float("nan"), dtype=jnp.int32), ValueError,
             "cannot convert float NaN to integer"),
            (lambda: jnp.uint8(-1), OverflowError, "Python integer -1 out of bounds for uint8")):
        with pytest.raises(err, match=re.escape(msg)):
            make()
    # in range, NumPy arrays (which wrap, as in JAX) and bools are unchanged
    assert int(jnp.array(255, dtype=jnp.uint8)) == 255
    np.testing.assert_array_equal(jnp.array(np.array([-1]), dtype=jnp.uint8), [255])
    np.testing.assert_array_equal(jnp.array([1, -1], dtype=bool), [True, True])
    np.testing.assert_array_equal(jnp.array([1.5, -2.5], dtype=jnp.int32), [1, -2])


def test_creating_an_array_too_big_for_xla_raises_instead_of_aborting():
    """Issue 17: jnp.zeros((2**62, 2**62)) aborted the process inside XLA (as it does in
    JAX 0.10.2); it raises a ValueError before calling into C++, eagerly and under jit."""
    with pytest.raises(ValueError, match="is too big"):
        jnp.zeros((2**62, 2**62))
    with pytest.raises(ValueError, match="is too big"):
        jnp.ones((2**40, 2**40, 2**40))
    with pytest.raises(ValueError, match="is too big"):
        olympus.jit(lambda x: jnp.broadcast_to(x, (2**62,)))(1.0)


def test_array_positional_copy_order_ndmin():
    """JAX 0.10.2: copy/order/ndmin after dtype positionally still work with a
    DeprecationWarning; too many, or one also given by keyword, is JAX's TypeError."""
    with pytest.warns(DeprecationWarning, match="Passing the copy, order, and ndmin "
                                                "arguments to jnp.array positionally"):
        out = jnp.array([1, 2], None, True, "K", 2)
    assert out.shape == (1, 2)
    np.testing.assert_array_equal(out, [[1, 2]])
    with pytest.raises(TypeError, match=r"^array\(\) got multiple values for argument "
                                        r"'copy'$"):
        jnp.array([1, 2], None, False, copy=False)
    with pytest.raises(TypeError, match=r"^array\(\) takes at most 5 positional arguments "
                                        r"but 6 were given$"):
        jnp.array([1, 2], None, False, "K", 0, 1)


def test_complex_to_real_casts_warn_as_jax():
    """Recorded from reference JAX 0.10.2: `jnp.astype`/`x.astype` from complex to a real
    or integer dtype keep the real part with a DeprecationWarning (to bool: `x != 0`, no
    warning); `jnp.array(x, dtype=...)` and `lax.convert_element_type` keep the real part
    with NumPy's ComplexWarning, even to bool."""
    import warnings

    from olympus import lax

    x = jnp.array([1j, 0, 2 + 1j])
    with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes will "
                      "soon raise a ValueError. Please first use jnp.real or jnp.imag"):
        np.testing.assert_array_equal(jnp.astype(x, jnp.float32), [0.0, 0.0, 2.0])
    with pytest.warns(DeprecationWarning, match="Casting from complex to real"):
        np.testing.assert_array_equal(x.astype(jnp.int32), [0, 0, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(x.astype(bool), [True, False, True])
        np.testing.assert_array_equal(x.astype(jnp.complex64), np.array(x))
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        np.testing.assert_array_equal(jnp.array(x, dtype=bool), [False, False, True])
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        np.testing.assert_array_equal(lax.convert_element_type(x, jnp.float32),
                                      [0.0, 0.0, 2.0])
