"""Differential fuzzing: random well-typed olympus.numpy / olympus.lax programs, run eagerly,
under jit, under vmap and under grad, checked step by step against NumPy with JAX's types
(see check.py for what each mode compares, and programs.py for what is generated).

Size: ``--programs N`` (or ``$OLYMPUS_FUZZ_PROGRAMS``), default 300 (the CI size, in the
default test command); ``nox -s fuzz -- --programs 10000`` is the long run. The work is
split into two shards (separate seeds) so ``-n 2`` uses both cores. The hypothesis seed is
fixed (``--fuzz-seed``, default 0), so a CI run is deterministic; pass another seed to
explore. Every mismatch not explained by `known.KNOWN` fails the test, which lists each
distinct mismatch with the smallest program that showed it, as a runnable reproducer.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import olympus
from instruments.fuzz import check, generators, known, programs

SHARDS = 2
DEFAULT_PROGRAMS = 300


def option(config, name: str, env: str, default: int) -> int:
    """A size knob: the command-line option, else the environment variable, else default."""
    value = config.getoption(name)
    if value is None and os.environ.get(env):
        value = int(os.environ[env])
    return default if value is None else value


class Findings:
    """The smallest program per distinct mismatch, and counts."""

    def __init__(self):
        self.programs = 0
        self.known: dict[str, int] = {}
        self.new: dict[tuple, tuple[programs.Program, check.Mismatch]] = {}

    def add(self, prog: programs.Program, m: check.Mismatch) -> None:
        k = known.explain(prog, m)
        if k is not None:
            self.known[k.id] = self.known.get(k.id, 0) + 1
            return
        key = m.key()
        if key not in self.new or prog.size() < self.new[key][0].size():
            self.new[key] = (prog, m)

    def report(self, title: str) -> str:
        lines = [f"# {title}", "", f"{self.programs} programs; "
                 f"{len(self.new)} distinct new mismatches; known: {self.known or 'none'}", ""]
        for _, (prog, m) in sorted(self.new.items(), key=lambda kv: str(kv[0])):
            lines += [f"## {m.describe()}", "", "```python", prog.source(m.mode).rstrip(),
                      "```", ""]
        return "\n".join(lines)


def _run(config, shard: int, grad: bool) -> Findings:
    total = option(config, "--programs", "OLYMPUS_FUZZ_PROGRAMS", DEFAULT_PROGRAMS)
    n = max(1, (total // 3 if grad else total) // SHARDS)
    base = option(config, "--fuzz-seed", "OLYMPUS_FUZZ_SEED", 0)
    findings = Findings()
    modes = ("grad",) if grad else ("eager", "jit", "vmap")

    @seed(base * 1000 + shard * 2 + int(grad))
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.randoms(use_true_random=True))
    def run(rnd):
        prog = generators.build(rnd, grad=grad)
        findings.programs += 1
        for m in check.run_all(prog, olympus, modes):
            findings.add(prog, m)

    run()
    path = config.getoption("--fuzz-report")
    if path:
        p = Path(f"{path}.{'grad' if grad else 'modes'}{shard}.md")
        p.write_text(findings.report(f"fuzz shard {shard} ({'grad' if grad else 'modes'})"))
    return findings


def _conclude(findings: Findings, what: str) -> None:
    print(f"\n{what}: {findings.programs} programs, known divergences hit: "
          f"{findings.known or 'none'}")
    if findings.new:
        pytest.fail(findings.report(f"{what}: new mismatches"), pytrace=False)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_random_programs_eager_jit_vmap(request, shard):
    _conclude(_run(request.config, shard, grad=False), f"eager/jit/vmap shard {shard}")


@pytest.mark.parametrize("shard", range(SHARDS))
def test_random_programs_grad(request, shard):
    _conclude(_run(request.config, shard, grad=True), f"grad shard {shard}")
