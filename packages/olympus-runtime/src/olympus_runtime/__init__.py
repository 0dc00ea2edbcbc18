"""olympus-runtime: devices, arrays and executables on jaxlib's PJRT CPU client.

Importing this package registers Olympus's config states with jaxlib (`config`) and adds
Olympus's methods to jaxlib's C++ array class, which *is* `Array` (`array`). It refuses
to import into a process where another library (jax) already patched that class.
"""

from . import config, distributed
from .__about__ import __version__
from .array import (
    Array,
    ArrayBase,
    Shard,
    check_not_deleted,
    register_array_methods,
    register_tracer_class,
)
from .backend import (
    Device,
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
    process_count,
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
from .mesh import (
    AbstractMesh,
    AxisType,
    DuplicateSpecError,
    Mesh,
    PartitionSpec,
    get_abstract_mesh,
    get_mesh,
)
from .sharding import (
    GSPMDSharding,
    IndivisibleError,
    NamedSharding,
    SingleDeviceSharding,
    named_from_hlo,
    sharding_for,
)
from .transfer import block_until_ready, device_get, device_put, put_numpy

__all__ = [
    "__version__",
    "Array", "ArrayBase", "check_not_deleted", "register_array_methods",
    "register_tracer_class",
    "config", "set_x64", "x64_enabled", "set_num_cpu_devices",
    "Device", "get_client", "devices", "local_devices", "device_count", "local_device_count",
    "default_backend", "default_device", "process_index", "process_count", "distributed",
    "PluginInfo", "discover_plugins", "make_plugin_client",
    "SingleDeviceSharding", "GSPMDSharding", "NamedSharding", "sharding_for", "named_from_hlo",
    "IndivisibleError", "Shard",
    "Mesh", "AbstractMesh", "AxisType", "PartitionSpec", "DuplicateSpecError", "get_mesh",
    "get_abstract_mesh",
    "device_put", "device_get", "put_numpy", "block_until_ready",
    "compile", "Executable", "compile_count", "clear_cache", "XlaRuntimeError",
    "check_argument_types",
]
