"""`olympus.config`: process-wide settings (`config.update(name, value)`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

_DEFAULTS = {
    "olympus_enable_x64": False,
    "olympus_disable_jit": False,
    "olympus_num_cpu_devices": 1,
    "olympus_check_tracer_leaks": False,
    # JAX 0.10.2's default threefry stream (read by olympus.random).
    "olympus_threefry_partitionable": True,
    # CPU collectives across processes (olympus.distributed): "gloo" or "mpi".
    "olympus_cpu_collectives_implementation": "gloo",
    # Where uncommitted arrays and computations go (None: the first local device).
    "olympus_default_device": None,
    # The persistent compilation cache (olympus_runtime.persistent_cache), JAX's defaults.
    "olympus_compilation_cache_dir": None,
    "olympus_enable_compilation_cache": True,
    "olympus_persistent_cache_min_compile_time_secs": 1.0,
    "olympus_persistent_cache_min_entry_size_bytes": 0,
    "olympus_compilation_cache_max_size": -1,
}
#: Options that live in olympus_runtime.persistent_cache (under their unprefixed names).
_CACHE_OPTIONS = frozenset({
    "olympus_compilation_cache_dir", "olympus_enable_compilation_cache",
    "olympus_persistent_cache_min_compile_time_secs",
    "olympus_persistent_cache_min_entry_size_bytes", "olympus_compilation_cache_max_size",
})


def _env_default(name: str, default: Any) -> Any:
    v = os.environ.get(name.upper())
    if v is None:
        return default
    if default is None:
        return v
    if isinstance(default, bool):
        return v.lower() in ("1", "true", "yes", "on")
    return type(default)(v)


class Config:
    """Settings with JAX-style names: ``olympus_enable_x64``, ``olympus_disable_jit``, ..."""

    def __init__(self) -> None:
        self._values = {k: _env_default(k, v) for k, v in _DEFAULTS.items()}

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def read(self, name: str) -> Any:
        return getattr(self, name)

    def update(self, name: str, value: Any) -> None:
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        if name == "olympus_enable_x64":
            import olympus_runtime as rt

            rt.set_x64(bool(value))
        elif name == "olympus_num_cpu_devices":
            import olympus_runtime as rt

            rt.set_num_cpu_devices(int(value))
        elif name == "olympus_default_device":
            import olympus_runtime as rt

            from .sharding import check_device

            rt.config.default_device_state.set_global(check_device(value))
        elif name == "olympus_cpu_collectives_implementation":
            import olympus_runtime as rt

            if value not in ("gloo", "mpi"):
                raise ValueError("olympus_cpu_collectives_implementation must be 'gloo' or "
                                 f"'mpi', got {value!r}")
            rt.distributed.collectives_implementation = value
        elif name == "olympus_disable_jit":
            import olympus_runtime as rt

            value = bool(value)
            rt.config.set_disable_jit(value)  # the C++ jit fast path reads this state
        elif name in _CACHE_OPTIONS:
            from olympus_runtime import persistent_cache

            persistent_cache.set_option(name[len("olympus_"):], value)
            value = persistent_cache.get_option(name[len("olympus_"):])
        self._values[name] = value

    def _apply_initial(self) -> None:
        for name in ("olympus_enable_x64", "olympus_disable_jit"):
            if self._values[name]:
                self.update(name, True)
        for name in _CACHE_OPTIONS:  # from the environment (OLYMPUS_COMPILATION_CACHE_DIR...)
            if self._values[name] != _DEFAULTS[name]:
                self.update(name, self._values[name])


config = Config()


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """``with olympus.enable_x64():`` 64-bit dtypes inside the block (or 32-bit with
    ``False``); the previous setting is restored on exit. Process-wide, like
    ``config.update("olympus_enable_x64", ...)``."""
    prev = config._values["olympus_enable_x64"]
    config.update("olympus_enable_x64", bool(new_val))
    try:
        yield
    finally:
        config.update("olympus_enable_x64", prev)
