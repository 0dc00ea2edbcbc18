"""`create_mlir_sourcemap`: the source map of an MLIR module's text printed with its
locations (``lowered.as_text(debug_info=True)``).

Locations are printed as aliases, ``#locN = loc(...)`` after the module, and operations
refer to them as ``loc(#locN)``. A file location ``"f.py":line:col`` is a source
position; a named location ``"name"(#locM)`` and a call site ``callsite(#locA at #locB)``
stand for the location they wrap (the callee, innermost frame, for a call site); others
(``unknown``, fused) map nowhere. Each line whose first ``loc(#locN)`` resolves to a file
position gets one segment, at the line's first non-blank column.
"""

from __future__ import annotations

import re

from ..._src.sourcemap import MappingsGenerator, SourceMap

__all__ = ["create_mlir_sourcemap", "parse_mlir_locations"]

_USE = re.compile(r"loc\(#loc(\d+)\)")
_DEF = re.compile(r"#loc(\d+) = loc\((.*)\)\s*$")
_FILE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)(?: to (?:\d+)?:\d+)?$')
_NAMED = re.compile(r'"(?:[^"\\]|\\.)*"\(#loc(\d+)\)$')
_CALLSITE = re.compile(r"callsite\(#loc(\d+) at #loc(\d+)\)$")


def parse_mlir_locations(lines: list[str]) -> tuple[dict[int, tuple[int, int, int]], list[str]]:
    """``({alias number: (source index, 0-based line, column)}, sources)`` for the
    aliases of `lines` that resolve to a file position."""
    files: dict[int, tuple[str, int, int]] = {}
    refs: dict[int, int] = {}
    for line in lines:
        m = _DEF.match(line)
        if not m:
            continue
        n, body = int(m.group(1)), m.group(2)
        if f := _FILE.match(body):
            files[n] = (f.group(1), int(f.group(2)), int(f.group(3)))
        elif r := _NAMED.match(body):
            refs[n] = int(r.group(1))
        elif c := _CALLSITE.match(body):
            refs[n] = int(c.group(1))
    sources: list[str] = []
    resolved: dict[int, tuple[int, int, int]] = {}
    for n in sorted({*files, *refs}):
        seen, k = set(), n
        while k in refs and k not in seen:
            seen.add(k)
            k = refs[k]
        if k not in files:
            continue
        name, line_no, col = files[k]
        if name not in sources:
            sources.append(name)
        resolved[n] = (sources.index(name), line_no - 1, col)
    return resolved, sources


def create_mlir_sourcemap(mlir_dump: str) -> SourceMap:
    """The source map of `mlir_dump` (one group per line, plus a final empty one);
    `sources` lists only the files a segment uses, in order of first use."""
    lines = mlir_dump.split("\n")
    locations, sources = parse_mlir_locations(lines)
    used: list[int] = []
    gen = MappingsGenerator()
    for line in lines:
        gen.new_group()
        m = _USE.search(line)
        if not m or int(m.group(1)) not in locations:
            continue
        src, src_line, src_col = locations[int(m.group(1))]
        if src not in used:
            used.append(src)
        gen.new_segment(len(line) - len(line.lstrip()), used.index(src), src_line, src_col)
    gen.new_group()
    names = [sources[i] for i in used]
    return SourceMap(version=3, sources=names, sources_content=[""] * len(names),
                     mappings=gen.mappings(), names=[])
