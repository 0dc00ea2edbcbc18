"""Every public name of JAX 0.10.2's ``jax.scipy`` modules exists in ``olympus.scipy`` with
the same call signature: parameter names, kinds and defaults, and for classes the same
public methods (classmethods as classmethods). The expected signatures were recorded from
reference JAX 0.10.2 by ``scripts/jax_scipy_signatures.py`` (run in JAX's own process)
into ``data/jax_scipy_signatures.json``; annotations are not compared."""

from __future__ import annotations

import importlib
import inspect
import json
import os

import pytest

DATA = os.path.join(os.path.dirname(__file__), "data", "jax_scipy_signatures.json")
with open(DATA) as _f:
    _RECORDED = json.load(_f)


def _params(obj):
    sig = inspect.signature(obj)
    return [[p.name, p.kind.name, None if p.default is p.empty else repr(p.default)]
            for p in sig.parameters.values()]


def _method_kind(cls, name):
    for klass in cls.__mro__:
        if name in vars(klass):
            member = vars(klass)[name]
            return ("classmethod" if isinstance(member, classmethod) else
                    "staticmethod" if isinstance(member, staticmethod) else
                    "property" if isinstance(member, property) else "method")
    return None


def _differences(name, want, got):
    if want["kind"] == "function":
        if not callable(got) or inspect.isclass(got):
            return [f"{name}: expected a function, got {type(got).__name__}"]
        ours = _params(got)
        return [] if ours == want["params"] else [f"{name}{ours} != JAX's {want['params']}"]
    if not inspect.isclass(got):
        return [f"{name}: expected a class, got {type(got).__name__}"]
    problems = []
    if want["params"] is not None and _params(got) != want["params"]:
        problems.append(f"{name}{_params(got)} != JAX's {want['params']}")
    for meth, spec in want["methods"].items():
        kind = _method_kind(got, meth)
        if kind != spec["kind"]:
            problems.append(f"{name}.{meth}: {kind} (JAX: {spec['kind']})")
        elif "params" in spec and spec["params"] is not None:
            ours = _params(getattr(got, meth))
            if ours != spec["params"]:
                problems.append(f"{name}.{meth}{ours} != JAX's {spec['params']}")
    return problems


@pytest.mark.parametrize("jax_module", sorted(_RECORDED["modules"]))
def test_signatures_match_jax(jax_module):
    module = importlib.import_module(jax_module.replace("jax", "olympus", 1))
    problems = []
    for name, want in _RECORDED["modules"][jax_module].items():
        if not hasattr(module, name):
            problems.append(f"{name}: missing")
            continue
        problems += _differences(name, want, getattr(module, name))
    assert not problems, "\n".join(problems)


def test_recording_covers_the_issue_list():
    """The recording is JAX 0.10.2's and holds the modules and names issue 24 lists."""
    mods = _RECORDED["modules"]
    assert _RECORDED["jax_version"] == "0.10.2"
    assert len(mods["jax.scipy.linalg"]) == 40 and len(mods["jax.scipy.signal"]) == 10
    assert len(mods["jax.scipy.special"]) == 55
    assert {"dct", "dctn", "idct", "idctn"} == set(mods["jax.scipy.fft"])
    assert {"Rotation", "Slerp"} == set(mods["jax.scipy.spatial.transform"])
    assert {"gaussian_kde", "mode", "rankdata", "sem"} == set(mods["jax.scipy.stats"])
