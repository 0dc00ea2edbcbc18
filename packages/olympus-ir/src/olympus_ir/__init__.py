"""olympus-ir: the intermediate representation every Olympus layer shares.

Dtypes and weak types, avals, `ShapeDtypeStruct`, the olympuspr data structures,
primitives with their shape rules, the pretty-printer, the verifier and JSON
serialization. Depends on numpy and ml_dtypes only.
"""

from . import dtypes, primitives
from .__about__ import __version__
from .avals import (
    MemorySpace,
    ShapedArray,
    ShapeDtypeStruct,
    canonicalize_shape,
    raise_to_shaped,
)
from .core import (
    ClosedOlympuspr,
    DropVar,
    Eqn,
    Literal,
    Olympuspr,
    Primitive,
    SourceInfo,
    Var,
    abstract_eval,
    def_shape_rule,
    new_primitive,
    primitive_by_name,
    shape_rules,
)
from .pretty import pp_olympuspr

__all__ = [
    "__version__", "dtypes", "primitives", "MemorySpace", "ShapedArray", "ShapeDtypeStruct",
    "canonicalize_shape", "raise_to_shaped", "ClosedOlympuspr", "DropVar", "Eqn", "Literal",
    "Olympuspr", "Primitive", "SourceInfo", "Var", "abstract_eval", "def_shape_rule",
    "new_primitive", "primitive_by_name", "shape_rules", "pp_olympuspr",
]

from .serialize import from_json, olympusprs_equal, to_json  # noqa: E402
from .verify import OlympusprTypeError, check_olympuspr  # noqa: E402

__all__ += ["check_olympuspr", "OlympusprTypeError", "to_json", "from_json", "olympusprs_equal"]
