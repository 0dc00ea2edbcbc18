"""The PJRT client: one CPU client per process, created lazily and thread-safely.

Olympus runs on jaxlib's CPU client (``xla_client.make_cpu_client``). PJRT plugins for
other hardware are *discovered* (`discover_plugins`) but not loaded automatically:
loading one needs its shared library and, for jax-style plugins, their Python
``initialize()`` imports jax. `make_plugin_client` loads a plugin library explicitly.
See the README's "PJRT plugins" section.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jaxlib.utils
import jaxlib.xla_client as xc

from . import config

__all__ = [
    "get_client", "devices", "local_devices", "device_count", "local_device_count",
    "default_backend", "default_device", "process_index", "process_count", "PluginInfo",
    "discover_plugins", "make_plugin_client", "PLUGIN_GROUPS", "Device",
]

#: The type of every device (``olympus.Device``): jaxlib's C++ device class.
Device = xc.Device

_client: Any = None
_devices: tuple = ()
_local_default: Any = None

# absl levels: 0=INFO, 1=WARNING, 2=ERROR, 3=FATAL.
_LOG_LEVEL = 1


def get_client() -> Any:
    """The process's PJRT CPU client, created on first use with `config.num_cpu_devices()`."""
    client = _client
    if client is not None:
        return client
    return _create_client()


def _create_client() -> Any:
    global _client, _devices
    with config._lock:
        if _client is None:
            # Creating a client logs an INFO line (device count) to stderr; silence INFO.
            jaxlib.utils.absl_set_min_log_level(_LOG_LEVEL)
            from . import distributed

            n = config.num_cpu_devices()
            client = xc.make_cpu_client(num_devices=n, **distributed.client_options())
            _devices = tuple(client.devices())
            global _local_default
            _local_default = client.local_devices()[0]
            config._client_created = True
            _client = client
    return _client


def devices(backend: str | None = None) -> list:
    """All devices of the backend (only ``'cpu'`` is supported), ordered by id."""
    _check_backend(backend)
    get_client()
    return list(_devices)


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list:
    """The devices of process `process_index` (default: this process), on `backend`
    (default: the default backend). ``host_id`` is JAX's old name for `process_index`."""
    if host_id is not None:
        warnings.warn(
            "The argument to olympus.local_devices has been renamed from `host_id` to "
            "`process_index`. This alias will eventually be removed; please update "
            "your code.", stacklevel=2)
        process_index = host_id
    _check_backend(backend)
    client = get_client()
    if process_index is None:
        return list(client.local_devices())
    if not 0 <= process_index < process_count():
        raise ValueError(f"Unknown process_index {process_index}")
    return [d for d in _devices if d.process_index == process_index]


def device_count(backend: str | None = None) -> int:
    """The number of devices of `backend` across every process."""
    _check_backend(backend)
    get_client()
    return len(_devices)


def local_device_count(backend: str | None = None) -> int:
    """The number of devices this process can address."""
    _check_backend(backend)
    return get_client().local_device_count()


def process_index() -> int:
    """This process's index in a multi-process run (0 when alone)."""
    return get_client().process_index()


def process_count() -> int:
    """The number of processes in the run."""
    get_client()
    return len({d.process_index for d in _devices})


def default_backend() -> str:
    """The name of the default backend (`"cpu"` on this build)."""
    return "cpu"


def default_device() -> Any:
    """The device computations go to when none is given: ``olympus_default_device`` if
    set, else this process's first device (``CpuDevice(id=0)`` in a single process)."""
    d = config.default_device_state.value
    if d is not None:
        return d
    if _client is None:
        get_client()
    return _local_default


def _check_backend(backend: str | None) -> None:
    if backend is not None and backend != "cpu":
        raise RuntimeError(
            f"Unknown backend {backend!r}: olympus_runtime only runs on 'cpu' "
            "(see discover_plugins() for installed PJRT plugins)."
        )


# ------------------------------------------------------------------- PJRT plugins

