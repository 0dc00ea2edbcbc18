"""`olympus.sharding`: meshes, partition specs and the shardings built from them."""

from jaxlib._jax import Sharding

from olympus_runtime import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Shard,
    SingleDeviceSharding,
)
from olympus_runtime import GSPMDSharding as _GSPMDSharding
from olympus_runtime.mesh import AbstractDevice, ManualAxisType

from ._src.sharding import (
    auto_axes,
    explicit_axes,
    get_abstract_mesh,
    get_mesh,
    make_single_device_sharding,
    reshard,
    set_mesh,
    use_abstract_mesh,
)

__all__ = [
    "Sharding", "SingleDeviceSharding", "NamedSharding", "PartitionSpec", "Mesh",
    "AbstractMesh", "AxisType", "Shard", "get_mesh", "set_mesh", "get_abstract_mesh",
    "use_abstract_mesh", "make_single_device_sharding", "reshard", "auto_axes",
    "explicit_axes", "AbstractDevice", "ManualAxisType",
]
del _GSPMDSharding
