"""Regression tests for every divergence the fuzzer found, each with its minimal program.

Expected values are reference JAX 0.10.2's, obtained by running the same program with
`jax` names in JAX's own process (never in this one). Each test is a strict xfail while the
divergence is open: when a fix lands the test passes, strict xfail reports that as a
failure, and the mark comes off together with the matching entry of `known.KNOWN`.
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax


def _xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


def assert_typed(x, want, dtype, weak: bool = False):
    """Values, dtype and weak type of an Olympus array."""
    assert x.dtype == np.dtype(dtype), x.dtype
    assert bool(x.weak_type) is weak, f"weak_type {x.weak_type}, JAX {weak}"
    np.testing.assert_array_equal(np.asarray(x), np.asarray(want, dtype=x.dtype))


# ---------------------------------------------------------------- integer division


@_xfail("issue 17: integer x % 0 gives x (XLA's rem) where JAX gives 0")
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int8"])
def test_integer_remainder_by_zero_is_zero(dtype):
    x = jnp.array([3, 0, 5], dtype)
    assert_typed(x % jnp.zeros((), dtype), [0, 0, 0], dtype)
    assert_typed(jnp.remainder(x, jnp.zeros((), dtype)), [0, 0, 0], dtype)


@_xfail("issue 17: integer x // 0 gives -1 for x > 0 where JAX gives -2 (0 // 0 is -1)")
def test_integer_floor_divide_by_zero_matches_jax():
    x = jnp.array([-3, 0, 5], jnp.int32)
    assert_typed(x // 0, [-2, -1, -2], "int32")


@_xfail("fuzz: the // operator on floats is floor(x / y) where JAX's (and jnp.floor_divide's)"
        " is NumPy's floor division: 1 // 0.1 is 10 instead of 9, 6 // -inf -0 instead of -1")
def test_floor_divide_operator_on_floats_matches_jax():
    one, tenth = jnp.array([1.0], jnp.float32), jnp.array([0.1], jnp.float32)
    assert_typed(one // tenth, [9.0], "float32")
    x = jnp.array([6.0, -6.0], jnp.float32)
    assert_typed(x // jnp.array([-np.inf, np.inf], jnp.float32), [-1.0, -1.0], "float32")
    assert_typed(jnp.array([6], jnp.uint8) // jnp.array([-np.inf], jnp.float32), [-1.0],
                 "float32")


@_xfail("fuzz: the ** operator rejects an integer-array exponent (jnp.power accepts it)")
def test_pow_operator_with_integer_array_exponent():
    assert_typed(jnp.arange(4) ** jnp.array([0, 1, 2, 3]), [1, 1, 4, 27], "int32")


@_xfail("fuzz: integer power with an array exponent: JAX uses the exponent's low 6 bits "
        "(3 ** -1 == 3 ** 63 in int8, i.e. -85) and gives 0 for 0 ** y, y != 0")
def test_integer_power_with_array_exponent_matches_jax():
    base = jnp.array([3, 2, 0, 5], jnp.int8)
    exp = jnp.array([-1, 100, -128, 65], jnp.int8)
    assert_typed(jnp.power(base, exp), [-85, 0, 0, 5], "int8")


# ---------------------------------------------------------------- weak types


@_xfail("fuzz: a comparison of weakly typed values is a weakly typed bool in JAX")
def test_comparison_of_weak_values_is_weak():
    a, b = jnp.asarray(1.0), jnp.asarray(2.0)
    assert_typed(a < 2.0, True, "bool", weak=True)
    assert_typed(jnp.less(a, b), True, "bool", weak=True)
    assert_typed(jnp.equal(a, 1), True, "bool", weak=True)
    assert_typed(lax.eq(a, b), False, "bool", weak=True)


@_xfail("fuzz: isfinite / isnan of a weakly typed value are weakly typed in JAX (isinf "
        "is not)")
def test_float_predicates_of_weak_values_are_weak():
    a = jnp.asarray(1.0)
    assert_typed(jnp.isfinite(a), True, "bool", weak=True)
    assert_typed(jnp.isnan(a), False, "bool", weak=True)
    assert_typed(jnp.isinf(a), False, "bool", weak=False)


@_xfail("fuzz: floor_divide of weakly typed values is weakly typed in JAX")
def test_floor_divide_of_weak_values_is_weak():
    assert_typed(0 // jnp.asarray(3), 0, "int32", weak=True)
    assert_typed(jnp.floor_divide(jnp.asarray(7), 2), 3, "int32", weak=True)
    assert_typed(jnp.floor_divide(jnp.asarray(7.0), 2.0), 3.0, "float32", weak=True)


@_xfail("fuzz: relu of a weakly typed value is weakly typed in JAX")
def test_relu_of_a_weak_value_is_weak():
    assert_typed(olympus.nn.relu(jnp.asarray(3.0)), 3.0, "float32", weak=True)


@_xfail("fuzz: rint of a weakly typed int is a strong float32 in JAX (of a weak float, weak)")
def test_rint_of_a_weak_int_is_strong():
    assert_typed(jnp.rint(jnp.asarray(4)), 4.0, "float32", weak=False)
    assert_typed(jnp.rint(jnp.asarray(4.5)), 4.0, "float32", weak=True)


@_xfail("fuzz: power of a weak float base and an integer-array exponent is a strong float32 "
        "in JAX")
def test_power_of_weak_float_base_and_int_exponent_is_strong():
    out = jnp.power(jnp.asarray(2.0), jnp.array([1, 2], jnp.uint16))
    assert_typed(out, [2.0, 4.0], "float32", weak=False)


@_xfail("fuzz: fori_loop over a Python-int carry returns a weakly typed int in JAX")
def test_fori_loop_keeps_a_weak_carry_weak():
    assert_typed(lax.fori_loop(0, 3, lambda i, c: c + i, 0), 3, "int32", weak=True)


# ---------------------------------------------------------------- loops


@_xfail("issue 17: a fori_loop carry started from a Python int and updated to float "
        "raises where JAX promotes the weakly typed initial value")
def test_fori_loop_promotes_a_weak_initial_carry():
    assert_typed(lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0), 1.5, "float32")


@_xfail("issue 17: the same in while_loop")
def test_while_loop_promotes_a_weak_initial_carry():
    assert_typed(lax.while_loop(lambda c: c < 2, lambda c: c + 0.5, 0), 2.0, "float32")


@_xfail("issue 17: the same in scan (a weak int32 carry meeting int8 xs becomes int8)")
def test_scan_promotes_a_weak_initial_carry():
    out = lax.scan(lambda c, x: (c * x, c), jnp.asarray(1), jnp.array([2, 3], jnp.int8))[0]
    assert_typed(out, 6, "int8")


# ---------------------------------------------------------------- indexing


@_xfail("issue 17: a static out-of-range integer index raises IndexError where JAX clamps")
def test_static_out_of_range_index_clamps():
    x = jnp.arange(3)
    assert_typed(x[5], 2, "int32")
    assert_typed(x[-5], 0, "int32")
    assert_typed(olympus.jit(lambda x: x[5])(x), 2, "int32")
    assert_typed(olympus.jit(lambda x: x[-5])(x), 0, "int32")


@_xfail("fuzz: a boolean mask over an array with a zero-size dimension raises TypeError "
        "(gather slice_sizes out of range) where JAX returns an empty array")
def test_boolean_mask_over_an_empty_array():
    x = jnp.zeros((3, 0, 3))
    assert x[np.zeros((3, 0, 3), dtype=bool)].shape == (0,)
    assert jnp.zeros((2, 0))[np.zeros((2, 0), dtype=bool)].shape == (0,)


@_xfail("fuzz: lax.dynamic_slice clamps a negative start to 0 where JAX counts it from "
        "the end first (start -1 of 5 is 4, clamped to 3)")
def test_dynamic_slice_negative_start_counts_from_the_end():
    assert_typed(lax.dynamic_slice(jnp.arange(5), (-1,), (2,)), [3, 4], "int32")
    assert_typed(lax.dynamic_slice(jnp.array([0, 4], jnp.uint8), (-1,), (1,)), [4], "uint8")
    f = olympus.jit(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))
    assert_typed(f(jnp.arange(5), -2), [3, 4], "int32")


@_xfail("fuzz: the same in lax.dynamic_update_slice")
def test_dynamic_update_slice_negative_start_counts_from_the_end():
    out = lax.dynamic_update_slice(jnp.zeros(5), jnp.ones(2), (-1,))
    assert_typed(out, [0, 0, 0, 1, 1], "float32")


# ---------------------------------------------------------------- reductions


@_xfail("fuzz: jnp.mean with an integer dtype= goes through floats (rounding large sums) "
        "where JAX sums in the integer dtype and divides with lax.div")
def test_integer_mean_is_an_integer_division():
    x = jnp.array([1073741824, -2], jnp.int32)
    assert_typed(jnp.mean(x, dtype=jnp.int32), 536870911, "int32")
    assert_typed(jnp.mean(jnp.array([3.7, 4.9]), dtype=jnp.int32), 3, "int32")


@_xfail("issue 17: var/std with ddof == n give inf, and of an empty array with ddof >= 1 "
        "-0.0, where JAX gives nan")
def test_var_and_std_with_ddof_at_least_n_are_nan():
    assert np.isnan(float(jnp.std(jnp.arange(3.0), ddof=3)))
    assert np.isnan(float(jnp.std(jnp.arange(3.0), ddof=4)))
    assert np.isnan(float(jnp.var(jnp.ones((0,)), ddof=1)))
    assert np.isnan(float(jnp.var(jnp.ones((1,)), ddof=1)))
