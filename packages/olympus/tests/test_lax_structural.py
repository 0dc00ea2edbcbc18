"""lax's structural primitives of their own (tile, split, stack, unstack,
optimization_barrier, mulhi) and the single-primitive conveniences around them
(collapse, broadcast_like, broadcast_to_rank, reciprocal, batch_matmul, the ``*_in_dim``
family, index_take, full/full_like/empty/dtype): values against NumPy, printed IR and
errors as reference JAX 0.10.2 gives them (recorded in the tests that say so), gradients
against finite differences, vmap against a loop, and jit against eager."""

from __future__ import annotations

import numpy as np
import pytest
from _transform_checks import assert_same, check_grads, check_vmap, x64

import olympus
import olympus.numpy as jnp
from olympus import lax

rng = np.random.default_rng(7)


def _pr(f, *args):
    return str(olympus.make_olympuspr(f)(*args))


# --- tile, split, stack, unstack ----------------------------------------------------------


def test_structural_values_match_numpy():
    x = rng.standard_normal((2, 3)).astype(np.float32)
    assert_same(lax.tile(x, (2, 3)), np.tile(x, (2, 3)))
    parts = lax.split(x, (1, 0, 2), axis=1)
    for got, want in zip(parts, np.split(x, [1, 1], axis=1), strict=True):
        assert_same(got, want)
    assert_same(lax.stack([x, 2 * x], axis=-1), np.stack([x, 2 * x], axis=-1))
    got = lax.unstack(x, axis=1)
    assert isinstance(got, tuple) and len(got) == 3
    for i, g in enumerate(got):
        assert_same(g, x[:, i])


def test_structural_printed_as_jax():
    """Printed olympusprs recorded from reference JAX 0.10.2's make_jaxpr."""
    x = jnp.arange(6.0).reshape(2, 3)
    assert _pr(lambda x: lax.tile(x, (2, 1)), x) == (
        "{ lambda ; a:f32[2,3]. let b:f32[4,3] = tile[reps=(2, 1)] a in (b,) }")
    assert _pr(lambda x: lax.split(x, (1, 2), axis=1), x) == (
        "{ lambda ; a:f32[2,3]. let\n    b:f32[2,1] c:f32[2,2] = split[axis=1 sizes=(1, 2)] a"
        "\n  in (b, c) }")
    assert _pr(lambda x: lax.stack([x, x], axis=1), x) == (
        "{ lambda ; a:f32[2,3]. let b:f32[2,2,3] = stack[axis=1] a a in (b,) }")
    assert _pr(lambda x: lax.unstack(x, axis=1), x) == (
        "{ lambda ; a:f32[2,3]. let\n    b:f32[2] c:f32[2] d:f32[2] = unstack[axis=1] a\n"
        "  in (b, c, d) }")
    assert _pr(lambda x: lax.optimization_barrier((x, 1.0)), x) == (
        "{ lambda ; a:f32[2,3]. let\n    b:f32[2,3] c:f32[] = optimization_barrier a 1.0:f32[]"
        "\n  in (b, c) }")
    assert _pr(lambda a, b: lax.mulhi(a, b), jnp.uint32(3), jnp.uint32(5)) == (
        "{ lambda ; a:u32[] b:u32[]. let c:u32[] = mulhi a b in (c,) }")


@pytest.mark.parametrize("call, exc, msg", [
    (lambda x: lax.tile(x, (2,)), TypeError,
     "reps length must be equal to the ndim of x, got len(reps)=1 and x.ndim=2."),
    (lambda x: lax.split(x, (1, 1), axis=1), ValueError,
     "Sum of sizes 2 must be equal to dimension 1 of the operand shape [2, 3]"),
    (lambda x: lax.split(x, (-1, 4), axis=1), ValueError,
     "Sizes passed to split must be nonnegative, got [-1, 4]"),
    (lambda x: lax.stack([x, x[0]]), ValueError,
     "Cannot stack arrays with different numbers of dimensions: got (2, 3), (3,)."),
    (lambda x: lax.stack([x, x.astype(jnp.int32)]), TypeError,
     "lax.stack requires arguments to have the same dtypes, got float32, int32."),
    (lambda x: lax.unstack(x[0, 0]), ValueError,
     "unstack requires arrays with rank > 0, however a scalar array of shape () was passed."),
])
def test_structural_errors_as_jax(call, exc, msg):
    """Messages recorded from reference JAX 0.10.2."""
    with pytest.raises(exc) as e:
        call(jnp.ones((2, 3)))
    assert str(e.value) == msg


