"""The primitives x layers table (`scripts/primitive_table.py` -> `docs/primitives.md`):
the checked-in page is current, every rule sits in the file of its primitive's IR family in
every layer, and no rule is missing except those the script's allow-list explains.

The checker itself is tested on planted tables, so a misfiled or missing rule cannot slip
through unnoticed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "primitive_table.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("primitive_table", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


pt = _load_script()


@pytest.fixture(scope="module")
def rows():
    return pt.build_table()


def test_docs_table_is_current():
    # A fresh process: the table must not see primitives other tests define.
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        "docs/primitives.md is stale or a rule is misfiled or missing; run "
        f"`python scripts/primitive_table.py`:\n{proc.stderr}")


def test_docs_table_matches_the_rule_tables(rows):
    assert (REPO / "docs" / "primitives.md").read_text(encoding="utf-8") == pt.render(rows), \
        "docs/primitives.md is out of date: run `python scripts/primitive_table.py`"


def test_check_fails_on_a_stale_page(tmp_path, capsys):
    doc = tmp_path / "primitives.md"
    assert pt.main(["--doc", str(doc)]) == 0  # writes it
    assert pt.main(["--check", "--doc", str(doc)]) == 0
    doc.write_text(doc.read_text().replace("| `psum` | collectives |", "| `psum` | misc |"))
    assert pt.main(["--check", "--doc", str(doc)]) == 1
    assert "out of date: run `python scripts/primitive_table.py`" in capsys.readouterr().err
    doc.unlink()
    assert pt.main(["--check", "--doc", str(doc)]) == 1


def _misfiled(problem: str) -> bool:
    return "registered in" in problem or "no IR family" in problem


def test_every_rule_is_in_the_file_of_its_ir_family(rows):
    misfiled = [p for p in pt.problems(rows) if _misfiled(p)]
    assert not misfiled, "\n".join(misfiled)


def test_no_rule_is_missing_beyond_the_allow_list(rows):
    missing = [p for p in pt.problems(rows) if not _misfiled(p)]
    assert not missing, "\n".join(missing)


def test_every_primitive_is_in_the_table(rows):
    from olympus_ir.core import primitives_by_name

    names = {r.name for r in rows}
    assert {n for n in primitives_by_name if "_test_" not in n} <= names
    assert len(rows) > 130
    assert all(r.family is not None for r in rows)


def test_allow_list_gives_reasons():
    for (name, layer), why in pt.ALLOWED_MISSING.items():
        assert layer in pt.LAYERS and len(why) > 20, (name, layer)


# --- the checker flags what it should (planted tables) --------------------------------------


def _row(name="foo", family="elementwise", **mods):
    """A planted table row; keyword arguments override a layer's module (``shape_rule``
    for the shape rule)."""
    modules = {
        "shape rule": "olympus_ir.prims.elementwise",
        "JVP": "olympus_trace.ad_rules.elementwise",
        "transpose": None,
        "batching": "olympus_trace.batching_rules.elementwise",
        "lowering": "olympus_lower.rules.elementwise",
    }
    for layer, module in mods.items():
        modules["shape rule" if layer == "shape_rule" else layer] = module
    return pt.Row(name, family, modules)


def test_checker_accepts_a_complete_row():
    assert pt.problems([_row()], allowed={}, linear=frozenset()) == []


def test_checker_flags_a_misfiled_rule():
    # argmax's batching rule once sat in batching_rules/misc.py, its IR family reductions.
    row = _row("argmax", "reductions", shape_rule="olympus_ir.prims.reductions",
               JVP="olympus_trace.ad_rules.reductions",
               batching="olympus_trace.batching_rules.misc",
               lowering="olympus_lower.rules.reductions")
    found = pt.problems([row], allowed={}, linear=frozenset())
    assert found == ["argmax: batching rule registered in olympus_trace.batching_rules.misc, "
                     "not in the file of its IR family olympus_trace.batching_rules.reductions"]


def test_checker_flags_a_rule_registered_outside_the_layer_package():
    row = _row(lowering="olympus._src.custom_derivatives")
    (found,) = pt.problems([row], allowed={}, linear=frozenset())
    assert "lowering rule registered in olympus._src.custom_derivatives" in found


def test_checker_flags_a_rule_made_by_a_shared_helper_module():
    row = _row(JVP="olympus_trace.ad_rules._util")
    (found,) = pt.problems([row], allowed={}, linear=frozenset())
    assert "JVP rule registered in olympus_trace.ad_rules._util" in found


@pytest.mark.parametrize("layer", ["JVP", "batching", "lowering"])
def test_checker_flags_a_missing_rule(layer):
    row = _row(**{layer: None})
    assert pt.problems([row], allowed={}, linear=frozenset()) == [
        f"foo: no {layer} rule (IR family elementwise)"]
    # ... unless the allow-list explains it
    assert pt.problems([row], allowed={("foo", layer): "a reason"}, linear=frozenset()) == []


def test_checker_flags_a_linear_primitive_without_a_transpose():
    row = _row()
    assert pt.problems([row], allowed={}, linear=frozenset({"foo"})) == [
        "foo: no transpose rule (IR family elementwise)"]
    ok = _row(transpose="olympus_trace.ad_rules.elementwise")
    assert pt.problems([ok], allowed={}, linear=frozenset({"foo"})) == []


def test_checker_flags_a_primitive_outside_the_ir_and_a_stale_allow_list_entry():
    found = pt.problems([_row(family=None)], allowed={}, linear=frozenset())
    assert found == ["foo: not defined in olympus_ir.prims (no IR family)"]
    found = pt.problems([_row()], allowed={("foo", "lowering"): "a reason"},
                        linear=frozenset())
    assert found == ["foo: allowed to lack a lowering rule, but has one: drop the allow-list "
                     "entry"]


def test_the_real_table_fails_when_a_rule_is_planted_in_the_wrong_file(rows):
    # Re-register one real rule as if it were defined in another family's file.
    from olympus_ir import primitives as P
    from olympus_trace import batching

    rule = batching.batching_rules[P.argmax_p]

    def planted(*args, **kwargs):  # pragma: no cover - never called
        return rule(*args, **kwargs)

    planted.__module__ = "olympus_trace.batching_rules.elementwise"
    batching.batching_rules[P.argmax_p] = planted
    try:
        found = pt.problems(pt.build_table())
    finally:
        batching.batching_rules[P.argmax_p] = rule
    assert found == ["argmax: batching rule registered in "
                     "olympus_trace.batching_rules.elementwise, not in the file of its IR "
                     "family olympus_trace.batching_rules.reductions"]
    del batching.batching_rules[P.argmax_p]
    try:
        found = pt.problems(pt.build_table())
    finally:
        batching.batching_rules[P.argmax_p] = rule
    assert found == ["argmax: no batching rule (IR family reductions)"]
    assert pt.problems(pt.build_table()) == []
