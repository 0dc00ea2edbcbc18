"""Collective primitives over a named mapped axis: psum, pmax, pmin, all_gather and
axis_index.

They have a meaning only inside a transformation that binds their ``axis_name`` (today:
``vmap(..., axis_name=...)``), whose batching rule reduces over (or gathers, or numbers)
the batch dimension. Binding one outside such a transformation is a NameError.

* ``psum/pmax/pmin(x; axis_name)``: the result has x's type.
* ``all_gather(x; axis_name, axis_size, axis, tiled)``: the members' values stacked along a
  new dimension `axis` of size `axis_size` (concatenated along `axis` when `tiled`).
* ``axis_index(; axis_name)``: this member's position along the axis, an int32 scalar.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir.avals import ShapedArray
from olympus_ir.core import def_shape_rule, new_primitive

from .core import bind, current_trace, get_aval

__all__ = ["psum_p", "pmax_p", "pmin_p", "all_gather_p", "axis_index_p", "COLLECTIVES",
           "axis_size", "check_axis_name"]


def _reduction(name):
    p = new_primitive(name)

    @def_shape_rule(p)
    def rule(x, *, axis_name):
        return x

    rule.__name__ = f"{name}_shape_rule"
    return p


psum_p = _reduction("psum")
pmax_p = _reduction("pmax")
pmin_p = _reduction("pmin")

all_gather_p = new_primitive("all_gather")


@def_shape_rule(all_gather_p)
def _all_gather_shape_rule(x, *, axis_name, axis_size, axis=0, tiled=False):
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
def _axis_index_shape_rule(*, axis_name):
    return ShapedArray((), dtypes.int32)


COLLECTIVES = (psum_p, pmax_p, pmin_p, all_gather_p, axis_index_p)


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


# --- differentiation --------------------------------------------------------------------------
# psum and all_gather are linear; pmax/pmin pass the tangent of the member(s) holding the
# extremum (averaged over ties), like reduce_max. psum transposes to psum (JAX's rule).


def _register_ad_rules() -> None:
    from . import ad, lax_ops

    def psum_jvp(primals, tangents, *, axis_name):
        (x,), (t,) = primals, tangents
        return bind(psum_p, x, axis_name=axis_name), bind(psum_p, t, axis_name=axis_name)

    def psum_transpose(ct, x, *, axis_name):
        if isinstance(ct, ad.Zero):
            return [ct]
        return [bind(psum_p, ct, axis_name=axis_name)]

    def chooser_jvp(prim):
        def rule(primals, tangents, *, axis_name):
            (x,), (t,) = primals, tangents
            out = bind(prim, x, axis_name=axis_name)
            w = lax_ops.convert_element_type(lax_ops.eq(x, out), get_aval(t).dtype)
            num = bind(psum_p, lax_ops.mul(t, w), axis_name=axis_name)
            return out, lax_ops.div(num, bind(psum_p, w, axis_name=axis_name))

        return rule

    def all_gather_jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        return bind(all_gather_p, x, **params), bind(all_gather_p, t, **params)

    ad.jvp_rules[psum_p] = psum_jvp
    ad.transpose_rules[psum_p] = psum_transpose
    ad.jvp_rules[pmax_p] = chooser_jvp(pmax_p)
    ad.jvp_rules[pmin_p] = chooser_jvp(pmin_p)
    ad.jvp_rules[all_gather_p] = all_gather_jvp


_register_ad_rules()
