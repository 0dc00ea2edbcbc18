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
        # As JAX's rule: the result reshaped with size-1 reduced dims, compared with the
        # operand by size-1 broadcasting.
        kept = tuple(1 if i in axes else d for i, d in enumerate(get_aval(x).shape))
        mask = lax.eq(x, lax.reshape(out, kept))
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


# --- the general reduction: JAX's rule ----------------------------------------------------------


def _reduce_jvp_rule(primals, tangents, *, computation, jaxpr, dimensions):
    """As JAX's: the reduced dimensions are flattened to the front, and the reduction is
    redone as a tree of elementwise applications of the computation (vmapped over every
    other dimension), differentiated with `jvp_flat`. Tangents of the initial values must
    be symbolic zeros (JAX's NotImplementedError otherwise)."""
    from ..ad import jvp_flat
    from ..batching import AxisData, vmap_flat
    from ..olympuspr_utils import eval_olympuspr

    n = len(primals) // 2
    xs, inits = list(primals[:n]), list(primals[n:])
    txs, tinits = tangents[:n], tangents[n:]
    if any(not isinstance(t, Zero) for t in tinits):
        raise NotImplementedError(
            "Gradient of general lax.reduce with non-zero tangents for initial values to "
            "reduction not implemented")
    shape = get_aval(xs[0]).shape
    axes = tuple(dimensions)
    non_axes = tuple(i for i in range(len(shape)) if i not in axes)
    size = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    perm = axes + non_axes
    new_shape = (size,) + tuple(shape[i] for i in non_axes)
    txs = [lax.broadcast_in_dim(np.zeros((), t.aval.dtype), get_aval(x).shape, ())
           if isinstance(t, Zero) else t for t, x in zip(txs, xs)]
    xs = [lax.reshape(x, new_shape, perm) for x in xs]
    txs = [lax.reshape(t, new_shape, perm) for t in txs]

    def reducer(*args):
        return eval_olympuspr(jaxpr.olympuspr, jaxpr.consts, *args)

    for _ in range(len(non_axes) + 1):
        reducer = (lambda f: lambda *args: vmap_flat(
            f, AxisData(get_aval(args[0]).shape[0]), args, [0] * len(args),
            lambda k: [0] * k))(reducer)

    def tree(*parts):
        while get_aval(parts[0]).shape[0] > 1:
            m = get_aval(parts[0]).shape[0]
            m1 = (m + 1) // 2
            rest = get_aval(parts[0]).shape[1:]
            first = [lax.slice(p, (0,) * (len(rest) + 1),
                               (m1,) + rest) for p in parts]
            second = [lax.slice(p, (m1,) + (0,) * len(rest), (m,) + rest) for p in parts]
            if m - m1 != m1:
                cfg = [(0, 1, 0)] + [(0, 0, 0)] * len(rest)
                second = [lax.pad(s, i, cfg) for s, i in zip(second, inits)]
            parts = reducer(*first, *second)
        if get_aval(parts[0]).shape[0] == 0:
            out_shape = tuple(shape[i] for i in non_axes)
            return [lax.broadcast_in_dim(i, out_shape, ()) for i in inits]
        return [lax.squeeze(p, (0,)) for p in parts]

    outs, touts = jvp_flat(tree, xs, txs)
    return outs, touts


jvp_rules[P.reduce_p] = _reduce_jvp_rule
