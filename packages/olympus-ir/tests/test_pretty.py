"""Exact printed forms of hand-built olympusprs."""

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
    dtypes,
    pp_olympuspr,
)
from olympus_ir import primitives as P
from olympus_ir.pretty import Names, encode_name, pp_eqn

I32 = ShapedArray((), np.int32)
F32 = ShapedArray((), np.float32)


def v(shape=(), dtype=np.int32, weak=False):
    return Var(ShapedArray(shape, dtype, weak))


def test_seed_example():
    a, b, c, d = v(), v(), v(), v()
    j = Olympuspr([], [a, b], [d], [
        Eqn(P.mul_p, [Literal(2, I32), a], [c], {}),
        Eqn(P.add_p, [c, b], [d], {}),
    ])
    want = ("{ lambda ; a:i32[] b:i32[]. let\n"
            "    c:i32[] = mul 2:i32[] a\n"
            "    d:i32[] = add c b\n"
            "  in (d,) }")
    assert pp_olympuspr(j) == want
    assert str(j) == want and repr(j) == want


def test_closed_olympuspr_prints_its_olympuspr():
    k, x, y = v((3,), np.float32), v((3,), np.float32), v((3,), np.float32)
    j = Olympuspr([k], [x], [y], [Eqn(P.add_p, [k, x], [y], {})])
    want = ("{ lambda a:f32[3]; b:f32[3]. let\n"
            "    c:f32[3] = add a b\n"
            "  in (c,) }")
    assert pp_olympuspr(j) == want
    assert pp_olympuspr(ClosedOlympuspr(j, [np.zeros(3, np.float32)])) == want


def test_several_constvars_and_outputs():
    k1, k2 = v((2,), np.float32), v((), np.float32)
    x, y, z = v((2,), np.float32), v((2,), np.float32), v((2,), np.float32)
    j = Olympuspr([k1, k2], [x], [y, z, x], [
        Eqn(P.mul_p, [k1, x], [y], {}),
        Eqn(P.sub_p, [y, k2], [z], {}),
    ])
    assert pp_olympuspr(j) == (
        "{ lambda a:f32[2] b:f32[]; c:f32[2]. let\n"
        "    d:f32[2] = mul a c\n"
        "    e:f32[2] = sub d b\n"
        "  in (d, e, c) }"
    )


def test_no_outputs_and_literal_output():
    a = v()
    assert pp_olympuspr(Olympuspr([], [a], [], [])) == "{ lambda ; a:i32[]. let  in () }"
    j = Olympuspr([], [], [Literal(1.5, F32), Literal(True, ShapedArray((), np.bool_))], [])
    assert pp_olympuspr(j) == "{ lambda ; . let  in (1.5:f32[], True:bool[]) }"


def test_empty_body():
    a = v((3,))
    assert pp_olympuspr(Olympuspr([], [a], [a], [])) == "{ lambda ; a:i32[3]. let  in (a,) }"


def test_params_print_sorted_with_tuples_and_none():
    x, y = v((3,), np.float32), v((3, 2), np.float32)
    e = Eqn(P.broadcast_in_dim_p, [x], [y],
            {"shape": (3, 2), "broadcast_dimensions": (0,), "sharding": None})
    j = Olympuspr([], [x], [y], [e])
    assert pp_olympuspr(j) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3,2] = broadcast_in_dim[broadcast_dimensions=(0,) shape=(3, 2) sharding=None] a\n"
        "  in (b,) }"
    )


def test_dtype_params_print_by_name():
    x, y, z = v((2,), np.int32), v((2,), dtypes.bfloat16), v((), dtypes.bfloat16)
    j = Olympuspr([], [x], [z], [
        Eqn(P.convert_element_type_p, [x], [y],
            {"new_dtype": dtypes.bfloat16, "weak_type": False, "sharding": None}),
        Eqn(P.reduce_max_p, [y], [z], {"axes": (0,), "out_sharding": None}),
    ])
    assert pp_olympuspr(j) == (
        "{ lambda ; a:i32[2]. let\n"
        "    b:bf16[2] = convert_element_type[new_dtype=bfloat16 sharding=None weak_type=False] a\n"
        "    c:bf16[] = reduce_max[axes=(0,) out_sharding=None] b\n"
        "  in (c,) }"
    )


def test_no_operand_equation():
    y = v((4,))
    e = Eqn(P.iota_p, [], [y], {"dtype": np.dtype(np.int32), "shape": (4,), "dimension": 0,
                                "sharding": None})
    assert pp_eqn(e) == "a:i32[4] = iota[dimension=0 dtype=int32 shape=(4,) sharding=None]"


def test_multiple_results_and_dropvar():
    # a multiple-results equation prints its binders separated by spaces; `_` is dropped
    x = v((3,), np.float32)
    y, d = v((3,), np.float32), DropVar(ShapedArray((3,), np.float32))
    e = Eqn(P.add_p, [x, x], [y, d], {})
    assert pp_eqn(e) == "b:f32[3] _:f32[3] = add a a"


def test_names_past_z():
    assert [encode_name(i) for i in (0, 1, 25, 26, 27, 51, 52, 675, 676)] == [
        "a", "b", "z", "ba", "bb", "bz", "ca", "zz", "baa"]
    xs = [v() for _ in range(28)]
    j = Olympuspr([], xs, [xs[27], xs[26]], [])
    letters = [chr(ord("a") + i) for i in range(26)]
    binders = " ".join(f"{n}:i32[]" for n in [*letters, "ba", "bb"])
    assert pp_olympuspr(j) == "{ lambda ; " + binders + ". let  in (bb, ba) }"


def test_names_follow_first_appearance_and_suffix():
    names = Names()
    a, b = v(), Var(I32, suffix="'")
    assert names(b) == "a'"
    assert names(a) == "b"
    assert names(b) == "a'"
    assert names.binder(a) == "b:i32[]"
    assert names(Literal(3, I32)) == "3:i32[]"


def test_weak_type_is_not_printed_but_literal_types_are():
    a = v((), np.float32, weak=True)
    b = v((), np.float32, weak=True)
    j = Olympuspr([], [a], [b], [Eqn(P.mul_p, [a, Literal(2.0, ShapedArray((), np.float32, True))],
                                     [b], {})])
    assert pp_olympuspr(j) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = mul a 2.0:f32[]\n"
        "  in (b,) }"
    )


def test_sub_olympusprs_print_nested():
    p, q = v((), np.float32), v((), np.float32)
    inner = Olympuspr([], [p], [q], [Eqn(P.sin_p, [p], [q], {})])
    x, y = v((), np.float32), v((), np.float32)
    outer = Olympuspr([], [x], [y], [
        Eqn(P.copy_p, [x], [y], {"branches": (ClosedOlympuspr(inner, []),), "n": 1}),
    ])
    assert pp_olympuspr(outer) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = copy[\n"
        "      branches=(\n"
        "        { lambda ; c:f32[]. let\n"
        "            d:f32[] = sin c\n"
        "          in (d,) }\n"
        "      )\n"
        "      n=1\n"
        "    ] a\n"
        "  in (b,) }"
    )


@pytest.mark.parametrize("val,aval,text", [
    (7, ShapedArray((), np.uint8), "7:u8[]"),
    (-1.25, ShapedArray((), np.float16), "-1.25:f16[]"),
    (1 + 2j, ShapedArray((), np.complex64), "(1+2j):c64[]"),
    (False, ShapedArray((), np.bool_), "False:bool[]"),
])
def test_literals(val, aval, text):
    assert repr(Literal(val, aval)) == text
