"""Batching rules of the host callbacks.

``debug_callback``: as in JAX, the user's callback runs once per batch member, in order,
with that member's slice of each batched operand (unbatched operands are passed whole).
The loop over members happens on the host, inside one callback, so the batched program
still makes a single host call.

``pure_callback`` follows its `vmap_method` (JAX's five; None is an error):
``sequential`` calls the function once per member, looping on the host inside one call;
``sequential_unrolled`` emits one callback per member in the program; ``expand_dims``
calls it once with the batch axis first and unbatched operands given a size-1 leading
axis; ``broadcast_all`` broadcasts unbatched operands to the full batch first;
``legacy_vectorized`` passes unbatched operands unchanged. The function's results have
the batch axis first.

``io_callback``: an ordered one cannot be vmapped (JAX's error); an unordered one runs
once per member, as ``sequential``.
"""

from __future__ import annotations

import numpy as np

from olympus_ir.avals import ShapedArray
from olympus_ir.prims.callbacks import debug_callback_p, io_callback_p, pure_callback_p

from .. import lax_ops
from ..batching import batching_rules, bdim_at_front, moveaxis
from ..core import bind, get_aval


def _member(v, d, i):
    """Batch member `i` of `v` (batched along `d`), in the program."""
    shape = get_aval(v).shape
    start = [0] * len(shape)
    limit = list(shape)
    start[d], limit[d] = i, i + 1
    return lax_ops.squeeze(lax_ops.slice(v, start, limit), (d,))


def _member_args(args, dims, i):
    return [a if d is None else np.take(a, i, axis=d) for a, d in zip(args, dims, strict=True)]


def _debug_callback_batch_rule(axis_data, vals, dims, *, callback, **params):
    size = axis_data.size
    dims = tuple(dims)

    def batched_callback(*args):
        for i in range(size):
            callback(*_member_args(args, dims, i))

    bind(debug_callback_p, *vals, callback=callback_named(batched_callback, callback),
         **params)
    return [], []


def callback_named(fn, like):
    """`fn`, named as the user's function `like` (for printed olympusprs)."""
    fn.__name__ = getattr(like, "__name__", "callback")
    return fn


def _batched_avals(result_avals, size):
    return tuple(ShapedArray((size, *a.shape), a.dtype, weak_type=a.weak_type)
                 for a in result_avals)


def _host_loop(callback, dims, size):
    """A flat callback running `callback` once per batch member and stacking the
    results along a new leading axis."""
    dims = tuple(dims)

    def looped(*args):
        outs = [callback(*_member_args(args, dims, i)) for i in range(size)]
        n = len(outs[0]) if outs else 0
        return [np.stack([np.asarray(o[k]) for o in outs]) for k in range(n)]

    return callback_named(looped, callback)


_NO_VMAP_METHOD = (
    "vmap is only supported for the pure_callback primitive when vmap_method is one of "
    "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
    "'legacy_vectorized'. Got vmap_method=None.")


def _pure_callback_batch_rule(axis_data, vals, dims, *, callback, result_avals,
                              vmap_method, sharding=None):
    size = axis_data.size
    if vmap_method is None:
        raise NotImplementedError(_NO_VMAP_METHOD)
    out_avals = _batched_avals(result_avals, size)
    if vmap_method == "sequential_unrolled":
        members = []
        for i in range(size):
            args = [v if d is None else _member(v, d, i)
                    for v, d in zip(vals, dims, strict=True)]
            members.append(bind(pure_callback_p, *args, callback=callback,
                                result_avals=result_avals, vmap_method=vmap_method,
                                sharding=sharding))
        outs = [lax_ops.concatenate([lax_ops.expand_dims(m[k], (0,)) for m in members], 0)
                for k in range(len(result_avals))]
        return outs, [0] * len(outs)
    if vmap_method == "sequential":
        outs = bind(pure_callback_p, *vals, callback=_host_loop(callback, dims, size),
                    result_avals=out_avals, vmap_method=vmap_method, sharding=sharding)
        return list(outs), [0] * len(outs)
    new_vals = []
    for v, d in zip(vals, dims, strict=True):
        if d is not None:
            new_vals.append(moveaxis(v, d, 0))
        elif vmap_method == "expand_dims":
            new_vals.append(lax_ops.expand_dims(v, (0,)))
        elif vmap_method == "broadcast_all":
            new_vals.append(bdim_at_front(v, None, size))
        else:  # legacy_vectorized
            new_vals.append(v)
    outs = bind(pure_callback_p, *new_vals, callback=callback, result_avals=out_avals,
                vmap_method=vmap_method, sharding=sharding)
    return list(outs), [0] * len(outs)


def _io_callback_batch_rule(axis_data, vals, dims, *, callback, result_avals, ordered,
                            sharding=None):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    size = axis_data.size
    outs = bind(io_callback_p, *vals, callback=_host_loop(callback, dims, size),
                result_avals=_batched_avals(result_avals, size), ordered=False,
                sharding=sharding)
    return list(outs), [0] * len(outs)


batching_rules[debug_callback_p] = _debug_callback_batch_rule
batching_rules[pure_callback_p] = _pure_callback_batch_rule
batching_rules[io_callback_p] = _io_callback_batch_rule
