"""olympus-runtime: devices, arrays and executables on jaxlib's PJRT CPU client.

Importing this package registers Olympus's config states with jaxlib (`config`) and adds
Olympus's methods to jaxlib's C++ array class, which *is* `Array` (`array`). It refuses
to import into a process where another library (jax) already patched that class.
"""

from . import config
from .__about__ import __version__
from .array import Array, check_not_deleted, register_array_methods
from .backend import (
    PluginInfo,
    default_backend,
    default_device,
    device_count,
    devices,
    discover_plugins,
    get_client,
    local_device_count,
    local_devices,
    make_plugin_client,
    process_index,
)
from .compiler import (
    Executable,
    XlaRuntimeError,
    check_argument_types,
    clear_cache,
    compile,
    compile_count,
)
from .config import set_num_cpu_devices, set_x64, x64_enabled
from .sharding import GSPMDSharding, SingleDeviceSharding, sharding_for
from .transfer import block_until_ready, device_get, device_put, put_numpy

__all__ = [
    "__version__",
    "Array", "check_not_deleted", "register_array_methods",
    "config", "set_x64", "x64_enabled", "set_num_cpu_devices",
    "get_client", "devices", "local_devices", "device_count", "local_device_count",
    "default_backend", "default_device", "process_index",
    "PluginInfo", "discover_plugins", "make_plugin_client",
    "SingleDeviceSharding", "GSPMDSharding", "sharding_for",
    "device_put", "device_get", "put_numpy", "block_until_ready",
    "compile", "Executable", "compile_count", "clear_cache", "XlaRuntimeError",
    "check_argument_types",
]
