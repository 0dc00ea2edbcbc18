"""check_olympuspr: one test per kind of defect, plus well-formed programs that must pass."""

from __future__ import annotations

import numpy as np
import pytest

from olympus_ir import (
    ClosedOlympuspr,
    DropVar,
    Eqn,
    Literal,
    Olympuspr,
    ShapedArray,
    Var,
    abstract_eval,
    dtypes,
)
from olympus_ir import primitives as P
from olympus_ir.verify import OlympusprTypeError, check_olympuspr

F3 = ShapedArray((3,), np.float32)
I32 = ShapedArray((), np.int32)


def var(aval=F3):
    return Var(aval)


def bind(prim, *ins, **params):
    """An equation with correctly typed results (from the shape rule)."""
    out = abstract_eval(prim, *[x.aval for x in ins], **params)
    outs = [Var(a) for a in out] if prim.multiple_results else [Var(out)]
    return Eqn(prim, list(ins), outs, params), outs


def good():
    x, y = var(), var()
    e1, (s,) = bind(P.add_p, x, y)
    e2, (t,) = bind(P.mul_p, s, Literal(2.0, ShapedArray((), np.float32)))
    e3, (r,) = bind(P.reduce_sum_p, t, axes=(0,), out_sharding=None)
    return Olympuspr([], [x, y], [r, s], [e1, e2, e3])


def raises(j, *fragments):
    with pytest.raises(OlympusprTypeError) as info:
        check_olympuspr(j)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in message:\n{msg}"
    return msg


def test_error_is_a_type_error():
    assert issubclass(OlympusprTypeError, TypeError)


def test_well_formed_passes():
    check_olympuspr(good())
    k = var()
    x = var()
    e, (y,) = bind(P.sub_p, x, k)
    check_olympuspr(ClosedOlympuspr(Olympuspr([k], [x], [y, Literal(1, I32)], [e]),
                                    [np.ones(3, np.float32)]))


def test_well_formed_with_sub_olympusprs_and_dropvars():
    inner = good()
    x, y = var(), var()
    d1, d2 = DropVar(F3), DropVar(F3)
    outer = Olympuspr([], [x, y], [x], [
        Eqn(P.add_p, [x, y], [d1], {"sub": inner, "subs": (ClosedOlympuspr(inner, []), inner)}),
        Eqn(P.add_p, [x, y], [d2], {}),
    ])
    check_olympuspr(outer)
    # the same DropVar object may be reused: it is never read
    check_olympuspr(Olympuspr([], [x, y], [x], [Eqn(P.add_p, [x, y], [d1], {}),
                                                 Eqn(P.add_p, [x, y], [d1], {})]))


def test_use_before_definition():
    x = var()
    e1, (a,) = bind(P.neg_p, x)
    e2, (b,) = bind(P.sin_p, a)
    j = Olympuspr([], [x], [b], [e2, e1])  # sin reads `a` before neg defines it
    raises(j, "equation 0 of 2 (sin)", "b:f32[3] = sin c",
           "operand 0 c is used before it is defined")


def test_undefined_output():
    x, stray = var(), var()
    raises(Olympuspr([], [x], [stray], []), "output 0 b is used before it is defined")


def test_invar_defined_twice():
    x = var()
    raises(Olympuspr([], [x, x], [x], []), "invar 1 a is defined twice")


def test_equation_redefines_a_variable():
    x, y = var(), var()
    e1, (a,) = bind(P.add_p, x, y)
    e2 = Eqn(P.neg_p, [a], [x], {})  # x is an input
    raises(Olympuspr([], [x, y], [a], [e1, e2]), "equation 1 of 2 (neg)",
           "a:f32[3] = neg c", "result 0 a is defined twice")


def test_constvar_and_invar_defined_twice():
    k = var()
    raises(Olympuspr([k], [k], [k], []), "invar 0 a is defined twice")


@pytest.mark.parametrize("bad", [3, "x", np.float32(1.0), None])
def test_operand_not_var_or_literal(bad):
    x = var()
    e = Eqn(P.add_p, [x, bad], [var()], {})
    raises(Olympuspr([], [x], [x], [e]), "equation 0 of 1 (add)",
           "operand 1 must be a Var or Literal, found")


def test_result_not_a_var():
    x = var()
    e = Eqn(P.neg_p, [x], [Literal(1.0, ShapedArray((), np.float32))], {})
    raises(Olympuspr([], [x], [x], [e]), "result 0 must be a Var, found Literal")


def test_constvar_not_a_var():
    raises(Olympuspr([Literal(1, I32)], [], [], []), "constvar 0 must be a Var")


@pytest.mark.parametrize("wrong,expected,found", [
    (ShapedArray((4,), np.float32), "f32[3] (weak_type=False)", "f32[4] (weak_type=False)"),
    (ShapedArray((3,), np.float16), "f32[3] (weak_type=False)", "f16[3] (weak_type=False)"),
    (ShapedArray((3,), np.float32, weak_type=True), "f32[3] (weak_type=False)",
     "f32[3] (weak_type=True)"),
])
def test_result_aval_differs_from_shape_rule(wrong, expected, found):
    x, y = var(), var()
    out = Var(wrong)
    e = Eqn(P.add_p, [x, y], [out], {})
    msg = raises(Olympuspr([], [x, y], [out], [e]), "equation 0 of 1 (add)",
                 f"c:{wrong.str_short()} = add a b",
                 f"expected {expected}, found {found}")
    assert "result 0 (c) has the wrong type" in msg


