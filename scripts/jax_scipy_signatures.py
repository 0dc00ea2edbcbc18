#!/usr/bin/env python
"""Write packages/olympus/tests/data/jax_scipy_signatures.json: the call signatures of every
public name of reference JAX's ``jax.scipy`` modules (functions, and the classes' public
methods), which ``packages/olympus/tests/test_scipy_signatures.py`` compares with
``olympus.scipy``'s.

A one-off generator, run with the reference JAX virtualenv's python (never with olympus)::

    /work/main/benchmarks/.venv-jax/bin/python scripts/jax_scipy_signatures.py

A parameter is recorded as ``[name, kind, default]`` with ``default`` the ``repr`` of the
default value (``null`` when there is none). Annotations are left out: Olympus spells its
types differently and they do not change which calls work.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import types
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = os.path.join(ROOT, "scripts", "jax_public_names.json")
OUT = os.path.join(ROOT, "packages", "olympus", "tests", "data", "jax_scipy_signatures.json")


def _params(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, None if p.default is p.empty else repr(p.default)]
            for p in sig.parameters.values()]


def _entry(obj):
    if isinstance(obj, types.ModuleType):
        return None
    if inspect.isclass(obj):
        methods = {}
        for name, member in sorted(vars(obj).items()):
            if name.startswith("_"):
                continue
            kind = ("classmethod" if isinstance(member, classmethod) else
                    "staticmethod" if isinstance(member, staticmethod) else
                    "property" if isinstance(member, property) else "method")
            if kind == "property":
                methods[name] = {"kind": kind}
                continue
            fn = getattr(obj, name)
            if callable(fn):
                methods[name] = {"kind": kind, "params": _params(fn)}
        return {"kind": "class", "params": _params(obj), "methods": methods}
    if callable(obj):
        return {"kind": "function", "params": _params(obj)}
    return None


def main():
    import jax

    with open(NAMES) as f:
        modules = {m: n for m, n in json.load(f)["modules"].items() if m.startswith("jax.scipy")}
    out = {"format": 1, "jax_version": jax.__version__, "modules": {}}
    for mod_name, names in sorted(modules.items()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = importlib.import_module(mod_name)
            entries = {}
            for name in sorted(names):
                if f"{mod_name}.{name}" in modules:
                    continue  # a submodule: listed on its own
                entry = _entry(getattr(mod, name))
                if entry is not None:
                    entries[name] = entry
        out["modules"][mod_name] = entries
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {OUT}: {sum(len(v) for v in out['modules'].values())} entries")


if __name__ == "__main__":
    main()
