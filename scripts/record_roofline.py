"""Record reference JAX 0.10.2's roofline results for the programs of
``packages/olympus/tests/data/roofline_cases.py``.

Run with the reference-JAX venv (never in a process that imports olympus):

    benchmarks/.venv-jax/bin/python scripts/record_roofline.py

Writes ``packages/olympus/tests/data/roofline_jax.json``: per case, the output shapes
(shape, dtype, sharding spec) and every field of each `RooflineResult`, or the error JAX
raised. The mesh cases run on 8 virtual CPU devices.
"""

from __future__ import annotations

import importlib.util
import json
import os
import types
from pathlib import Path

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

# JAX's roofline logs through absl, which the reference venv lacks; the standard library's
# logging stands in (only ``absl.logging.warning`` is used).
if importlib.util.find_spec("absl") is None:
    import logging
    import sys

    _absl = types.ModuleType("absl")
    _absl.logging = logging
    sys.modules["absl"] = _absl
    sys.modules["absl.logging"] = logging

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.callback import io_callback  # noqa: E402
from jax.experimental import roofline  # noqa: E402
from jax.extend.core import Primitive  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "packages/olympus/tests/data"


def main() -> None:
    spec = importlib.util.spec_from_file_location("roofline_cases", DATA / "roofline_cases.py")
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    ns = types.SimpleNamespace(jax=jax, jnp=jnp, lax=lax, roofline=roofline, P=P,
                               NamedSharding=NamedSharding, AxisType=AxisType,
                               Primitive=Primitive, ShapedArray=jax.core.ShapedArray,
                               io_callback=io_callback)
    out = {}
    for group, make in (("single_device", cases.single_device_cases),
                        ("mesh", cases.mesh_cases)):
        out[group] = {}
        for name, thunk in make(ns).items():
            try:
                out[group][name] = cases.summarize(thunk())
            except Exception as e:  # noqa: BLE001 - recording what JAX raises
                out[group][name] = {"error": f"{type(e).__name__}: {e}"}
    tmp = DATA / "roofline_jax.json.tmp"
    tmp.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    tmp.replace(DATA / "roofline_jax.json")


if __name__ == "__main__":
    main()
