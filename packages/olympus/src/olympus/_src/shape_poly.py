"""Shape polymorphism in the public API: `symbolic_args_specs`, and what needs the upper
layers (eager use of a symbolic dimension as a value).

The algebra itself (dimension expressions, scopes, the decision procedure, the parser)
lives in `olympus_ir.shape_poly`, since avals carry shapes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from olympus_ir import shape_poly
from olympus_ir.avals import ShapeDtypeStruct
from olympus_ir.shape_poly import SymbolicScope
from olympus_trace import tree_util
from olympus_trace.core import get_aval

__all__ = ["symbolic_args_specs"]


def _shape_and_dtype(a):
    if isinstance(a, ShapeDtypeStruct):
        return a.shape, a.dtype
    if hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.generic):
        return tuple(a.shape), np.dtype(a.dtype)
    aval = get_aval(a)
    return aval.shape, aval.dtype


def symbolic_args_specs(args, shapes_specs, constraints: Sequence[str] = (),
                        scope: SymbolicScope | None = None):
    """A pytree of `ShapeDtypeStruct` like `args`, with shapes from `shapes_specs`.

    `shapes_specs` is None (static shapes), one specification string for every argument,
    or a pytree prefix of `args` with a string (or None) per subtree; placeholders (``_``,
    ``...``) take their sizes from the arguments, which also give the dtypes. All the
    shapes share one scope (a new one holding `constraints`, or `scope`).
    """
    leaves, treedef = tree_util.tree_flatten(args)
    shapes, dts = zip(*map(_shape_and_dtype, leaves)) if leaves else ((), ())
    specs = shapes_specs
    if isinstance(args, tuple) and isinstance(specs, list):
        specs = tuple(specs)  # as JAX: a list of specs for a tuple of arguments
    try:
        flat_specs = tree_util.broadcast_prefix(specs, args, is_leaf=lambda x: x is None)
    except ValueError:
        errs = tree_util.prefix_errors(specs, args, is_leaf=lambda x: x is None)
        if not errs:
            raise
        raise errs[0]("export.symbolic_args_specs shapes_specs") from None
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot use both `scope` and `constraints`")
    out = [ShapeDtypeStruct(shape_poly.symbolic_shape(spec, like=s, scope=scope), dt)
           for s, dt, spec in zip(shapes, dts, flat_specs)]
    return treedef.unflatten(out)
