"""The evaluation rule: what `bind` does outside any trace, and a tracer that escaped its
trace reaching it."""

from __future__ import annotations

import numpy as np
import pytest

import olympus_trace
from olympus_ir import primitives as P
from olympus_trace import lax_ops as lax
from olympus_trace import make_olympuspr
from olympus_trace.errors import UnexpectedTracerError

_leaked = []


def _store_in_global(x):
    _leaked.append(lax.mul(x, 2.0))
    return x


def test_leaked_tracer_used_eagerly_never_reaches_the_rule(dummy_eval_rule):
    _leaked.clear()
    make_olympuspr(_store_in_global)(np.ones(3, np.float32))
    with pytest.raises(UnexpectedTracerError, match="Encountered an unexpected tracer"):
        lax.add(_leaked[0], 1.0)
    assert dummy_eval_rule == []  # the eager rule never saw the tracer
    _leaked.clear()


def test_eager_rule_is_used_outside_traces(dummy_eval_rule):
    assert olympus_trace.bind(P.sin_p, np.float32(1)) == 0
    assert [c[0] for c in dummy_eval_rule] == ["sin"]


def test_no_eager_rule_installed():
    prev = olympus_trace.core._eval_rule
    olympus_trace.set_eval_rule(None)
    try:
        with pytest.raises(RuntimeError, match="cannot evaluate primitive 'sin' eagerly"):
            lax.sin(np.float32(1))
    finally:
        olympus_trace.set_eval_rule(prev)
