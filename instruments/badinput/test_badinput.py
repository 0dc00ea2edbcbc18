"""The bad-input corpus in the default test command: its integrity (cheap), and the smoke
subset (cases marked ``smoke=True``, about fifty, the known crash among them), each run in
its own Olympus process with a timeout and judged against reference JAX's outcome recorded
in jax_outcomes.json (by ``python -m instruments.badinput.runner --record-jax``, which runs
JAX 0.10.2 in its own process). The whole corpus runs in ``nox -s badinput``.

Open divergences (`known.KNOWN_OPEN`) are strict xfails: once fixed, the case agrees with
JAX, the xfail turns into a failure, and the entry is removed.
"""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from instruments.badinput import runner
from instruments.badinput.allowlist import ALLOWED
from instruments.badinput.cases import CASES, translate
from instruments.badinput.known import KNOWN_CRASHES, KNOWN_OPEN

RECORDED = runner.load_recorded()
SMOKE_TIMEOUT = 120.0
#: Every public module that exists today, by the id prefix of its cases.
MODULES = ("jit", "stages", "grad", "vjp", "jvp", "vmap", "numpy", "lax", "random", "nn",
           "scipy", "tree", "debug", "config", "device", "custom_jvp", "custom_vjp",
           "checkpoint", "linearize", "errors", "kwargs")


def test_corpus_is_large_unique_and_covers_every_module():
    ids = [c.id for c in CASES]
    assert len(ids) >= 300
    assert len(set(ids)) == len(ids), [i for i, n in Counter(ids).items() if n > 1]
    prefixes = Counter(i.split(".")[0] for i in ids)
    assert set(prefixes) == set(MODULES), set(prefixes) ^ set(MODULES)
    smoke = [c for c in CASES if c.smoke]
    assert 40 <= len(smoke) <= 70
    assert any(c.id == "numpy.zeros_huge_shape" for c in smoke)  # the crash JAX still has


def test_every_case_has_a_recorded_jax_outcome():
    missing = [c.id for c in CASES if c.id not in RECORDED]
    assert not missing, f"run the runner with --record-jax; missing: {missing[:20]}"


def test_allow_list_and_known_list_name_real_cases():
    ids = {c.id for c in CASES}
    assert not set(ALLOWED) - ids
    assert not set(KNOWN_OPEN) - ids
    assert not set(KNOWN_CRASHES) - ids
    assert not set(ALLOWED) & set(KNOWN_OPEN)
    for cid, entry in ALLOWED.items():
        assert entry.jax and entry.olympus and entry.why, cid


def test_translation_is_mechanical():
    src = "olympus.make_olympuspr(f)(x); olympus.jit(g); Olympuspr; 'olympus_enable_x64'"
    assert translate(src) == "jax.make_jaxpr(f)(x); jax.jit(g); Jaxpr; 'jax_enable_x64'"


def _param(case):
    marks = []
    reason = KNOWN_OPEN.get(case.id) or KNOWN_CRASHES.get(case.id)
    if reason:
        marks.append(pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES if c.smoke])
def test_smoke_case_matches_jax(case):
    ours = runner.run_case(sys.executable, "olympus", case, timeout=SMOKE_TIMEOUT)
    assert ours["outcome"] not in ("crash", "hang"), runner.describe(ours)
    theirs = RECORDED.get(case.id)
    assert theirs is not None, "no recorded JAX outcome"
    diff = runner.compare(case, ours, theirs)
    if case.id in ALLOWED:
        assert diff is not None, "Olympus now agrees with JAX: remove the allow-list entry"
        return
    assert diff is None, diff