def test_structural_gradients_against_finite_differences():
    with x64():
        x = rng.standard_normal((2, 3))
        check_grads(lambda x: lax.tile(x, (2, 3)) ** 2, [x])
        check_grads(lambda x: [p ** 3 for p in lax.split(x, (1, 2), axis=1)], [x])
        check_grads(lambda x, y: lax.stack([x * y, y], axis=1), [x, x + 1])
        check_grads(lambda x: [u ** 2 for u in lax.unstack(x, axis=1)], [x])
        check_grads(lambda x: lax.optimization_barrier((x * x, x))[0] * x, [x])


def test_structural_gradient_by_hand():
    # d/dx of sum(tile^2) + sum(split^3) + sum(stack(x, 2x)^2) + sum(unstack^3)
    # + sum(barrier(x)^2) = 12x + 3x^2 + 10x + 3x^2 + 2x
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def f(x):
        return ((lax.tile(x, (2, 3)) ** 2).sum()
                + sum((p ** 3).sum() for p in lax.split(x, (1, 2), axis=1))
                + (lax.stack([x, 2 * x], 1) ** 2).sum()
                + sum((u ** 3).sum() for u in lax.unstack(x, 1))
                + (lax.optimization_barrier(x) ** 2).sum())

    np.testing.assert_allclose(olympus.grad(f)(x), 24 * x + 6 * x ** 2, rtol=1e-6)


def test_structural_vmap_against_loop():
    xs = rng.standard_normal((3, 2, 4)).astype(np.float32)
    check_vmap(lambda x: lax.tile(x, (2, 1)), [xs])
    check_vmap(lambda x: lax.split(x, (3, 1), axis=1), [xs])
    check_vmap(lambda x: lax.split(x, (1, 2), axis=0), [xs], in_axes=1)
    check_vmap(lambda x, y: lax.stack([x, y], axis=1), [xs, xs[0]], in_axes=(0, None))
    check_vmap(lambda x: lax.unstack(x, axis=0), [xs], in_axes=2)
    check_vmap(lambda x, y: lax.optimization_barrier((x, y)), [xs, xs[0]], in_axes=(0, None))
    check_vmap(lambda x, y: lax.mulhi(x, y),
               [np.arange(12, dtype=np.uint32).reshape(3, 4) * 2 ** 29,
                np.uint32(7) * np.ones(4, np.uint32)], in_axes=(0, None))


def test_structural_jit_matches_eager():
    x = rng.standard_normal((2, 3)).astype(np.float32)

    def f(x):
        a, b = lax.split(x, (2, 1), axis=1)
        return lax.tile(a, (1, 2)), lax.stack(lax.unstack(b, 0)), lax.optimization_barrier(x)

    for got, want in zip(olympus.jit(f)(x), f(x), strict=True):
        assert_same(got, want)


def test_optimization_barrier_keeps_pytree_and_blocks_nothing_observable():
    x = jnp.arange(3.0)
    out = lax.optimization_barrier({"a": x, "b": (x + 1, 2.0)})
    assert set(out) == {"a", "b"}
    assert_same(out["b"][0], np.arange(3.0, dtype=np.float32) + 1)
    # JAX's docstring example: the barrier prevents CSE, not the value.
    f = olympus.jit(lambda x: lax.optimization_barrier(lax.sin(x)) + lax.sin(x))
    assert float(f(0.0)) == 0.0
    assert "optimization_barrier" in olympus.jit(lambda x: lax.optimization_barrier(x)).lower(
        1.0).as_text()


def test_mulhi_values():
    """High halves of double-width products, signed and unsigned (recorded from reference
    JAX 0.10.2, and checked here against Python's integers)."""
    a = np.array([-5, 2 ** 31 - 1, -2 ** 31], np.int32)
    b = np.array([7, 2 ** 31 - 1, 3], np.int32)
    want = [(int(x) * int(y)) >> 32 for x, y in zip(a, b, strict=True)]
    assert want == [-1, 1073741823, -2]
    assert_same(lax.mulhi(a, b), np.array(want, np.int32))
    assert int(lax.mulhi(jnp.uint8(200), jnp.uint8(200))) == 156
    assert int(lax.mulhi(jnp.uint32(0xFFFFFFFF), jnp.uint32(0xFFFFFFFF))) == 0xFFFFFFFE
    with pytest.raises(TypeError, match="mulhi does not accept dtype float32"):
        lax.mulhi(jnp.float32(1), jnp.float32(2))


