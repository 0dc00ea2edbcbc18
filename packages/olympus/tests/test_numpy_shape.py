"""olympus.numpy shape manipulation against NumPy: reshaping/transposing, joining and
splitting, tiling/repeating, flipping/rolling/rotating, every pad mode, insert/delete/
append/resize, diagonals and differences; errors, jit (traced shifts and repeats) and
gradients."""

from __future__ import annotations

import numpy as np
import pytest
from _numpy_reference import check

import olympus
import olympus.numpy as jnp

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
XI = np.arange(12, dtype=np.int32).reshape(3, 4)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.reshape(x, (4, -1)),
    lambda m, x: m.reshape(x, (4, 6), order="F"),
    lambda m, x: m.ravel(x, order="F"),
    lambda m, x: m.transpose(x),
    lambda m, x: m.transpose(x, (1, 0, 2)),
    lambda m, x: m.permute_dims(x, (2, 0, 1)),
    lambda m, x: m.matrix_transpose(x),
    lambda m, x: m.moveaxis(x, (0, 1), (2, 0)),
    lambda m, x: m.moveaxis(x, -1, 0),
    lambda m, x: m.rollaxis(x, 2, 1),
    lambda m, x: m.swapaxes(x, 0, 2),
    lambda m, x: m.expand_dims(x, (0, -1)),
    lambda m, x: m.squeeze(x[:, :1], 1),
    lambda m, x: m.squeeze(x[:1, :1]),
    lambda m, x: m.broadcast_to(x[0, 0], (3, 4)),
    lambda m, x: m.broadcast_arrays(x[0], x[:, :1, :1]),
    lambda m, x: m.atleast_1d(x[0, 0, 0]),
    lambda m, x: m.atleast_2d(x[0, 0]),
    lambda m, x: m.atleast_3d(x[0]),
    lambda m, x: m.atleast_3d(x[0, 0, 0], x[0, 0]),
])
def test_reshaping(fn):
    check(fn(jnp, X), fn(np, X))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.concatenate([x, x], axis=1),
    lambda m, x: m.concatenate([x, x[:, :1]], axis=-2),
    lambda m, x: m.concatenate([x, x[0]], axis=None),
    lambda m, x: m.concatenate([x[0], x[1].astype(np.int32)], axis=0),
    lambda m, x: m.concat([x, x]),
    lambda m, x: m.stack([x, x], axis=-1),
    lambda m, x: m.stack([x[0], x[1]], axis=1),
    lambda m, x: m.hstack([x, x]),
    lambda m, x: m.hstack([x[0, 0], x[0, 1]]),
    lambda m, x: m.vstack([x[0, 0], x[0, 1]]),
    lambda m, x: m.dstack([x[0], x[0]]),
    lambda m, x: m.column_stack([x[0, 0], x[0, 1]]),
    lambda m, x: m.block([[x[0], x[0]], [x[1], x[1]]]),
    lambda m, x: m.block([x[0, 0], x[0, 1]]),
    lambda m, x: m.split(x, 2),
    lambda m, x: m.split(x, [1, 3], axis=2),
    lambda m, x: m.split(x, [-1, 10], axis=1),
    lambda m, x: m.array_split(x, 3, axis=2),
    lambda m, x: m.hsplit(x, 3),
    lambda m, x: m.vsplit(x, 2),
    lambda m, x: m.dsplit(x, [1]),
    lambda m, x: m.unstack(x, axis=1),
])
def test_joining_and_splitting(fn):
    check(fn(jnp, X), fn(np, X))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.tile(x[0], (2, 1, 3)),
    lambda m, x: m.tile(x[0, 0], 2),
    lambda m, x: m.tile(x, 0),
    lambda m, x: m.repeat(x, 2, axis=1),
    lambda m, x: m.repeat(x[0], 2),
    lambda m, x: m.repeat(x[0], np.array([1, 0, 2]), axis=0),
    lambda m, x: m.repeat(x[0, 0], 0),
    lambda m, x: m.flip(x),
    lambda m, x: m.flip(x, (0, 2)),
    lambda m, x: m.fliplr(x),
    lambda m, x: m.flipud(x),
    lambda m, x: m.roll(x, 2),
    lambda m, x: m.roll(x, -7, axis=2),
    lambda m, x: m.roll(x, (1, -1), axis=(1, 2)),
    lambda m, x: m.rot90(x),
    lambda m, x: m.rot90(x, 2, axes=(1, 2)),
    lambda m, x: m.rot90(x, -1, axes=(2, 0)),
    lambda m, x: m.rot90(x, 3, axes=(1, 2)),
])
def test_tiling_flipping_rolling(fn):
    check(fn(jnp, X), fn(np, X))


