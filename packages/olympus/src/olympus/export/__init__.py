"""`olympus.export`: serialize a jitted function (StableHLO plus its calling convention)
and call it later, in another process, or from JAX, in JAX 0.10.2's format.

    exp = export.export(olympus.jit(f))(olympus.ShapeDtypeStruct((3,), np.float32))
    blob = exp.serialize()
    export.deserialize(blob).call(x)

Shape polymorphism (`symbolic_shape`, `symbolic_args_specs`, `SymbolicScope`,
`is_symbolic_dim`) is not part of this module yet: serialized symbolic dimensions are
refused with an error naming them.
"""

from ._exported import (
    DisabledSafetyCheck,
    Exported,
    default_export_platform,
    deserialize,
    export,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)

__all__ = [
    "DisabledSafetyCheck", "Exported", "export", "deserialize",
    "register_pytree_node_serialization", "register_namedtuple_serialization",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version", "default_export_platform",
]
