#!/usr/bin/env python
"""Write packages/olympus/tests/printing_expected.json: reference JAX's printed jaxpr of
each function in packages/olympus/tests/printing_corpus.py, with JAX's names replaced by
Olympus's (Jaxpr -> Olympuspr, jaxpr -> olympuspr, jax -> olympus).

Run with the reference JAX virtualenv's python (never with olympus), from any directory::

    /work/main/benchmarks/.venv-jax/bin/python scripts/record_printing_corpus.py

The test ``packages/olympus/tests/test_printing_corpus.py`` compares Olympus's printed
olympusprs with these texts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "packages", "olympus", "tests")
OUT = os.path.join(TESTS, "printing_expected.json")


def rename(text: str) -> str:
    return text.replace("Jaxpr", "Olympuspr").replace("jaxpr", "olympuspr").replace(
        "jax", "olympus")


def main() -> int:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax, random

    spec = importlib.util.spec_from_file_location(
        "printing_corpus", os.path.join(TESTS, "printing_corpus.py"))
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    ns = types.SimpleNamespace(olympus=jax, jnp=jnp, lax=lax, random=random, np=np,
                               custom_jvp=jax.custom_jvp, custom_vjp=jax.custom_vjp)
    texts = {}
    for name, fn, args in corpus.cases(ns):
        texts[name] = rename(jax.make_jaxpr(fn)(*args).pretty_print(use_color=False))
    doc = {"recorded_with": f"jax {jax.__version__}", "cases": texts}
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {len(texts)} texts to {os.path.relpath(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
