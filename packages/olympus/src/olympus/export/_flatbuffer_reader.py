"""A bounds-checked reader of flatbuffer tables, for bytes that may be untrusted.

The `flatbuffers` package's own accessors trust the buffer: a bad offset reads past the
end (an `IndexError` deep inside, or garbage). Every read here checks offsets, lengths
and the vtable against the buffer first and raises `FlatbufferError` (a `ValueError`)
naming what was wrong. A budget bounds the number of tables visited, so a buffer whose
offsets form a cycle or a huge shared DAG fails instead of recursing or looping forever.
"""

from __future__ import annotations

import struct

__all__ = ["FlatbufferError", "Table", "root_table"]

_U8 = struct.Struct("<B")
_I8 = struct.Struct("<b")
_U16 = struct.Struct("<H")
_I16 = struct.Struct("<h")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_SCALARS = {"bool": _U8, "int8": _I8, "uint8": _U8, "int16": _I16, "uint16": _U16,
            "int32": _I32, "uint32": _U32}


class FlatbufferError(ValueError):
    """The bytes are not a well-formed flatbuffer of the expected schema."""


class _Buffer:
    __slots__ = ("data", "budget")

    def __init__(self, data: bytes):
        self.data = data
        # Each visited table costs one unit; a well-formed buffer has fewer tables than
        # bytes/4, so this bound only stops cycles and exponential sharing.
        self.budget = max(64, len(data) // 2)

    def read(self, fmt: struct.Struct, pos: int, what: str) -> int:
        if pos < 0 or pos + fmt.size > len(self.data):
            raise FlatbufferError(f"{what}: offset {pos} is outside the {len(self.data)}-byte "
                                  "buffer")
        return fmt.unpack_from(self.data, pos)[0]


def root_table(data: bytes, what: str) -> Table:
    """The root table of a finished flatbuffer (no file identifier)."""
    if len(data) < 8:
        raise FlatbufferError(f"{what}: {len(data)} bytes is too short for a flatbuffer")
    buf = _Buffer(data)
    return Table(buf, buf.read(_U32, 0, what), what)


class Table:
    """One table: its fields by slot number (the field's index in the schema)."""

    __slots__ = ("_buf", "_pos", "_vt", "_vt_size", "_obj_size", "what")

    def __init__(self, buf: _Buffer, pos: int, what: str):
        buf.budget -= 1
        if buf.budget < 0:
            raise FlatbufferError(f"{what}: too many nested tables (cyclic or corrupt offsets)")
        self._buf = buf
        self.what = what
        self._pos = pos
        vt = pos - buf.read(_I32, pos, what)
        vt_size = buf.read(_U16, vt, what)
        obj_size = buf.read(_U16, vt + 2, what)
        if vt_size < 4 or vt_size % 2 or vt + vt_size > len(buf.data):
            raise FlatbufferError(f"{what}: bad vtable (size {vt_size} at {vt})")
        if obj_size < 4 or pos + obj_size > len(buf.data):
            raise FlatbufferError(f"{what}: table of {obj_size} bytes at {pos} overruns the "
                                  "buffer")
        self._vt, self._vt_size, self._obj_size = vt, vt_size, obj_size

    def _field(self, slot: int, size: int) -> int | None:
        """The absolute position of field `slot`, or None when absent."""
        entry = 4 + 2 * slot
        if entry >= self._vt_size:
            return None
        off = self._buf.read(_U16, self._vt + entry, self.what)
        if off == 0:
            return None
        if off + size > self._obj_size:
            raise FlatbufferError(f"{self.what}: field {slot} lies outside its table")
        return self._pos + off

    def scalar(self, slot: int, kind: str, default: int | None = 0):
        fmt = _SCALARS[kind]
        pos = self._field(slot, fmt.size)
        if pos is None:
            return default
        v = self._buf.read(fmt, pos, self.what)
        return bool(v) if kind == "bool" else v

    def _target(self, slot: int) -> int | None:
        pos = self._field(slot, 4)
        if pos is None:
            return None
        return pos + self._buf.read(_U32, pos, self.what)

    def _vector(self, slot: int, elem_size: int) -> tuple[int, int] | None:
        start = self._target(slot)
        if start is None:
            return None
        n = self._buf.read(_U32, start, self.what)
        if start + 4 + n * elem_size > len(self._buf.data):
            raise FlatbufferError(f"{self.what}: vector of {n} elements at {start} overruns "
                                  "the buffer")
        return start + 4, n

    def _string_at(self, pos: int, what: str) -> str:
        n = self._buf.read(_U32, pos, what)
        if pos + 4 + n > len(self._buf.data):
            raise FlatbufferError(f"{what}: string of {n} bytes overruns the buffer")
        raw = self._buf.data[pos + 4:pos + 4 + n]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise FlatbufferError(f"{what}: string is not valid UTF-8") from None

    def string(self, slot: int, what: str) -> str | None:
        pos = self._target(slot)
        return None if pos is None else self._string_at(pos, what)

    def table(self, slot: int, what: str) -> Table | None:
        pos = self._target(slot)
        return None if pos is None else Table(self._buf, pos, what)

    def bytes(self, slot: int) -> bytes | None:
        vec = self._vector(slot, 1)
        if vec is None:
            return None
        start, n = vec
        return bytes(self._buf.data[start:start + n])

    def scalars(self, slot: int, kind: str) -> list[int]:
        fmt = _SCALARS[kind]
        vec = self._vector(slot, fmt.size)
        if vec is None:
            return []
        start, n = vec
        return [fmt.unpack_from(self._buf.data, start + i * fmt.size)[0] for i in range(n)]

    def _offsets(self, slot: int, what: str) -> list[int]:
        vec = self._vector(slot, 4)
        if vec is None:
            return []
        start, n = vec
        return [start + 4 * i + self._buf.read(_U32, start + 4 * i, what) for i in range(n)]

    def strings(self, slot: int, what: str) -> list[str]:
        return [self._string_at(p, what) for p in self._offsets(slot, what)]

    def tables(self, slot: int, what: str) -> list[Table]:
        return [Table(self._buf, p, f"{what}[{i}]")
                for i, p in enumerate(self._offsets(slot, what))]