@pytest.mark.parametrize("mode,kw,width", [
    ("constant", {}, 2),
    ("constant", {"constant_values": 7}, ((1, 2), (3, 0), (0, 5))),
    ("constant", {"constant_values": ((1, 2), (3, 4), (5, 6))}, ((1, 2), (3, 0), (0, 5))),
    ("edge", {}, ((1, 2), (3, 0), (0, 5))), ("edge", {}, ((6, 1),)),
    ("wrap", {}, ((1, 2), (3, 0), (0, 5))), ("wrap", {}, ((6, 1),)),
    ("reflect", {}, ((1, 2), (3, 0), (0, 5))), ("reflect", {}, ((6, 1),)),
    ("symmetric", {}, ((1, 2), (3, 0), (0, 5))), ("symmetric", {}, ((6, 1),)),
    ("reflect", {"reflect_type": "odd"}, ((6, 1),)),
    ("symmetric", {"reflect_type": "odd"}, ((1, 2), (3, 0), (0, 5))),
    ("linear_ramp", {}, 2), ("linear_ramp", {"end_values": (-1, 5)}, ((6, 1),)),
    ("maximum", {}, 2), ("minimum", {"stat_length": 2}, ((1, 2), (3, 0), (0, 5))),
    ("mean", {}, ((6, 1),)),
    ("median", {"stat_length": ((1, 2), (2, 1), (3, 3))}, ((1, 2), (3, 0), (0, 5))),
])
def test_pad_modes(mode, kw, width):
    x = X if mode not in ("mean", "median", "linear_ramp") else X ** 1.3
    check(jnp.pad(x, width, mode=mode, **kw), np.pad(x, width, mode=mode, **kw),
          rtol=1e-6, atol=1e-5)


def test_pad_integers_and_empty_mode():
    check(jnp.pad(XI, ((2, 3), (1, 1)), mode="linear_ramp", end_values=((-5, 7), (1, 2))),
          np.pad(XI, ((2, 3), (1, 1)), mode="linear_ramp", end_values=((-5, 7), (1, 2))))
    check(jnp.pad(XI, 2, mode="mean"), np.pad(XI, 2, mode="mean"))
    check(jnp.pad(XI, 1, mode="reflect", reflect_type="odd"),
          np.pad(XI, 1, mode="reflect", reflect_type="odd"))
    assert jnp.pad(XI, 1, mode="empty").shape == (5, 6)
    check(jnp.pad(np.float32(3.0), 2), np.pad(np.float32(3.0), 2))
    check(jnp.pad(np.zeros((0, 2), np.float32), 1), np.pad(np.zeros((0, 2), np.float32), 1))
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        jnp.pad(np.zeros((0, 2), np.float32), 1, mode="edge")
    with pytest.raises(ValueError, match="index can't contain negative values"):
        jnp.pad(XI, -1)
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'foo'"):
        jnp.pad(XI, 1, mode="foo")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jnp.pad(XI, 1, mode="edge", constant_values=3)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.append(x[0], x[1], axis=0),
    lambda m, x: m.append(x[0], np.float32(5.0)),
    lambda m, x: m.insert(x[0], 1, np.float32(9.0), axis=1),
    lambda m, x: m.insert(x[0], np.array([0, 2, 2]), np.array([7., 8., 9.], np.float32), 1),
    lambda m, x: m.insert(x[0], 2, np.array([[1.], [2.], [3.]], np.float32), axis=1),
    lambda m, x: m.insert(x[0, 0], slice(0, 4, 2), np.float32(9.0)),
    lambda m, x: m.insert(x[0], 3, np.array([1.0, 2.0], np.float32)),
    lambda m, x: m.insert(x[0], -1, np.float32(0.0), axis=0),
    lambda m, x: m.delete(x, np.array([0, 2]), axis=2),
    lambda m, x: m.delete(x, slice(1, None), axis=1),
    lambda m, x: m.delete(x, -1),
    lambda m, x: m.delete(x[0], np.array([True, False, True]), axis=0),
    lambda m, x: m.resize(x[0], (5, 5)),
    lambda m, x: m.resize(x[0], 4),
    lambda m, x: m.trim_zeros(np.array([0, 0, 1, 2, 0], np.float32)),
    lambda m, x: m.trim_zeros(np.array([0, 0, 1, 2, 0], np.float32), "f"),
    lambda m, x: m.diagonal(x, 1, 1, 2),
    lambda m, x: m.diagonal(x, -1, 2, 1),
    lambda m, x: m.diagonal(x[0], 5),
    lambda m, x: m.trace(x, 1, 1, 2),
    lambda m, x: m.trace(x[0]),
    lambda m, x: m.diff(x, 2, axis=2),
    lambda m, x: m.diff(x, axis=1, prepend=np.float32(0.0), append=x[:, :1]),
    lambda m, x: m.diff(x > 5, axis=2),
    lambda m, x: m.ediff1d(x[0], to_end=np.array([1., 2.], np.float32),
                           to_begin=np.float32(0.0)),
    lambda m, x: m.trapezoid(x, axis=1),
    lambda m, x: m.trapezoid(x[0, 0], x=np.array([0, 1, 3, 6.], np.float32)),
])
def test_insert_delete_and_friends(fn):
    check(fn(jnp, X), fn(np, X), rtol=1e-6)