def test_mulhi_64_bit():
    with x64():
        a = np.array([2 ** 63 - 1, -3, 12345678901234], np.int64)
        b = np.array([2 ** 62 + 5, 2 ** 40, -98765432109], np.int64)
        want = np.array([(int(x) * int(y)) >> 64 for x, y in zip(a, b, strict=True)], np.int64)
        assert_same(lax.mulhi(a, b), want)
        u = np.array([2 ** 64 - 1, 2 ** 33 + 1], np.uint64)
        want_u = np.array([(int(x) * int(x)) >> 64 for x in u], np.uint64)
        assert_same(lax.mulhi(u, u), want_u)


# --- single-primitive conveniences ---------------------------------------------------------


def test_shape_conveniences():
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    assert_same(lax.collapse(x, 0, 2), x.reshape(6, 4))
    assert_same(lax.collapse(x, 1), x.reshape(2, 12))
    assert_same(lax.collapse(x, -2, None), x.reshape(2, 12))
    with pytest.raises(ValueError, match=r"Invalid dimension range passed to collapse: "
                                         r"\(2, 3, 4\)\[2:1\]"):
        lax.collapse(x, 2, 1)
    assert_same(lax.broadcast_to_rank(x[0, 0], 3), x[0, 0].reshape(1, 1, 4))
    assert_same(lax.broadcast_like(x[0], x), np.broadcast_to(x[0], x.shape))
    assert_same(lax.reciprocal(np.float32(4)), np.float32(0.25))
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    # float32 products of O(1) terms: an absolute bound, since an entry may cancel to ~0.
    np.testing.assert_allclose(lax.batch_matmul(a, b), a.astype(np.float64) @ b,
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Arguments to batch_matmul must be at least 2D, "
                                         "got 1, 1"):
        lax.batch_matmul(jnp.ones(2), jnp.ones(2))
    with pytest.raises(ValueError, match="must have same ndim, got 3, 2"):
        lax.batch_matmul(jnp.ones((1, 2, 2)), jnp.ones((2, 2)))


def test_in_dim_family():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    assert_same(lax.slice_in_dim(x, 1, None, axis=1), x[:, 1:])
    assert_same(lax.slice_in_dim(x, -3, -1, 2, axis=1), x[:, -3:-1:2])
    assert_same(lax.index_in_dim(x, -1, keepdims=False), x[-1])
    assert_same(lax.index_in_dim(x, 2, axis=1), x[:, 2:3])
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        lax.index_in_dim(x, 5)
    assert_same(lax.dynamic_slice_in_dim(x, jnp.int32(1), 2, 1), x[:, 1:3])
    assert_same(lax.dynamic_slice_in_dim(x, -2, 2, 1), x[:, 2:4])
    assert_same(lax.dynamic_index_in_dim(x, -1, 0, False), x[-1])
    assert_same(lax.dynamic_index_in_dim(x, jnp.int32(1), 1), x[:, 1:2])
    want = x.copy()
    want[:, 1:3] = 0
    assert_same(lax.dynamic_update_slice_in_dim(x, np.zeros((3, 2), np.float32), 1, 1), want)
    want = x.copy()
    want[1] = -1
    assert_same(lax.dynamic_update_index_in_dim(x, -np.ones(4, np.float32), 1, 0), want)
    assert_same(lax.dynamic_update_index_in_dim(x, -np.ones((1, 4), np.float32), -2, 0), want)
    f = olympus.jit(lambda x, i: lax.dynamic_index_in_dim(x, i, 1, keepdims=False))
    for i in range(-4, 4):
        assert_same(f(x, i), x[:, i])
    check_vmap(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, 0),
               [np.stack([x, x + 1]), np.array([0, 1], np.int32)])


