"""Plumbing shared by the case scripts: `--lib`, importing the library, timing, one JSON line.

A case script defines ``measure(lib, jnp) -> {name: metric(...)}`` and ends with
``run(measure)``. It prints exactly one JSON line on stdout::

    {"lib": "jax", "status": "ok", "metrics": {"add_us": {"value": 4.1, "unit": "us", ...}}}

``status`` is ``ok``, ``unsupported`` (the library raised NotImplementedError),
``skipped`` (the case raised `Skip`, e.g. an API is missing) or ``error``; the last three
carry a ``reason`` instead of metrics. ``notes`` (optional) are lines of context.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any


class Skip(Exception):
    """The case does not apply to this library (reported as skipped, with the message)."""


NOTES: list[str] = []


def note(text: str) -> None:
    """Attach a line of context (e.g. the BLAS kernel) to this case's result."""
    NOTES.append(text)


def metric(value: float, unit: str, *, better: str = "lower", geomean: bool = True) -> dict:
    """One measured number. Only ``better="lower"`` metrics with ``geomean`` enter the geomean."""
    return {"value": float(value), "unit": unit, "better": better,
            "geomean": bool(geomean and better == "lower")}


def load(name: str) -> tuple[Any, Any]:
    """``olympus``/``olympus.numpy`` or ``jax``/``jax.numpy``."""
    if name not in ("olympus", "jax"):
        raise SystemExit(f"--lib must be olympus or jax, not {name!r}")
    return importlib.import_module(name), importlib.import_module(f"{name}.numpy")


def seconds_per_call(fn: Callable[[], Any], *, number: int, repeats: int,
                     block: Callable[[Any], Any] | None = None) -> float:
    """Median over ``repeats`` of (time of ``number`` back-to-back calls) / ``number``.

    ``block`` is applied to the last result of each batch, so asynchronous work is counted.
    """
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            out = fn()
        if block is not None:
            block(out)
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def median_time(fn: Callable[[int], Any], repeats: int) -> float:
    """Median wall time of ``fn(i)`` for i in range(repeats) (each call may set up fresh work)."""
    samples = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def run(measure: Callable[[Any, Any], dict], *, needs_lib: bool = True) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True, choices=["olympus", "jax"])
    args = parser.parse_args()
    result: dict[str, Any] = {"lib": args.lib}
    try:
        lib, jnp = load(args.lib) if needs_lib else (args.lib, None)
        result.update(status="ok", metrics=measure(lib, jnp))
    except Skip as e:
        result.update(status="skipped", reason=str(e))
    except NotImplementedError as e:
        traceback.print_exc()
        result.update(status="unsupported", reason=f"NotImplementedError: {e}")
    except Exception as e:  # reported, so one failing case does not stop the suite
        traceback.print_exc()
        result.update(status="error", reason=f"{type(e).__name__}: {e}"[:500])
    if NOTES:
        result["notes"] = NOTES
    if args.lib == "olympus" and "jax" in sys.modules:
        result.update(status="error", reason="the olympus process imported jax", metrics={})
    print(json.dumps(result), flush=True)
