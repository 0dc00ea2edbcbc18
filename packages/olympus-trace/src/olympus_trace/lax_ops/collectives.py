"""Wrappers of the collectives (`olympus_ir.prims.collectives`): `psum`, `pmean`, `pmax`,
`pmin`, `all_gather` and `axis_index` over a named mapped axis, and the lookup of the
transformation that binds an axis name (`axis_size`).

The axis is named by an enclosing ``olympus.vmap(..., axis_name=name)``; over a vmapped axis
a collective combines the batch members' values (``psum(x, 'i')`` is the sum over the
members, the same in each). An axis name that no enclosing transformation binds is a
NameError. `axis_name` may also be a tuple of names: the collective runs over all of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from olympus_ir.prims.collectives import all_gather_p, axis_index_p, pmax_p, pmin_p, psum_p

from .. import tree_util
from ..core import bind, current_trace, get_aval
from .elementwise import add, mul

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "check_axis_name"]


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


def _bind_collective(prim, x, axis_name, **params):
    check_axis_name(axis_name)
    return bind(prim, x, axis_name=axis_name, **params)


# --- the collectives ------------------------------------------------------------------------


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _no_groups(axis_index_groups, what):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{what}: axis_index_groups is not supported")


def _reducer(prim, what):
    def collective(x, axis_name, *, axis_index_groups=None):
        _no_groups(axis_index_groups, what)
        names = _names(axis_name)
        for n in names:
            check_axis_name(n)

        def one(v):
            for n in names:
                v = _bind_collective(prim, v, n)
            return v

        return tree_util.tree_map(one, x)

    collective.__name__ = what
    return collective


psum = _reducer(psum_p, "psum")
pmax = _reducer(pmax_p, "pmax")
pmin = _reducer(pmin_p, "pmin")
psum.__doc__ = "Sum of `x` (a pytree) over the members of the mapped axis `axis_name`."
pmax.__doc__ = "Maximum of `x` (a pytree) over the members of the mapped axis `axis_name`."
pmin.__doc__ = "Minimum of `x` (a pytree) over the members of the mapped axis `axis_name`."


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of `x` (a pytree) over the members of the mapped axis `axis_name`."""
    _no_groups(axis_index_groups, "pmean")
    n = axis_size(axis_name)
    return tree_util.tree_map(lambda v: v / n, psum(x, axis_name))


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False):
    """Every member's `x` (a pytree), stacked along a new dimension `axis` in member
    order (concatenated along the existing dimension `axis` when `tiled`)."""
    _no_groups(axis_index_groups, "all_gather")
    names = _names(axis_name)
    for n in names:
        check_axis_name(n)

    def one(v):
        nd = get_aval(v).ndim
        lim = nd if tiled else nd + 1
        if not -lim <= axis < lim:
            raise ValueError(f"all_gather axis {axis} is out of bounds for an operand of rank "
                             f"{nd}{' (tiled)' if tiled else ''}.")
        ax = axis % lim
        # The last name first; the others then concatenate whole blocks, so the first name
        # varies slowest (row-major over the names).
        for i, n in enumerate(reversed(names)):
            v = bind(all_gather_p, v, axis_name=n, axis_size=axis_size(n), axis=ax,
                     tiled=bool(tiled) or i > 0)
        return v

    return tree_util.tree_map(one, x)


def axis_index(axis_name: Any):
    """This member's position along the mapped axis `axis_name` (an int32 scalar); for a
    tuple of names, the position in their row-major product."""
    names = _names(axis_name)
    out = None
    for n in names:
        check_axis_name(n)
        i = bind(axis_index_p, axis_name=n)
        out = i if out is None else add(mul(out, np.int32(axis_size(n))), i)
    return out
