"""One side of the `dispatch_duel` case: builds dispatch.py's three workloads for `--lib`,
warms them up, then answers ``<workload> <calls>`` lines on stdin with the seconds those
calls took (``ready`` first, once set up). Not a case itself (the name starts with _)."""

import importlib
import sys
import time

from _workloads import dispatch_calls


def main() -> None:
    lib = importlib.import_module(sys.argv[sys.argv.index("--lib") + 1])
    block = lib.block_until_ready
    calls = dispatch_calls(lib)
    for fn in calls.values():
        for _ in range(200):
            out = fn()
        block(out)
    print("ready", flush=True)
    for line in sys.stdin:
        name, n = line.split()
        fn = calls[name]
        t0 = time.perf_counter()
        for _ in range(int(n)):
            out = fn()
        block(out)
        print(time.perf_counter() - t0, flush=True)


if __name__ == "__main__":
    main()
