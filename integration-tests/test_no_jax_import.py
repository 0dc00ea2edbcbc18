"""Olympus is built on jaxlib alone: no code under packages/ may import the `jax` package."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = REPO / "packages"
SKIPPED_DIRS = {"__pycache__", "build", "dist", "venv", "node_modules"}


def python_files(root: Path) -> list[Path]:
    """Every .py file under root, skipping hidden, cache and build directories."""
    files = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts[:-1]
        if any(p.startswith(".") or p in SKIPPED_DIRS or p.endswith(".egg-info") for p in parts):
            continue
        files.append(path)
    return files


def _is_jax(module: str) -> bool:
    return module == "jax" or module.startswith("jax.")


def jax_imports(path: Path) -> list[str]:
    """`file:line: statement` for each `import jax[.x]` / `from jax[.x] import ...` in path."""
    try:
        shown = path.relative_to(REPO)
    except ValueError:
        shown = path
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"{shown}:{node.lineno}: import {alias.name}"
                for alias in node.names
                if _is_jax(alias.name)
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _is_jax(node.module):
                found.append(f"{shown}:{node.lineno}: from {node.module} import ...")
    return found


def test_packages_do_not_import_jax():
    files = python_files(PACKAGES)
    assert files, f"no .py files found under {PACKAGES}"
    found = [hit for path in files for hit in jax_imports(path)]
    assert not found, "the `jax` package is imported (use jaxlib):\n" + "\n".join(found)


def test_scanner_flags_planted_violations(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import os\n"
        "import jax\n"
        "import numpy as np, jax.numpy as jnp\n"
        "from jax import jit\n"
        "def f():\n"
        "    from jax._src import core\n"
        "import jaxlib\n"
        "import jaxlib.xla_client\n"
        "from jaxlib import xla_client\n"
        "from .jax import local_module\n"
        "import jaxtyping\n",
        encoding="utf-8",
    )
    found = jax_imports(planted)
    assert [hit.split(": ", 1)[0].rsplit(":", 1)[1] for hit in found] == ["2", "3", "4", "6"]
    assert found[0] == f"{planted}:2: import jax"
    assert found[1].endswith(":3: import jax.numpy")
    assert found[2].endswith(":4: from jax import ...")
    assert found[3].endswith(":6: from jax._src import ...")


def test_file_walk_skips_caches(tmp_path):
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "__pycache__" / "x.py").write_text("import jax\n")
    (tmp_path / "pkg" / "mod.py").write_text("import jax\n")
    assert python_files(tmp_path) == [tmp_path / "pkg" / "mod.py"]
