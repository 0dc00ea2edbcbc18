"""`olympus.flatten_util.ravel_pytree`: values, dtype promotion, the unravel function's checks,
and use under jit, grad and vmap.

Expected values, dtypes, weak types and messages were recorded from reference JAX 0.10.2's
`jax.flatten_util.ravel_pytree` run on the same inputs in its own process; the values are
also what concatenating the raveled leaves by hand gives.
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.flatten_util import ravel_pytree


def check(x, expected, dtype, weak=False):
    assert isinstance(x, olympus.Array), type(x)
    assert x.dtype == np.dtype(dtype), (x.dtype, dtype)
    assert x.weak_type == weak, x.weak_type
    np.testing.assert_array_equal(np.asarray(x), np.asarray(expected, dtype))


def mixed_tree():
    return {"a": jnp.ones((2, 2)), "b": (jnp.arange(3), 2.0)}


def test_mixed_dtypes_promote_and_come_back():
    flat, unravel = ravel_pytree(mixed_tree())
    check(flat, [1, 1, 1, 1, 0, 1, 2, 2], np.float32)
    out = unravel(flat * 2)
    assert list(out) == ["a", "b"] and isinstance(out["b"], tuple)
    check(out["a"], [[2, 2], [2, 2]], np.float32)
    check(out["b"][0], [0, 2, 4], np.int32)
    check(out["b"][1], 4.0, np.float32)


def test_unravel_checks_dtype_then_size():
    flat, unravel = ravel_pytree(mixed_tree())
    with pytest.raises(TypeError) as info:
        unravel(flat.astype(jnp.int32))
    assert str(info.value) == (
        "unravel function given array of dtype int32, but expected dtype float32"
    )
    for bad, shape in ((flat[:3], "[3]"), (jnp.ones(20), "[20]"), (flat.reshape(1, -1), "[1, 8]")):
        with pytest.raises(ValueError) as info:
            unravel(bad)
        assert str(info.value) == (
            f"Sum of sizes 8 must be equal to dimension 0 of the operand shape {shape}"
        )


def test_one_dtype_unravel_keeps_its_input_dtype():
    flat, unravel = ravel_pytree([jnp.ones(2), jnp.zeros((1, 2))])
    check(flat, [1, 1, 0, 0], np.float32)
    out = unravel(flat)
    check(out[0], [1, 1], np.float32)
    check(out[1], [[0, 0]], np.float32)
    out = unravel(jnp.arange(4))  # no dtype check and no cast with a single leaf dtype
    check(out[0], [0, 1], np.int32)
    check(out[1], [[2, 3]], np.int32)
    for bad, shape in ((jnp.arange(5.0), "[5]"), (jnp.ones((2, 2)), "[2, 2]")):
        with pytest.raises(ValueError) as info:
            unravel(bad)
        assert str(info.value) == (
            f"Sum of sizes 4 must be equal to dimension 0 of the operand shape {shape}"
        )


@pytest.mark.parametrize("tree", [{}, [None, ()], None])
def test_no_leaves(tree):
    flat, unravel = ravel_pytree(tree)
    check(flat, np.zeros(0), np.float32)
    assert flat.shape == (0,)
    assert unravel(jnp.ones(3)) == tree  # JAX does not look at the input either


def test_python_scalars():
    flat, unravel = ravel_pytree((1, 2.0, True))
    check(flat, [1.0, 2.0, 1.0], np.float32)
    a, b, c = unravel(flat)
    check(a, 1, np.int32)
    check(b, 2.0, np.float32)
    check(c, True, np.bool_)

    flat, unravel = ravel_pytree((1, 2))  # one dtype: the weak type survives
    check(flat, [1, 2], np.int32, weak=True)
    a, b = unravel(flat)
    check(a, 1, np.int32, weak=True)
    check(b, 2, np.int32, weak=True)

    flat, _ = ravel_pytree(2.0)
    check(flat, [2.0], np.float32, weak=True)
    flat, unravel = ravel_pytree([2.0, jnp.ones(1, jnp.float16)])  # leaf dtypes, not values
    check(flat, [2.0, 1.0], np.float32)
    a, b = unravel(flat)
    check(a, 2.0, np.float32)
    check(b, [1.0], np.float16)


@pytest.mark.parametrize(
    "leaves,flat_dtype,values",
    [
        ([np.ones(2), np.float32(3)], np.float32, [1, 1, 3]),  # float64 is canonicalized
        ([jnp.ones(2, jnp.bfloat16), jnp.ones(1, jnp.float16)], np.float32, [1, 1, 1]),
        ([jnp.ones(2), jnp.ones(1, jnp.complex64)], np.complex64, [1, 1, 1]),
        ([jnp.ones(2, jnp.uint8), jnp.ones(1, jnp.int8)], np.int16, [1, 1, 1]),
        ([jnp.ones(2, bool), jnp.ones(1, jnp.int8)], np.int8, [1, 1, 1]),
        ([jnp.float32(3)], np.float32, [3]),
    ],
)
def test_promotion(leaves, flat_dtype, values):
    flat, unravel = ravel_pytree(leaves)
    check(flat, values, flat_dtype)
    out = unravel(flat)
    for x, leaf in zip(out, leaves):
        want = olympus.numpy.asarray(leaf).dtype
        assert x.dtype == want and x.shape == np.shape(leaf)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(leaf).astype(want))


def test_complex_back_to_real_keeps_the_real_part():
    flat, unravel = ravel_pytree([jnp.ones(2), jnp.ones(1, jnp.complex64)])
    re, cx = unravel(flat + 1j)
    check(re, [1, 1], np.float32)
    check(cx, [1 + 1j], np.complex64)


def test_unravel_accepts_numpy_input():
    flat, unravel = ravel_pytree(mixed_tree())
    for arr in (np.asarray(flat), np.asarray(flat, np.float64)):
        out = unravel(arr)
        check(out["a"], np.ones((2, 2)), np.float32)
        check(out["b"][0], [0, 1, 2], np.int32)


def test_unravel_functions_compare_by_what_they_do():
    _, u1 = ravel_pytree(mixed_tree())
    _, u2 = ravel_pytree(mixed_tree())
    _, u3 = ravel_pytree({"a": jnp.ones((2, 2)), "b": (jnp.arange(3.0), 2.0)})
    assert u1 == u2 and hash(u1) == hash(u2)
    assert u1 != u3
    calls = []

    def apply(flat, unravel):
        calls.append(1)
        return unravel(flat)["a"].sum()

    apply = olympus.jit(apply, static_argnums=1)
    flat = ravel_pytree(mixed_tree())[0]
    np.testing.assert_allclose(np.asarray(apply(flat, u1)), 4.0)
    np.testing.assert_allclose(np.asarray(apply(flat * 2, u2)), 8.0)
    assert len(calls) == 1  # an equal unravel function is the same static argument


def test_bad_leaves():
    with pytest.raises(TypeError, match="^Cannot determine dtype of <object object at "):
        ravel_pytree([object()])


def test_under_jit():
    out = olympus.jit(lambda t: ravel_pytree(t)[0])({"a": jnp.ones(2), "b": 3})
    check(out, [1, 1, 3], np.float32)
    flat, unravel = ravel_pytree(mixed_tree())
    out = olympus.jit(unravel)(flat)
    check(out["a"], np.ones((2, 2)), np.float32)
    check(out["b"][0], [0, 1, 2], np.int32)
    check(out["b"][1], 2.0, np.float32)


def test_under_grad():
    def loss(t):
        return jnp.sum(ravel_pytree(t)[0] ** 2)

    g = olympus.grad(loss)({"a": jnp.ones(2), "b": 3.0})
    np.testing.assert_array_equal(np.asarray(g["a"]), [2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(g["b"]), 6.0)
    assert g["a"].dtype == np.float32 and g["b"].dtype == np.float32

    # through unravel: d/dflat of sum(w * b) over the unraveled tree
    flat, unravel = ravel_pytree({"w": jnp.array([1.0, 2.0]), "b": jnp.float32(3.0)})
    g = olympus.grad(lambda v: jnp.sum(unravel(v)["w"] * unravel(v)["b"]))(flat)
    np.testing.assert_array_equal(np.asarray(g), [3.0, 3.0, 3.0])  # flat = [b, w0, w1]


def test_under_vmap():
    out = olympus.vmap(lambda t: ravel_pytree(t)[0])({"a": jnp.ones((3, 2)), "b": jnp.arange(3.0)})
    check(out, [[1, 1, 0], [1, 1, 1], [1, 1, 2]], np.float32)
    flat, unravel = ravel_pytree(mixed_tree())
    out = olympus.vmap(unravel)(jnp.stack([flat, flat + 1]))
    check(out["a"], [[[1, 1], [1, 1]], [[2, 2], [2, 2]]], np.float32)
    check(out["b"][0], [[0, 1, 2], [1, 2, 3]], np.int32)
    check(out["b"][1], [2, 3], np.float32)
