"""Roofline costs of collectives inside shard_map on a (2, 2, 2) mesh of 8 virtual CPU
devices, run in its own process by `test_roofline.py` (``OLYMPUS_NUM_CPU_DEVICES=8``).
Expected values were recorded from reference JAX 0.10.2 with the same programs
(``data/roofline_cases.py``; ``scripts/record_roofline.py``, ``roofline_jax.json``).

Not compared, because Olympus traces them differently from JAX (not a roofline matter):
the backward passes of `roofline_and_grad` inside shard_map (Olympus's VJP of shard_map
recomputes the forward body in the backward shard_map where JAX passes residuals)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

import olympus

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_roofline import load_cases, olympus_summary  # noqa: E402

pytestmark = pytest.mark.skipif(
    olympus.device_count() != 8, reason="needs OLYMPUS_NUM_CPU_DEVICES=8 (see test_roofline.py)")

CASES, NS = load_cases()
MESH = CASES.mesh_cases(NS)
EXPECTED = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "roofline_jax.json").read_text())["mesh"]
FORWARD_ONLY = {"grad_matmuls", "remat"}


@pytest.mark.parametrize("name", sorted(MESH))
def test_mesh_costs_equal_jax(name):
    logging.disable(logging.WARNING)
    got = olympus_summary(CASES, MESH[name])
    want = EXPECTED[name]
    if name in FORWARD_ONLY:
        assert len(got["results"]) == len(want["results"]) == 2
        got["results"], want = got["results"][:1], dict(want, results=want["results"][:1])
    assert got == want
