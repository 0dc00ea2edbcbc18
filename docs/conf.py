"""Sphinx configuration for the Olympus documentation site (`nox -s docs`).

The site is built with warnings as errors. Two things are generated at build time by the
local extension `_ext/olympus_docs.py` and never checked in: the API reference pages (one
per public module, every public name documented from its docstring, a missing docstring
being a build warning and so an error) and the API-coverage page.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "Olympus"
author = "The Olympus developers"
copyright = "2026, the Olympus developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "olympus_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_typehints = "none"  # signatures as written; types are in the docstrings
autodoc_default_options = {"members": False}
autosummary_generate = False
napoleon_google_docstring = True
napoleon_numpy_docstring = True

html_theme = "alabaster"
html_title = "Olympus"
html_static_path: list[str] = []
