"""Source maps in the TC39 "source map v3" format (the JSON web tools read): `SourceMap`,
its ``mappings`` string codec (base-64 VLQ) and `MappingsGenerator`.

``mappings`` hold one list of segments per line of the generated text. A segment is a
tuple of 1, 4 or 5 integers, (generated column, source index, source line, source column
[, name index]), each stored *relative* to the same field of the previous segment (the
generated column restarts at 0 on every line), which is how the format compresses them;
`MappingsGenerator` takes absolute values and stores the differences.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence

__all__ = ["SourceMap", "MappingsGenerator", "Segment", "Mappings", "encode_vlq",
           "decode_vlq", "serialize_mappings", "deserialize_mappings"]

Segment = tuple[int, ...]
Mappings = Sequence[Sequence[Segment]]

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_DIGIT = {c: i for i, c in enumerate(_ALPHABET)}
_CONTINUE = 32  # a sextet with this bit set is followed by another
_LOW_BITS = 31


@dataclasses.dataclass(frozen=True, slots=True)
class SourceMap:
    """One source map: format `version` (3), the `sources` files, their
    `sources_content` (may be empty), symbol `names`, and the per-line `mappings`."""

    version: int
    sources: Sequence[str]
    sources_content: Sequence[str]
    names: Sequence[str]
    mappings: Mappings

    @classmethod
    def from_json(cls, json_data: str) -> SourceMap:
        """The map a JSON text written by `to_json` (or any v3 source map) holds."""
        data = json.loads(json_data)
        return cls(version=data["version"], sources=data["sources"],
                   sources_content=data["sourcesContent"], names=data["names"],
                   mappings=deserialize_mappings(data["mappings"]))

    def to_json(self) -> str:
        """The map as v3 JSON (``sourcesContent`` camel-cased, mappings VLQ-encoded)."""
        return json.dumps({
            "version": self.version, "sources": self.sources,
            "sourcesContent": self.sources_content, "names": self.names,
            "mappings": serialize_mappings(self.mappings)})


def encode_vlq(value: int) -> bytes:
    """`value` as base-64 VLQ: the sign in the lowest bit, then 5 bits per sextet,
    least significant first."""
    v = (-value << 1) | 1 if value < 0 else value << 1
    out = bytearray()
    while True:
        digit, v = v & _LOW_BITS, v >> 5
        out.append(ord(_ALPHABET[digit | (_CONTINUE if v else 0)]))
        if not v:
            return bytes(out)


def _read_vlq(chars: Iterator[str]) -> int:
    """The next value of `chars` (StopIteration when they are used up)."""
    value, shift = 0, 0
    while True:
        c = next(chars)
        if c not in _DIGIT:
            raise ValueError(f"invalid base-64 VLQ digit {c!r}")
        d = _DIGIT[c]
        value |= (d & _LOW_BITS) << shift
        shift += 5
        if not d & _CONTINUE:
            break
    return -(value >> 1) if value & 1 else value >> 1


def decode_vlq(enc: bytes | str) -> int:
    """The first value of the base-64 VLQ text `enc`."""
    text = enc.decode("ascii") if isinstance(enc, (bytes, bytearray)) else enc
    return _read_vlq(iter(text))


def _decode_segment(text: str) -> Segment:
    chars = iter(text)
    values = []
    while True:
        try:
            values.append(_read_vlq(chars))
        except StopIteration:
            break
    if len(values) not in (1, 4, 5):
        raise ValueError(f"a source-map segment has 1, 4 or 5 fields, got {len(values)} in "
                         f"{text!r}")
    return tuple(values)


def serialize_mappings(mappings: Mappings) -> str:
    """The ``mappings`` string: segments joined by ``,`` and lines by ``;``."""
    return ";".join(",".join(b"".join(encode_vlq(v) for v in seg).decode("ascii")
                             for seg in line) for line in mappings)


def deserialize_mappings(mappings_str: str) -> list[list[Segment]]:
    """The per-line segments of a ``mappings`` string (the inverse of
    `serialize_mappings`)."""
    return [[_decode_segment(s) for s in line.split(",")] if line else []
            for line in mappings_str.split(";")]


class MappingsGenerator:
    """Builds mappings from absolute positions: `new_group` starts a line,
    `new_segment(col[, source, line, col[, name]])` adds a segment to it."""

    def __init__(self):
        self._mappings: list[list[Segment]] = []
        self._group: list[Segment] | None = None
        self._col = 0
        self._prev = [0, 0, 0, 0]  # source, source line, source column, name

    def new_group(self) -> None:
        """Start the next generated line."""
        self._group = []
        self._col = 0
        self._mappings.append(self._group)

    def new_segment(self, *seg: int) -> None:
        """Add a segment (absolute values) to the current line."""
        if self._group is None:
            raise RuntimeError("No current group. Forgot to call new_group()?")
        if len(seg) not in (1, 4, 5):
            raise ValueError(f"a segment has 1, 4 or 5 fields, got {len(seg)}")
        rel = [seg[0] - self._col]
        self._col = seg[0]
        for i, v in enumerate(seg[1:]):
            rel.append(v - self._prev[i])
            self._prev[i] = v
        self._group.append(tuple(rel))

    def mappings(self) -> list[list[Segment]]:
        """The lines built so far (relative segments, as stored in the format)."""
        return self._mappings
