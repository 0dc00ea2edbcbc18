"""Collectives over a named mapped axis: ``psum``, ``pmax``, ``pmin``, ``all_gather`` and
``axis_index``.

Each names the axis it runs over with its `axis_name` param (one hashable name). The IR
knows nothing of axes: only a transformation that binds the name (today
``vmap(..., axis_name=...)``) gives a collective a meaning, and its batching rule replaces
the collective by ordinary primitives. So collectives are never lowered.

* ``psum/pmax/pmin(x; axis_name)``: the result has x's type.
* ``all_gather(x; axis_name, axis_size, axis, tiled)``: the members' values stacked along a
  new dimension `axis` of size `axis_size` (concatenated along `axis` when `tiled`).
* ``axis_index(; axis_name)``: this member's position along the axis, an int32 scalar.
"""

from __future__ import annotations

from collections.abc import Hashable

from .. import dtypes
from ..avals import ShapedArray
from ..core import def_shape_rule, new_primitive

__all__ = ["psum_p", "pmax_p", "pmin_p", "all_gather_p", "axis_index_p", "COLLECTIVES"]


def _check_axis_name(name, axis_name):
    if not isinstance(axis_name, Hashable):
        raise TypeError(f"{name} axis_name must be a hashable axis name, got {axis_name!r}.")


def _reduction(name):
    p = new_primitive(name)

    @def_shape_rule(p)
    def rule(x, *, axis_name):
        _check_axis_name(name, axis_name)
        return x

    rule.__name__ = f"{name}_shape_rule"
    return p


psum_p = _reduction("psum")
pmax_p = _reduction("pmax")
pmin_p = _reduction("pmin")

all_gather_p = new_primitive("all_gather")


@def_shape_rule(all_gather_p)
def all_gather_shape_rule(x, *, axis_name, axis_size, axis=0, tiled=False):
    _check_axis_name("all_gather", axis_name)
    if tiled:
        if not 0 <= axis < x.ndim:
            raise TypeError(f"all_gather axis {axis} is out of range for a tiled gather of an "
                            f"operand of shape {x.shape}.")
        shape = list(x.shape)
        shape[axis] *= axis_size
    else:
        if not 0 <= axis <= x.ndim:
            raise TypeError(f"all_gather axis {axis} is out of range for an operand of shape "
                            f"{x.shape}.")
        shape = list(x.shape)
        shape.insert(axis, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


axis_index_p = new_primitive("axis_index")


@def_shape_rule(axis_index_p)
def axis_index_shape_rule(*, axis_name):
    _check_axis_name("axis_index", axis_name)
    return ShapedArray((), dtypes.int32)


COLLECTIVES = (psum_p, pmax_p, pmin_p, all_gather_p, axis_index_p)
