"""Pages the Olympus site generates at build time, and the checks that keep them honest.

* The API reference: one page per public module, listing every public name (the module's
  `__all__`, else its non-underscore attributes) with its docstring through autodoc. A
  public callable or class with no docstring is a Sphinx warning, which `-W` turns into a
  failed build: the reference cannot silently skip a name.
* The API-coverage page: every public name of JAX 0.10.2 (the recorded list in
  `scripts/jax_public_names.json`) and whether Olympus has it, from `scripts/api_coverage.py`.

Generated files go to `reference/_generated/`, which is ignored by git and rebuilt on every
build, so the reference can never be stale.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
import types
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
OUT = DOCS / "reference" / "_generated"

# (section title, modules) in the order the reference index shows them.
SECTIONS: list[tuple[str, list[str]]] = [
    ("Core transformations and arrays", ["olympus"]),
    ("NumPy and SciPy", [
        "olympus.numpy", "olympus.numpy.linalg", "olympus.numpy.fft",
        "olympus.scipy.special", "olympus.scipy.linalg", "olympus.scipy.stats",
        "olympus.scipy.signal", "olympus.scipy.optimize", "olympus.scipy.fft",
        "olympus.scipy.ndimage", "olympus.scipy.integrate", "olympus.scipy.interpolate",
        "olympus.scipy.cluster.vq", "olympus.scipy.spatial.transform",
        "olympus.scipy.sparse.linalg",
    ]),
    ("Primitives and randomness", [
        "olympus.lax", "olympus.lax.linalg", "olympus.random", "olympus.nn",
        "olympus.nn.initializers", "olympus.dtypes", "olympus.typing", "olympus.ops",
        "olympus.image", "olympus.experimental.random", "olympus.experimental.sparse",
    ]),
    ("Pytrees", ["olympus.tree_util", "olympus.tree"]),
    ("Compilation stages, export and caching", [
        "olympus.stages", "olympus.export", "olympus.ffi", "olympus.ref", "olympus.dlpack",
        "olympus.experimental.compilation_cache.compilation_cache",
    ]),
    ("Devices, sharding and processes", [
        "olympus.sharding", "olympus.distributed", "olympus.experimental.mesh_utils",
        "olympus.experimental.multihost_utils", "olympus.experimental.compute_on",
    ]),
    ("Autodiff extras", [
        "olympus.custom_derivatives", "olympus.ad_checkpoint", "olympus.test_util",
        "olympus.custom_batching", "olympus.experimental.jet", "olympus.experimental.ode",
    ]),
    ("Debugging and introspection", [
        "olympus.debug", "olympus.experimental", "olympus.experimental.checkify",
        "olympus.errors", "olympus.profiler", "olympus.monitoring",
    ]),
    ("Example libraries", [
        "olympus.example_libraries.stax", "olympus.example_libraries.optimizers",
    ]),
    ("Internals JAX exposes", ["olympus.core"]),
    ("The lower packages, for tooling", [
        "olympus_ir", "olympus_trace", "olympus_lower", "olympus_runtime",
    ]),
]


def public_names(module: types.ModuleType) -> list[str]:
    """The names a module offers: its `__all__`, else its attributes without a leading
    underscore; submodules are documented on their own pages."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    out = []
    for n in names:
        obj = getattr(module, n, None)
        if isinstance(obj, types.ModuleType) or n.startswith("_"):
            continue
        out.append(n)
    return sorted(set(out), key=lambda s: (s.lower(), s))


