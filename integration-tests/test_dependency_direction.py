"""The packages depend on each other in one direction only: trace, lower and runtime each on ir
alone, olympus on all four.

Checked twice: in what each pyproject.toml declares, and in what each package's source imports.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
PACKAGES = REPO / "packages"

IMPORT_NAMES = {
    "olympus-ir": "olympus_ir",
    "olympus-trace": "olympus_trace",
    "olympus-lower": "olympus_lower",
    "olympus-runtime": "olympus_runtime",
    "olympus": "olympus",
}
# The sibling packages each package declares, exactly; it may import only these (and itself).
SIBLING_DEPS = {
    "olympus-ir": set(),
    "olympus-trace": {"olympus-ir"},
    "olympus-lower": {"olympus-ir"},
    "olympus-runtime": {"olympus-ir"},
    "olympus": {"olympus-ir", "olympus-trace", "olympus-lower", "olympus-runtime"},
}
# Whether a package declares jaxlib, and so may import it anywhere.
NEEDS_JAXLIB = {
    "olympus-ir": False,
    "olympus-trace": False,
    "olympus-lower": True,
    "olympus-runtime": True,
    "olympus": True,
}
# Packages that may import jaxlib lazily (inside a function, guarded by try/except
# ImportError) although they do not declare it; only their module-level imports are checked.
LAZY_JAXLIB = {"olympus-trace"}
JAXLIB_PIN = "jaxlib>=0.10.2,<0.11"


# ---------------------------------------------------------------- declared dependencies


def read_version(about: Path) -> str:
    """The `__version__ = "..."` string assigned in an __about__.py."""
    for node in ast.parse(about.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise AssertionError(f"{about} assigns no __version__ string")


def current_versions(packages: Path = PACKAGES) -> dict[str, str]:
    return {
        dist: read_version(packages / dist / "src" / mod / "__about__.py")
        for dist, mod in IMPORT_NAMES.items()
    }


def sibling_pin_problem(text: str, current: str) -> str | None:
    """None if the requirement text is `>=X.Y,<X.(Y+1)` and admits the current version."""
    req = Requirement(text)
    specs = {spec.operator: spec.version for spec in req.specifier}
    if len(req.specifier) != 2 or set(specs) != {">=", "<"}:
        return f"{text}: a sibling pin must be of the form >=X.Y,<X.(Y+1)"
    low, high = Version(specs[">="]), Version(specs["<"])
    if len(low.release) != 2 or high.release != (low.major, low.minor + 1):
        return f"{text}: a sibling pin must be of the form >=X.Y,<X.(Y+1)"
    if not req.specifier.contains(current, prereleases=True):
        return f"{text}: does not admit {req.name}'s current version {current}"
    return None


def dependency_problems(dist: str, pyproject: dict, versions: dict[str, str]) -> list[str]:
    """What is wrong with the dependencies `dist` declares in its parsed pyproject.toml."""
    problems = []
    raw = pyproject.get("project", {}).get("dependencies", [])
    reqs = {}
    for text in raw:
        req = Requirement(text)
        reqs[req.name.lower().replace("_", "-")] = (req, text)

    siblings = {name for name in reqs if name in IMPORT_NAMES}
    for name in sorted(siblings - SIBLING_DEPS[dist]):
        problems.append(f"{dist} must not depend on {name}")
    for name in sorted(SIBLING_DEPS[dist] - siblings):
        problems.append(f"{dist} must depend on {name}")
    for name in sorted(siblings & SIBLING_DEPS[dist]):
        problem = sibling_pin_problem(reqs[name][1], versions[name])
        if problem:
            problems.append(f"{dist}: {problem}")

    if "jaxlib" in reqs and not NEEDS_JAXLIB[dist]:
        problems.append(f"{dist} must not depend on jaxlib")
    elif "jaxlib" not in reqs and NEEDS_JAXLIB[dist]:
        problems.append(f"{dist} must depend on {JAXLIB_PIN}")
    elif "jaxlib" in reqs and "".join(reqs["jaxlib"][1].split()) != JAXLIB_PIN:
        problems.append(f"{dist}: jaxlib pin is {reqs['jaxlib'][1]!r}, expected {JAXLIB_PIN!r}")
    return problems


def load_pyproject(dist: str) -> dict:
    with open(PACKAGES / dist / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def test_every_package_is_known():
    found = {p.parent.name for p in PACKAGES.glob("*/pyproject.toml")}
    assert found == set(IMPORT_NAMES), "add new packages to the tables in this file"


@pytest.mark.parametrize("dist", sorted(IMPORT_NAMES))
def test_declared_dependencies(dist):
    pyproject = load_pyproject(dist)
    assert pyproject["project"]["name"] == dist
    assert dependency_problems(dist, pyproject, current_versions()) == []


# ---------------------------------------------------------------- source imports


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _catches_import_error(node: ast.Try) -> bool:
    names = set()
    for h in node.handlers:
        types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        names |= {t.id for t in types if isinstance(t, ast.Name)}
    return bool(names & {"ImportError", "ModuleNotFoundError"})


def imports(tree: ast.Module) -> list[tuple[str, int, bool]]:
    """(top-level module, line, runs at import time) for each absolute import in tree.

    An import is required at import time unless it sits inside a function (or lambda), under
    `if TYPE_CHECKING:`, or in a `try:` that catches ImportError (an optional import);
    class bodies run at import time.
    """
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, at_import: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((a.name.split(".")[0], node.lineno, at_import) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], node.lineno, at_import))
        if isinstance(node, ast.Try) and _catches_import_error(node):
            for child in node.body:
                visit(child, False)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, at_import)
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, False)
            for child in node.orelse:
                visit(child, at_import)
            return
        lazy = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, at_import and not lazy)

    visit(tree, True)
    return found


def import_problems(dist: str, src: Path) -> list[str]:
    """`file:line: ...` for each import in src that breaks the dependency direction."""
    own = IMPORT_NAMES[dist]
    allowed = {own} | {IMPORT_NAMES[d] for d in SIBLING_DEPS[dist]}
    forbidden = set(IMPORT_NAMES.values()) - allowed
    if not NEEDS_JAXLIB[dist] and dist not in LAZY_JAXLIB:
        forbidden.add("jaxlib")
    problems = []
    for path in sorted(src.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        shown = path.relative_to(src.parent) if src.parent in path.parents else path
        for module, line, at_import in imports(tree):
            if module in forbidden:
                problems.append(f"{shown}:{line}: {own} must not import {module}")
            elif module == "jaxlib" and dist in LAZY_JAXLIB and at_import:
                problems.append(
                    f"{shown}:{line}: {own} may import jaxlib only optionally (inside a function "
                    "or a try/except ImportError)"
                )
    return problems


@pytest.mark.parametrize("dist", sorted(IMPORT_NAMES))
def test_source_imports_follow_dependency_direction(dist):
    src = PACKAGES / dist / "src"
    assert (src / IMPORT_NAMES[dist]).is_dir()
    problems = import_problems(dist, src)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the checkers can fail


def test_dependency_checker_flags_planted_mistakes():
    versions = {dist: "0.1.0" for dist in IMPORT_NAMES}
    bad_ir = {"project": {"dependencies": ["numpy", "jaxlib>=0.10.2,<0.11", "olympus-trace"]}}
    assert dependency_problems("olympus-ir", bad_ir, versions) == [
        "olympus-ir must not depend on olympus-trace",
        "olympus-ir must not depend on jaxlib",
    ]
    bad_olympus = {
        "project": {
            "dependencies": [
                "olympus-ir>=0.1",  # no upper bound
                "olympus-trace>=0.1,<0.3",  # too wide
                "olympus-lower>=0.2,<0.3",  # excludes the current 0.1.0
                "jaxlib>=0.10",
            ]
        }
    }
    problems = dependency_problems("olympus", bad_olympus, versions)
    assert problems == [
        "olympus must depend on olympus-runtime",
        "olympus: olympus-ir>=0.1: a sibling pin must be of the form >=X.Y,<X.(Y+1)",
        "olympus: olympus-lower>=0.2,<0.3: does not admit olympus-lower's current version 0.1.0",
        "olympus: olympus-trace>=0.1,<0.3: a sibling pin must be of the form >=X.Y,<X.(Y+1)",
        "olympus: jaxlib pin is 'jaxlib>=0.10', expected 'jaxlib>=0.10.2,<0.11'",
    ]
    lower = {"project": {"dependencies": ["numpy"]}}
    assert dependency_problems("olympus-lower", lower, versions) == [
        "olympus-lower must depend on olympus-ir",
        "olympus-lower must depend on jaxlib>=0.10.2,<0.11",
    ]


def test_import_checker_flags_planted_mistakes(tmp_path):
    def plant(dist: str, source: str) -> list[str]:
        src = tmp_path / dist / "src"
        pkg = src / IMPORT_NAMES[dist]
        pkg.mkdir(parents=True)
        (pkg / "mod.py").write_text(source, encoding="utf-8")
        return [p.split(": ", 1)[1] for p in import_problems(dist, src)]

    assert plant(
        "olympus-ir",
        "import numpy\nfrom olympus_ir import core\nimport olympus_trace.core\n"
        "def f():\n    import jaxlib\n",
    ) == ["olympus_ir must not import olympus_trace", "olympus_ir must not import jaxlib"]

    assert plant(
        "olympus-trace",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import jaxlib\n"
        "def f():\n    try:\n        import jaxlib\n    except ImportError:\n        return None\n"
        "try:\n    from jaxlib import xla_client\nexcept ImportError:\n    pass\n"
        "class C:\n    import jaxlib.mlir\n"
        "from olympus_lower import lowering\n"
        "import jaxlib\n",
    ) == [
        "olympus_trace may import jaxlib only optionally (inside a function or a try/except "
        "ImportError)",
        "olympus_trace must not import olympus_lower",
        "olympus_trace may import jaxlib only optionally (inside a function or a try/except "
        "ImportError)",
    ]

    assert plant(
        "olympus-runtime",
        "import jaxlib\nfrom olympus_ir import avals\nimport olympus\nfrom olympus_trace import x\n",
    ) == [
        "olympus_runtime must not import olympus",
        "olympus_runtime must not import olympus_trace",
    ]

    assert plant("olympus", "import olympus_ir, olympus_trace, olympus_lower, jaxlib\n") == []
