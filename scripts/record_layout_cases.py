#!/usr/bin/env python
"""Write packages/olympus-ir/tests/layout_expected.json: random layout documents (text,
breaks, concatenation, groups, nesting) and the text reference JAX's pretty-printer lays
them out as, at several widths.

Run with the reference JAX virtualenv's python (never with olympus)::

    /work/main/benchmarks/.venv-jax/bin/python scripts/record_layout_cases.py

``packages/olympus-ir/tests/test_layout.py`` lays the same documents out with
``olympus_ir.layout`` and compares. A document is JSON: ``["text", s]``, ``["brk", s]``,
``["concat", [docs]]``, ``["group", doc]`` or ``["nest", n, doc]``.
"""

from __future__ import annotations

import json
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packages",
                   "olympus-ir", "tests", "layout_expected.json")
TEXTS = ["a", "bb", "ccc", "dddd ee", "", "{ lambda ", "x" * 9, "y" * 17]


def random_doc(r: random.Random, depth: int = 0):
    k = r.random()
    if depth > 4 or k < 0.3:
        return ["text", r.choice(TEXTS)]
    if k < 0.45:
        return ["brk", r.choice([" ", "", "; "])]
    if k < 0.7:
        return ["concat", [random_doc(r, depth + 1) for _ in range(r.randint(0, 4))]]
    if k < 0.85:
        return ["group", random_doc(r, depth + 1)]
    return ["nest", r.randint(0, 4), random_doc(r, depth + 1)]


def build(pp, d):
    kind = d[0]
    if kind == "text":
        return pp.text(d[1])
    if kind == "brk":
        return pp.brk(d[1])
    if kind == "concat":
        return pp.concat([build(pp, c) for c in d[1]])
    if kind == "group":
        return pp.group(build(pp, d[1]))
    return pp.nest(d[1], build(pp, d[2]))


def main() -> None:
    from jax._src import pretty_printer as pp

    r = random.Random(20260101)
    cases = []
    for _ in range(400):
        doc, width = random_doc(r), r.choice([5, 10, 20, 40, 80])
        cases.append({"doc": doc, "width": width,
                      "text": build(pp, doc).format(width=width, use_color=False)})
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(cases, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {len(cases)} cases")


if __name__ == "__main__":
    main()