# Objects jaxlib defines and Olympus re-exports as they are: jaxlib gives them no docstring,
# so their reference entries say here what they are to an Olympus user (keyed by the
# object's own module and qualified name).
FOREIGN_DOCS = {
    "jaxlib._jax.Array": "The array type: every concrete Olympus array, and every tracer inside "
        "`jit`, `grad` and `vmap`, is an instance (`isinstance(x, olympus.Array)`). Its methods "
        "and operators follow NumPy's, as olympus.numpy defines them.",
    "jaxlib._jax.ArrayImpl": "The concrete array class: a buffer (or one per shard) on devices, "
        "with a shape, dtype, weak type and sharding.",
    "jaxlib._jax.PjitFunction": "What `olympus.jit` returns: call it to run the compiled "
        "function (the C++ fast path when the signature was seen before), or use `.trace`, "
        "`.lower`, `.eval_shape` and `.clear_cache`.",
    "jaxlib._jax.Sharding": "The base class of every sharding (`NamedSharding`, "
        "`SingleDeviceSharding`): how an array's elements are laid out across devices.",
    "jaxlib._jax.pytree.PyTreeDef": "The structure of a pytree without its leaves, as returned by "
        "`tree_flatten`; `unflatten` rebuilds a tree from leaves.",
    "jaxlib._jax.pytree.SequenceKey": "A key path entry for a child of a list or tuple: `.idx`.",
    "jaxlib._jax.pytree.DictKey": "A key path entry for a child of a dict: `.key`.",
    "jaxlib._jax.pytree.GetAttrKey": "A key path entry for a named attribute (namedtuples, dataclasses): "
        "`.name`.",
    "jaxlib._jax.pytree.FlattenedIndexKey": "A key path entry for the i-th child of a custom node "
        "registered without keys: `.key`.",
    "jaxlib._profiler.ProfileOptions": "Options of a profiler trace (`olympus.profiler.trace(..., "
        "profiler_options=...)`): host and Python tracer levels, start timestamp, duration.",
}


def _qualname(obj: object) -> str:
    name = getattr(obj, "__qualname__", "") or ""
    return f"{getattr(obj, '__module__', '')}.{name.rsplit('.', 1)[-1]}"


def _kind(obj: object) -> str:
    if isinstance(obj, (types.UnionType, types.GenericAlias)) or type(obj).__module__ == "typing":
        return "data"  # type aliases (olympus.typing) read best with their value
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def _own_doc(obj: object) -> str | None:
    """The object's docstring, not one it only inherits from a builtin base (an instance of
    `int` or a bare `object` subclass would otherwise look documented)."""
    if _kind(obj) == "data":
        return None
    if _qualname(obj) in FOREIGN_DOCS:
        return FOREIGN_DOCS[_qualname(obj)]
    doc = inspect.getdoc(obj)
    if not doc or not doc.strip():
        return None
    if inspect.isclass(obj) and obj.__doc__ is None:
        return None
    return doc


_DOCUMENTED: set[int] = set()  # classes already given an index entry (see below)


def _module_page(modname: str) -> tuple[str, int, list[str]]:
    module = importlib.import_module(modname)
    names = public_names(module)
    missing = []
    lines = [modname, "=" * len(modname), "", f".. module:: {modname}", "    :no-index:", ""]
    summary = (inspect.getdoc(module) or "").strip().split("\n\n")[0]
    if summary:
        lines += ["::", ""] + ["    " + s for s in summary.splitlines()] + [""]
    data = []
    for name in names:
        obj = getattr(module, name)
        kind = _kind(obj)
        if kind == "data":
            data.append((name, obj))
            continue
        if _own_doc(obj) is None:
            missing.append(f"{modname}.{name}")
        directive = "autoclass" if kind == "class" else "autofunction"
        lines += [f".. {directive}:: {modname}.{name}"]
        if kind == "class":
            # autodoc also indexes a class under its defining module's name, so a class
            # re-exported by several modules is indexed from its first page only.
            if id(obj) in _DOCUMENTED:
                lines.append("   :no-index:")
            _DOCUMENTED.add(id(obj))
        lines.append("")
    if data:
        lines += ["Constants and values", "--------------------", "",
                  ".. list-table::", "   :header-rows: 1", "", "   * - name", "     - value"]
        for name, obj in data:
            text = repr(obj).replace("\n", " ")
            if len(text) > 80:
                text = text[:77] + "..."
            lines += [f"   * - ``{name}``", f"     - ``{text}``" if text else "     -"]
        lines.append("")
    return "\n".join(lines) + "\n", len(names), missing


def _olympus_name(name: str) -> str:
    """JAX's name as Olympus spells it (the renaming the API-coverage script applies)."""
    for a, b in (("Jaxpr", "Olympuspr"), ("jaxpr", "Olympuspr".lower()), ("JAX", "OLYMPUS"),
                 ("jax", "olympus")):
        name = name.replace(a, b)
    return name


