"""Executables on disk: one explicit, versioned container, checked before jaxlib sees it.

Both the persistent compilation cache (`persistent_cache`) and saved ``Compiled`` objects
store an XLA executable serialized by jaxlib. jaxlib's deserializer is not safe on
arbitrary bytes (it may crash the process, JAXLIB.md §0, §7), and an executable only
runs where it was built (same jaxlib, backend, device kind, device ids). So every file
is a container that is validated in Python first:

``MAGIC (8 bytes) | kind (16 bytes, ASCII, NUL-padded) | format version (u32) |
header length (u32) | payload length (u64) | sha256 of header + payload (32 bytes) |
header (UTF-8 JSON object) | payload (named sections, back to back)``

All integers are big-endian. The header names the payload's sections and their lengths,
and records the environment the executable was built for (`environment`). A reader checks
the magic, the kind, the version, that the lengths add up to the file's size, and the
hash, before parsing the header; then the environment, before deserializing. Any
failure is a `SerializedFormatError` (a ``ValueError``) saying what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import jaxlib.version
import numpy as np

from olympus_ir import ShapedArray, dtypes

from . import backend

__all__ = ["SerializedFormatError", "FORMAT_VERSION", "environment", "pack", "unpack",
           "check_environment", "encode_aval", "decode_aval", "decode_avals", "MAX_HEADER"]

MAGIC = b"OLYMPUS\x00"
#: The container's layout version; a reader refuses any other.
FORMAT_VERSION = 1
_PREFIX = struct.Struct(">8s16sIIQ32s")
#: The largest header a reader parses (an executable's header is a few KB).
MAX_HEADER = 16 << 20
_DTYPES_BY_NAME = {np.dtype(d).name: np.dtype(d) for d in dtypes.SUPPORTED_DTYPES}


class SerializedFormatError(ValueError):
    """A serialized executable or cache entry that cannot be used (damaged, truncated, of
    another format version, or made for another environment)."""


def environment(devices: Sequence[Any]) -> dict[str, Any]:
    """What an executable for `devices` depends on beyond its program: the jaxlib version,
    the backend (platform and its version), the device kind and the number of devices."""
    client = backend.get_client()
    return {
        "jaxlib_version": jaxlib.version.__version__,
        "backend": str(client.platform),
        "platform_version": str(client.platform_version),
        "device_kind": str(devices[0].device_kind) if devices else "",
        "device_count": len(backend.devices()),
    }


_ENV_LABELS = {
    "jaxlib_version": "jaxlib version",
    "backend": "backend",
    "platform_version": "platform version",
    "device_kind": "device kind",
    "device_count": "device count",
}


def check_environment(recorded: Any, current: Mapping[str, Any], what: str) -> None:
    """SerializedFormatError naming every way `recorded` (from a file) differs from
    `current` (this process)."""
    if not isinstance(recorded, dict):
        raise SerializedFormatError(f"{what}: the header has no environment record")
    diffs = [
        f"{label} {recorded.get(k)!r} (this process has {current[k]!r})"
        for k, label in _ENV_LABELS.items() if recorded.get(k) != current[k]
    ]
    if diffs:
        raise SerializedFormatError(
            f"{what} was made for another environment: " + "; ".join(diffs))


def pack(kind: str, header: Mapping[str, Any], sections: Sequence[tuple[str, bytes]]) -> bytes:
    """The container bytes of `header` (JSON-able) and the named payload `sections`."""
    head = dict(header)
    head["sections"] = [[name, len(data)] for name, data in sections]
    hbytes = json.dumps(head, sort_keys=True, separators=(",", ":")).encode()
    payload = b"".join(data for _, data in sections)
    digest = hashlib.sha256()
    digest.update(hbytes)
    digest.update(payload)
    prefix = _PREFIX.pack(MAGIC, _kind_bytes(kind), FORMAT_VERSION, len(hbytes),
                          len(payload), digest.digest())
    return prefix + hbytes + payload


def unpack(data: bytes, kind: str, what: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    """(header, {section name: bytes}) of container `data`, after checking its magic, kind,
    version, lengths and hash; SerializedFormatError (naming `what`) otherwise."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what}: expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _PREFIX.size:
        raise SerializedFormatError(
            f"{what} is truncated: {len(data)} bytes, shorter than the {_PREFIX.size}-byte "
            "prefix")
    magic, kind_b, version, hlen, plen, digest = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise SerializedFormatError(f"{what} is not an Olympus executable file (bad magic)")
    if kind_b != _kind_bytes(kind):
        found = kind_b.rstrip(b"\x00").decode("ascii", "replace")
        raise SerializedFormatError(f"{what} holds a {found!r}, not a {kind!r}")
    if version != FORMAT_VERSION:
        raise SerializedFormatError(
            f"{what} has format version {version}; this Olympus reads version "
            f"{FORMAT_VERSION}")
    if hlen > MAX_HEADER:
        raise SerializedFormatError(f"{what}: header length {hlen} is over {MAX_HEADER}")
    if _PREFIX.size + hlen + plen != len(data):
        raise SerializedFormatError(
            f"{what} is truncated or has trailing bytes: the prefix announces "
            f"{_PREFIX.size + hlen + plen} bytes, the file has {len(data)}")
    body = memoryview(data)[_PREFIX.size:]
    if hashlib.sha256(body).digest() != digest:
        raise SerializedFormatError(f"{what} is damaged: its sha256 does not match")
    try:
        header = json.loads(bytes(body[:hlen]).decode())
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SerializedFormatError(f"{what}: the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise SerializedFormatError(f"{what}: the header is not a JSON object")
    sections = header.get("sections")
    out: dict[str, bytes] = {}
    offset = hlen
    if not isinstance(sections, list):
        raise SerializedFormatError(f"{what}: the header lists no sections")
    for entry in sections:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and _is_int(entry[1]) and entry[1] >= 0):
            raise SerializedFormatError(f"{what}: malformed section entry {entry!r}")
        name, n = entry
        if name in out or offset + n > hlen + plen:
            raise SerializedFormatError(f"{what}: section {name!r} is repeated or overruns")
        out[name] = bytes(body[offset:offset + n])
        offset += n
    if offset != hlen + plen:
        raise SerializedFormatError(f"{what}: the sections do not fill the payload")
    return header, out


