"""Divergences the fuzzer has found and that are still open.

Each entry names the regression test that pins it (`test_fuzz_regressions.py`, marked
``xfail(strict=True)``) and says which mismatches it explains. A program whose first
mismatch in some mode is explained by an entry counts as "known" instead of failing the
fuzz run. When a fix lands, its regression test starts passing, strict xfail turns that
into a failure, and the mark and the entry here are removed together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import value_types as vt
from .check import Mismatch
from .programs import Program

LOOPS = ("scan", "fori_loop", "while_loop")


@dataclass(frozen=True)
class Known:
    id: str
    regression: str  # test function in test_fuzz_regressions.py
    what: str
    matches: Callable[[Program, Mismatch], bool]


def _step(prog: Program, m: Mismatch):
    return prog.steps[m.step] if m.step is not None else None


def _int_result(prog: Program, m: Mismatch) -> bool:
    s = _step(prog, m)
    return s is not None and vt.kind(s.result.key) in "iu"


def _float_result(prog: Program, m: Mismatch) -> bool:
    s = _step(prog, m)
    return s is not None and vt.kind(s.result.key) == "f"


def _zero_divisor(prog: Program, m: Mismatch) -> bool:
    s = _step(prog, m)
    return s is not None and bool(np.any(np.asarray(s.args[1].ref) == 0))


def _is(kind: str, ops, error: str | None = None, text: str = ""):
    """A mismatch of `kind` in one of `ops` (with that error type / detail text)."""

    def match(prog: Program, m: Mismatch) -> bool:
        return (m.kind == kind and m.op in ops and (error is None or m.error == error)
                and text in m.detail)

    return match


def _weak_only(ops, got_weak: bool):
    """A type mismatch in `ops` that differs from JAX's only in the weak type."""

    def match(prog: Program, m: Mismatch) -> bool:
        if m.kind != "type" or m.op not in ops:
            return False
        got, want = m.detail.split(", JAX gives ")
        got = got.removeprefix("got ")
        return got.endswith("w") == got_weak and got.rstrip("w") == want.rstrip("w")

    return match


def _both(*preds):
    return lambda prog, m: all(p(prog, m) for p in preds)


COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
               "eq_op", "lt_op", "lax.eq", "lax.lt")

KNOWN: tuple[Known, ...] = (
    Known("int-remainder-by-zero", "test_integer_remainder_by_zero_is_zero",
          "integer x % 0 is x, JAX 0",
          _both(_is("value", ("remainder", "mod_op")), _int_result, _zero_divisor)),
    Known("int-floor-divide-by-zero", "test_integer_floor_divide_by_zero_matches_jax",
          "integer x // 0 is -1 for x > 0, JAX -2",
          _both(_is("value", ("floor_divide", "floordiv_op")), _int_result, _zero_divisor)),
    Known("floor-divide-operator-floats", "test_floor_divide_operator_on_floats_matches_jax",
          "the // operator on floats is floor(x / y)",
          _both(_is("value", ("floordiv_op",)), _float_result)),
    Known("pow-operator-int-array", "test_pow_operator_with_integer_array_exponent",
          "** rejects an integer-array exponent",
          _is("error", ("pow_op",), "TypeError", "integer powers")),
    Known("int-power-array-exponent", "test_integer_power_with_array_exponent_matches_jax",
          "integer power with an array exponent differs from JAX's six-bit rule",
          _both(_is("value", ("power", "pow_op")), _int_result)),
    Known("weak-comparison", "test_comparison_of_weak_values_is_weak",
          "comparisons of weak values are strong bools", _weak_only(COMPARISONS, False)),
    Known("weak-float-predicate", "test_float_predicates_of_weak_values_are_weak",
          "isfinite / isnan of weak values are strong", _weak_only(
              ("isfinite", "isnan", "lax.is_finite"), False)),
    Known("weak-floor-divide", "test_floor_divide_of_weak_values_is_weak",
          "floor_divide of weak values is strong",
          _weak_only(("floor_divide", "floordiv_op"), False)),
    Known("weak-relu", "test_relu_of_a_weak_value_is_weak", "relu of a weak value is strong",
          _weak_only(("relu",), False)),
    Known("weak-rint", "test_rint_of_a_weak_int_is_strong",
          "rint of a weak int is weak", _weak_only(("rint", "round"), True)),
    Known("weak-power", "test_power_of_weak_float_base_and_int_exponent_is_strong",
          "power of a weak float and an int array is weak",
          _weak_only(("power", "pow_op"), True)),
    Known("weak-loop-result", "test_fori_loop_keeps_a_weak_carry_weak",
          "a loop over a weak carry returns a strong value", _weak_only(LOOPS, False)),
    Known("weak-loop-carry", "test_fori_loop_promotes_a_weak_initial_carry",
          "a weak initial carry is not promoted (fori_loop, while_loop, scan)",
          _is("error", LOOPS, "TypeError", "identical types")),
    Known("static-index-out-of-range", "test_static_out_of_range_index_clamps",
          "a static out-of-range index raises", _is("error", ("getitem",), "IndexError")),
    Known("mask-over-empty-dims", "test_boolean_mask_over_an_empty_array",
          "a boolean mask over a zero-size dimension raises",
          _is("error", ("getitem",), "TypeError", "slice_sizes")),
    Known("dynamic-slice-negative-start",
          "test_dynamic_slice_negative_start_counts_from_the_end",
          "a negative dynamic_slice / dynamic_update_slice start is clamped to 0",
          _is("value", ("lax.dynamic_slice", "lax.dynamic_update_slice"))),
    Known("integer-mean", "test_integer_mean_is_an_integer_division",
          "an integer-dtype mean is computed in floats",
          _both(_is("value", ("mean",)), _int_result)),
    Known("var-ddof-at-least-n", "test_var_and_std_with_ddof_at_least_n_are_nan",
          "var / std with n - ddof <= 0 are not nan",
          _is("value", ("var", "std"), None, "(nan)")),
)


def explain(prog: Program, m: Mismatch) -> Known | None:
    for k in KNOWN:
        if k.matches(prog, m):
            return k
    return None