def test_integer_and_bool_inputs_keep_their_dtype():
    check(jnp.tile(XI, 2), np.tile(XI, 2))
    check(jnp.roll(XI > 4, 3), np.roll(XI > 4, 3))
    check(jnp.pad(XI.astype(np.int8), 1, mode="edge"), np.pad(XI.astype(np.int8), 1,
                                                              mode="edge"))
    check(jnp.concatenate([XI, XI.astype(np.uint8)]), np.concatenate([XI, XI.astype(
        np.uint8)]))
    check(jnp.stack([np.int8(1), np.uint8(2)]), np.array([1, 2], np.int16))


def test_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(2, 3\) \(size 6\) "
                                        r"into shape \(4,\)"):
        jnp.reshape(x, (4,))
    with pytest.raises(TypeError, match="can only specify one unknown axis size"):
        jnp.reshape(x, (-1, -1))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        jnp.reshape(x, (2.5, 2))
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 2"):
        jnp.moveaxis(x, 3, 0)
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        jnp.squeeze(x, 0)
    with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                                         r"type=float32\[2,3\] and requested type=float32\[3,3\]"):
        jnp.broadcast_to(x, (3, 3))
    with pytest.raises(ValueError, match="Need at least one array to concatenate"):
        jnp.concatenate([])
    with pytest.raises(ValueError, match="Zero-dimensional arrays cannot be concatenated"):
        jnp.concatenate([jnp.float32(1), jnp.float32(2)])
    with pytest.raises(TypeError, match="Cannot concatenate arrays with shapes that differ"):
        jnp.concatenate([x, jnp.ones((2, 2))], axis=0)
    with pytest.raises(ValueError, match="All input arrays must have the same shape"):
        jnp.stack([x, jnp.ones((3, 2))])
    with pytest.raises(ValueError, match="array split does not result in an equal division: rest is 1"):
        jnp.split(x, 2, axis=1)
    with pytest.raises(ValueError, match="vsplit only works on arrays of 2 or more"):
        jnp.vsplit(jnp.ones(4), 2)
    with pytest.raises(ValueError, match="Axes must be different"):
        jnp.rot90(x, axes=(0, 0))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        jnp.delete(jnp.ones(3), 5)
    with pytest.raises(ValueError, match="repeats may not contain negative values"):
        jnp.repeat(x, -1)
    with pytest.raises(ValueError, match="diag input must be 1d or 2d"):
        jnp.diag(jnp.ones((2, 2, 2)))
    # JAX 0.10.2's wording.
    with pytest.raises(ValueError, match="Argument to olympus.numpy.tril must be at least 2D"):
        jnp.tril(jnp.ones(3))


