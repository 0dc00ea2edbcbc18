"""JVP and transpose rules for the cumulative reductions.

cumsum is linear (its transpose is the cumsum in the other direction). cumprod and
cumlogsumexp differentiate through a parallel prefix scan over (value, tangent) pairs, which
is exact where values are zero (cumprod) and overflow-free (cumlogsumexp). cummax/cummin
route each output's tangent from the input element that attains the running extremum.
"""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P

from .. import lax_ops as lax
from ..ad import Zero, jvp_rules, tangent_aval, transpose_rules
from ..core import bind, get_aval
from ._util import take_along_axis


def _cum(prim, x, axis, reverse):
    return bind(prim, x, axis=axis, reverse=reverse)


# --- cumsum -------------------------------------------------------------------------------------


def _cumsum_jvp(primals, tangents, *, axis, reverse=False):
    (x,), (t,) = primals, tangents
    out = _cum(P.cumsum_p, x, axis, reverse)
    if isinstance(t, Zero):
        return out, Zero(tangent_aval(get_aval(out)))
    return out, _cum(P.cumsum_p, t, axis, reverse)


def _cumsum_transpose(ct, x, *, axis, reverse=False):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [_cum(P.cumsum_p, ct, axis, not reverse)]


jvp_rules[P.cumsum_p] = _cumsum_jvp
transpose_rules[P.cumsum_p] = _cumsum_transpose


# --- a parallel prefix scan built from slices, pads and the combine function ---------------------


def _slice_axis(x, start, stop, stride, axis):
    shape = get_aval(x).shape
    st, lim, strides = [0] * len(shape), list(shape), [1] * len(shape)
    st[axis], lim[axis], strides[axis] = start, stop, stride
    return lax.slice(x, st, lim, strides)


def _interleave(even, odd, axis):
    """result[2k] = even[k], result[2k+1] = odd[k] along `axis`."""
    ne, no = get_aval(even).shape[axis], get_aval(odd).shape[axis]
    r = len(get_aval(even).shape)
    z = np.zeros((), get_aval(even).dtype)
    ce = [(0, 0, 0)] * r
    co = [(0, 0, 0)] * r
    ce[axis] = (0, 1 if ne == no else 0, 1)
    co[axis] = (1, 0 if ne == no else 1, 1)
    return lax.add(lax.pad(even, z, ce), lax.pad(odd, z, co))


def associative_scan(combine, elems, axis):
    """Inclusive prefix scan of the tuple of arrays `elems` along `axis` with the associative
    `combine(a_tuple, b_tuple) -> tuple` (a comes first)."""
    n = get_aval(elems[0]).shape[axis]
    if n < 2:
        return list(elems)
    a = [_slice_axis(e, 0, n - 1, 2, axis) for e in elems]
    b = [_slice_axis(e, 1, n, 2, axis) for e in elems]
    odd = associative_scan(combine, combine(a, b), axis)
    rest = [_slice_axis(e, 2, n, 2, axis) for e in elems]
    if n % 2 == 0:
        m = get_aval(odd[0]).shape[axis]
        even = combine([_slice_axis(o, 0, m - 1, 1, axis) for o in odd], rest)
    else:
        even = combine(odd, rest)
    even = [lax.concatenate([_slice_axis(e, 0, 1, 1, axis), ev], axis)
            for e, ev in zip(elems, even)]
    return [_interleave(ev, od, axis) for ev, od in zip(even, odd)]


def _scan_jvp(prim, combine):
    def rule(primals, tangents, *, axis, reverse=False):
        (x,), (t,) = primals, tangents
        out = _cum(prim, x, axis, reverse)
        if reverse:
            x, t = lax.rev(x, (axis,)), lax.rev(t, (axis,))
        _, t_out = associative_scan(combine, [x, t], axis)
        if reverse:
            t_out = lax.rev(t_out, (axis,))
        return out, t_out

    jvp_rules[prim] = rule


def _prod_combine(a, b):
    (x, tx), (y, ty) = a, b
    return [lax.mul(x, y), lax.add(lax.mul(tx, y), lax.mul(x, ty))]


def _logaddexp_combine(a, b):
    (x, tx), (y, ty) = a, b
    m = lax.max(x, y)
    fin = lax.is_finite(m)
    shift = lax.select(fin, m, lax.broadcast_in_dim(np.zeros((), get_aval(m).dtype),
                                                     get_aval(m).shape, ()))
    ex, ey = lax.exp(lax.sub(x, shift)), lax.exp(lax.sub(y, shift))
    s = lax.add(ex, ey)
    out = lax.add(shift, lax.log(s))
    one = lax.broadcast_in_dim(np.ones((), get_aval(s).dtype), get_aval(s).shape, ())
    safe = lax.select(lax.eq(s, lax.broadcast_in_dim(np.zeros((), get_aval(s).dtype),
                                                     get_aval(s).shape, ())), one, s)
    t = lax.add(lax.mul(tx, lax.div(ex, safe)), lax.mul(ty, lax.div(ey, safe)))
    return [out, t]


_scan_jvp(P.cumprod_p, _prod_combine)
_scan_jvp(P.cumlogsumexp_p, _logaddexp_combine)


# --- cummax / cummin ------------------------------------------------------------------------------


def _cumextremum_jvp(prim):
    def rule(primals, tangents, *, axis, reverse=False):
        (x,), (t,) = primals, tangents
        out = _cum(prim, x, axis, reverse)
        shape = get_aval(x).shape
        n = shape[axis]
        pos = lax.broadcasted_iota(np.int32, shape, axis)
        hit = lax.eq(x, out)
        # The latest (earliest, if reverse) position at or before (after) each element where
        # the input equals the running extremum: that element's tangent is the output's.
        if not reverse:
            w = lax.select(hit, pos, lax.broadcast_in_dim(np.int32(-1), shape, ()))
            idx = _cum(P.cummax_p, w, axis, False)
        else:
            w = lax.select(hit, pos, lax.broadcast_in_dim(np.int32(n), shape, ()))
            idx = _cum(P.cummin_p, w, axis, True)
        return out, take_along_axis(t, idx, axis)

    jvp_rules[prim] = rule


_cumextremum_jvp(P.cummax_p)
_cumextremum_jvp(P.cummin_p)
