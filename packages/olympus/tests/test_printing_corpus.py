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


_NESTED_JIT = ("JAX wraps this library function in a nested jit (`jit[name=...]`); Olympus "
               "inlines it")
_STAGED_CONSTANTS = ("JAX stages the computation of constants (iota/eq/convert for an "
                     "identity, index arithmetic) where Olympus folds them into a constant")
_RULE = "a differentiation rule stages different equations than JAX's"
TRACED_DIFFERENTLY = {
    "common_eye": _STAGED_CONSTANTS,
    "common_grad_cond": "cond's partial evaluation: JAX's known branches return empty2 "
                        "residual placeholders, and its residuals are ordered differently",
    "common_grad_prod": _RULE + " (reduce_prod's JVP)",
    "common_grad_relu": "an unused instantiated zero is staged once more than in JAX",
    "common_grad_softmax": _RULE + " (the max in softmax/logsumexp: JAX's reshape and "
                           "select-based JVP)",
    "common_hessian": _STAGED_CONSTANTS + " (jacfwd's identity)",
    "common_index_update": _STAGED_CONSTANTS + " (scatter indices)",
    "common_jacfwd_sin": _STAGED_CONSTANTS + " (jacfwd's identity)",
    "common_take": _NESTED_JIT + " (_take), with index normalization staged",
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
