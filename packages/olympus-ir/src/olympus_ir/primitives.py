"""All primitives, re-exported from their family modules in `olympus_ir.prims`."""

from .core import primitive_by_name, primitives_by_name, shape_rules  # noqa: F401
from .prims import *  # noqa: F401,F403
