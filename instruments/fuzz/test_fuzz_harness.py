"""The fuzzer's own references, checked against what reference JAX 0.10.2 returned
(jax_rules.json's "special" section, recorded by record_jax_rules.py in JAX's own process):
XLA's integer semantics, JAX's index clamping and dropping, dynamic_slice's start rule and
var/std with ddof >= n. Also: every op has recorded type rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from instruments.fuzz import ops, programs
from instruments.fuzz import value_types as vt

SPECIAL = programs.SPECIAL
RULES = {
    "floor_divide": vt.int_floor_divide, "remainder": vt.int_remainder, "fmod": vt.int_fmod,
    "lax.div": vt.int_trunc_divide, "lax.rem": vt.int_trunc_remainder,
    "left_shift": vt.int_shift_left, "right_shift": vt.int_shift_right,
    "power": vt.int_power,
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_integer_rules_match_recorded_jax(name):
    assert SPECIAL[name], name
    for dtype, rows in SPECIAL[name].items():
        x = np.array([r[0] for r in rows], dtype=dtype)
        y = np.array([r[1] for r in rows], dtype=dtype)
        got = RULES[name](x, y, dtype).tolist()
        want = [r[2] for r in rows]
        bad = [(a, b, g, w) for (a, b, _), g, w in zip(rows, got, want) if g != w]
        assert not bad, f"{name} {dtype}: (x, y, ours, JAX) {bad[:5]}"


def test_reads_clamp_like_jax():
    for i, want in SPECIAL["getitem"] + SPECIAL["getitem_traced"]:
        assert vt.normalize_index(i, 5) == want, i


def test_updates_drop_out_of_range_like_jax():
    x = np.arange(5)
    for i, want in SPECIAL["at_set"]:
        got = ops.OPS["at_set"].ref([x, np.asarray(-1)], {"index": lambda tv, i=i: (i,)},
                                    None)
        assert got.tolist() == want, i


def test_dynamic_slice_start_rule_like_jax():
    for start, want in SPECIAL["dynamic_slice"]:
        s = vt.dynamic_start(start, 5, 2)
        assert list(range(s, s + 2)) == want, start


def test_var_with_ddof_at_least_n_like_jax():
    for n, ddof, want in SPECIAL["var_ddof"]:
        x = np.arange(float(n)) + 1
        got = ops.apply(ops.OPS["var"], [x], ["float32"], "float32", {"ddof": ddof})
        got = float(got)
        if want == "nan":
            assert math.isnan(got), (n, ddof, got)
        else:
            assert got == pytest.approx(want, rel=1e-6), (n, ddof)


def test_every_op_has_recorded_type_rules():
    missing = [name for name in ops.OPS if name not in programs.RULES]
    assert not missing, f"re-run record_jax_rules.py; no rules for {missing}"


def test_reference_wraps_integers_and_rounds_floats_once():
    got = ops.apply(ops.OPS["add"], [np.int8(100), np.int8(100)], ["int8", "int8"], "int8")
    assert got == np.int8(-56)
    # float16: 1 + 2**-11 rounds (to even) back to 1 in one rounding
    got = ops.apply(ops.OPS["add"], [np.float16(1), 2.0**-11], ["float16", "py:float"],
                    "float16")
    assert got == np.float16(1)


def test_every_known_divergence_has_its_regression_test():
    from instruments.fuzz import known, test_fuzz_regressions

    ids = [k.id for k in known.KNOWN]
    assert len(ids) == len(set(ids))
    for k in known.KNOWN:
        test = getattr(test_fuzz_regressions, k.regression, None)
        assert test is not None, k.regression
        marks = [m.name for m in getattr(test, "pytestmark", [])]
        assert "xfail" in marks, f"{k.regression} is fixed: remove known entry {k.id}"
    # and no regression test is marked without an entry explaining its mismatches
    named = {k.regression for k in known.KNOWN}
    for name in dir(test_fuzz_regressions):
        test = getattr(test_fuzz_regressions, name)
        if name.startswith("test_") and any(m.name == "xfail" for m in getattr(
                test, "pytestmark", [])):
            assert name in named, f"{name} is marked xfail but has no known.KNOWN entry"


def test_bool_float_product_reference_follows_xla():
    """The reference of `multiply` / `*` (see `ops._xla_multiply`): JAX 0.10.2's recorded
    ``[True, False] * [inf, nan]`` is ``[inf, 0.]``; bfloat16 keeps IEEE's nan."""
    ref = ops.OPS["mul_op"].ref
    b = np.array([True, False])
    f = np.array([np.inf, np.nan], np.float32)
    out = ref([b, f], {}, ops.Ctx(("bool", "float32"), "float32", "float32"))
    np.testing.assert_array_equal(out, [np.inf, 0.0])
    out = ref([b, f], {}, ops.Ctx(("bool", "bfloat16"), "bfloat16", "bfloat16"))
    assert np.isnan(out[1])
