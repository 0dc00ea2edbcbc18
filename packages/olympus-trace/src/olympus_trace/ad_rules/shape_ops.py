"""JVP and transpose rules for the data-movement primitives (all linear): broadcast_in_dim,
reshape, transpose, squeeze, expand_dims, concatenate, pad, rev, slice; and iota, which has
no operands (so no derivative)."""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P

from .. import lax_ops as lax
from ..ad import Zero, is_undefined_primal, jvp_rules, tangent_aval, transpose_rules
from ..core import bind, get_aval
from ._util import aval_of, inst, zero_jvp


def deflinear(prim, transpose):
    """A primitive linear in all its operands: the tangent is the primitive applied to the
    tangents (zeros instantiated when only some are zero)."""

    def jvp(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        if all(isinstance(t, Zero) for t in tangents):
            return out, Zero(tangent_aval(get_aval(out)))
        ts = [inst(t) for t in tangents]
        return out, bind(prim, *ts, **params)

    jvp_rules[prim] = jvp
    transpose_rules[prim] = transpose


def deflinear1(prim, transpose):
    """Linear in its single operand; `transpose(ct, x_aval, **params)` is only called with
    a nonzero cotangent."""

    def tr(ct, x, **params):
        if isinstance(ct, Zero):
            return [Zero(x.aval)]
        return [transpose(ct, x.aval, **params)]

    deflinear(prim, tr)


# --- broadcast_in_dim ---------------------------------------------------------------------


def _broadcast_in_dim_transpose(ct, aval, *, shape, broadcast_dimensions, sharding=None):
    bdims = tuple(broadcast_dimensions)
    new_dims = [d for d in range(len(shape)) if d not in bdims]
    unit_dims = [d for i, d in enumerate(bdims) if aval.shape[i] == 1 and shape[d] != 1]
    axes = tuple(sorted(new_dims + unit_dims))
    out = lax.reduce_sum(ct, axes) if axes else ct
    # The dimensions left are in result order; the operand's are in `bdims` order.
    left = [d for d in bdims if d not in unit_dims]
    perm = tuple(np.argsort(np.argsort(left)))
    if perm != tuple(range(len(perm))):
        out = lax.transpose(out, perm)
    return lax.reshape(out, aval.shape)


deflinear1(P.broadcast_in_dim_p, _broadcast_in_dim_transpose)


# --- reshape --------------------------------------------------------------------------------


def _reshape_transpose(ct, aval, *, new_sizes, dimensions=None, sharding=None):
    if dimensions is None:
        return lax.reshape(ct, aval.shape)
    perm = tuple(dimensions)
    permuted = tuple(aval.shape[d] for d in perm)
    return lax.transpose(lax.reshape(ct, permuted), tuple(np.argsort(perm)))


deflinear1(P.reshape_p, _reshape_transpose)


# --- transpose / squeeze / expand_dims / rev --------------------------------------------------


deflinear1(P.transpose_p, lambda ct, aval, *, permutation: lax.transpose(
    ct, tuple(int(i) for i in np.argsort(permutation))))
deflinear1(P.squeeze_p, lambda ct, aval, *, dimensions: lax.reshape(ct, aval.shape))
deflinear1(P.expand_dims_p, lambda ct, aval, *, dimensions: lax.reshape(ct, aval.shape))
deflinear1(P.rev_p, lambda ct, aval, *, dimensions: lax.rev(ct, dimensions))


# --- concatenate ------------------------------------------------------------------------------


def _concatenate_transpose(ct, *xs, dimension):
    out = []
    off = 0
    for x in xs:
        a = aval_of(x)
        n = a.shape[dimension]
        if is_undefined_primal(x):
            if isinstance(ct, Zero):
                out.append(Zero(a))
            else:
                shape = get_aval(ct).shape
                start = [0] * len(shape)
                limit = list(shape)
                start[dimension], limit[dimension] = off, off + n
                out.append(lax.slice(ct, start, limit))
        else:
            out.append(None)
        off += n
    return out


deflinear(P.concatenate_p, _concatenate_transpose)


# --- pad --------------------------------------------------------------------------------------


def _unpad(ct, aval, padding_config):
    """The operand-shaped part of a padded cotangent (zeros where the pad cropped)."""
    neg = [(max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in padding_config]
    if any(a or b for a, b, _ in neg):
        ct = lax.pad(ct, np.zeros((), aval.dtype), neg)
    starts, limits, strides = [], [], []
    for (lo, _, interior), n in zip(padding_config, aval.shape):
        s = max(lo, 0)
        starts.append(s)
        limits.append(s + (n - 1) * (interior + 1) + 1 if n else s)
        strides.append(interior + 1)
    return lax.slice(ct, starts, limits, strides)


def _pad_transpose(ct, x, padding_value, *, padding_config):
    xa, pa = aval_of(x), aval_of(padding_value)
    if isinstance(ct, Zero):
        return [Zero(xa) if is_undefined_primal(x) else None,
                Zero(pa) if is_undefined_primal(padding_value) else None]
    t_x = _unpad(ct, xa, padding_config)
    ct_x = t_x if is_undefined_primal(x) else None
    ct_p = None
    if is_undefined_primal(padding_value):
        total = lax.reduce_sum(ct, tuple(range(len(get_aval(ct).shape))))
        inner = lax.reduce_sum(t_x, tuple(range(len(xa.shape))))
        ct_p = lax.sub(total, inner)
    return [ct_x, ct_p]


deflinear(P.pad_p, _pad_transpose)


# --- slice ------------------------------------------------------------------------------------


def _slice_transpose(ct, aval, *, start_indices, limit_indices, strides=None):
    strides = (1,) * len(aval.shape) if strides is None else tuple(strides)
    out_shape = get_aval(ct).shape
    config = []
    for s, st, n, d in zip(start_indices, strides, out_shape, aval.shape):
        if n == 0:
            config.append((s, d - s, 0))
        else:
            config.append((s, d - (s + (n - 1) * st + 1), st - 1))
    return lax.pad(ct, np.zeros((), aval.dtype), config)


deflinear1(P.slice_p, _slice_transpose)


jvp_rules[P.iota_p] = zero_jvp(P.iota_p)
jvp_rules[P.dim_as_value_p] = zero_jvp(P.dim_as_value_p)


# --- tile, split, stack, unstack ------------------------------------------------------------


def _tile_transpose(ct, aval, *, reps):
    # Each operand element appears once per repetition: view the cotangent as
    # (r0, d0, r1, d1, ...) and sum over the repetition axes.
    pairs = tuple(k for r, d in zip(reps, aval.shape) for k in (r, d))
    return lax.reduce_sum(lax.reshape(ct, pairs), tuple(range(0, 2 * len(reps), 2)))


deflinear1(P.tile_p, _tile_transpose)


def _stack_transpose(ct, *xs, axis):
    if isinstance(ct, Zero):
        return [Zero(aval_of(x)) if is_undefined_primal(x) else None for x in xs]
    parts = bind(P.unstack_p, ct, axis=axis)
    return [p if is_undefined_primal(x) else None for p, x in zip(parts, xs)]


deflinear(P.stack_p, _stack_transpose)


def _multiple_results_linear_jvp(prim):
    """The JVP of a linear primitive with many results (split, unstack)."""

    def jvp(primals, tangents, **params):
        outs = bind(prim, *primals, **params)
        (t,) = tangents
        if isinstance(t, Zero):
            return outs, [Zero(tangent_aval(get_aval(o))) for o in outs]
        return outs, bind(prim, t, **params)

    jvp.__name__ = f"_{prim.name}_jvp"
    return jvp


def _split_transpose(cts, x, *, sizes, axis):
    aval = aval_of(x)
    if all(isinstance(c, Zero) for c in cts):
        return [Zero(aval)]
    parts = []
    for c, s in zip(cts, sizes):
        if isinstance(c, Zero):
            shape = list(aval.shape)
            shape[axis] = s
            c = lax.broadcast_in_dim(np.zeros((), aval.dtype), tuple(shape), ())
        parts.append(c)
    return [lax.concatenate(parts, axis)]


def _unstack_transpose(cts, x, *, axis):
    aval = aval_of(x)
    if all(isinstance(c, Zero) for c in cts):
        return [Zero(aval)]
    part_shape = aval.shape[:axis] + aval.shape[axis + 1:]
    parts = [lax.broadcast_in_dim(np.zeros((), aval.dtype), part_shape, ())
             if isinstance(c, Zero) else c for c in cts]
    return [bind(P.stack_p, *parts, axis=axis)]


jvp_rules[P.split_p] = _multiple_results_linear_jvp(P.split_p)
transpose_rules[P.split_p] = _split_transpose
jvp_rules[P.unstack_p] = _multiple_results_linear_jvp(P.unstack_p)
transpose_rules[P.unstack_p] = _unstack_transpose
