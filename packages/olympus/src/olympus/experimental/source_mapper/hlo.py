"""The HLO passes: ``hlo:stable-hlo`` (the lowered StableHLO with its locations),
``hlo:original`` (the HLO XLA imports, with metadata) and ``hlo:optimized`` (the
compiled module's HLO), and `parse_hlo_dump`, the source map of an HLO text.

HLO text names sources in one of two ways. The current one lists ``FileNames``,
``FunctionNames``, ``FileLocations`` and ``StackFrames`` tables before the computations,
and an instruction's ``metadata={... stack_frame_id=N}`` picks a frame (its file and
line); the older one writes ``source_file="..." source_line=N`` into the metadata. Each
instruction line with a source gets one segment at its first non-blank column (HLO
keeps no source column: 0).
"""

from __future__ import annotations

import enum
import re
from typing import Any

from ..._src.sourcemap import MappingsGenerator, SourceMap
from . import common
from . import olympuspr as _olympuspr  # noqa: F401  (its pass comes first, as JAX's jaxpr)
from .mlir import create_mlir_sourcemap

__all__ = ["HloPass", "parse_hlo_dump"]


class HloPass(enum.Enum):
    STABLE_HLO = "hlo:stable-hlo"
    ORIGINAL = "hlo:original"
    OPTIMIZED = "hlo:optimized"


_OLD_METADATA = re.compile(
    r'metadata=\{.*op_name="(?P<scope>.*)" source_file="(?P<file>.*)"'
    r" source_line=(?P<line>\d+).*?\}")
_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_ENTRY = re.compile(r"(\d+)\s+\{(.*)\}$")
_FILE_NAME = re.compile(r'(\d+)\s+"(.*)"$')
_FIELDS = {"FileLocations": ("file_name_id", "function_name_id", "line", "end_line",
                             "column", "end_column"),
           "StackFrames": ("file_location_id", "parent_frame_id")}


def _first_col(line: str) -> int:
    return len(line) - len(line.lstrip())


def _fields(section: str, body: str) -> dict[str, int]:
    out = {}
    for part in body.split():
        if "=" not in part:
            continue
        key, value = part.split("=", 1)
        if key not in _FIELDS[section]:
            raise ValueError(f"Unknown attribute for {section}: {key}")
        out[key] = int(value)
    return out


def _tables(lines: list[str]) -> tuple[dict, dict, dict]:
    names: dict[int, str] = {}
    locations: dict[int, dict] = {}
    frames: dict[int, dict] = {}
    section = None
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line in _SECTIONS:
            section = line
            continue
        if section == "FileNames":
            if m := _FILE_NAME.match(line):
                names[int(m.group(1))] = m.group(2)
        elif section in _FIELDS:
            if m := _ENTRY.match(line):
                table = locations if section == "FileLocations" else frames
                table[int(m.group(1))] = _fields(section, m.group(2))
    return names, locations, frames


def _parse_with_tables(lines: list[str]) -> SourceMap:
    names, locations, frames = _tables(lines)
    gen = MappingsGenerator()
    used: list[str] = []
    for line in lines:
        gen.new_group()
        if "metadata={" not in line:
            continue
        m = re.search(r"stack_frame_id=(\d+)", line)
        if not m:
            continue
        frame_id = int(m.group(1))
        if frame_id not in frames:
            raise ValueError(f"HLO metadata names stack frame {frame_id}, which the "
                             "StackFrames table does not hold")
        loc_id = frames[frame_id].get("file_location_id")
        loc = locations.get(loc_id)
        if loc is None:
            raise ValueError(f"stack frame {frame_id} names file location {loc_id}, which "
                             "the FileLocations table does not hold")
        file_name = names.get(loc.get("file_name_id"))
        if file_name is None:
            continue
        if file_name not in used:
            used.append(file_name)
        gen.new_segment(_first_col(line), used.index(file_name), loc["line"] - 1, 0)
    gen.new_group()
    return SourceMap(version=3, sources=used, sources_content=[], mappings=gen.mappings(),
                     names=[])


def _parse_inline_metadata(lines: list[str]) -> SourceMap:
    gen = MappingsGenerator()
    used: list[str] = []
    for line in lines:
        gen.new_group()
        m = _OLD_METADATA.search(line)
        if not m:
            continue
        file_name = m.group("file")
        if file_name not in used:
            used.append(file_name)
        gen.new_segment(_first_col(line), used.index(file_name), int(m.group("line")) - 1, 0)
    gen.new_group()
    return SourceMap(version=3, sources=used, sources_content=[], mappings=gen.mappings(),
                     names=[])


def parse_hlo_dump(text: str) -> SourceMap:
    """The source map of the HLO module text `text` (either way of naming sources)."""
    lines = text.split("\n")
    if "FileNames" in text:
        return _parse_with_tables(lines)
    return _parse_inline_metadata(lines)


def trace_and_lower(work_dir, f, f_args, f_kwargs, **_):
    """The pass input: `f` lowered for `f_args` (positions with columns recorded)."""
    from olympus_trace.staging import precise_source_info

    from ... import jit

    with precise_source_info():
        lowered = jit(lambda *args: f(*args, **f_kwargs)).lower(*f_args)
    return lowered, work_dir


def stable_hlo_generate_dump(args: tuple[Any, str], **_) -> common.SourceMapDump:
    lowered, _work_dir = args
    text = lowered.as_text(debug_info=True)
    return common.SourceMapDump(source_map=create_mlir_sourcemap(text), generated_code=text,
                                pass_name=HloPass.STABLE_HLO.value)


def original_hlo_generate_dump(args: tuple[Any, str], **_) -> common.SourceMapDump:
    lowered, _work_dir = args
    text = lowered.as_text(dialect="hlo", debug_info=True)
    return common.SourceMapDump(source_map=parse_hlo_dump(text), generated_code=text,
                                pass_name=HloPass.ORIGINAL.value)


def optimized_generate_dump(args: tuple[Any, str],
                            xla_compiler_flags: dict[str, Any] | None = None,
                            **_) -> common.SourceMapDump:
    lowered, work_dir = args
    text = lowered.compile({"xla_dump_to": work_dir, **(xla_compiler_flags or {})}).as_text()
    return common.SourceMapDump(source_map=parse_hlo_dump(text), generated_code=text,
                                pass_name=HloPass.OPTIMIZED.value)


for _name, _dump in ((HloPass.STABLE_HLO, stable_hlo_generate_dump),
                     (HloPass.ORIGINAL, original_hlo_generate_dump),
                     (HloPass.OPTIMIZED, optimized_generate_dump)):
    common.register_pass(common.Pass(name=_name.value, compile_fn=trace_and_lower,
                                     generate_dump=_dump))
