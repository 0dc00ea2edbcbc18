"""Patched ArrayImpl vs a Python wrapper class: what each costs per output.

olympus_runtime makes `Array` *be* jaxlib's C++ ``ArrayImpl`` (methods added with
setattr) instead of wrapping each ``ArrayImpl`` in a Python object. This measures the
alternative: a ``__slots__`` wrapper holding the ArrayImpl, built around every output
and unwrapped for every input. Not a test; run ``python benchmarks/array_wrapper.py``.
"""

from __future__ import annotations

import math
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import olympus_runtime as ort  # noqa: E402
from mlir_helpers import binary_module  # noqa: E402


class WrappedArray:
    """The alternative design: a Python object around each C++ array."""

    __slots__ = ("_arr",)

    def __init__(self, arr):
        self._arr = arr

    @property
    def shape(self):
        return self._arr.aval.shape

    @property
    def dtype(self):
        return self._arr.aval.dtype


class WrappedArrayCached:
    """Wrapper variant that copies shape/dtype at construction (cheaper reads)."""

    __slots__ = ("_arr", "shape", "dtype")

    def __init__(self, arr):
        self._arr = arr
        aval = arr.aval
        self.shape = aval.shape
        self.dtype = aval.dtype


def per_call_us(stmt, number, repeat=9):
    times = timeit.repeat(stmt, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def interleaved_us(stmts, number, repeat=15):
    """Median µs per call of each statement, timed in alternation to share the noise."""
    timers = [timeit.Timer(s) for s in stmts]
    samples = [[] for _ in stmts]
    for _ in range(repeat):
        for t, out in zip(timers, samples, strict=True):
            out.append(t.timeit(number) / number * 1e6)
    return [statistics.median(s) for s in samples]


def main() -> None:
    exe = ort.compile(binary_module("add", shape=()))
    handlers = exe.out_handlers
    run = exe.loaded.execute_sharded
    a = ort.device_put(np.float32(1.0))
    b = ort.device_put(np.float32(2.0))
    wa, wb = WrappedArray(a), WrappedArray(b)
    n = 20000

    rows = []
    patched, wrapped = interleaved_us([
        lambda: run([a, b]).consume_with_handlers(handlers)[0],
        lambda: WrappedArray(run([wa._arr, wb._arr]).consume_with_handlers(handlers)[0]),
    ], n)
    rows.append(("execute + return (2 in, 1 out), patched ArrayImpl", patched))
    rows.append(("execute + return (2 in, 1 out), wrapper", wrapped))

    # Wrapping cost in isolation, per output: build 16 wrappers around existing arrays.
    outs = [ort.device_put(np.float32(i)) for i in range(16)]
    wrap16 = per_call_us(lambda: [WrappedArray(x) for x in outs], n) / 16
    wrap16c = per_call_us(lambda: [WrappedArrayCached(x) for x in outs], n) / 16
    list16 = per_call_us(lambda: [x for x in outs], n) / 16
    rows.append(("wrap one output (slots wrapper), minus list overhead", wrap16 - list16))
    rows.append(("wrap one output (wrapper copying shape/dtype)", wrap16c - list16))

    # Attribute reads.
    w = WrappedArray(a)
    wc = WrappedArrayCached(a)
    rows.append(("a.shape, patched ArrayImpl (property over aval)", per_call_us(lambda: a.shape, 200000)))
    rows.append(("a.shape, wrapper (property over _arr.aval)", per_call_us(lambda: w.shape, 200000)))
    rows.append(("a.shape, wrapper with copied fields", per_call_us(lambda: wc.shape, 200000)))
    rows.append(("a.aval (C++ member)", per_call_us(lambda: a.aval, 200000)))
    rows.append(("empty lambda (timing floor)", per_call_us(lambda: None, 200000)))

    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  µs")
    for name, us in rows:
        print(f"{name:<{width}}  {us:6.3f}")
    print(f"\nwrapper overhead per execute: {wrapped - patched:+.3f} µs "
          f"({(wrapped / patched - 1) * 100:+.0f}%)")
    assert math.isfinite(patched)


if __name__ == "__main__":
    main()