def test_in_dim_gradients():
    with x64():
        x = rng.standard_normal((3, 4))
        check_grads(lambda x: lax.dynamic_slice_in_dim(x, 1, 2, 1) ** 2, [x])
        check_grads(lambda x, u: lax.dynamic_update_index_in_dim(x, u, 1, 0) ** 2, [x, x[0]])
        check_grads(lambda x: lax.slice_in_dim(x, 0, 3, 2, 1) ** 2, [x])


def test_index_take():
    """Recorded from reference JAX 0.10.2: indices are taken modulo their axis's size."""
    src = np.arange(12).reshape(3, 4).astype(np.int32)
    got = lax.index_take(src, (jnp.array([0, 2]), jnp.array([1, 3])), (0, 1))
    assert_same(got, np.array([1, 11], np.int32))
    got = lax.index_take(src, (jnp.array([-1, 4]),), (0,))
    assert_same(got, src[[2, 1]])


def test_full_and_friends():
    """dtypes and weak types recorded from reference JAX 0.10.2."""
    cases = [
        (lax.full((2,), 3), np.int32, True),
        (lax.full((2,), 3.0, jnp.int32), np.int32, False),
        (lax.full_like(jnp.ones(2), 2), np.float32, False),
        (lax.full_like(np.ones(2, np.int64), 2), np.int32, False),
        (lax.full_like(1, 2.0), np.int32, True),
        (lax.empty((2,), jnp.float32), np.float32, False),
    ]
    for got, dt, weak in cases:
        assert got.dtype == dt and got.weak_type == weak
    assert_same(lax.full((2, 2), np.float32(1.5)), np.full((2, 2), 1.5, np.float32))
    assert_same(lax.full_like(np.zeros((2, 3), np.float32), 7, shape=(3,)),
                np.full((3,), 7, np.float32))
    with pytest.raises(TypeError, match=r"full must be called with scalar fill_value, "
                                        r"got fill_value.shape \(2,\)."):
        lax.full((2,), jnp.ones(2))
    assert _pr(lambda x: lax.full((2,), x), 1.0) == (
        "{ lambda ; a:f32[]. let b:f32[2] = broadcast_in_dim a in (b,) }")
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int8(1)) == np.int8
    assert lax.dtype(jnp.ones(2, jnp.bfloat16)) == jnp.bfloat16
    with pytest.raises(ValueError, match="Invalid argument to dtype: None."):
        lax.dtype(None)


def test_slice_outside_a_trace_is_a_dynamic_slice_as_in_jax():
    """JAX evaluates an unstrided ``lax.slice`` outside a trace as a ``dynamic_slice``: a
    negative start clamps (JAX returns the whole array here) and an oversized slice gets
    dynamic_slice's words. Under jit the slice rule's checks apply. Recorded from JAX 0.10.2."""
    x = jnp.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(lax.slice(jnp.ones(3), (-1,), (2,)), np.ones(3))
    np.testing.assert_array_equal(lax.slice(x, (1, 0), (3, 2)), [[4, 5], [8, 9]])
    np.testing.assert_array_equal(lax.slice(x, (0, 0), (3, 4), (1, 2)), [[0, 2], [4, 6],
                                                                          [8, 10]])
    with pytest.raises(TypeError) as e:
        lax.slice(jnp.ones(3), (0,), (5,))
    assert str(e.value) == ("slice slice_sizes must be less than or equal to operand shape, "
                            "got slice_sizes (np.int64(5),) for operand shape (3,).")
    with pytest.raises(TypeError) as e:
        olympus.jit(lambda v: lax.slice(v, (-1, 0), (2, 2)))(x)
    assert str(e.value) == ("slice start_indices must have every element be nonnegative, "
                            "got (-1, 0).")
    with pytest.raises(TypeError) as e:
        olympus.jit(lambda v: lax.slice(v, (0, 0), (2, 5)))(x)
    assert str(e.value) == ("slice limit_indices must be less than or equal to operand "
                            "shape, got limit_indices (2, 5) for operand shape (3, 4).")
    with pytest.raises(TypeError) as e:
        olympus.jit(lambda v: lax.slice(v, (2, 0), (1, 2)))(x)
    assert str(e.value) == ("slice limit_indices must be greater than or equal to "
                            "start_indices, got start_indices (2, 0) and limit_indices (1, 2).")
    with pytest.raises(TypeError) as e:
        lax.dynamic_slice(jnp.arange(5.0), (0,), (6,))
    assert str(e.value) == ("slice slice_sizes must be less than or equal to operand shape, "
                            "got slice_sizes (6,) for operand shape (5,).")