def test_shape_rule_rejects_operands():
    x, y = var(), Var(ShapedArray((3,), np.int32))
    e = Eqn(P.add_p, [x, y], [var()], {})
    raises(Olympuspr([], [x, y], [], [e]), "c:f32[3] = add a b",
           "the shape rule of add rejects operands (f32[3], i32[3])",
           "requires arguments to have the same dtypes")


def test_missing_params_are_reported():
    x = var()
    e = Eqn(P.reduce_sum_p, [x], [Var(ShapedArray((), np.float32))], {})
    raises(Olympuspr([], [x], [], [e]), "the shape rule of reduce_sum rejects", "axes")


def test_wrong_number_of_results():
    x = var()
    e = Eqn(P.neg_p, [x], [var(), var()], {})
    raises(Olympuspr([], [x], [], [e]), "expected 1 results, found 2 outvars")


def test_literal_not_a_scalar():
    x = var()
    lit = Literal(np.ones(3, np.float32), F3)
    e = Eqn(P.add_p, [x, lit], [var()], {})
    raises(Olympuspr([], [x], [], [e]), "operand 1: literal", "is not a scalar",
           "expected shape (), found aval shape (3,)")


def test_literal_value_dtype_mismatch():
    x = Var(ShapedArray((), np.float32))
    lit = Literal(2.0, ShapedArray((), np.float32))
    lit.val = np.asarray(2.0, np.float64)
    e = Eqn(P.add_p, [x, lit], [Var(ShapedArray((), np.float32))], {})
    raises(Olympuspr([], [x], [], [e]), "expected float32, found float64")


def test_literal_output_is_checked():
    lit = Literal(2, I32)
    lit.val = np.asarray([2, 3], np.int32)
    raises(Olympuspr([], [], [lit], []), "output 0: literal", "is not a scalar")


def test_reading_a_dropvar():
    x = var()
    d = DropVar(F3)
    e1 = Eqn(P.neg_p, [x], [d], {})
    e2 = Eqn(P.neg_p, [d], [var()], {})
    raises(Olympuspr([], [x], [], [e1, e2]), "operand 0 is a dropped variable _")


@pytest.mark.parametrize("const,found", [
    (np.zeros(4, np.float32), "found shape (4,) and dtype float32"),
    (np.zeros(3, np.float64), "found shape (3,) and dtype float64"),
    (np.zeros(3, dtypes.bfloat16), "found shape (3,) and dtype bfloat16"),
    (1.0, "found shape () and dtype float64"),
])
def test_closed_consts_disagree_with_constvars(const, found):
    k, x = var(), var()
    e, (y,) = bind(P.add_p, k, x)
    closed = ClosedOlympuspr(Olympuspr([k], [x], [y], [e]), [const])
    raises(closed, "const 0 does not match its constvar a",
           "expected shape (3,) and dtype float32", found)


def test_closed_const_count_changed_after_construction():
    k = var()
    closed = ClosedOlympuspr(Olympuspr([k], [], [k], []), [np.zeros(3, np.float32)])
    closed.consts.append(np.zeros(3, np.float32))
    raises(closed, "2 consts for 1 constvars")


def test_sub_olympuspr_checked_recursively():
    p = var()
    bad_out = Var(ShapedArray((3,), np.int32))
    bad = Olympuspr([], [p], [bad_out], [Eqn(P.neg_p, [p], [bad_out], {})])
    x = var()
    outer = Olympuspr([], [x], [x], [
        Eqn(P.copy_p, [x], [var()], {"branches": (good(), ClosedOlympuspr(bad, []))}),
    ])
    msg = raises(outer, "equation 0 (copy) param branches[1]", "(neg)",
                 "= neg", "expected f32[3] (weak_type=False), found i32[3] (weak_type=False)")
    assert "param branches[0]" not in msg


def test_sub_olympuspr_has_its_own_scope():
    x = var()
    e, (y,) = bind(P.neg_p, x)
    inner = Olympuspr([], [], [x], [])  # reads the outer x: not in scope
    outer = Olympuspr([], [x], [y], [Eqn(P.neg_p, [x], [y], {"jaxpr": inner})])
    raises(outer, "param jaxpr", "output 0", "is used before it is defined")


def test_sub_olympuspr_consts_checked():
    k = var()
    inner = ClosedOlympuspr(Olympuspr([k], [], [k], []), [np.zeros(2, np.float32)])
    x = var()
    outer = Olympuspr([], [x], [x], [Eqn(P.neg_p, [x], [var()], {"f": inner})])
    raises(outer, "param f", "const 0 does not match")


def test_multiple_results_primitive_checked():
    # a tiny multiple-results primitive defined for this test only
    from olympus_ir.core import primitives_by_name, shape_rules

    name = "test_verify_split"
    p = primitives_by_name.get(name)
    if p is None:
        from olympus_ir import def_shape_rule, new_primitive

        p = new_primitive(name, multiple_results=True)

        @def_shape_rule(p)
        def _rule(x):
            return [x, x.update(dtype=np.int32)]

    assert p in shape_rules
    x = var()
    e, outs = bind(p, x)
    check_olympuspr(Olympuspr([], [x], outs, [e]))
    wrong = [Var(F3), Var(F3)]
    raises(Olympuspr([], [x], wrong, [Eqn(p, [x], wrong, {})]),
           "result 1 (c) has the wrong type: expected i32[3]")
