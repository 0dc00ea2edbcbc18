"""The olympus-ir command line: main() on temporary files, checking its output."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

from olympus_ir import (
    ClosedOlympuspr,
    Eqn,
    Literal,
    Olympuspr,
    Primitive,
    ShapedArray,
    Var,
    abstract_eval,
)
from olympus_ir import primitives as P
from olympus_ir.cli import main, to_dot
from olympus_ir.serialize import to_json
from olympus_ir.stats import eqn_flops, equation_counts, flop_estimate

I32 = ShapedArray((), np.int32)

SEED_TEXT = ("{ lambda ; a:i32[] b:i32[]. let\n"
             "    c:i32[] = mul 2:i32[] a\n"
             "    d:i32[] = add c b\n"
             "  in (d,) }")


def seed():
    a, b, c, d = Var(I32), Var(I32), Var(I32), Var(I32)
    return Olympuspr([], [a, b], [d], [
        Eqn(P.mul_p, [Literal(2, I32), a], [c], {}),
        Eqn(P.add_p, [c, b], [d], {}),
    ])


def bind(prim, *ins, **params):
    out = Var(abstract_eval(prim, *[x.aval for x in ins], **params))
    return Eqn(prim, list(ins), [out], params), out


def matmul_program():
    x = Var(ShapedArray((2, 3, 4), np.float32))
    w = Var(ShapedArray((2, 4, 5), np.float32))
    e0, d = bind(P.dot_general_p, x, w, dimension_numbers=(((2,), (1,)), ((0,), (0,))),
                 precision=None, preferred_element_type=None, out_sharding=None)
    e1, e = bind(P.add_p, d, d)                                   # 30 flops
    e2, f = bind(P.reduce_sum_p, e, axes=(0, 1, 2), out_sharding=None)  # 30 flops
    e3, g = bind(P.exp_p, f)                                      # 1 flop
    e4, h = bind(P.transpose_p, d, permutation=(0, 2, 1))          # 0 flops
    e5, i = bind(P.add_p, g, f)                                   # 1 flop
    return Olympuspr([], [x, w], [i, h], [e0, e1, e2, e3, e4, e5])


@pytest.fixture
def write(tmp_path):
    def write(obj, name="prog.json"):
        path = tmp_path / name
        path.write_text(obj if isinstance(obj, str) else to_json(obj), encoding="utf-8")
        return str(path)

    return write


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_show(capsys, write):
    rc, out, err = run(capsys, "show", write(seed()))
    assert (rc, out, err) == (0, SEED_TEXT + "\n", "")


def test_show_closed(capsys, write):
    k, x, y = (Var(ShapedArray((2,), np.float32)) for _ in range(3))
    closed = ClosedOlympuspr(Olympuspr([k], [x], [y], [Eqn(P.add_p, [k, x], [y], {})]),
                             [np.ones(2, np.float32)])
    rc, out, _ = run(capsys, "show", write(closed))
    assert rc == 0
    assert out == "{ lambda a:f32[2]; b:f32[2]. let c:f32[2] = add a b in (c,) }\n"


def test_check_ok(capsys, write):
    assert run(capsys, "check", write(seed())) == (0, "ok\n", "")
    assert run(capsys, "check", write(matmul_program())) == (0, "ok\n", "")


def test_check_reports_type_errors(capsys, write):
    x, y = Var(ShapedArray((3,), np.float32)), Var(ShapedArray((3,), np.float32))
    bad = Var(ShapedArray((4,), np.float32))
    j = Olympuspr([], [x, y], [bad], [Eqn(P.add_p, [x, y], [bad], {})])
    rc, out, err = run(capsys, "check", write(j))
    assert rc == 1 and err == ""
    assert out == (
        "olympuspr type error at equation 0 of 1 (add):\n"
        "    c:f32[4] = add a b\n"
        "result 0 (c) has the wrong type: expected f32[3] (weak_type=False), found f32[4] "
        "(weak_type=False)\n"
    )


def test_stats(capsys, write):
    rc, out, err = run(capsys, "stats", write(matmul_program()))
    assert rc == 0 and err == ""
    assert out == (
        "equations: 6\n"
        "  add          2\n"
        "  dot_general  1\n"
        "  exp          1\n"
        "  reduce_sum   1\n"
        "  transpose    1\n"
        "flops: 302\n"
    )


def test_flops_of_dot_general():
    # 2 * batch 2 * lhs free 3 * rhs free 5 * contracting 4
    assert eqn_flops(matmul_program().eqns[0]) == 240
    lhs, rhs = Var(ShapedArray((7, 6), np.float32)), Var(ShapedArray((6,), np.float32))
    e, _ = bind(P.dot_general_p, lhs, rhs, dimension_numbers=(((1,), (0,)), ((), ())),
                precision=None, preferred_element_type=None, out_sharding=None)
    assert eqn_flops(e) == 2 * 7 * 6


def test_stats_recurse_into_sub_olympusprs(capsys, write):
    inner = matmul_program()
    x = Var(ShapedArray((3,), np.float32))
    y = Var(ShapedArray((3,), np.float32))
    j = Olympuspr([], [x], [y], [
        Eqn(P.copy_p, [x], [y], {"branches": (inner, ClosedOlympuspr(seed(), []))}),
    ])
    assert equation_counts(j) == {"copy": 1, "add": 3, "mul": 1, "dot_general": 1, "exp": 1,
                                  "reduce_sum": 1, "transpose": 1}
    assert flop_estimate(j) == 302 + 2
    rc, out, _ = run(capsys, "stats", write(j))
    assert rc == 0
    assert out.splitlines()[:2] == ["equations: 9", "  add          3"]
    assert out.splitlines()[-1] == "flops: 304"


def test_flops_of_control_flow():
    body = matmul_program()
    cheap = seed()
    x = Var(ShapedArray((3,), np.float32))
    scan = Eqn(Primitive("scan", True), [x], [Var(x.aval)], {"olympuspr": body, "length": 10})
    cond = Eqn(Primitive("cond", True), [x], [Var(x.aval)], {"branches": (cheap, body)})
    loop = Eqn(Primitive("while", True), [x], [Var(x.aval)],
               {"cond_olympuspr": cheap, "body_olympuspr": body})
    assert eqn_flops(scan) == 3020
    assert eqn_flops(cond) == 302
    assert eqn_flops(loop) == 304


def test_flops_not_counted_for_data_movement():
    x = Var(ShapedArray((4, 4), np.float32))
    for prim, params in [(P.copy_p, {}), (P.transpose_p, {"permutation": (1, 0)}),
                         (P.convert_element_type_p, {"new_dtype": np.dtype(np.int32),
                                                     "weak_type": False, "sharding": None})]:
        e, _ = bind(prim, x, **params)
        assert eqn_flops(e) == 0
    e, _ = bind(P.lt_p, x, x)
    assert eqn_flops(e) == 16
    e, _ = bind(P.argmax_p, x, axes=(1,), index_dtype=np.int32)
    assert eqn_flops(e) == 16


def test_dot(capsys, write):
    rc, out, err = run(capsys, "dot", write(seed()))
    assert rc == 0 and err == ""
    assert out == (
        "digraph olympuspr {\n"
        "  rankdir=TB;\n"
        '  node [fontname="monospace"];\n'
        '  in0 [label="a:i32[]", shape=ellipse];\n'
        '  in1 [label="b:i32[]", shape=ellipse];\n'
        '  eqn0 [label="mul", shape=box];\n'
        '  lit0 [label="2:i32[]", shape=plaintext];\n'
        "  lit0 -> eqn0;\n"
        '  in0 -> eqn0 [label="a:i32[]"];\n'
        '  eqn1 [label="add", shape=box];\n'
        '  eqn0 -> eqn1 [label="c:i32[]"];\n'
        '  in1 -> eqn1 [label="b:i32[]"];\n'
        '  out0 [label="out 0", shape=doublecircle];\n'
        '  eqn1 -> out0 [label="d:i32[]"];\n'
        "}\n"
    )


def test_dot_constvars_passthrough_and_sub_olympusprs():
    k, x = Var(ShapedArray((2,), np.float32)), Var(ShapedArray((2,), np.float32))
    y = Var(ShapedArray((2,), np.float32))
    j = Olympuspr([k], [x], [y, x], [
        Eqn(P.add_p, [k, x], [y], {"branches": (seed(), seed())}),
    ])
    text = to_dot(ClosedOlympuspr(j, [np.zeros(2, np.float32)]))
    assert '  const0 [label="a:f32[2]", shape=ellipse, style=dashed];' in text
    assert '  eqn0 [label="add (2 sub-olympusprs)", shape=box];' in text
    assert '  const0 -> eqn0 [label="a:f32[2]"];' in text
    assert '  in0 -> out1 [label="b:f32[2]"];' in text  # an input returned as is


def test_missing_file(capsys, tmp_path):
    rc, out, err = run(capsys, "show", str(tmp_path / "nope.json"))
    assert rc == 2 and out == ""
    assert err.startswith("olympus-ir: cannot read ") and "No such file" in err


def test_bad_json(capsys, write):
    rc, out, err = run(capsys, "check", write("{oops", "bad.json"))
    assert rc == 2 and out == ""
    assert "bad.json: malformed olympuspr JSON: not valid JSON" in err


def test_unsupported_version(capsys, write):
    text = to_json(seed()).replace('"version": 1', '"version": 7')
    rc, out, err = run(capsys, "stats", write(text))
    assert rc == 2 and out == ""
    assert "unsupported olympuspr JSON version 7; this olympus-ir reads version 1" in err


def test_usage_errors(capsys):
    rc, out, err = run(capsys)
    assert rc == 2 and "usage: olympus-ir" in err
    rc, out, err = run(capsys, "frobnicate", "x.json")
    assert rc == 2 and "invalid choice" in err
    rc, out, err = run(capsys, "--help")
    assert rc == 0 and "show" in out and "check" in out and "stats" in out and "dot" in out


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(to_json(seed())))
    assert run(capsys, "show", "-") == (0, SEED_TEXT + "\n", "")


def test_python_dash_m(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(to_json(seed()), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "olympus_ir", "check", str(path)],
                          capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout) == (0, "ok\n")
    proc = subprocess.run([sys.executable, "-m", "olympus_ir", "show", str(tmp_path / "x")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "cannot read" in proc.stderr