def test_broadcast_in_dim_dimensions_may_transpose():
    """As JAX 0.10.2 (the example of its `broadcast_in_dim` docstring): the
    broadcast_dimensions need not increase, so one broadcast also transposes. Values
    against NumPy; the gradient by finite differences and the VJP/JVP identity (JAX's own
    transpose rule fails here with a cotangent type error; Olympus's permutes back)."""
    arr = np.arange(3).reshape(3, 1)
    out = lax.broadcast_in_dim(arr, (2, 3, 4), broadcast_dimensions=(1, 0))
    np.testing.assert_array_equal(out, np.broadcast_to(arr[None].transpose(), (2, 3, 4)))
    x = np.arange(6.0).reshape(3, 2)
    out = lax.broadcast_in_dim(x, (2, 4, 3), broadcast_dimensions=(2, 0))
    np.testing.assert_array_equal(out, np.broadcast_to(x.T[:, None, :], (2, 4, 3)))
    with x64():
        check_grads(lambda a: lax.broadcast_in_dim(a, (2, 4, 3), broadcast_dimensions=(2, 0)),
                    [x])
        check_grads(lambda a: lax.broadcast_in_dim(a, (2, 3, 4), broadcast_dimensions=(1, 0)),
                    [arr.astype(np.float64)])
    check_vmap(lambda a: lax.broadcast_in_dim(a, (2, 4, 3), broadcast_dimensions=(2, 0)),
               [np.stack([x, x + 1]).astype(np.float32)])
    with pytest.raises(TypeError, match="broadcast_dimensions"):
        lax.broadcast_in_dim(x, (2, 4, 3), broadcast_dimensions=(0, 0))


def test_expand_dims_binds_broadcast_in_dim_as_jax():
    """Texts and messages recorded from reference JAX 0.10.2."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    text = str(olympus.make_olympuspr(lambda a: lax.expand_dims(a, (-1, 1)))(x))
    assert "b:f32[2,1,3,1] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a" in text
    np.testing.assert_array_equal(lax.expand_dims(x, (-1, 1)), x[:, None, :, None])
    g = olympus.grad(lambda a: lax.expand_dims(a, (0,)).sum())(x)
    np.testing.assert_array_equal(g, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"^repeated axis in lax.expand_dims: \(0, 0\)$"):
        lax.expand_dims(x, (0, 0))
    with pytest.raises(ValueError, match=r"^repeated axis in lax.expand_dims: \[0, 0\]$"):
        lax.expand_dims(x, (0, -4))
    with pytest.raises(ValueError, match="^axis 5 is out of bounds for array of dimension 3$"):
        lax.expand_dims(x, (5,))


def test_select_n_and_clamp_errors_are_jaxs():
    """Recorded from reference JAX 0.10.2."""
    f = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"^select `which` must be scalar or have the same "
                       r"shape as cases, got `which` shape \(1, 3\) but case shape \(2, 3\)\.$"):
        lax.select_n(np.ones((1, 3), bool), f, f)
    with pytest.raises(TypeError, match=r"^select `which` must be boolean or integer type, "
                       "got float32.$"):
        lax.select_n(f, f, f)
    with pytest.raises(ValueError, match=r"^select_n\(\) must have at least one case$"):
        lax.select_n(np.ones((2, 3), bool))
    with pytest.raises(TypeError, match=r"^clamp requires min.shape == operand.shape or "
                       r"min.shape == \(\), got min.shape=\(3,\), operand.shape=\(2, 3\)\.$"):
        lax.clamp(np.ones(3, np.float32), f, 1.0)
    with pytest.raises(TypeError, match="^lax.clamp requires arguments to have the same "
                       "dtypes, got int32, float32, float32.$"):
        lax.clamp(np.int32(0), f, 1.0)
    # An integer predicate of any width picks among the cases.
    which = np.array([0, 2, 1], np.uint8)
    cases = [np.full(3, v, np.float32) for v in (0, 1, 2)]
    np.testing.assert_array_equal(lax.select_n(which, *cases), [0.0, 2.0, 1.0])
