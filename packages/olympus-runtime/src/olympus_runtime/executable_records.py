"""An `Executable` as an explicit record (JSON-able header + jaxlib's executable bytes),
and back, for saving compiled programs to files (`olympus.stages.load_compiled`).

The record holds what `Executable` needs besides the XLA executable: argument and result
types (with weak types), donated arguments, device ids, partitions, the module name and
fingerprint, the persistent cache key, and the environment it was built for. Restoring
checks every field and the environment before jaxlib deserializes anything, and the
executable's parameter and result counts after.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jaxlib import _jax

from . import backend
from .compiler import Executable, _Loaded
from .serialized import (
    SerializedFormatError,
    check_environment,
    decode_avals,
    encode_aval,
    environment,
)

__all__ = ["dump", "restore"]


def dump(exe: Executable) -> tuple[dict[str, Any], bytes]:
    """(header, executable bytes) of `exe`; ValueError if it cannot be saved."""
    if exe._holder is not None and exe._holder.callbacks:
        raise ValueError(
            f"Executable {exe.name} calls host callbacks (Python functions), which cannot "
            "be saved to a file")
    header = {
        "environment": environment(exe.devices),
        "device_ids": [int(d.id) for d in exe.devices],
        "num_partitions": int(exe.num_partitions),
        "in_avals": [encode_aval(a) for a in exe.in_avals],
        "out_avals": [encode_aval(a) for a in exe.out_avals],
        "donated_args": [int(i) for i in exe.donated_args],
        "committed": bool(exe.committed),
        "name": str(exe.name),
        "fingerprint": str(exe.fingerprint),
        "cache_key": exe.cache_key,
    }
    return header, exe.loaded.serialize()


def restore(header: Mapping[str, Any], blob: bytes, what: str) -> Executable:
    """The Executable `dump` recorded, on this process's devices. SerializedFormatError
    naming what differs for a record made elsewhere (another jaxlib, backend, device kind
    or count) or malformed."""
    if not isinstance(header, Mapping):
        raise SerializedFormatError(f"{what}: the executable record is not an object")
    ids = header.get("device_ids")
    nparts = header.get("num_partitions")
    all_devices = backend.devices()
    if not (isinstance(ids, list) and ids and all(type(i) is int for i in ids)
            and type(nparts) is int and nparts == len(ids) and len(set(ids)) == len(ids)):
        raise SerializedFormatError(f"{what}: malformed device ids {ids!r:.80}")
    by_id = {d.id: d for d in all_devices}
    missing = [i for i in ids if i not in by_id]
    devices = tuple(by_id[i] for i in ids if i in by_id)
    check_environment(header.get("environment"), environment(devices or all_devices[:1]),
                      what)
    if missing:
        raise SerializedFormatError(
            f"{what} runs on devices {ids}, but this process has no device with id "
            f"{missing[0]}")
    in_avals = decode_avals(header.get("in_avals"), f"{what}: in_avals")
    out_avals = decode_avals(header.get("out_avals"), f"{what}: out_avals")
    donated = header.get("donated_args")
    if not (isinstance(donated, list) and all(type(i) is int and 0 <= i < len(in_avals)
                                              for i in donated)
            and sorted(set(donated)) == donated):
        raise SerializedFormatError(f"{what}: malformed donated_args {donated!r:.80}")
    committed, name = header.get("committed"), header.get("name")
    fingerprint, key = header.get("fingerprint"), header.get("cache_key")
    if type(committed) is not bool or not isinstance(name, str) or not isinstance(
            fingerprint, str) or not (key is None or isinstance(key, str)):
        raise SerializedFormatError(f"{what}: malformed executable record")
    if not blob:
        raise SerializedFormatError(f"{what} has no executable")
    try:
        loaded = backend.get_client().deserialize_executable(
            blob, _jax.DeviceList(devices), None, host_callbacks=[])
    except _jax.JaxRuntimeError as e:
        raise SerializedFormatError(f"{what}: jaxlib cannot load the executable: {e}") from None
    nparams = len(loaded.get_parameter_layouts())
    nouts = len(loaded.get_output_layouts())
    if nparams != len(in_avals) or nouts != len(out_avals):
        raise SerializedFormatError(
            f"{what}: the executable takes {nparams} arguments and returns {nouts} results, "
            f"but the record says {len(in_avals)} and {len(out_avals)}")
    return Executable(_Loaded(loaded, (), key), in_avals, out_avals, devices, fingerprint,
                      donated, nparts, committed, name)
