"""The persistent compilation cache: compiled executables in a directory, across processes.

`compiler.compile` asks `load` before compiling and hands the result to `store` after.
An entry is one file, ``<key>.olympus-exe``, in the `serialized` container (kind
``cache-entry``): a versioned header, an integrity hash, the environment it was built
for, and jaxlib's serialized executable. The key (`cache_key`) is a sha256 of everything
that decides the compiled code: the module's bytecode fingerprint, the compile options,
the device ids, and the environment (jaxlib version, backend, device kind and count).

Robustness, which is the point of the design:

* Writes are atomic: a temporary file in the same directory, fsync, then ``os.replace``.
  Readers see a whole old entry, a whole new one, or none; two processes writing the
  same key at once each replace it with a complete entry.
* A corrupt, truncated or foreign entry (another format version, jaxlib, backend or
  device set) is a cache miss with a warning; it never reaches jaxlib's deserializer
  unchecked, so it can neither crash the process nor give a wrong result.
* With a size cap (``olympus_compilation_cache_max_size`` bytes), the least recently used
  entries (by modification time, refreshed on every hit) are deleted after a write.
* The directory is created with mode 0700: whoever can write the cache can make this
  process run code, as JAX warns for its own cache.

Settings mirror JAX's (``olympus.config``): the directory, the minimum compile time
(default 1 s) and entry size (default 0) for an executable to be written, the size cap
(-1: none; 0: caching off), and an on/off switch.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections.abc import Mapping
from typing import Any

from . import serialized

__all__ = ["set_option", "get_option", "reset", "cache_key", "load", "store", "reject",
           "record_hit", "stats", "is_enabled", "atomic_write", "ENTRY_SUFFIX"]

ENTRY_SUFFIX = ".olympus-exe"
_KIND = "cache-entry"
_KEY_VERSION = "olympus-compile-key/1"

_options: dict[str, Any] = {
    "compilation_cache_dir": None,
    "enable_compilation_cache": True,
    "persistent_cache_min_compile_time_secs": 1.0,
    "persistent_cache_min_entry_size_bytes": 0,
    "compilation_cache_max_size": -1,
}
_lock = threading.Lock()
_ready_dir: str | None = None  # the directory already created/checked by this process

#: Counters for tests and benchmarks: entries found, not found, written, and rejected.
stats = {"hits": 0, "misses": 0, "writes": 0, "errors": 0}


def set_option(name: str, value: Any) -> None:
    """Set one setting (its name without the ``olympus_`` prefix), checking its type."""
    global _ready_dir
    if name not in _options:
        raise AttributeError(f"Unrecognized config option: olympus_{name}")
    if name == "compilation_cache_dir":
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise TypeError(
                f"olympus_compilation_cache_dir must be a path or None, got {value!r}")
        value = None if value is None or os.fspath(value) == "" else os.fspath(value)
    elif name == "enable_compilation_cache":
        value = bool(value)
    elif name == "persistent_cache_min_compile_time_secs":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"olympus_{name} must be a number of seconds, got {value!r}")
        value = float(value)
    else:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"olympus_{name} must be an int, got {value!r}")
    with _lock:
        _options[name] = value
        _ready_dir = None


def get_option(name: str) -> Any:
    return _options[name]


def reset() -> None:
    """Forget what this process knows about the cache directory (it is checked, and
    created if missing, again on next use). Entries on disk are kept."""
    global _ready_dir
    with _lock:
        _ready_dir = None


def is_enabled() -> bool:
    o = _options
    return bool(o["enable_compilation_cache"] and o["compilation_cache_dir"]
                and o["compilation_cache_max_size"] != 0)


def cache_key(fingerprint: str, compile_settings: Any, env: Mapping[str, Any]) -> str:
    """The sha256 (hex) naming an executable: module fingerprint, compile settings (any
    JSON-able value; the caller puts in everything its compile options are built from)
    and environment."""
    text = json.dumps([_KEY_VERSION, fingerprint, compile_settings, dict(env)],
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _directory() -> str | None:
    """The cache directory, created (mode 0700) on first use; None when caching is off."""
    global _ready_dir
    if not is_enabled():
        return None
    path = _options["compilation_cache_dir"]
    if _ready_dir == path:
        return path
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        warnings.warn(f"Cannot use persistent compilation cache directory {path!r}: {e}",
                      stacklevel=3)
        return None
    with _lock:
        _ready_dir = path
    return path


def _entry_path(directory: str, key: str) -> str:
    return os.path.join(directory, key + ENTRY_SUFFIX)


def load(key: str, env: Mapping[str, Any], name: str) -> bytes | None:
    """jaxlib's serialized executable stored under `key`, or None (a miss). An entry that
    is damaged or made for another environment is a miss with a warning."""
    directory = _directory()
    if directory is None:
        return None
    path = _entry_path(directory, key)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        stats["misses"] += 1
        return None
    except OSError as e:
        return reject(name, e)
    try:
        header, sections = serialized.unpack(data, _KIND, f"cache entry {path}")
        serialized.check_environment(header.get("environment"), env, f"cache entry {path}")
        if header.get("key") != key:
            raise serialized.SerializedFormatError(
                f"cache entry {path} is stored under another key")
        blob = sections.get("executable")
        if not blob:
            raise serialized.SerializedFormatError(f"cache entry {path} has no executable")
    except ValueError as e:
        return reject(name, e)
    try:
        os.utime(path)  # recently used: the last to be evicted
    except OSError:
        pass
    return blob  # a hit once jaxlib has loaded it (`record_hit`)


def record_hit() -> None:
    stats["hits"] += 1


def reject(name: str, e: Exception) -> None:
    """Count and warn about an entry that cannot be used; it is a miss."""
    stats["errors"] += 1
    stats["misses"] += 1
    warnings.warn(
        f"Error reading persistent compilation cache entry for '{name}': "
        f"{type(e).__name__}: {e}", stacklevel=4)
    return None


def store(key: str, env: Mapping[str, Any], blob: bytes, compile_secs: float,
          name: str) -> bool:
    """Write `blob` (a serialized executable) under `key` if it took long enough to
    compile and is big enough; then evict past the size cap. True if written."""
    directory = _directory()
    if directory is None:
        return False
    if compile_secs < _options["persistent_cache_min_compile_time_secs"]:
        return False
    if len(blob) < _options["persistent_cache_min_entry_size_bytes"]:
        return False
    data = serialized.pack(_KIND, {"key": key, "environment": dict(env), "name": name,
                                   "compile_time_secs": compile_secs},
                           [("executable", blob)])
    try:
        atomic_write(_entry_path(directory, key), data)
    except OSError as e:
        warnings.warn(
            f"Error writing persistent compilation cache entry for '{name}': "
            f"{type(e).__name__}: {e}", stacklevel=3)
        return False
    stats["writes"] += 1
    max_size = _options["compilation_cache_max_size"]
    if max_size > 0:
        _evict(directory, max_size)
    return True


def atomic_write(path: str, data: bytes) -> None:
    """Write `data` to `path` so that a reader sees the old file or the whole new one:
    a temporary file in the same directory, flushed to disk, renamed over `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".partial", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _evict(directory: str, max_size: int) -> None:
    """Delete least recently used entries until the entries total at most `max_size`
    bytes. Another process may delete the same files at the same time: fine."""
    entries = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name.endswith(ENTRY_SUFFIX):
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    entries.append((st.st_mtime_ns, st.st_size, e.path))
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= max_size:
            break
        try:
            os.unlink(path)
        except OSError:
            pass
        total -= size
