"""`olympus.experimental`: APIs JAX keeps under ``jax.experimental``: `io_callback`,
`EArray`, `primal_tangent_dtype`, `cur_qdd`, and the submodules (imported on first use):
`checkify`, `compilation_cache`, `compute_on`, `mesh_utils`, `multihost_utils`, `ode`,
`pjit`, `profiler`, `shard_map`, `jet`, `random`, `sparse`, `layout`,
`custom_partitioning`, `xla_metadata`, `serialize_executable`, `shard_alike`, `rnn`,
`control_deps`, `topologies`, `scheduling_groups`, `roofline`, `buffer_callback`,
`source_mapper`, `colocated_python`, `transfer`, `key_reuse`, `hijax` (also as `hiolympus`)."""

from .._src.callbacks import io_callback
from .._src.extended_arrays import EArray, primal_tangent_dtype
from .._src.quasi_dynamic_data import cur_qdd

__all__ = ["io_callback", "EArray", "primal_tangent_dtype", "cur_qdd", "checkify",
           "compilation_cache", "compute_on", "mesh_utils", "multihost_utils", "ode", "pjit",
           "profiler", "shard_map", "jet", "sparse", "layout", "custom_partitioning",
           "xla_metadata", "serialize_executable", "shard_alike", "rnn",
           "control_deps", "topologies", "scheduling_groups", "roofline", "buffer_callback",
           "source_mapper", "colocated_python", "transfer",
           "key_reuse", "hijax",
           "hiolympus"]

_SUBMODULES = {"checkify", "compilation_cache", "compute_on", "mesh_utils", "multihost_utils",
               "ode", "pjit", "profiler", "shard_map", "jet", "random", "sparse", "layout",
               "custom_partitioning", "xla_metadata", "serialize_executable", "shard_alike",
               "rnn", "control_deps", "topologies", "scheduling_groups", "roofline",
               "buffer_callback", "source_mapper", "colocated_python", "transfer",
               "key_reuse", "hijax",
               "hiolympus"}


def __getattr__(name: str):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
