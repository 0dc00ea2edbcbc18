"""Finding the transformation that binds a collective's axis name.

The collectives (psum, pmax, pmin, all_gather, axis_index) are defined in
`olympus_ir.prims.collectives`, their rules in the `collectives` family files of
`ad_rules` and `batching_rules`. They have a meaning only inside a transformation that
binds their ``axis_name`` (today: ``vmap(..., axis_name=...)``); binding one outside such
a transformation is a NameError, raised here before the primitive is bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import bind, current_trace

__all__ = ["axis_size", "check_axis_name", "bind_collective"]


# --- finding the transformation that binds an axis name -------------------------------------


def _bound_axes():
    """(name, size) of every named mapped axis of the current trace stack, innermost first."""
    t = current_trace()
    while t is not None:
        ad = getattr(t, "axis_data", None)
        if ad is not None and ad.name is not None:
            yield ad.name, ad.size
        t = getattr(t, "parent", None)


def axis_size(axis_name: Any) -> int:
    """The size of the mapped axis `axis_name` (a name or a tuple of names: the product);
    NameError when no enclosing transformation binds it."""
    if isinstance(axis_name, (tuple, list)):
        return int(np.prod([axis_size(n) for n in axis_name], dtype=np.int64))
    for name, size in _bound_axes():
        if name == axis_name:
            return size
    raise NameError(f"unbound axis name: {axis_name}")


def check_axis_name(axis_name: Any) -> None:
    axis_size(axis_name)


def bind_collective(prim, x, axis_name, **params):
    check_axis_name(axis_name)
    return bind(prim, x, axis_name=axis_name, **params)
