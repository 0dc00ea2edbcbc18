"""Runtime micro-benchmarks: transfer throughput and per-call execute overhead.

Not a test. ``python benchmarks/bench_runtime.py [--quick]``. Prints two tables:

* device_put / device_get throughput (MB/s) for float32 arrays of 1 KB, 1 MB and 100 MB.
  ``device_get`` returns a zero-copy read-only view on CPU, so it is also shown with a
  host copy (``np.array(device_get(x))``), which is what a consumer that keeps or
  mutates the data pays.
* the per-call cost (µs) of running a cached one-op executable on arrays already on the
  device: raw jaxlib and `Executable.execute` (with argument validation), plus
  `device_put` of a scalar.

Timings are the minimum over repeats (the intrinsic cost; robust on a busy machine) and
the median.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from mlir_helpers import binary_module  # noqa: E402

import olympus_runtime as ort  # noqa: E402
from olympus_ir import ShapedArray  # noqa: E402


def timed(fn, number: int, repeat: int) -> tuple[float, float]:
    """(min, median) seconds per call."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return min(samples), statistics.median(samples)


def transfer_table(quick: bool) -> None:
    sizes = [("1 KB", 1 << 10, 20000), ("1 MB", 1 << 20, 200), ("100 MB", 100 << 20, 3)]
    print("transfer throughput, float32 (MB/s; min-time / median-time)")
    print(f"{'size':>7}  {'device_put':>21}  {'device_get (view)':>21}  {'device_get + copy':>21}")
    for label, nbytes, number in sizes:
        if quick:
            number = max(1, number // 10)
        repeat = 5 if nbytes < (100 << 20) else 3
        x = np.random.default_rng(0).standard_normal(nbytes // 4).astype(np.float32)
        dev = ort.device_put(x)
        put = timed(lambda x=x: ort.device_put(x), number, repeat)
        get = timed(lambda dev=dev: ort.device_get(dev), number, repeat)
        get_copy = timed(lambda dev=dev: np.array(ort.device_get(dev)), number, repeat)
        mb = nbytes / 1e6

        def fmt(t, mb=mb):
            return f"{mb / t[0]:>9.0f} / {mb / t[1]:>9.0f}"

        print(f"{label:>7}  {fmt(put)}  {fmt(get)}  {fmt(get_copy)}")
        np.testing.assert_array_equal(ort.device_get(dev), x)


def dispatch_table(quick: bool) -> None:
    number = 2000 if quick else 20000
    exe = ort.compile(binary_module("add", shape=()))
    a = ort.device_put(np.float32(1.0))
    b = ort.device_put(np.float32(2.0))
    raw = exe.loaded.execute_sharded
    handlers = exe.out_handlers
    aval = ShapedArray((), np.float32)
    dev = ort.default_device()
    host = np.float32(3.0)
    cases = {
        "raw: execute_sharded + consume_with_handlers": lambda: raw([a, b]).consume_with_handlers(handlers)[0],
        "Executable.execute (validated)": lambda: exe.execute([a, b])[0],
        "device_put(np.float32 scalar)": lambda: ort.device_put(host),
        "put_numpy(np.float32 scalar, aval, device)": lambda: ort.put_numpy(host, aval, dev),
        "device_get(scalar Array)": lambda: ort.device_get(a),
    }
    assert float(exe.execute([a, b])[0]) == 3.0
    print("\nper-call overhead, cached f32[] add, inputs on device (µs)")
    width = max(map(len, cases))
    print(f"{'path':<{width}}  {'min':>7}  {'median':>7}")
    for name, fn in cases.items():
        lo, med = timed(fn, number, 7)
        print(f"{name:<{width}}  {lo * 1e6:7.2f}  {med * 1e6:7.2f}")


def main() -> None:
    quick = "--quick" in sys.argv
    transfer_table(quick)
    dispatch_table(quick)


if __name__ == "__main__":
    main()
