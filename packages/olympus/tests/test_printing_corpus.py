"""Printed olympusprs equal JAX 0.10.2's printed jaxprs, character for character.

The expected texts in ``printing_expected.json`` were recorded by running reference JAX
0.10.2 in its own process on the same functions (``printing_corpus.py``) with
``scripts/record_printing_corpus.py``, which replaces JAX's names by Olympus's (Jaxpr ->
Olympuspr, jaxpr -> olympuspr, jax -> olympus). Rerun it after changing the corpus.

`TRACED_DIFFERENTLY` lists the functions whose olympuspr is not JAX's jaxpr (different
equations, not a different printing), or that Olympus cannot trace yet: strict xfails, so
each turns into a failure to update the list once it is fixed.
"""

from __future__ import annotations

import json
import os
import types

import numpy as np
import pytest
from printing_corpus import cases

import olympus
import olympus.numpy as jnp
from olympus import lax, random

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "printing_expected.json")) as f:
    EXPECTED = json.load(f)["cases"]

NS = types.SimpleNamespace(olympus=olympus, jnp=jnp, lax=lax, random=random, np=np,
                           custom_jvp=olympus.custom_jvp, custom_vjp=olympus.custom_vjp)
CASES = {name: (fn, args) for name, fn, args in cases(NS)}


def test_corpus_is_recorded():
    assert sorted(CASES) == sorted(EXPECTED)


TRACED_DIFFERENTLY = {
    "grad_of_where": "JAX's linearized _where returns an instantiated zero tangent as a "
                     "residual (a literal output) and passes it to the transposed call",
}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=TRACED_DIFFERENTLY[n]))
    if n in TRACED_DIFFERENTLY else n
    for n in sorted(EXPECTED)
])
def test_printed_like_jax(name):
    fn, args = CASES[name]
    text = olympus.make_olympuspr(fn)(*args).pretty_print(use_color=False)
    assert text == EXPECTED[name]
