"""JVP and transpose rules for the reductions (argmax/argmin: integer results, no
derivative)."""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P

from .. import lax_ops as lax
from ..ad import Zero, jvp_rules, tangent_aval, transpose_rules
from ..core import bind, get_aval
from ._util import zero_jvp


def _kept_dims(ndim, axes):
    return tuple(d for d in range(ndim) if d not in axes)


def _bcast_back(y, shape, axes):
    """Broadcast a reduced value back to the operand's shape."""
    return lax.broadcast_in_dim(y, shape, _kept_dims(len(shape), axes))


# --- reduce_sum (linear) -----------------------------------------------------------------------


def _reduce_sum_jvp(primals, tangents, *, axes, out_sharding=None):
    (x,), (t,) = primals, tangents
    out = bind(P.reduce_sum_p, x, axes=axes, out_sharding=out_sharding)
    if isinstance(t, Zero):
        return out, Zero(tangent_aval(get_aval(out)))
    return out, bind(P.reduce_sum_p, t, axes=axes, out_sharding=out_sharding)


def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [_bcast_back(ct, x.aval.shape, axes)]


jvp_rules[P.reduce_sum_p] = _reduce_sum_jvp
transpose_rules[P.reduce_sum_p] = _reduce_sum_transpose


# --- reduce_max / reduce_min: the tangent averages over the (tied) extremal elements ----------


def _reduce_chooser_jvp(prim):
    def rule(primals, tangents, *, axes, out_sharding=None):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, axes=axes, out_sharding=out_sharding)
        shape = get_aval(x).shape
        mask = lax.eq(x, _bcast_back(out, shape, axes))
        dt = get_aval(t).dtype
        w = lax.convert_element_type(mask, dt)
        counts = lax.reduce_sum(w, axes)
        return out, lax.div(lax.reduce_sum(lax.mul(t, w), axes), counts)

    jvp_rules[prim] = rule


_reduce_chooser_jvp(P.reduce_max_p)
_reduce_chooser_jvp(P.reduce_min_p)


# --- reduce_prod: d prod = sum_j t_j prod_{k != j} x_k, with the exclusive products computed
# by cumulative products from both ends (exact when some x_k are zero) ------------------------


def _move_to_end(x, axes):
    """Transpose the reduced axes to the end and flatten them into one: (kept..., n)."""
    shape = get_aval(x).shape
    kept = _kept_dims(len(shape), axes)
    perm = kept + tuple(axes)
    xt = lax.transpose(x, perm)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    return lax.reshape(xt, tuple(shape[d] for d in kept) + (n,))


def _exclusive_cumprod(x, axis, reverse):
    """prod of the elements strictly before (after, if reverse) each position along axis."""
    shape = get_aval(x).shape
    n = shape[axis]
    one = np.ones((), get_aval(x).dtype)
    if n == 0:
        return x
    c = bind(P.cumprod_p, x, axis=axis, reverse=reverse)
    start = [0] * len(shape)
    limit = list(shape)
    cfg = [(0, 0, 0)] * len(shape)
    if reverse:
        start[axis] = 1
        cfg[axis] = (0, 1, 0)
    else:
        limit[axis] = n - 1
        cfg[axis] = (1, 0, 0)
    return lax.pad(lax.slice(c, start, limit), one, cfg)


def _reduce_prod_jvp(primals, tangents, *, axes, out_sharding=None):
    (x,), (t,) = primals, tangents
    out = bind(P.reduce_prod_p, x, axes=axes, out_sharding=out_sharding)
    if not axes:
        return out, t
    xf = _move_to_end(x, axes)
    tf = _move_to_end(t, axes)
    last = len(get_aval(xf).shape) - 1
    others = lax.mul(_exclusive_cumprod(xf, last, False), _exclusive_cumprod(xf, last, True))
    return out, lax.reduce_sum(lax.mul(tf, others), (last,))


jvp_rules[P.reduce_prod_p] = _reduce_prod_jvp

# Boolean/bitwise reductions and argmax/argmin have integer or boolean results.
for _p in (P.reduce_and_p, P.reduce_or_p, P.reduce_xor_p, P.argmax_p, P.argmin_p):
    jvp_rules[_p] = zero_jvp(_p)
