"""Op-by-op (eager) execution outside `jit`: values against NumPy across dtypes, the eager
executable cache, and the Array type's repr, indexing, operators, reductions and methods."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus._src import eager

DTYPES = {
    "float32": np.float32,
    "int32": np.int32,
    "bool": np.bool_,
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "uint8": np.uint8,
}
FLOATS = ("float32", "float16", "bfloat16")


def sample(name, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    dt = DTYPES[name]
    if name == "bool":
        return rng.random(shape) > 0.5
    if name == "uint8":
        return rng.integers(0, 256, shape).astype(dt)
    if name == "int32":
        return rng.integers(-50, 50, shape).astype(dt)
    return (rng.standard_normal(shape) * 4).astype(dt)


def assert_matches(out, expected, name=None):
    assert isinstance(out, olympus.Array), type(out)
    expected = np.asarray(expected)
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    assert out.shape == expected.shape
    got = np.asarray(out)
    if name in FLOATS:
        tol = {"float32": 1e-6, "float16": 1e-3, "bfloat16": 1e-2}[name]
        np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32),
                                   rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, expected)


# --- values across dtypes ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(DTYPES))
def test_round_trip_and_repr_dtype(name):
    a = sample(name)
    x = jnp.asarray(a)
    assert x.dtype == np.dtype(DTYPES[name])
    assert not x.weak_type
    np.testing.assert_array_equal(np.asarray(x), a)
    assert f"dtype={np.dtype(DTYPES[name]).name}" in repr(x)


@pytest.mark.parametrize("name", [n for n in DTYPES if n != "bool"])
def test_elementwise_arithmetic_matches_numpy(name):
    a, b = sample(name, seed=1), sample(name, seed=2)
    x, y = jnp.asarray(a), jnp.asarray(b)
    assert_matches(x + y, a + b, name)
    assert_matches(x * y, a * b, name)
    assert_matches(jnp.maximum(x, y), np.maximum(a, b), name)
    assert_matches(jnp.minimum(x, y), np.minimum(a, b), name)
    if name != "uint8":
        assert_matches(x - y, a - b, name)
        assert_matches(-x, -a, name)
        assert_matches(abs(x), np.abs(a), name)


def test_uint8_wraps_around_like_numpy():
    a = np.array([250, 3, 128], np.uint8)
    b = np.array([10, 5, 128], np.uint8)
    x, y = jnp.asarray(a), jnp.asarray(b)
    assert_matches(x + y, a + b)
    assert_matches(x - y, a - b)
    assert_matches(x * y, a * b)
    assert np.asarray(x + y).tolist() == [4, 8, 0]


@pytest.mark.parametrize("name", list(DTYPES))
def test_comparisons_match_numpy(name):
    a, b = sample(name, seed=3), sample(name, seed=4)
    x, y = jnp.asarray(a), jnp.asarray(b)
    assert_matches(x < y, a < b)
    assert_matches(x >= y, a >= b)
    assert_matches(x == y, a == b)
    assert_matches(x != x, np.zeros(a.shape, bool))


@pytest.mark.parametrize("name", FLOATS)
def test_transcendentals_match_numpy(name):
    a = np.abs(sample(name, seed=5)) + DTYPES[name](0.5)
    x = jnp.asarray(a)
    f32 = a.astype(np.float32)
    for jf, nf in ((jnp.exp, np.exp), (jnp.log, np.log), (jnp.sin, np.sin),
                   (jnp.sqrt, np.sqrt), (jnp.tanh, np.tanh)):
        out = jf(x)
        assert out.dtype == np.dtype(DTYPES[name])
        tol = {"float32": 2e-6, "float16": 2e-3, "bfloat16": 2e-2}[name]
        np.testing.assert_allclose(np.asarray(out).astype(np.float32), nf(f32).astype(
            DTYPES[name]).astype(np.float32), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["int32", "uint8"])
def test_integer_division_and_bitwise_match_numpy(name):
    a = sample(name, seed=6)
    b = sample(name, seed=7)
    b = np.where(b == 0, 1, b).astype(a.dtype)
    x, y = jnp.asarray(a), jnp.asarray(b)
    assert_matches(x // y, a // b)
    assert_matches(x % y, a % b)
    assert_matches(x & y, a & b)
    assert_matches(x | y, a | b)
    assert_matches(x ^ y, a ^ b)


def test_bool_logic_matches_numpy():
    a, b = sample("bool", seed=8), sample("bool", seed=9)
    x, y = jnp.asarray(a), jnp.asarray(b)
    assert_matches(x & y, a & b)
    assert_matches(x | y, a | b)
    assert_matches(x ^ y, a ^ b)
    assert_matches(~x, ~a)
    assert_matches(jnp.logical_not(x), np.logical_not(a))
    s = jnp.sum(x)
    assert s.dtype == np.int32 and int(s) == int(a.sum())


@pytest.mark.parametrize("name", list(DTYPES))
def test_reductions_match_numpy(name):
    a = sample(name, seed=10)
    x = jnp.asarray(a)
    assert_matches(x.max(axis=0), a.max(axis=0), name)
    assert_matches(jnp.min(x, axis=1), a.min(axis=1), name)
    assert_matches(x.argmax(axis=1), a.argmax(axis=1).astype(np.int32))
    if name == "bool":
        assert_matches(x.any(axis=0), a.any(axis=0))
        assert_matches(x.all(axis=1), a.all(axis=1))
    if name in FLOATS:
        np.testing.assert_allclose(np.asarray(x.sum(axis=0)).astype(np.float32),
                                   a.astype(np.float32).sum(axis=0), rtol=2e-2, atol=2e-1)
        assert x.sum().dtype == np.dtype(DTYPES[name])
    if name == "int32":
        assert_matches(x.sum(axis=0), a.sum(axis=0, dtype=np.int32))
    if name == "uint8":  # accumulates in uint32, as in JAX
        assert_matches(x.sum(axis=1), a.sum(axis=1, dtype=np.uint32))


@pytest.mark.parametrize("name", list(DTYPES))
def test_shape_ops_match_numpy(name):
    a = sample(name, shape=(2, 3, 4), seed=11)
    x = jnp.asarray(a)
    assert_matches(x.reshape(4, 6), a.reshape(4, 6), name)
    assert_matches(x.reshape((6, -1)), a.reshape(6, -1), name)
    assert_matches(x.transpose(2, 0, 1), a.transpose(2, 0, 1), name)
    assert_matches(x.T, a.T, name)
    assert_matches(jnp.concatenate([x, x], axis=1), np.concatenate([a, a], axis=1), name)
    assert_matches(jnp.stack([x[0], x[1]]), np.stack([a[0], a[1]]), name)
    assert_matches(x.astype(jnp.float32), a.astype(np.float32), "float32")
    assert_matches(jnp.where(x > x.mean() if name != "bool" else x, x, x[::-1]),
                   np.where(a > a.astype(np.float32).mean().astype(a.dtype) if name != "bool"
                            else a, a, a[::-1]), name)


# --- the eager executable cache ----------------------------------------------------------------


def _compiles(fn):
    before = eager.compile_count()
    out = fn()
    return out, eager.compile_count() - before


def test_eager_cache_compiles_once_per_primitive_params_and_avals():
    a = olympus.device_put(np.full((7, 13), 0.5, np.float32))
    b = olympus.device_put(np.full((7, 13), 2.0, np.float32))
    out, n = _compiles(lambda: jnp.sin(a))
    assert n == 1
    np.testing.assert_allclose(np.asarray(out), np.sin(np.full((7, 13), 0.5, np.float32)))
    out, n = _compiles(lambda: jnp.sin(b))  # same primitive, params and avals: cached
    assert n == 0
    np.testing.assert_allclose(np.asarray(out), np.sin(np.full((7, 13), 2.0, np.float32)))
    # New avals (shape, dtype) compile again, once.
    c = olympus.device_put(np.ones((13, 7), np.float32))
    _, n = _compiles(lambda: jnp.sin(c))
    assert n == 1
    _, n = _compiles(lambda: jnp.sin(c))
    assert n == 0
    d = olympus.device_put(np.ones((7, 13), np.float16))
    _, n = _compiles(lambda: jnp.sin(d))
    assert n == 1
    # New params: reduce_sum over axis 0 and over axis 1 are different executables.
    _, n = _compiles(lambda: a.sum(axis=0))
    assert n == 1
    _, n = _compiles(lambda: a.sum(axis=1))
    assert n == 1
    out, n = _compiles(lambda: b.sum(axis=0))
    assert n == 0
    np.testing.assert_allclose(np.asarray(out), np.full(13, 14.0))


def test_repeated_eager_expression_does_not_recompile():
    x = olympus.device_put(np.arange(11, dtype=np.float32))

    def expr():
        return (x * 2.0 + 1.0).max()

    first, _ = _compiles(expr)
    again, n = _compiles(expr)
    assert n == 0
    assert float(first) == float(again) == 21.0


# --- Array repr, conversion, indexing ----------------------------------------------------------


def test_array_repr_and_str():
    assert repr(jnp.array([1, 2, 3])) == "Array([1, 2, 3], dtype=int32)"
    assert repr(jnp.asarray(3)) == "Array(3, dtype=int32, weak_type=True)"
    assert repr(jnp.array([True, False])) == "Array([ True, False], dtype=bool)"
    assert repr(jnp.arange(3, dtype=jnp.bfloat16)) == "Array([0, 1, 2], dtype=bfloat16)"
    assert repr(jnp.zeros((2, 2))) == ("Array([[0., 0.],\n"
                                        "       [0., 0.]], dtype=float32)")
    assert str(jnp.arange(4).reshape(2, 2)) == "[[0 1]\n [2 3]]"


def test_conversions_to_python_and_numpy():
    x = jnp.arange(12.0).reshape(3, 4)
    assert float(x[1, 2]) == 6.0
    assert int(x[2, 3]) == 11
    assert bool(x[0, 1]) is True and bool(x[0, 0]) is False
    assert x[1, 1].item() == 5.0
    assert len(x) == 3
    assert [r.shape for r in x] == [(4,)] * 3
    assert x.tolist() == np.arange(12.0).reshape(3, 4).tolist()
    n = np.asarray(x)
    assert isinstance(n, np.ndarray) and n.dtype == np.float32
    assert (x.shape, x.ndim, x.size, x.dtype) == ((3, 4), 2, 12, np.float32)


def test_basic_indexing_matches_numpy():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = jnp.asarray(a)
    for idx in [1, -1, (2, 3), (-1, -2), slice(1, None), (slice(1, None), slice(None, None, 2)),
                (slice(None), 1), (Ellipsis, 0), (None,), (None, 1), (slice(None, None, -1),),
                (slice(3, 0, -2), slice(None, None, 3)), (1, Ellipsis, None)]:
        assert_matches(x[idx], a[idx], "float32")
    assert x[None].shape == (1, 4, 6)
    assert_matches(x[1:, ::2], a[1:, ::2], "float32")
    assert_matches(x[..., 0], a[..., 0], "float32")


def test_integer_array_indexing_matches_numpy():
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = jnp.asarray(a)
    assert_matches(x[np.array([2, 0, 3])], a[np.array([2, 0, 3])])
    assert_matches(x[jnp.array([3, 3, 1])], a[np.array([3, 3, 1])])
    assert_matches(x[np.array([0, 3]), np.array([5, 1])], a[np.array([0, 3]), np.array([5, 1])])
    assert_matches(x[:, np.array([1, 4])], a[:, np.array([1, 4])])
    assert_matches(x[np.array([[0, 1], [2, 3]])], a[np.array([[0, 1], [2, 3]])])
    assert_matches(x[jnp.array([-1, -4])], a[np.array([-1, -4])])


def test_out_of_bounds_static_index_clamps_like_jax():
    # Reference JAX 0.10.2: jnp.arange(3)[5] == 2 and [-5] == 0 (reads clamp; the
    # staged form is a dynamic_slice, as JAX lowers it).
    assert int(jnp.arange(3)[5]) == 2
    assert int(jnp.arange(3)[-5]) == 0
    closed = olympus.make_olympuspr(lambda x: x[5])(np.arange(3, dtype=np.int32))
    assert [e.primitive.name for e in closed.eqns][-2:] == ["dynamic_slice", "squeeze"]


def test_boolean_mask_indexing_outside_jit():
    a = np.arange(10, dtype=np.int32)
    x = jnp.asarray(a)
    assert_matches(x[x > 5], a[a > 5])
    assert_matches(x[a % 2 == 0], a[a % 2 == 0])
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert_matches(jnp.asarray(m)[np.array([True, False, True])],
                   m[np.array([True, False, True])], "float32")


def test_item_assignment_raises_type_error_pointing_to_at():
    x = jnp.zeros(3)
    with pytest.raises(TypeError) as info:
        x[0] = 1
    msg = str(info.value)
    assert "immutable" in msg
    assert ".at[" in msg
    np.testing.assert_array_equal(np.asarray(x), [0.0, 0.0, 0.0])


# --- operators and methods ---------------------------------------------------------------------


def test_matmul_operator_matches_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    x, y = jnp.asarray(a), jnp.asarray(b)
    assert_matches(x @ y, a @ b, "float32")
    assert_matches(x @ y[:, 0], a @ b[:, 0], "float32")
    assert_matches(y[:, 1] @ y, b[:, 1] @ b, "float32")
    assert_matches(a @ y, a @ b, "float32")  # numpy on the left defers to the Array
    bi = np.arange(6, dtype=np.int32).reshape(3, 2)
    assert_matches(jnp.asarray(bi).T @ jnp.asarray(bi), bi.T @ bi)


def test_operators_with_python_scalars_and_reflected_forms():
    a = np.array([-3.0, -0.5, 2.0, 7.0], np.float32)
    x = jnp.asarray(a)
    assert_matches(2 * x, 2 * a, "float32")
    assert_matches(1 - x, 1 - a, "float32")
    assert_matches(10 / x, 10 / a, "float32")
    assert_matches(x ** 2, a ** 2, "float32")
    assert_matches(2 ** x, (2 ** a).astype(np.float32), "float32")
    assert_matches(x // 2, a // 2, "float32")
    assert_matches(x % 2, a % 2, "float32")
    assert_matches(-x, -a, "float32")
    ai = np.array([-7, -1, 0, 6], np.int32)
    xi = jnp.asarray(ai)
    assert_matches(xi // 3, ai // 3)
    assert_matches(xi % 3, ai % 3)
    assert_matches(xi / 2, (ai / 2).astype(np.float32), "float32")
    assert_matches(xi << 2, ai << 2)
    assert_matches(xi >> 1, ai >> 1)


def test_methods_match_numpy():
    a = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 2
    x = jnp.asarray(a)
    assert_matches(x.sum(axis=0), a.sum(axis=0), "float32")
    assert_matches(x.sum(), a.sum(), "float32")
    assert_matches(x.mean(axis=1), a.mean(axis=1), "float32")
    assert_matches(x.prod(axis=1), a.prod(axis=1), "float32")
    assert_matches(x.max(), a.max(), "float32")
    assert_matches(x.min(axis=0, keepdims=True), a.min(axis=0, keepdims=True), "float32")
    assert_matches(x.argmin(axis=0), a.argmin(axis=0).astype(np.int32))
    assert_matches(x.clip(-1, 1), a.clip(-1, 1), "float32")
    assert_matches(x.ravel(), a.ravel(), "float32")
    assert_matches(x.flatten(), a.flatten(), "float32")
    assert_matches(x[None].squeeze(0), a, "float32")
    assert_matches(x.swapaxes(0, 1), a.swapaxes(0, 1), "float32")
    assert_matches(x.astype(jnp.int32), a.astype(np.int32))
    assert_matches(x.dot(x.T), a.dot(a.T), "float32")
    assert x.block_until_ready() is x


def test_more_array_methods():
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    x = jnp.asarray(a)
    assert_matches(x.var(axis=0), a.var(axis=0), "float32")
    assert_matches(x.std(), a.std(), "float32")
    assert_matches(x.cumsum(axis=1), a.cumsum(axis=1), "float32")
    assert_matches(x.round(), a.round(), "float32")
    updated = a.copy()
    updated[0, 1] = 9.0
    assert_matches(x.at[0, 1].set(9.0), updated, "float32")
    assert_matches(x, a, "float32")  # .at[] returns a new array; x is unchanged


def test_eager_results_are_arrays_with_weak_types():
    out = jnp.asarray(2) * 3
    assert repr(out) == "Array(6, dtype=int32, weak_type=True)"
    out = jnp.arange(3) * 1.5
    assert out.weak_type and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), [0.0, 1.5, 3.0])
    out = jnp.ones(2, jnp.float16) * 3.0
    assert out.dtype == np.float16 and not out.weak_type


def test_eager_and_jit_agree():
    def f(x):
        return jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), x * 2).sum(axis=0) / 3

    a = np.random.default_rng(12).standard_normal((5, 4)).astype(np.float32)
    eager_out = f(jnp.asarray(a))
    jit_out = olympus.jit(f)(jnp.asarray(a))
    expected = np.where(a > 0, np.sqrt(np.abs(a)), a * 2).sum(axis=0) / 3
    np.testing.assert_allclose(np.asarray(eager_out), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jit_out), expected, rtol=1e-6)
