"""The layout engine lays documents out as JAX's pretty-printer does.

``layout_expected.json`` holds 400 random documents with the text reference JAX 0.10.2's
printer gave for each, recorded in JAX's own process by ``scripts/record_layout_cases.py``.
The colour and annotation cases below were recorded the same way, by hand, from
``jax._src.pretty_printer``.
"""

from __future__ import annotations

import json
import os

import pytest

from olympus_ir import layout as pp

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "layout_expected.json")) as f:
    CASES = json.load(f)


def build(d):
    kind = d[0]
    if kind == "text":
        return pp.text(d[1])
    if kind == "brk":
        return pp.brk(d[1])
    if kind == "concat":
        return pp.concat([build(c) for c in d[1]])
    if kind == "group":
        return pp.group(build(d[1]))
    return pp.nest(d[1], build(d[2]))


@pytest.mark.parametrize("i", range(0, len(CASES), 20))
def test_recorded_layouts(i):
    for case in CASES[i:i + 20]:
        assert pp.format_doc(build(case["doc"]), case["width"]) == case["text"], case


def test_group_fits_by_itself_not_with_what_follows():
    g = pp.group(pp.text("aaaa") + pp.brk() + pp.text("bbbb"))
    assert pp.format_doc(g + pp.text("cc"), 10) == "aaaa bbbbcc"
    assert pp.format_doc(pp.text("xx") + g, 10) == "xxaaaa\nbbbb"
    assert pp.format_doc(pp.group(pp.nest(2, pp.text("ab") + pp.brk() + pp.text("cd"))),
                         3) == "ab\n  cd"


def test_text_width_counts_for_layout():
    # 'olympuspr' counting as JAX's 'jaxpr' (4 columns less) keeps the group flat
    doc = pp.group(pp.text("x=olympuspr", width=7) + pp.brk() + pp.text("y"))
    assert pp.format_doc(doc, 9) == "x=olympuspr y"
    assert pp.format_doc(doc, 8) == "x=olympuspr\ny"


def test_top_level_breaks_are_newlines():
    assert pp.format_doc(pp.text("a") + pp.brk() + pp.text("b")) == "a\nb"
    assert pp.format_doc(pp.nil()) == ""
    assert pp.format_doc(pp.join(pp.text(","), [])) == ""
    assert str(pp.join(pp.text(", "), [pp.text("a"), pp.text("b")])) == "a, b"


def test_colors():
    d = pp.group(pp.nest(2, pp.concat([
        pp.keyword(pp.text("let")), pp.brk(), pp.type_annotation(pp.text("a:f32[]")),
        pp.brk(), pp.text("b")])))
    assert pp.format_doc(d, 80) == "let a:f32[] b"
    assert (pp.format_doc(d, 80, use_color=True)
            == "\x1b[34;1mlet\x1b[39;22m \x1b[35ma:f32[]\x1b[39m b")
    assert (pp.format_doc(d, 5, use_color=True)
            == "\x1b[34;1mlet\n  \x1b[35;22ma:f32[]\n  \x1b[39mb")


def test_annotations():
    a = pp.concat([pp.text("x = 1", annotation="one"), pp.brk(),
                   pp.text("yy = 22", annotation="two"), pp.text("z", annotation="three")])
    assert pp.format_doc(a) == "x = 1    # one\nyy = 22z # two\n         # three"
    assert (pp.format_doc(a, annotation_prefix=" // ")
            == "x = 1    // one\nyy = 22z // two\n         // three")
    assert pp.format_doc(a, use_color=True) == (
        "x = 1\x1b[2m    # one\x1b[22m\nyy = 22z\x1b[2m # two\x1b[22m\n"
        "\x1b[2m         # three\x1b[22m")


def test_marks_report_where_they_land_without_changing_the_layout():
    doc = pp.group(pp.nest(2, pp.concat([
        pp.text("head"), pp.brk(), pp.mark("a"), pp.text("alpha"), pp.mark("b"),
        pp.brk(), pp.text("beta"), pp.mark("c")])))
    plain = pp.format_doc(doc, 8)
    marks: list = []
    assert pp.format_doc(doc, 8, marks=marks) == plain == "head\n  alpha\n  beta"
    assert marks == [(1, 2, "a"), (1, 7, "b"), (2, 6, "c")]
    marks.clear()
    assert pp.format_doc(doc, 80, marks=marks) == "head alpha beta"
    assert marks == [(0, 5, "a"), (0, 10, "b"), (0, 15, "c")]
    assert "alpha" in pp.format_doc(doc, 80, use_color=True)  # marks print nothing