def test_under_jit_with_traced_shift_and_repeats():
    @olympus.jit
    def f(x, shift, reps):
        return (jnp.roll(x, shift, axis=2), jnp.roll(x, shift),
                jnp.repeat(x[0, 0], reps, total_repeat_length=7),
                jnp.pad(x, 1, mode="wrap"), jnp.tile(x[0], 2), jnp.diagonal(x, 1, 1, 2),
                jnp.insert(x[0], 1, 0.0, axis=1), jnp.delete(x, 1, axis=2))

    got = f(X, 3, np.array([2, 0, 1, 4]))
    want = (np.roll(X, 3, axis=2), np.roll(X, 3), np.repeat(X[0, 0], [2, 0, 1, 4]),
            np.pad(X, 1, mode="wrap"), np.tile(X[0], 2), np.diagonal(X, 1, 1, 2),
            np.insert(X[0], 1, 0.0, axis=1), np.delete(X, 1, axis=2))
    for g, w in zip(got, want):
        check(g, w)
    # total_repeat_length shorter / longer than the sum of the repeats: truncate / pad.
    check(olympus.jit(lambda r: jnp.repeat(jnp.arange(3), r, total_repeat_length=4))(
        np.array([1, 2, 3])), np.array([0, 1, 1, 2]))
    check(olympus.jit(lambda r: jnp.repeat(jnp.arange(3), r, total_repeat_length=5))(
        np.array([1, 1, 1])), np.array([0, 1, 2, 2, 2]))
    with pytest.raises(olympus.errors.ConcretizationTypeError, match="total number of repeats "
                                                                     "must be static"):
        olympus.jit(lambda r: jnp.repeat(jnp.arange(3), r))(np.array([1, 1, 1]))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        olympus.jit(lambda n: jnp.reshape(jnp.arange(6), (n, 3)))(2)


GRAD_CASES = [
    (lambda m, v: m.pad(v, 1, mode="reflect"), None),
    (lambda m, v: m.roll(v, 1, axis=1), None),
    (lambda m, v: m.repeat(v, 2, axis=0), None),
    (lambda m, v: m.tile(v, (1, 2)), None),
    (lambda m, v: m.concatenate([v, 2 * v]), None),
    (lambda m, v: m.rot90(v), None),
    (lambda m, v: m.pad(v, 2, mode="linear_ramp", end_values=1.0), None),
    (lambda m, v: m.diagonal(v, 1), None),
    (lambda m, v: m.insert(v, 1, np.float32(5.0), axis=1), None),
]


@pytest.mark.parametrize("k", range(len(GRAD_CASES)))
def test_gradients(k):
    """These functions are affine, so the gradient of <w, f(x)> is the same everywhere: a
    central difference of the NumPy version is exact up to rounding."""
    fn, _ = GRAD_CASES[k]
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    n = np.asarray(fn(np, x)).size
    w = np.arange(1.0, n + 1.0, dtype=np.float32).reshape(np.shape(fn(np, x)))
    g = olympus.grad(lambda v: jnp.sum(fn(jnp, v) * w))(x)
    num = np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = 1.0
        num[i] = (np.sum(fn(np, x + d) * w, dtype=np.float64)
                  - np.sum(fn(np, x - d) * w, dtype=np.float64)) / 2
    check(g, num.astype(np.float32), rtol=1e-5)


def test_tile_with_a_float_count_raises():
    """Issue 17: a float count is refused (it passed, truncated), with reference JAX
    0.10.2's type and message (which names the tiled shape), recorded in its own process."""
    import re

    for a, reps, got in ((jnp.ones(2), 2.5, "(np.float64(5.0),)"),
                         (jnp.ones((2, 3)), 1.5, "(np.float64(2.0), np.float64(4.5))"),
                         (jnp.ones((2, 3)), (2, 1.0), "(np.float64(4.0), np.float64(3.0))"),
                         (jnp.ones(2), np.float32(2), "(np.float64(4.0),)")):
        with pytest.raises(TypeError, match=re.escape(
                f"Shapes must be 1D sequences of concrete values of integer type, got {got}.")):
            jnp.tile(a, reps)
    np.testing.assert_array_equal(jnp.tile(jnp.arange(2), np.array([2])), [0, 1, 0, 1])
    np.testing.assert_array_equal(jnp.tile(jnp.arange(2), True), [0, 1])


