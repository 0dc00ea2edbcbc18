"""NumPy semantics of traced olympus.numpy code, checked against NumPy itself: promotion
(JAX's weak-type lattice, not NumPy's), broadcasting, reductions, indexing, matmul, division.

Functions are traced with make_olympuspr (result types) and run under jit (values)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax, make_olympuspr

RNG = np.random.default_rng(0)


@pytest.fixture
def numpy_eval():
    """Run `fun(*args)` compiled; its outputs (a value or a tuple) as a list of NumPy
    arrays."""

    def run(fun, *args):
        out = olympus.jit(fun)(*args)
        return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else [out])]

    return run


def out_aval(fun, *args):
    (aval,) = make_olympuspr(fun)(*args).out_avals
    return aval


# --- promotion: result dtype and weak type ----------------------------------------------------

B = np.ones(2, np.bool_)
I8, U8, I16, I32, U32 = (np.ones(2, t) for t in (np.int8, np.uint8, np.int16, np.int32,
                                                  np.uint32))
F16, F32 = np.ones(2, np.float16), np.ones(2, np.float32)
C64 = np.ones(2, np.complex64)


@pytest.mark.parametrize(
    "x, y, dtype, weak",
    [
        (B, B, "bool", False),
        (B, I8, "int8", False),
        (I8, U8, "int16", False),
        (U8, I16, "int16", False),
        (I32, U32, "int32", False),  # int64 in the lattice; canonicalized without x64
        (I8, F16, "float16", False),
        (I32, F16, "float16", False),
        (F16, F32, "float32", False),
        (F32, C64, "complex64", False),
        (I8, 1, "int8", False),
        (U8, 1, "uint8", False),
        (I8, 1.0, "float32", True),
        (F16, 1.0, "float16", False),
        (F16, 1j, "complex64", False),
        (B, 1, "int32", True),
        (B, True, "bool", False),
        (1, 1.0, "float32", True),
        (1, 1, "int32", True),
        (1.0, 1j, "complex64", True),
        (np.float32(1), 1, "float32", False),
        (np.int16(1), I8, "int16", False),
    ],
)
def test_binary_promotion(x, y, dtype, weak):
    aval = out_aval(lambda a, b: a + b, x, y)
    assert (aval.dtype.name, aval.weak_type) == (dtype, weak)
    aval = out_aval(lambda a, b: b * a, x, y)
    assert (aval.dtype.name, aval.weak_type) == (dtype, weak)


def test_bfloat16_and_float16_promote_to_float32():
    import ml_dtypes

    x = np.ones(2, ml_dtypes.bfloat16)
    assert out_aval(lambda a, b: a + b, x, F16).dtype == np.float32
    assert out_aval(lambda a: a * 2.0, x).dtype == np.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize(
    "fun, x, dtype",
    [
        (lambda a: a / 2, I8, "float32"),
        (lambda a: a / 2, F16, "float16"),
        (lambda a: a // 2, I8, "int8"),
        (lambda a: a % 2.0, I32, "float32"),
        (lambda a: a > 1, I8, "bool"),
        (lambda a: jnp.mean(a), I8, "float32"),
        (lambda a: jnp.sum(a), B, "int32"),
        (lambda a: jnp.sum(a), U8, "uint32"),
        (lambda a: jnp.prod(a), I16, "int32"),
        (lambda a: jnp.max(a), I8, "int8"),
        (lambda a: jnp.sum(a, dtype=np.float32), I32, "float32"),
        (lambda a: jnp.argmax(a), F16, "int32"),
        (lambda a: -a, U8, "uint8"),
        (lambda a: abs(a), I8, "int8"),
    ],
)
def test_result_dtypes(fun, x, dtype):
    assert out_aval(fun, x).dtype.name == dtype


# --- numerics against NumPy -------------------------------------------------------------------


def ints(*shape):
    return RNG.integers(-9, 10, size=shape).astype(np.int32)


def floats(*shape):
    return RNG.normal(size=shape).astype(np.float32)


@pytest.mark.parametrize("divisor", [3, -3, 1, -1, 7])
def test_integer_floor_divide_and_remainder(numpy_eval, divisor):
    x = np.arange(-10, 11, dtype=np.int32)
    fd, rem = numpy_eval(lambda a: (a // divisor, a % divisor), x)
    np.testing.assert_array_equal(fd, x // divisor)
    np.testing.assert_array_equal(rem, x % divisor)


def test_integer_floor_divide_and_remainder_by_array(numpy_eval):
    x, y = ints(40), ints(40)
    y[y == 0] = 5
    fd, rem = numpy_eval(lambda a, b: (a // b, a % b), x, y)
    np.testing.assert_array_equal(fd, x // y)
    np.testing.assert_array_equal(rem, x % y)


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint32"])
def test_integer_floor_divide_and_remainder_by_zero_match_jax(numpy_eval, dtype):
    """Issue 17: integer division by zero gives what JAX returns (recorded from reference
    JAX 0.10.2 in its own process): x // 0 is XLA's x / 0 (-1, or all ones unsigned) minus
    one where x != 0 for signed types, and x % 0 is 0; the same eagerly, under jit and in
    divmod."""
    signed = dtype != "uint32"
    x = np.array([-3, 0, 5] if signed else [3, 0, 5], dtype)
    zero = np.zeros((), dtype)
    want_fd = np.array([-2, -1, -2] if signed else [np.iinfo(dtype).max] * 3, dtype)
    fd, rem = numpy_eval(lambda a, z: (a // z, a % z), x, zero)
    np.testing.assert_array_equal(fd, want_fd)
    np.testing.assert_array_equal(rem, np.zeros(3, dtype))
    q, r = jnp.divmod(jnp.asarray(x), jnp.asarray(zero))
    np.testing.assert_array_equal(q, want_fd)
    np.testing.assert_array_equal(r, np.zeros(3, dtype))


def test_floor_divide_of_weak_values_is_weak():
    """Weakly typed operands give a weakly typed quotient, integer and float (JAX's)."""
    for out, want in ((0 // jnp.asarray(3), 0), (jnp.floor_divide(jnp.asarray(7), 2), 3),
                      (jnp.floor_divide(jnp.asarray(7.0), 2.0), 3.0)):
        assert out.weak_type and float(out) == want


def test_float_floor_divide_and_remainder(numpy_eval):
    x, y = floats(30) * 5, floats(30)
    fd, rem = numpy_eval(lambda a, b: (a // b, a % b), x, y)
    np.testing.assert_allclose(fd, x // y)
    np.testing.assert_allclose(rem, x % y, rtol=1e-5, atol=1e-6)


def test_unsigned_floor_divide(numpy_eval):
    x = np.arange(0, 20, dtype=np.uint8)
    (fd,) = numpy_eval(lambda a: a // 3, x)
    np.testing.assert_array_equal(fd, x // 3)


@pytest.mark.parametrize(
    "shapes",
    [((3,), (2, 3)), ((2, 1), (3,)), ((4, 1, 3), (2, 1)), ((), (2, 2)), ((1,), (5,)),
     ((2, 1, 1), (1, 3, 1), (1, 1, 4))],
)
def test_broadcasting(numpy_eval, shapes):
    xs = [floats(*s) for s in shapes]
    fun = (lambda *a: a[0] + a[1]) if len(xs) == 2 else (lambda a, b, c: a * b + c)
    (out,) = numpy_eval(fun, *xs)
    ref = xs[0] + xs[1] if len(xs) == 2 else xs[0] * xs[1] + xs[2]
    assert out.shape == np.broadcast_shapes(*shapes)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_broadcast_to_and_shapes():
    assert jnp.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                                         r"type=float32\[3\] and requested type=float32\[2,4\]"):
        make_olympuspr(lambda x: jnp.broadcast_to(x, (2, 4)))(F32.repeat(2)[:3])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "any", "all"])
def test_reductions(numpy_eval, name, axis, keepdims):
    x = floats(2, 3, 4)
    if name in ("any", "all"):
        x = (x > 0).astype(np.float32)
    (out,) = numpy_eval(lambda a: getattr(jnp, name)(a, axis=axis, keepdims=keepdims), x)
    ref = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert out.shape == ref.shape
    assert out.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, rtol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions(numpy_eval, name, axis):
    x = floats(3, 4)
    (out,) = numpy_eval(lambda a: getattr(jnp, name)(a, axis=axis), x)
    np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis))


def test_reduction_axis_errors():
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        make_olympuspr(lambda x: jnp.sum(x, axis=2))(floats(2, 3))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        make_olympuspr(lambda x: jnp.sum(x, axis=(0, -2)))(floats(2, 3))


def test_small_int_sum_does_not_overflow(numpy_eval):
    x = np.full(300, 100, np.int8)
    (out,) = numpy_eval(jnp.sum, x)
    assert out.dtype == np.int32 and out == 30000


@pytest.mark.parametrize(
    "sa, sb",
    [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((5, 2, 3), (5, 3, 4)),
     ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
     ((5, 2, 3), (3,)), ((3,), (5, 3, 2))],
)
def test_matmul(numpy_eval, sa, sb):
    a, b = floats(*sa), floats(*sb)
    (out,) = numpy_eval(jnp.matmul, a, b)
    ref = a @ b
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_matmul_errors():
    with pytest.raises(ValueError, match="matmul input operand 1 must have ndim at least 1, "
                                         "but it has ndim 0"):
        make_olympuspr(jnp.matmul)(floats(3), 1.0)
    with pytest.raises(ValueError, match=r"Incompatible shapes for matmul arguments: "
                                         r"\(2, 2, 3\) and \(3, 3, 4\)"):
        make_olympuspr(jnp.matmul)(floats(2, 2, 3), floats(3, 3, 4))
    with pytest.raises(TypeError, match="dot_general"):
        make_olympuspr(jnp.matmul)(floats(2, 3), floats(4, 5))


def test_where_clip_astype(numpy_eval):
    x = floats(10)
    w, c, t, b = numpy_eval(
        lambda a: (jnp.where(a > 0, a, -1), jnp.clip(a, -0.5, 0.5), a.astype(np.int32),
                   jnp.where(a.astype(np.int32), 1.0, 0.0)), x)
    np.testing.assert_array_equal(w, np.where(x > 0, x, -1))
    np.testing.assert_array_equal(c, np.clip(x, -0.5, 0.5))
    np.testing.assert_array_equal(t, x.astype(np.int32))
    np.testing.assert_array_equal(b, np.where(x.astype(np.int32), 1.0, 0.0))


def test_power(numpy_eval):
    x = floats(5)
    p2, p3, pf = numpy_eval(lambda a: (a ** 2, a ** 3, abs(a) ** 0.5), x)
    np.testing.assert_allclose(p2, x ** 2, rtol=1e-6)
    np.testing.assert_allclose(p3, x ** 3, rtol=1e-6)
    np.testing.assert_allclose(pf, np.abs(x) ** 0.5, rtol=1e-6)
    x = ints(5)
    (pi,) = numpy_eval(lambda a: a ** 3, x)
    assert pi.dtype == np.int32
    np.testing.assert_array_equal(pi, x ** 3)


def test_integer_array_exponent(numpy_eval):
    a, b = np.array([2, -3, 5], np.int32), np.array([3, 2, 0], np.int32)
    (out,) = numpy_eval(lambda x, y: x ** y, a, b)
    np.testing.assert_array_equal(out, a ** b)
    assert out.dtype == np.int32


# --- indexing ----------------------------------------------------------------------------------

X = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
A = np.array([[0, 3], [-1, 2]], np.int32)
STATIC_INDICES = [
    1, -1, (slice(None), 2), None, (Ellipsis, 0), (0, Ellipsis, 0), slice(None, None, -1),
    (slice(3, 0, -2), None, 1), (slice(None), slice(1, 4), slice(None, None, 2)),
    (slice(10, 20),), (slice(-2, None),), (None, Ellipsis, None), (1, 2, 3), (),
    (slice(1, 1),),
]
ARRAY_INDICES = [
    A, (A, 1), (1, slice(None), A), (slice(None), A), (A, slice(None), A), (A, None),
    (None, A, 2), (slice(1, 3), A, slice(None, None, 2)), (1, None, A), (A, A, A),
    (None, slice(None), None, A), ([0, 1, 1],), (np.array(2),), (A, Ellipsis),
]


@pytest.mark.parametrize("idx", STATIC_INDICES + ARRAY_INDICES, ids=repr)
def test_getitem_matches_numpy(numpy_eval, idx):
    (out,) = numpy_eval(lambda x: x[idx], X)
    ref = X[idx]
    assert out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("i", [0, 2, -1, -4])
@pytest.mark.parametrize(
    "fun",
    [lambda x, i: x[i], lambda x, i: x[i, 1:3], lambda x, i: x[::-1, i],
     lambda x, i: x[i, None], lambda x, i: x[2, :, i], lambda x, i: x[None, i],
     lambda x, i: x[i, ::2]],
    ids=["x[i]", "x[i,1:3]", "x[::-1,i]", "x[i,None]", "x[2,:,i]", "x[None,i]", "x[i,::2]"],
)
def test_getitem_traced_scalar_index(numpy_eval, fun, i):
    (out,) = numpy_eval(fun, X, np.int32(i))
    ref = fun(X, i)
    assert out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)


def test_getitem_traced_index_array(numpy_eval):
    i = np.array([3, -1, 0], np.int32)
    (out,) = numpy_eval(lambda x, i: x[:, i], X, i)
    np.testing.assert_array_equal(out, X[:, i])


def test_out_of_range_traced_index_is_clamped(numpy_eval):
    (out,) = numpy_eval(lambda x, i: x[i], np.arange(5, dtype=np.float32), np.int32(7))
    assert out == 4
    (out,) = numpy_eval(lambda x, i: x[i], np.arange(5, dtype=np.float32),
                        np.array([7, -9], np.int32))
    np.testing.assert_array_equal(out, [4, 0])


@pytest.mark.parametrize(
    "idx, exc, msg",
    [
        ((0, 0, 0, 0), IndexError, "Too many indices: array is 3-dimensional, but 4 were indexed"),
        ((Ellipsis, Ellipsis), IndexError, r"an index can only have a single ellipsis \('...'\)"),
        # JAX 0.10.2's TypeError, naming the NumPy index's own dtype.
        (np.array([0.5]), TypeError, "Indexer must have integer or boolean type, got indexer "
                                     "with type float64"),
    ],
)
def test_getitem_errors(idx, exc, msg):
    with pytest.raises(exc, match=msg):
        make_olympuspr(lambda x: x[idx])(X)


def test_static_out_of_range_index_clamps(numpy_eval):
    """Reads clamp, as in JAX (reference JAX 0.10.2: arange(5)[7] == 4, [-10] == 0)."""
    (a, b) = numpy_eval(lambda x: (x[4], x[0, -6]), X)
    np.testing.assert_array_equal(a, X[3])
    np.testing.assert_array_equal(b, X[0, 0])


def test_traced_boolean_index_is_an_error():
    with pytest.raises(IndexError, match="Array boolean indices must be concrete"):
        make_olympuspr(lambda x, m: x[m])(floats(3), np.ones(3, bool))


# --- shapes ------------------------------------------------------------------------------------


def test_reshape_transpose_squeeze_expand_dims(numpy_eval):
    x = floats(2, 3, 1)
    r, t, s, e, ra = numpy_eval(
        lambda a: (a.reshape(-1, 2), a.transpose(2, 0, 1), a.squeeze(), jnp.expand_dims(a, 1),
                   a.ravel()), x)
    np.testing.assert_array_equal(r, x.reshape(-1, 2))
    np.testing.assert_array_equal(t, x.transpose(2, 0, 1))
    np.testing.assert_array_equal(s, x.squeeze())
    assert e.shape == (2, 1, 3, 1)
    np.testing.assert_array_equal(ra, x.ravel())


def test_reshape_errors():
    with pytest.raises(TypeError, match=r"can only specify one unknown axis size with a `-1` "
                                        r"value, got \(-1, -1\)"):
        make_olympuspr(lambda a: a.reshape(-1, -1))(floats(4))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(4,\) \(size 4\) "
                                        r"into shape \(3, -1\)"):
        make_olympuspr(lambda a: a.reshape(3, -1))(floats(4))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out which has size "
                                         "not equal to one"):
        make_olympuspr(lambda a: a.squeeze(0))(floats(2, 1))


