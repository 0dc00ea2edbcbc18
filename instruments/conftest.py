"""Options of the instruments' pytest modules (the size knobs)."""

from __future__ import annotations


def pytest_addoption(parser):
    group = parser.getgroup("olympus instruments")
    group.addoption(
        "--programs", type=int, default=None,
        help="fuzz: how many random programs to run (default 300, or $OLYMPUS_FUZZ_PROGRAMS); "
             "grad programs are a third of that on top")
    group.addoption(
        "--fuzz-seed", type=int, default=None,
        help="fuzz: the hypothesis seed (default 0, or $OLYMPUS_FUZZ_SEED): a fixed seed "
             "keeps the CI run deterministic")
    group.addoption(
        "--fuzz-report", default=None,
        help="fuzz: write every distinct mismatch (smallest reproducer each) to this "
             "Markdown file")