def _escape_literal(text: str) -> str:
    return text.replace("`", "'")


def _coverage_page() -> str:
    script = ROOT / "scripts" / "api_coverage.py"
    done = subprocess.run([sys.executable, str(script), "--json"], capture_output=True,
                          text=True, check=True, timeout=600)
    report = json.loads(done.stdout)
    names = json.loads((ROOT / "scripts" / "jax_public_names.json").read_text())
    modules = names["modules"] if "modules" in names else names
    lines = [
        "API coverage against JAX 0.10.2", "================================", "",
        f"Olympus has **{report['present']} of {report['total']}** public names of JAX "
        f"{report['jax_version']} ({report['percent']:.1f}%), counted by "
        "``scripts/api_coverage.py`` over the names recorded from reference JAX in "
        "``scripts/jax_public_names.json``. This page is generated on every build.", "",
        ".. list-table::", "   :header-rows: 1", "",
        "   * - JAX module", "     - Olympus module", "     - present", "     - total",
    ]
    for m in report["modules"]:
        lines += [f"   * - ``{m['jax_module']}``", f"     - ``{m['module']}``",
                  f"     - {m['present']}", f"     - {m['total']}"]
    lines.append("")
    for m in report["modules"]:
        jax_names = modules.get(m["jax_module"], []) if isinstance(modules, dict) else []
        missing = set(m.get("missing", []))
        title = m["module"]
        lines += [title, "-" * len(title), ""]
        if m.get("import_error"):
            lines += [f"Not importable in Olympus: ``{_escape_literal(m['import_error'])}``", ""]
        if jax_names:
            have = [_olympus_name(n) for n in jax_names if _olympus_name(n) not in missing]
            lines += [f"Present ({len(have)}): " + (", ".join(f"``{n}``" for n in have) or "none"), ""]
        lines += [f"Missing ({len(missing)}): " + (", ".join(f"``{n}``" for n in sorted(missing)) or "none"), ""]
    return "\n".join(lines) + "\n"


# `|x|` in a plain-text docstring means an absolute value, but reStructuredText reads it
# as a substitution reference.
_BARS = re.compile(r"(?<![`\\])\|(?=\S)([^|`]*?\S)\|")


def fill_docstring(app, what, name, obj, options, lines) -> None:
    """Docstrings autodoc cannot use as they are: jaxlib's undocumented classes get theirs
    from FOREIGN_DOCS; NumPy's own functions re-exported by olympus.numpy (printing options,
    file I/O) point to NumPy instead of rendering NumPy's docstring, whose cross-references
    only resolve inside NumPy's documentation."""
    if _qualname(obj) in FOREIGN_DOCS and not any(line.strip() for line in lines):
        lines[:] = [FOREIGN_DOCS[_qualname(obj)]]
    elif getattr(obj, "__module__", "") == "numpy" and name.startswith("olympus."):
        short = name.rsplit(".", 1)[-1]
        lines[:] = [f"NumPy's own ``numpy.{short}``, re-exported unchanged: see NumPy's "
                    "documentation."]
    lines[:] = [_BARS.sub(r"\\|\1\\|", line) for line in lines]


def generate(app) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.rst"):
        old.unlink()
    index = ["API reference", "=============", "",
             "Every public name of every public module, documented from its docstring. The "
             "pages are generated on each build; a public function or class without a "
             "docstring fails the build.", ""]
    total = 0
    all_missing: list[str] = []
    for title, mods in SECTIONS:
        present = []
        for modname in mods:
            try:
                page, count, missing = _module_page(modname)
            except ImportError as e:
                logger.warning("reference: cannot import %s: %s", modname, e)
                continue
            (OUT / f"{modname}.rst").write_text(page)
            present.append(modname)
            total += count
            all_missing += missing
        index += [title, "-" * len(title), "", ".. toctree::", "   :maxdepth: 1", ""]
        index += [f"   {m}" for m in present] + [""]
    (OUT / "index.rst").write_text("\n".join(index) + "\n")
    (OUT / "api_coverage.rst").write_text(_coverage_page())
    logger.info("reference: %d public names in %d modules", total,
                sum(len(m) for _, m in SECTIONS))
    for name in all_missing:
        logger.warning("reference: %s has no docstring", name)


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", fill_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