def test_bad_axes_raise_jax_0_10_2s_transpose_error():
    """Messages recorded from reference JAX 0.10.2: repeated or missing axes in transpose,
    moveaxis and diagonal are one TypeError naming the permutation they would make."""
    x = jnp.arange(6.0).reshape(2, 3)
    msg = r"transpose permutation isn't a permutation of operand dimensions, got permutation "
    with pytest.raises(TypeError, match=msg + r"\(0, 0\) for operand shape \(2, 3\)\."):
        jnp.transpose(x, (0, 0))
    with pytest.raises(TypeError, match=msg + r"\(0,\) for operand shape \(2, 3\)\."):
        jnp.transpose(x, (0,))
    with pytest.raises(TypeError, match=msg + r"\(0, 0, 1\) for operand shape \(2, 3\)\."):
        jnp.moveaxis(x, (0, 0), (1, 0))
    with pytest.raises(TypeError, match=msg + r"\(0, 0, 1\) for operand shape \(2, 2\)\."):
        jnp.diagonal(jnp.ones((2, 2)), axis1=0, axis2=-2)
    assert jnp.moveaxis(x, 0, 1).shape == (3, 2)
    np.testing.assert_array_equal(jnp.diagonal(x), [0.0, 4.0])


def test_lax_shape_errors_are_jax_0_10_2s_value_errors():
    """JAX 0.10.2 raises ValueError (messages recorded from it) where the shape rules would
    raise TypeError."""
    from olympus import lax

    with pytest.raises(ValueError, match=r"Invalid axis 2 for operand shape \(3,\)"):
        lax.argmax(jnp.ones(3), 2, jnp.int32)
    with pytest.raises(ValueError, match=r"Length of slice indices must match number of "
                                         r"operand dimensions \(2 vs \(5,\)\)"):
        lax.dynamic_slice(jnp.arange(5.0), (0, 0), (2,))
    with pytest.raises(ValueError, match="interior padding in padding_config must be "
                                         "nonnegative"):
        lax.pad(jnp.ones(3), 0.0, ((0, 0, -1),))
    with pytest.raises(ValueError, match=r"Dimension size after padding is not at least 0, "
                                         r"got result shape \(-2,\)"):
        lax.pad(jnp.ones(3), 0.0, ((-5, 0, 0),))
    np.testing.assert_array_equal(lax.pad(jnp.ones(3), 0.0, ((-1, 1, 1),)), [0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match=r"num_keys=0 must be between 1 and len\(operand\)=2"):
        lax.sort((jnp.ones(3), jnp.ones(3)), num_keys=0)
    with pytest.raises(ValueError, match=r"cannot select an axis to squeeze out which has "
                                         r"size not equal to one, got shape=\(2, 3\)"):
        lax.squeeze(jnp.ones((2, 3)), (0,))


def test_trim_zeros_of_nd_arrays_as_jax_does():
    """JAX 0.10.2 trims every axis (or those of `axis`) of an N-D array; shapes and the
    error recorded from reference JAX (its docstring's examples)."""
    x = jnp.zeros((4, 5)).at[1:3, 1:4].set(1)
    assert jnp.trim_zeros(x).shape == (2, 3)
    np.testing.assert_array_equal(jnp.trim_zeros(x), np.ones((2, 3), np.float32))
    assert jnp.trim_zeros(x, axis=(0,)).shape == (2, 5)
    assert jnp.trim_zeros(x, "b", axis=-1).shape == (4, 4)
    np.testing.assert_array_equal(jnp.trim_zeros(x, trim="f"),
                                  np.pad(np.ones((2, 3), np.float32), ((0, 1), (0, 1))))
    assert jnp.trim_zeros(jnp.zeros((2, 3))).shape == (0, 0)
    assert jnp.trim_zeros(x, trim="").shape == (4, 5)
    assert jnp.trim_zeros(jnp.array(0.0)).shape == ()
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.trim_zeros(x, axis=2)
    with pytest.raises(olympus.errors.ConcretizationTypeError,
                       match="Error arose in the `filt` argument of trim_zeros()"):
        olympus.jit(jnp.trim_zeros)(x)
