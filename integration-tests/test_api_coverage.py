"""`scripts/api_coverage.py` and its data file `scripts/jax_public_names.json` (JAX 0.10.2's
public names and the signatures of its most used functions, written once from reference JAX
by `scripts/jax_public_names.py`).

The report itself is informational; what is checked here is that the data file is sound, that
the script runs without jax and reports what is really there, and that the pytree modules
cover JAX's names and accept JAX's arguments exactly.
"""

from __future__ import annotations

import importlib
import inspect
import json
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "api_coverage.py"
DATA = REPO / "scripts" / "jax_public_names.json"
PYTREE_MODULES = ["jax.tree_util", "jax.tree", "jax.flatten_util"]


@pytest.fixture(scope="module")
def data():
    return json.loads(DATA.read_text())


@pytest.fixture(scope="module")
def coverage():
    return runpy.run_path(str(SCRIPT))


def run_script(*args: str) -> subprocess.CompletedProcess:
    """The script in a fresh interpreter in which importing jax fails."""
    code = (
        "import sys, runpy\n"
        "class NoJax:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'jax' or name.startswith('jax.'):\n"
        "            raise ImportError('api_coverage.py must not import jax')\n"
        "sys.meta_path.insert(0, NoJax())\n"
        f"sys.argv = [{str(SCRIPT)!r}, *{list(args)!r}]\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def test_data_file(data):
    assert data["format"] == 1
    assert data["jax_version"] == "0.10.2"
    modules = data["modules"]
    for name in ["jax", "jax.numpy", "jax.lax", "jax.random", "jax.nn", "jax.scipy.special",
                 "jax.tree_util", "jax.tree", "jax.flatten_util", "jax.sharding",
                 "jax.experimental.checkify", "jax.debug", "jax.typing", "jax.export"]:
        assert name in modules, name
    for name, names in modules.items():
        assert names == sorted(set(names)), name
        assert not any(n.startswith("_") for n in names), name
    assert {"jit", "grad", "vmap", "numpy", "tree_util", "tree"} <= set(modules["jax"])
    assert "ravel_pytree" in modules["jax.flatten_util"]
    sigs = data["signatures"]
    for fn in ["jax.jit", "jax.grad", "jax.value_and_grad", "jax.vmap", "jax.lax.cond",
               "jax.lax.scan", "jax.lax.while_loop", "jax.lax.fori_loop",
               "jax.lax.dot_general", "jax.numpy.reshape", "jax.numpy.einsum",
               "jax.tree_util.tree_map", "jax.tree.map"]:
        assert fn in sigs, fn
    assert [p["name"] for p in sigs["jax.lax.scan"][:3]] == ["f", "init", "xs"]


def test_olympus_names(coverage):
    name = coverage["olympus_name"]
    assert name("jax.numpy") == "olympus.numpy"
    assert name("make_jaxpr") == "make_olympuspr"
    assert name("JaxprTypeError") == "OlympusprTypeError"
    assert name("jax2tf_associative_scan_reductions") == "olympus2tf_associative_scan_reductions"
    assert name("tree_map") == "tree_map"


def test_pytree_modules_cover_jax(data, coverage):
    rows = coverage["module_coverage"](data, PYTREE_MODULES)
    assert sorted((r["module"], r["missing"], r["import_error"]) for r in rows) == [
        ("olympus.flatten_util", [], None), ("olympus.tree", [], None),
        ("olympus.tree_util", [], None)]
    assert coverage["signature_gaps"](data, PYTREE_MODULES) == {}


def test_pytree_signatures_equal_jax(data):
    """Same parameter names, kinds and defaulted-ness as JAX, in order, so positional calls
    mean the same thing too."""
    checked = 0
    for qualname, params in data["signatures"].items():
        mod_name, fn_name = qualname.rsplit(".", 1)
        if mod_name not in PYTREE_MODULES:
            continue
        fn = getattr(importlib.import_module(mod_name.replace("jax", "olympus", 1)), fn_name)
        ours = [{"name": p.name, "kind": p.kind.name, "default": p.default is not p.empty}
                for p in inspect.signature(fn).parameters.values()]
        assert ours == params, qualname
        checked += 1
    assert checked == 14 + 27 + 1  # jax.tree, the functions of jax.tree_util, ravel_pytree


def test_script_reports_without_jax():
    out = run_script("--missing")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Olympus against JAX 0.10.2's public API (")
    row = next(line for line in lines if line.split()[:1] == ["olympus.tree_util"])
    assert row.split()[1:3] == ["36/36", "100.0%"]
    assert lines[-1].startswith("overall: ")


def test_script_json_and_threshold():
    out = run_script("--json", "--module", "jax.tree", "--module", "jax.flatten_util")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["total"], report["present"], report["percent"]) == (15, 15, 100.0)
    assert report["signature_gaps"] == {}

    out = run_script("--module", "jax.tree", "--min-percent", "100")
    assert out.returncode == 0, out.stderr
    out = run_script("--min-percent", "100.1")
    assert out.returncode == 1
    assert "is below --min-percent 100.1" in out.stderr


def test_script_counts_missing_names(data, coverage, tmp_path):
    """A module Olympus lacks counts all of its names as missing; a name that is not there
    is listed under the Olympus spelling."""
    fake = {"format": 1, "jax_version": "0.10.2",
            "modules": {"jax.tree": ["map", "no_such_name"], "jax.no_such_module": ["a", "b"],
                        "jax": ["make_jaxpr", "jit"]},
            "signatures": {"jax.tree.map": [{"name": "f", "kind": "POSITIONAL_OR_KEYWORD",
                                             "default": False},
                                            {"name": "extra_kw", "kind": "KEYWORD_ONLY",
                                             "default": True}]}}
    rows = {r["jax_module"]: r for r in coverage["module_coverage"](fake)}
    assert rows["jax.tree"]["missing"] == ["no_such_name"]
    assert rows["jax.no_such_module"]["missing"] == ["a", "b"]
    assert rows["jax.no_such_module"]["import_error"].startswith("ModuleNotFoundError")
    assert rows["jax"]["present"] == 2  # make_jaxpr -> make_olympuspr
    assert coverage["signature_gaps"](fake) == {"jax.tree.map": ["extra_kw"]}
    path = tmp_path / "names.json"
    path.write_text(json.dumps(fake))
    out = run_script("--data", str(path), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["present"] == 3
