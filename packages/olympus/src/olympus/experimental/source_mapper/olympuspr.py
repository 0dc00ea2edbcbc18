"""The ``olympuspr`` pass (JAX's ``jaxpr`` pass): the printed olympuspr of a function,
each equation mapped to the user's line and column that made it; and
`canonicalize_filename`."""

from __future__ import annotations

import re
from typing import Any

from ..._src.sourcemap import MappingsGenerator, SourceMap
from . import common

__all__ = ["canonicalize_filename", "compile_olympuspr", "make_olympuspr_dump"]


def canonicalize_filename(file_name: str) -> str:
    """`file_name` with the matches of the ``olympus_hlo_source_file_canonicalization_regex``
    option removed (unchanged when it is unset)."""
    from ... import config

    pattern = config.olympus_hlo_source_file_canonicalization_regex
    return re.sub(pattern, "", file_name) if pattern else file_name


def compile_olympuspr(work_dir, f, f_args, f_kwargs, **_):
    """The pass input: `f`'s olympuspr for the arguments, traced with source columns."""
    from olympus_trace.staging import precise_source_info

    from ... import make_olympuspr

    with precise_source_info():
        return make_olympuspr(f)(*f_args, **f_kwargs)


def make_olympuspr_dump(olympuspr: Any, **_) -> common.SourceMapDump:
    """The printed olympuspr and its map: one segment per equation, at the column where
    its text starts, pointing at the line and column of its source."""
    spans: list[list[tuple[int, int, Any]]] = []
    text = olympuspr.pretty_print(source_map=spans)
    used: list[str] = []
    gen = MappingsGenerator()
    for line in spans:
        gen.new_group()
        for start, _end, src in line:
            if src is None or not getattr(src, "file", ""):
                continue
            name = canonicalize_filename(src.file)
            if name not in used:
                used.append(name)
            gen.new_segment(start, used.index(name), src.line - 1,
                            getattr(src, "column", None) or 0)
    gen.new_group()
    return common.SourceMapDump(
        source_map=SourceMap(version=3, sources=used, sources_content=[],
                             mappings=gen.mappings(), names=[]),
        generated_code=text, pass_name="olympuspr")


common.register_pass(common.Pass(name="olympuspr", compile_fn=compile_olympuspr,
                                 generate_dump=make_olympuspr_dump))