def _kind_bytes(kind: str) -> bytes:
    b = kind.encode("ascii")
    if len(b) > 16:
        raise ValueError(f"kind {kind!r} is longer than 16 bytes")
    return b.ljust(16, b"\x00")


def _is_int(x: Any) -> bool:
    return type(x) is int


# ----------------------------------------------------------------- avals

def encode_aval(aval: Any) -> list:
    """[shape, dtype name, weak_type] of a ShapedArray."""
    return [list(aval.shape), np.dtype(aval.dtype).name, bool(aval.weak_type)]


def decode_aval(x: Any, what: str) -> ShapedArray:
    """The ShapedArray `encode_aval` wrote, with every part checked."""
    if not (isinstance(x, list) and len(x) == 3):
        raise SerializedFormatError(f"{what}: malformed array type {x!r}")
    shape, name, weak = x
    if not (isinstance(shape, list) and all(_is_int(d) and 0 <= d < 2**62 for d in shape)
            and len(shape) <= 64):
        raise SerializedFormatError(f"{what}: malformed shape {shape!r}")
    if not isinstance(name, str) or name not in _DTYPES_BY_NAME:
        raise SerializedFormatError(f"{what}: unknown dtype {name!r}")
    if type(weak) is not bool:
        raise SerializedFormatError(f"{what}: malformed weak_type {weak!r}")
    return ShapedArray(tuple(shape), _DTYPES_BY_NAME[name], weak)


def decode_avals(x: Any, what: str) -> list[ShapedArray]:
    if not isinstance(x, list):
        raise SerializedFormatError(f"{what}: expected a list of array types, got {x!r:.80}")
    return [decode_aval(a, f"{what}[{i}]") for i, a in enumerate(x)]
