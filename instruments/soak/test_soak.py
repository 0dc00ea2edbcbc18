"""The soak scenarios at their small sizes (seconds each), every one in a fresh process
with a timeout, judged by the bounds stated in soak.py (full sizes: ``nox -s soak``)."""

from __future__ import annotations

import sys

import pytest

from instruments.soak import soak


@pytest.mark.parametrize("scenario", ["jit_calls", "eager_ops", "fresh_lambdas", "new_shapes"])
def test_rss_and_live_buffers_stay_within_bounds(scenario):
    extra = ("8",) if scenario == "new_shapes" else ()
    result = soak.run_scenario(sys.executable, "olympus", scenario, soak.SMALL[scenario],
                               soak.SMALL_TIMEOUT, extra)
    problems = soak.judge(scenario, result)
    assert not problems, f"{soak.row(scenario, result)}: {problems}"


def test_threads_get_right_values():
    result = soak.run_scenario(sys.executable, "olympus", "threads", soak.SMALL["threads"],
                               soak.SMALL_TIMEOUT, ("8",))
    assert "error" not in result, result
    assert result["wrong_values"] == 0 and not result["errors"], result
    assert result["traces"] > 0 and result["compiles"] > 0  # the counters do count


def test_threads_compile_each_signature_once():
    """8 threads making each signature's first call together trace and compile it once
    (threads missing the same signature wait on one per-key lock, `jit.Jitted._miss`)."""
    many, one = soak.run_threads(sys.executable, "olympus", soak.SMALL["threads"],
                                 soak.SMALL_TIMEOUT)
    assert not soak.judge("threads", many, one)
