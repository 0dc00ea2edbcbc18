"""Every example on the documentation site's pages runs, and prints what the page says.

Each page under `docs/` is run through `doctest` in a fresh process (a page may configure
Olympus before first use, e.g. ask for 4 CPU devices), with a time bound. The pages that
live with the `olympus` package (`packages/olympus/docs/`, included by the site) are
doctested by the `olympus` session itself.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIP_DIRS = {"_build", "_ext", "reference"}
PAGES = sorted(
    p for p in DOCS.rglob("*.md")
    if not SKIP_DIRS & set(p.relative_to(DOCS).parts) and ">>> " in p.read_text()
)

_RUN = """
import doctest, sys
result = doctest.testfile(sys.argv[1], module_relative=False, optionflags=doctest.ELLIPSIS)
print(f"DOCTEST attempted={result.attempted} failed={result.failed}")
sys.exit(1 if result.failed else 0)
"""


def test_the_guides_are_found():
    names = {p.stem for p in PAGES}
    assert {"quickstart", "autodiff", "vmap", "control_flow", "sharding", "debugging",
            "export_and_caching", "ir_tool", "differences", "architecture"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples(page: Path, tmp_path: Path):
    proc = subprocess.run([sys.executable, "-c", _RUN, str(page)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    tail = proc.stdout.strip().splitlines()[-1:] or [""]
    assert proc.returncode == 0, f"{page.name}:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    attempted = int(tail[0].split("attempted=")[1].split()[0])
    assert attempted > 0, f"{page.name}: no example ran"
