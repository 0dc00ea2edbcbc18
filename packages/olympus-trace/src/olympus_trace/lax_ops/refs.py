"""Wrappers of the ref primitives (`olympus_ir.prims.refs`), behind ``olympus.new_ref``,
``olympus.freeze`` and ``olympus.ref`` (not part of ``jax.lax``).

`to_indexer` turns a NumPy-style index of a ref (integers, static slices, ``...``, and
integer arrays before any slice) into the static `Indexer` and its index operands."""

from __future__ import annotations

import operator

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.prims.refs import AbstractRef, Indexer

from ..core import Tracer, bind, get_aval

__all__ = ["new_ref", "freeze", "ref_get", "ref_swap", "ref_addupdate", "to_indexer"]


def new_ref(init, *, kind=None, memory_space=None):
    """A new ref holding `init`."""
    return bind(P.new_ref_p, init, kind=kind, memory_space=memory_space)


def freeze(ref):
    """The final value of `ref`."""
    return bind(P.freeze_p, ref)


def _is_int_scalar(i) -> bool:
    if isinstance(i, (bool, np.bool_)):
        return False
    if isinstance(i, (int, np.integer)):
        return True
    if isinstance(i, (Tracer, np.ndarray)) or hasattr(i, "aval"):
        a = get_aval(i)
        return a.shape == () and dtypes.is_integer(a.dtype)
    return False


def to_indexer(shape: tuple, idx) -> tuple[Indexer, list]:
    """(`Indexer`, index operands) of ``ref[idx]`` for a ref of `shape`."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = len(idx) - n_ell
    if n_real > len(shape):
        raise IndexError(f"Too many indices for ref of shape {shape}: got {n_real}.")
    if n_ell:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - n_real) + idx[k + 1:]
    else:
        idx = idx + (slice(None),) * (len(shape) - n_real)
    dims, operands = [], []
    seen_slice = False
    for i, n in zip(idx, shape):
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step < 1:
                raise ValueError(f"slice must have a step >= 1 (found: {step})")
            size = max(0, -(-(stop - start) // step))
            dims.append(("slice", start, size, step))
            seen_slice = True
        elif i is None:
            raise IndexError("ref indexing does not support None (new axes)")
        elif _is_int_scalar(i):
            if isinstance(i, (int, np.integer)):
                v = operator.index(i)
                if not -n <= v < n:
                    raise ValueError(f"Out of bound indexer: idx={v}, dim={n}.")
                i = np.int32(v + n if v < 0 else v)
            dims.append(("int",))
            operands.append(i)
        else:
            if isinstance(i, (list, tuple)):
                i = np.asarray(i)
            a = get_aval(i)
            if not dtypes.is_integer(a.dtype):
                raise IndexError(f"ref indices must be integers, slices or ..., got "
                                 f"{a.str_short()}")
            if seen_slice:
                raise NotImplementedError("ref indexing with an integer array after a slice")
            dims.append(("int",))
            operands.append(i)
    return Indexer(tuple(dims), tuple(shape)), operands


def _ref_shape(ref) -> tuple:
    a = get_aval(ref)
    if not isinstance(a, AbstractRef):
        raise TypeError(f"expected a ref, got a value of type {a.str_short()}")
    return a.shape


def ref_get(ref, idx=()):
    """``ref[idx]``."""
    indexer, ops = to_indexer(_ref_shape(ref), idx)
    return bind(P.get_p, ref, *ops, indexer=indexer)


def _value(ref, value):
    """`value` as a strongly typed array of the ref's dtype (as JAX converts it)."""
    from .elementwise import convert_element_type

    return convert_element_type(value, get_aval(ref).dtype, weak_type=False)


def ref_swap(ref, idx, value):
    """``old, ref[idx] = ref[idx], value``; returns `old`."""
    indexer, ops = to_indexer(_ref_shape(ref), idx)
    return bind(P.swap_p, ref, _value(ref, value), *ops, indexer=indexer)


def ref_addupdate(ref, idx, value):
    """``ref[idx] += value``."""
    indexer, ops = to_indexer(_ref_shape(ref), idx)
    bind(P.addupdate_p, ref, _value(ref, value), *ops, indexer=indexer)