#: Entry-point groups (and namespace packages of the same name) searched for plugins.
PLUGIN_GROUPS = ("olympus_plugins", "jax_plugins")

_ENV_PLUGINS = "PJRT_NAMES_AND_LIBRARY_PATHS"


@dataclass(frozen=True)
class PluginInfo:
    """A PJRT plugin found on this machine (found only: nothing was imported or loaded).

    ``source`` says where: ``"entry_point:<group>"``, ``"namespace:<package>"`` or
    ``"env:PJRT_NAMES_AND_LIBRARY_PATHS"``. ``module`` is the Python module that would
    register it, and ``library_paths`` the PJRT shared libraries found in that module's
    directory (or the path given in the environment variable).
    """

    name: str
    source: str
    module: str | None
    library_paths: tuple[str, ...]


def discover_plugins() -> list[PluginInfo]:
    """Find installed PJRT plugins without importing or loading them.

    Looks, like jax does, at (1) entry points in the groups `PLUGIN_GROUPS`, (2) the
    submodules of the namespace packages ``olympus_plugins`` and ``jax_plugins``, and
    (3) the ``PJRT_NAMES_AND_LIBRARY_PATHS`` environment variable (``name:path,...``).
    Returns ``[]`` when there are none. Plugin modules are *not* imported: jax plugins'
    ``initialize()`` imports jax, which cannot share a process with Olympus.
    """
    found: list[PluginInfo] = []
    seen: set[tuple[str, str | None]] = set()

    def add(info: PluginInfo) -> None:
        key = (info.name, info.module)
        if key not in seen:
            seen.add(key)
            found.append(info)

    import importlib.metadata  # lazily: importing it costs ~25 ms at start-up
    import pkgutil

    for group in PLUGIN_GROUPS:
        try:
            eps = importlib.metadata.entry_points(group=group)
        except Exception:  # pragma: no cover - broken metadata must not break discovery
            eps = ()
        for ep in eps:
            module = ep.value.split(":", 1)[0].strip()
            add(PluginInfo(ep.name, f"entry_point:{group}", module, _libraries_of(module)))

    for package in PLUGIN_GROUPS:
        for location in _package_locations(package):
            for mod in pkgutil.iter_modules([location]):
                module = f"{package}.{mod.name}"
                add(PluginInfo(mod.name, f"namespace:{package}", module, _libraries_of(module)))

    for item in filter(None, os.environ.get(_ENV_PLUGINS, "").split(",")):
        name, sep, path = item.partition(":")
        if sep and name.strip():
            add(PluginInfo(name.strip(), f"env:{_ENV_PLUGINS}", None, (path.strip(),)))
    return found


def _package_locations(package: str) -> list[str]:
    """The directories of a top-level (namespace) package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [str(p) for p in spec.submodule_search_locations]


def _module_dirs(module: str) -> list[Path]:
    """Directories a dotted module could live in, located on disk without importing it."""
    top, *rest = module.split(".")
    dirs = []
    for base in _package_locations(top):
        d = Path(base).joinpath(*rest)
        if d.is_dir():
            dirs.append(d)
    return dirs


def _libraries_of(module: str) -> tuple[str, ...]:
    libs: list[str] = []
    for d in _module_dirs(module):
        for pattern in ("*.so", "*.dylib", "*.dll"):
            libs.extend(str(p) for p in sorted(d.glob(pattern)))
    return tuple(libs)


def make_plugin_client(name: str, library_path: str, options: dict | None = None) -> Any:
    """Load a PJRT plugin library and create a client for it (not made the default).

    This is jaxlib's C-API route: ``load_pjrt_plugin_dynamically(name, path)`` (once per
    name) then ``make_c_api_client(name, options)``. For the CUDA plugin the options come
    from ``xla_client.generate_pjrt_gpu_plugin_options()``. Errors surface as
    `XlaRuntimeError` (e.g. ``INTERNAL: Failed to open ...``).
    """
    if not xc.pjrt_plugin_loaded(name):
        xc.load_pjrt_plugin_dynamically(name, library_path)
    return xc.make_c_api_client(name, options or {})
