"""Batching rules of the ref primitives.

A batched ref is a ref whose leading axis is the batch (vmapping a function over a ref
argument with ``in_axes=0``; a ref cannot be transposed, so another axis is refused): a
read or write of it indexes the whole batch axis first. Writing a batched value into an
unbatched ref (one the vmapped function closes over) is JAX's error: which member's
value should the ref hold?
"""

from __future__ import annotations

from olympus_ir.prims.refs import Indexer, addupdate_p, freeze_p, get_p, new_ref_p, swap_p

from ..batching import batching_rules, bdim_at_front, moveaxis
from ..core import bind, get_aval


def _new_ref_rule(axis_data, vals, dims, **params):
    return bind(new_ref_p, moveaxis(vals[0], dims[0], 0), **params), 0


def _freeze_rule(axis_data, vals, dims):
    _check_ref_dim(dims[0])
    return bind(freeze_p, vals[0]), 0


def _check_ref_dim(d):
    if d not in (None, 0):
        raise NotImplementedError(f"vmap of a ref mapped along axis {d}: only refs mapped "
                                  "along their leading axis (in_axes=0) are supported")


def _batched_indexer(indexer: Indexer, size: int, idx_dims) -> Indexer:
    if any(d is not None for d in idx_dims):
        raise NotImplementedError("vmap of a ref indexed by a batched index")
    return Indexer((("slice", 0, size, 1), *indexer.dims), (size, *indexer.shape))


def _check_front_ints(indexer: Indexer, idx) -> None:
    if any(get_aval(i).ndim for i in idx):
        raise NotImplementedError("vmap of a ref indexed by an integer array")


def _get_rule(axis_data, vals, dims, *, indexer):
    ref, *idx = vals
    _check_ref_dim(dims[0])
    _check_front_ints(indexer, idx)
    new = _batched_indexer(indexer, axis_data.size, dims[1:])
    return bind(get_p, ref, *idx, indexer=new), 0


def _write_rule(prim, what):
    def rule(axis_data, vals, dims, *, indexer):
        ref, val, *idx = vals
        rd, vd = dims[0], dims[1]
        if rd is None:
            raise Exception(  # noqa: TRY002 - JAX raises a plain Exception here
                f"performing a {what} operation with vmapped value on an unbatched array "
                f"reference of type {get_aval(ref)}. Move the array reference to be an "
                "argument to the vmapped function?")
        _check_ref_dim(rd)
        _check_front_ints(indexer, idx)
        new = _batched_indexer(indexer, axis_data.size, dims[2:])
        val = bdim_at_front(val, vd, axis_data.size)
        out = bind(prim, ref, val, *idx, indexer=new)
        return (out, []) if prim.multiple_results else (out, 0)
    return rule


batching_rules[new_ref_p] = _new_ref_rule
batching_rules[freeze_p] = _freeze_rule
batching_rules[get_p] = _get_rule
batching_rules[swap_p] = _write_rule(swap_p, "set/swap")
batching_rules[addupdate_p] = _write_rule(addupdate_p, "addupdate")
