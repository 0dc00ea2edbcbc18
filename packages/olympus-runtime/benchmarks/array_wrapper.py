"""Patched ArrayImpl vs a Python wrapper class: what each costs per output.

olympus_runtime makes `Array` *be* jaxlib's C++ ``ArrayImpl`` (methods added with
setattr) instead of wrapping each ``ArrayImpl`` in a Python object. This measures the
alternative: a ``__slots__`` wrapper holding the ArrayImpl, built around every output
and unwrapped for every input. Not a test; run ``python benchmarks/array_wrapper.py``.

Statements are timed in alternation (so machine noise hits them alike); the table shows
the minimum (the intrinsic cost; use it on a busy machine) and the median, in µs.
"""

from __future__ import annotations

import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from mlir_helpers import binary_module  # noqa: E402

import olympus_runtime as ort  # noqa: E402


class WrappedArray:
    """The alternative design: a Python object around each C++ array."""

    __slots__ = ("_arr",)

    def __init__(self, arr):
        self._arr = arr

    @property
    def shape(self):
        return self._arr.aval.shape


class WrappedArrayCached:
    """Wrapper variant that copies shape/dtype at construction (cheaper reads)."""

    __slots__ = ("_arr", "shape", "dtype")

    def __init__(self, arr):
        self._arr = arr
        aval = arr.aval
        self.shape = aval.shape
        self.dtype = aval.dtype


def interleaved(stmts: dict, number: int, repeat: int = 21) -> dict:
    """name -> (min, median) µs per call, statements timed in alternation."""
    timers = {k: timeit.Timer(s) for k, s in stmts.items()}
    samples: dict = {k: [] for k in stmts}
    for _ in range(repeat):
        for k, t in timers.items():
            samples[k].append(t.timeit(number) / number * 1e6)
    return {k: (min(v), statistics.median(v)) for k, v in samples.items()}


def main() -> None:
    exe = ort.compile(binary_module("add", shape=()))
    handlers = exe.out_handlers
    run = exe.loaded.execute_sharded
    a = ort.device_put(np.float32(1.0))
    b = ort.device_put(np.float32(2.0))
    wa, wb = WrappedArray(a), WrappedArray(b)
    outs = [ort.device_put(np.float32(i)) for i in range(16)]
    w, wc = WrappedArray(a), WrappedArrayCached(a)

    results = interleaved({
        "execute 1-op (2 in, 1 out), patched ArrayImpl":
            lambda: run([a, b]).consume_with_handlers(handlers)[0],
        "execute 1-op (2 in, 1 out), wrapper (unwrap in, wrap out)":
            lambda: WrappedArray(run([wa._arr, wb._arr]).consume_with_handlers(handlers)[0]),
    }, number=5000)
    per16 = interleaved({
        "16 outputs returned as is": lambda: [x for x in outs],
        "16 outputs wrapped (slots wrapper)": lambda: [WrappedArray(x) for x in outs],
        "16 outputs wrapped (wrapper copying shape/dtype)":
            lambda: [WrappedArrayCached(x) for x in outs],
    }, number=20000)
    attrs = interleaved({
        "x.shape, patched ArrayImpl (property over aval)": lambda: a.shape,
        "x.shape, wrapper (property over _arr.aval)": lambda: w.shape,
        "x.shape, wrapper with copied fields": lambda: wc.shape,
        "x.aval (C++ member)": lambda: a.aval,
        "timing floor (empty lambda)": lambda: None,
    }, number=200000)

    rows = list(results.items()) + list(per16.items()) + list(attrs.items())
    width = max(len(k) for k, _ in rows)
    print(f"{'case':<{width}}  {'min µs':>8}  {'median µs':>9}")
    for k, (lo, med) in rows:
        print(f"{k:<{width}}  {lo:8.3f}  {med:9.3f}")
    base = per16["16 outputs returned as is"][0]
    print()
    print(f"wrapping cost per output (min): "
          f"{(per16['16 outputs wrapped (slots wrapper)'][0] - base) / 16:.3f} µs, "
          f"{(per16['16 outputs wrapped (wrapper copying shape/dtype)'][0] - base) / 16:.3f} µs "
          "with copied fields")
    (p, _), (q, _) = results.values()
    print(f"execute + wrap vs patched (min): {q - p:+.3f} µs per call ({(q / p - 1) * 100:+.0f}%)")


if __name__ == "__main__":
    main()
