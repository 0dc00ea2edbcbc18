"""The "Ahead-of-time lowering and compilation" page, run as a doctest with its exact outputs."""

from __future__ import annotations

import doctest

import numpy as np
from _pytest.doctest import _get_checker, _get_number_flag
from seeds import AOT_PAGE, seed_text

import olympus.numpy as jnp


class _Recorder(doctest.DocTestRunner):
    def __init__(self):
        # pytest's checker provides the NUMBER option flag (as with --doctest-glob).
        super().__init__(checker=_get_checker(),
                         optionflags=_get_number_flag() | doctest.NORMALIZE_WHITESPACE)
        self.failed_sources: dict[str, str] = {}

    def report_failure(self, out, test, example, got):
        self.failed_sources[example.source] = f"expected:\n{example.want}\ngot:\n{got}"

    def report_unexpected_exception(self, out, test, example, exc_info):
        self.failed_sources[example.source] = f"raised {exc_info[0].__name__}: {exc_info[1]}"


def _run_page():
    text = seed_text(AOT_PAGE)
    test = doctest.DocTestParser().get_doctest(
        text, {"np": np, "jnp": jnp}, "aot_page", str(AOT_PAGE), 0)
    runner = _Recorder()
    runner.run(test, out=lambda s: None, clear_globs=False)
    return test, runner


def test_aot_page_examples_pass_exactly():
    test, runner = _run_page()
    failed = runner.failed_sources
    assert not failed, "\n\n".join(f">>> {s}{why}" for s, why in failed.items())
    # The page really was exercised: many examples ran, including the two modules.
    sources = [e.source for e in test.examples]
    assert len(sources) > 20
    assert "print(lowered_with_x.as_text())\n" in sources
    assert "olympus.vmap(g_jit)(zs)\n" in sources