def test_weak_types_of_comparisons_predicates_rint_and_power_match_jax():
    """Found by the fuzzer (instruments/fuzz): the weak types JAX 0.10.2 gives (recorded in
    its own process). Elementwise results are weak exactly when every operand is, also when
    the dtype changes (comparisons, isfinite, isnan); rint of a weak int is a strong float;
    a float base with an integer-array exponent keeps the base's dtype, strong."""
    a, i = jnp.asarray(1.0), jnp.asarray(3)
    for out in (a < 2.0, jnp.less(a, a), jnp.equal(i, 3), lax.eq(a, a), jnp.isfinite(a),
                jnp.isnan(a)):
        assert out.dtype == np.bool_ and out.weak_type
    assert not jnp.isinf(a).weak_type and not (a < jnp.float32(2)).weak_type
    assert not jnp.rint(jnp.asarray(4)).weak_type and jnp.rint(jnp.asarray(4.5)).weak_type
    out = jnp.power(jnp.asarray(2.0), jnp.array([1, 2], jnp.uint16))
    assert out.dtype == np.float32 and not out.weak_type
    np.testing.assert_array_equal(out, [2.0, 4.0])
    assert jnp.power(jnp.array([2.0], jnp.float16), jnp.array([3])).dtype == np.float16


def test_integer_power_uses_six_exponent_bits_like_jax():
    """JAX's integer power reads the exponent's low six bits in two's complement (so
    3 ** -1 in int8 is 3 ** 63 = -85) and gives 0 ** y == 0 for y != 0 (recorded values)."""
    base = jnp.array([3, 2, 0, 5], jnp.int8)
    out = jnp.power(base, jnp.array([-1, 100, -128, 65], jnp.int8))
    np.testing.assert_array_equal(out, np.array([-85, 0, 0, 5], np.int8))
    out = jnp.power(jnp.array([1, -1, 2, 0]), jnp.array([-3, -3, -1, 0]))
    np.testing.assert_array_equal(out, [1, -1, 0, 1])
    np.testing.assert_array_equal(jnp.array([2], jnp.uint8) ** jnp.array([7], jnp.uint8), [128])
    np.testing.assert_array_equal(jnp.arange(4) ** jnp.array([0, 1, 2, 3]), [1, 1, 4, 27])
