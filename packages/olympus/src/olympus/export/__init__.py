"""`olympus.export`: serialize a jitted function (StableHLO plus its calling convention)
and call it later, in another process, or from JAX, in JAX 0.10.2's format.

    exp = export.export(olympus.jit(f))(olympus.ShapeDtypeStruct((3,), np.float32))
    blob = exp.serialize()
    export.deserialize(blob).call(x)

With symbolic shapes (`symbolic_shape`, `symbolic_args_specs`, `SymbolicScope`,
`is_symbolic_dim`) one export serves every size: ``export.export(olympus.jit(f))(
olympus.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32))`` is called with any
``b >= 1``, its module taking JAX's calling convention for dimension variables.
"""

from olympus_ir.shape_poly import SymbolicScope, is_symbolic_dim, symbolic_shape

from .._src.shape_poly import symbolic_args_specs
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
    "symbolic_shape", "symbolic_args_specs", "SymbolicScope", "is_symbolic_dim",
]
