#!/usr/bin/env python
"""How much of NumPy's main namespace `olympus.numpy` implements.

Counts the public callables of ``numpy`` (names not starting with an underscore whose value
is callable: functions, ufuncs, scalar types and other classes), and reports which of them
``olympus.numpy`` defines, as a percentage, plus the missing names.

Run from the repository root::

    python scripts/numpy_coverage.py [--missing] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for pkg in ("olympus-ir", "olympus-trace", "olympus-lower", "olympus-runtime", "olympus"):
    path = os.path.join(ROOT, "packages", pkg, "src")
    if path not in sys.path:
        sys.path.insert(0, path)


def numpy_public_callables(np) -> list[str]:
    names = []
    for name in dir(np):
        if name.startswith("_"):
            continue
        try:
            value = getattr(np, name)
        except AttributeError:  # deprecated aliases that raise on access
            continue
        if callable(value):
            names.append(name)
    return sorted(names)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    args = parser.parse_args(argv)

    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        total = numpy_public_callables(np)
    import olympus.numpy as onp

    have = [n for n in total if hasattr(onp, n)]
    missing = [n for n in total if not hasattr(onp, n)]
    pct = 100.0 * len(have) / len(total) if total else 0.0
    if args.json:
        print(json.dumps({"numpy": np.__version__, "total": len(total),
                          "implemented": len(have), "percent": round(pct, 1),
                          "missing": missing}, indent=1))
        return 0
    print(f"NumPy {np.__version__}: olympus.numpy implements {len(have)} of {len(total)} "
          f"public callables ({pct:.1f}%).")
    if args.missing or True:
        print(f"Missing ({len(missing)}):")
        line = "  "
        for n in missing:
            if len(line) + len(n) + 2 > 96:
                print(line.rstrip())
                line = "  "
            line += n + ", "
        if line.strip():
            print(line.rstrip().rstrip(","))
    return 0


if __name__ == "__main__":
    sys.exit(main())
