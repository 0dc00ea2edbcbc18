"""JVP and transpose rules of the collectives. psum and all_gather are linear (psum
transposes to psum, JAX's rule; all_gather to each member's block of the psum of the
gathered cotangents); pmax/pmin pass the tangent of the member(s) holding the extremum
(averaged over ties), like reduce_max; axis_index has an integer result."""

from __future__ import annotations

import numpy as np

from olympus_ir.prims.collectives import all_gather_p, axis_index_p, pmax_p, pmin_p, psum_p

from .. import lax_ops as lax
from ..ad import Zero, jvp_rules, transpose_rules
from ..core import bind, get_aval
from ._util import zero_jvp


def _psum_jvp(primals, tangents, *, axis_name):
    (x,), (t,) = primals, tangents
    return bind(psum_p, x, axis_name=axis_name), bind(psum_p, t, axis_name=axis_name)


def _psum_transpose(ct, x, *, axis_name):
    if isinstance(ct, Zero):
        return [ct]
    return [bind(psum_p, ct, axis_name=axis_name)]


def _chooser_jvp(prim):
    def rule(primals, tangents, *, axis_name):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, axis_name=axis_name)
        w = lax.convert_element_type(lax.eq(x, out), get_aval(t).dtype)
        num = bind(psum_p, lax.mul(t, w), axis_name=axis_name)
        return out, lax.div(num, bind(psum_p, w, axis_name=axis_name))

    rule.__name__ = f"_{prim.name}_jvp"
    return rule


def _all_gather_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    return bind(all_gather_p, x, **params), bind(all_gather_p, t, **params)


def _all_gather_transpose(ct, x, *, axis_name, axis_size, axis=0, tiled=False):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    total = bind(psum_p, ct, axis_name=axis_name)
    shape = get_aval(total).shape
    block = x.aval.shape[axis] if tiled else 1
    me = bind(axis_index_p, axis_name=axis_name)
    idx_dt = get_aval(me).dtype
    starts = [np.zeros((), idx_dt)] * len(shape)
    starts[axis] = lax.mul(me, np.array(block, idx_dt))
    sizes = list(shape)
    sizes[axis] = block
    part = lax.dynamic_slice(total, starts, sizes, allow_negative_indices=False)
    return [lax.reshape(part, x.aval.shape)]


jvp_rules[psum_p] = _psum_jvp
transpose_rules[psum_p] = _psum_transpose
jvp_rules[pmax_p] = _chooser_jvp(pmax_p)
jvp_rules[pmin_p] = _chooser_jvp(pmin_p)
jvp_rules[all_gather_p] = _all_gather_jvp
transpose_rules[all_gather_p] = _all_gather_transpose
jvp_rules[axis_index_p] = zero_jvp(axis_index_p)  # no operands, an integer result
