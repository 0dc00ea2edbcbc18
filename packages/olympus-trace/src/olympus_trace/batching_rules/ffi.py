"""Batching of ``ffi_call`` and ``buffer_callback``, by their `vmap_method` (JAX's rule).

``sequential`` / ``sequential_unrolled``: a ``scan`` over the batch whose body calls the
handler on one member (unrolled fully for the latter), so the handler only ever sees the
shapes it was written for. ``expand_dims``: one call with the batch axis first, unbatched
operands given a size-1 leading axis; ``broadcast_all``: unbatched operands broadcast to
the batch first; ``legacy_vectorized``: unbatched operands passed unchanged. In the last
three the layouts gain the batch axis as the slowest one (``buffer_callback`` has no
layouts: its buffers are row-major). None is an error.
"""

from __future__ import annotations

from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray

from .. import lax_ops
from ..batching import batching_rules, bdim_at_front, moveaxis
from ..core import bind, get_aval
from ..staging import trace_to_olympuspr


def _with_batch_axis(layout):
    """A minor-to-major layout with a new slowest (leading) axis."""
    return None if layout is None else (*(n + 1 for n in layout), 0)


def _leading_one(v):
    """`v` with a size-1 leading axis, as JAX's ``lax.broadcast(v, (1,))``."""
    shape = get_aval(v).shape
    return lax_ops.broadcast_in_dim(v, (1, *shape), tuple(range(1, len(shape) + 1)))


def _ffi_call_batch_rule(axis_data, vals, dims, *, vmap_method, result_avals, **params):
    return _batch(P.ffi_call_p, axis_data, vals, dims, vmap_method, result_avals, params)


def _buffer_callback_batch_rule(axis_data, vals, dims, *, vmap_method, result_avals,
                                **params):
    return _batch(P.buffer_callback_p, axis_data, vals, dims, vmap_method, result_avals,
                  params)


def _batch(prim, axis_data, vals, dims, vmap_method, result_avals, params):
    size = axis_data.size
    if vmap_method is None:
        raise NotImplementedError(
            f"vmap is only supported for the {prim.name} primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            "'legacy_vectorized'. Got vmap_method=None.")
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims, strict=True)]
    batched = [d is not None for d in dims]
    out_avals = tuple(ShapedArray((size, *a.shape), a.dtype, a.weak_type) for a in result_avals)
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(prim, vals, batched, size, vmap_method, result_avals, params)
    if vmap_method != "legacy_vectorized":
        vals = [v if b else (_leading_one(v) if vmap_method == "expand_dims"
                             else bdim_at_front(v, None, size))
                for v, b in zip(vals, batched, strict=True)]
    if "input_layouts" in params:
        layouts = params["input_layouts"]
        if vmap_method == "legacy_vectorized":
            new_in = tuple(_with_batch_axis(lay) if b else lay
                           for lay, b in zip(layouts, batched))
        else:
            new_in = tuple(map(_with_batch_axis, layouts))
        params = {**params, "input_layouts": new_in,
                  "output_layouts": tuple(map(_with_batch_axis, params["output_layouts"]))}
    outs = bind(prim, *vals, vmap_method=vmap_method, result_avals=out_avals, **params)
    return list(outs), [0] * len(outs)


def _sequential(prim, vals, batched, size, vmap_method, result_avals, params):
    consts = [v for v, b in zip(vals, batched, strict=True) if not b]
    xs = [v for v, b in zip(vals, batched, strict=True) if b]

    def body(*args):
        cs, members = list(args[:len(consts)]), list(args[len(consts):])
        merged = [members.pop(0) if b else cs.pop(0) for b in batched]
        return bind(prim, *merged, vmap_method=vmap_method, result_avals=result_avals, **params)

    member_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in xs]
    body_jaxpr, _ = trace_to_olympuspr(body, [get_aval(c) for c in consts] + member_avals)
    outs = bind(P.scan_p, *consts, *xs, olympuspr=body_jaxpr, length=size, reverse=False,
                num_consts=len(consts), num_carry=0, linear=(False,) * len(vals),
                unroll=size if vmap_method == "sequential_unrolled" else 1)
    return list(outs), [0] * len(outs)


batching_rules[P.ffi_call_p] = _ffi_call_batch_rule
batching_rules[P.buffer_callback_p] = _buffer_callback_batch_rule
