"""Divergences the fuzzer has found and that are still open.

Each entry names the regression test that pins it (`test_fuzz_regressions.py`, marked
``xfail(strict=True)``) and says which mismatches it explains. A program whose first
mismatch in some mode is explained by an entry counts as "known" instead of failing the
fuzz run. When a fix lands, its regression test starts passing, strict xfail turns that
into a failure, and the mark and the entry here are removed together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import value_types as vt
from .check import Mismatch
from .programs import Program

LOOPS = ("scan", "fori_loop", "while_loop")


@dataclass(frozen=True)
class Known:
    id: str
    regression: str  # test function in test_fuzz_regressions.py
    what: str
    matches: Callable[[Program, Mismatch], bool]


def _step(prog: Program, m: Mismatch):
    return prog.steps[m.step] if m.step is not None else None


def _int_result(prog: Program, m: Mismatch) -> bool:
    s = _step(prog, m)
    return s is not None and vt.kind(s.result.key) in "iu"


def _float_result(prog: Program, m: Mismatch) -> bool:
    s = _step(prog, m)
    return s is not None and vt.kind(s.result.key) == "f"


def _zero_divisor(prog: Program, m: Mismatch) -> bool:
    s = _step(prog, m)
    return s is not None and bool(np.any(np.asarray(s.args[1].ref) == 0))


def _is(kind: str, ops, error: str | None = None, text: str = ""):
    """A mismatch of `kind` in one of `ops` (with that error type / detail text)."""

    def match(prog: Program, m: Mismatch) -> bool:
        return (m.kind == kind and m.op in ops and (error is None or m.error == error)
                and text in m.detail)

    return match


def _weak_only(ops, got_weak: bool):
    """A type mismatch in `ops` that differs from JAX's only in the weak type."""

    def match(prog: Program, m: Mismatch) -> bool:
        if m.kind != "type" or m.op not in ops:
            return False
        got, want = m.detail.split(", JAX gives ")
        got = got.removeprefix("got ")
        return got.endswith("w") == got_weak and got.rstrip("w") == want.rstrip("w")

    return match


def _both(*preds):
    return lambda prog, m: all(p(prog, m) for p in preds)


COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
               "eq_op", "lt_op", "lax.eq", "lax.lt")

#: Open divergences (none today: the 18 found by the first runs were fixed in issue 17 --
#: integer // and % by zero, float //, ** with integer arrays, integer powers with array
#: exponents, weak types of comparisons / isfinite / isnan / floor_divide / relu / rint /
#: power / loop results, weak loop carries promoted, static out-of-range indices clamped,
#: boolean masks over empty dimensions, negative dynamic_slice starts, integer means,
#: var/std without degrees of freedom; their regression tests now pass unmarked).
KNOWN: tuple[Known, ...] = (
    Known("bool-times-inf-under-vmap", "test_bool_times_inf_under_vmap_matches_jax",
          "under a top-level vmap a bool operand is converted in its own eager program, so "
          "False * inf is nan where JAX (one jitted program) gives 0",
          lambda prog, m: m.mode == "vmap" and m.kind == "value"
          and m.op in ("mul_op", "multiply")),
)


def explain(prog: Program, m: Mismatch) -> Known | None:
    for k in KNOWN:
        if k.matches(prog, m):
            return k
    return None
