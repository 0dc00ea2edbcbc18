"""JVP and transpose rules of the collectives. psum and all_gather are linear (psum
transposes to psum, all_gather to the psum_scatter of the gathered cotangents, JAX's
rules); pmax/pmin pass the tangent of the member(s) holding the extremum
(averaged over ties), like reduce_max; axis_index has an integer result. ppermute
transposes to the inverse permutation, psum_scatter to a tiled all_gather, all_to_all to
the all_to_all back; pvary and psum_invariant transpose to each other. ragged_all_to_all
is linear in its operand and output, and transposes (as JAX's rule) to the ragged
all-to-all back, with the received slices of the output's cotangent zeroed. psend and
precv have no derivative, as in JAX."""

from __future__ import annotations

import numpy as np

from olympus_ir.prims.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_invariant_p,
    psum_p,
    psum_scatter_p,
    pvary_p,
    ragged_all_to_all_p,
)

from .. import lax_ops as lax
from ..ad import Zero, jvp_rules, tangent_aval, transpose_rules
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
    return [bind(psum_scatter_p, ct, axis_name=axis_name, axis_size=axis_size,
                 scatter_dimension=axis, tiled=tiled)]


jvp_rules[psum_p] = _psum_jvp
transpose_rules[psum_p] = _psum_transpose
jvp_rules[pmax_p] = _chooser_jvp(pmax_p)
jvp_rules[pmin_p] = _chooser_jvp(pmin_p)
jvp_rules[all_gather_p] = _all_gather_jvp
transpose_rules[all_gather_p] = _all_gather_transpose
jvp_rules[axis_index_p] = zero_jvp(axis_index_p)  # no operands, an integer result


def _linear_jvp(prim):
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, **params)
        if isinstance(t, Zero):
            return out, Zero(tangent_aval(get_aval(out)))
        return out, bind(prim, t, **params)

    rule.__name__ = f"_{prim.name}_jvp"
    return rule


def _ppermute_transpose(ct, x, *, axis_name, perm):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    inverse = tuple((d, s) for s, d in perm)
    return [bind(ppermute_p, ct, axis_name=axis_name, perm=inverse)]


def _psum_scatter_transpose(ct, x, *, axis_name, axis_size, scatter_dimension=0, tiled=False):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [bind(all_gather_p, ct, axis_name=axis_name, axis_size=axis_size,
                 axis=scatter_dimension, tiled=tiled)]


def _all_to_all_transpose(ct, x, *, axis_name, axis_size, split_axis, concat_axis,
                          tiled=False):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [bind(all_to_all_p, ct, axis_name=axis_name, axis_size=axis_size,
                 split_axis=concat_axis, concat_axis=split_axis, tiled=tiled)]


def _pvary_transpose(ct, x, *, axes):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [bind(psum_invariant_p, ct, axes=axes)]


def _psum_invariant_transpose(ct, x, *, axes):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [bind(pvary_p, ct, axes=axes)]


for _p in (ppermute_p, psum_scatter_p, all_to_all_p, pvary_p, psum_invariant_p):
    jvp_rules[_p] = _linear_jvp(_p)
transpose_rules[ppermute_p] = _ppermute_transpose
transpose_rules[psum_scatter_p] = _psum_scatter_transpose
transpose_rules[all_to_all_p] = _all_to_all_transpose
transpose_rules[pvary_p] = _pvary_transpose
transpose_rules[psum_invariant_p] = _psum_invariant_transpose



def _ragged_all_to_all_jvp(primals, tangents, **params):
    operand, output, *offsets_and_sizes = primals
    t_operand, t_output = tangents[:2]
    out = bind(ragged_all_to_all_p, operand, output, *offsets_and_sizes, **params)
    if isinstance(t_operand, Zero) and isinstance(t_output, Zero):
        return out, Zero(tangent_aval(get_aval(out)))
    from ..ad import instantiate

    return out, bind(ragged_all_to_all_p, instantiate(t_operand), instantiate(t_output),
                     *offsets_and_sizes, **params)


def _ragged_all_to_all_transpose(ct, operand, output, input_offsets, send_sizes,
                                 output_offsets, recv_sizes, *, axis_name, axis_index_groups):
    from ..ad import is_undefined_primal, zeros_like_aval
    from ..lax_ops.indexing import ScatterDimensionNumbers, scatter, scatter_add

    if isinstance(ct, Zero):
        return [Zero(operand.aval) if is_undefined_primal(operand) else None,
                Zero(output.aval) if is_undefined_primal(output) else None] + [None] * 4
    if len(axis_name) != 1:
        raise NotImplementedError("ragged_all_to_all transpose over several axes")
    (name,) = axis_name
    back = lambda v: lax.all_to_all(v, name, 0, 0, tiled=True)  # noqa: E731
    out_offsets, in_offsets = back(output_offsets), back(input_offsets)
    op_aval = operand.aval if is_undefined_primal(operand) else get_aval(operand)
    operand_t = bind(ragged_all_to_all_p, ct, zeros_like_aval(op_aval), out_offsets,
                     recv_sizes, in_offsets, send_sizes, axis_name=axis_name,
                     axis_index_groups=axis_index_groups)
    # the rows of the output's cotangent that received data: +1 at each slice's start, -1
    # past its end, summed along the rows
    n = get_aval(ct).shape[0]
    dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))
    k = get_aval(out_offsets).shape[0]
    starts = lax.reshape(lax.convert_element_type(out_offsets, np.int32), (k, 1))
    ends = lax.reshape(lax.convert_element_type(lax.add(out_offsets, recv_sizes), np.int32),
                       (k, 1))
    marks = scatter(lax.broadcast_in_dim(np.int32(0), (n,), ()), starts,
                    lax.broadcast_in_dim(np.int32(1), (k,), ()), dn, mode="fill")
    marks = scatter_add(marks, ends, lax.broadcast_in_dim(np.int32(-1), (k,), ()), dn,
                        mode="fill")
    received = lax.ne(lax.cumsum(marks, 0), np.int32(0))
    ct_shape = get_aval(ct).shape
    received = lax.broadcast_in_dim(received, ct_shape, (0,))
    output_t = lax.select(received, zeros_like_aval(get_aval(ct)), ct)
    return [operand_t, output_t] + [None] * 4


jvp_rules[ragged_all_to_all_p] = _ragged_all_to_all_jvp
transpose_rules[ragged_all_to_all_p] = _ragged_all_to_all_transpose
