"""Format-generic helpers: `todense`, `empty`, `eye`."""

from __future__ import annotations

from olympus import tree_util
from olympus_ir.prims.sparse import todense_p
from olympus_trace.lax_ops import sparse as S

from .bcoo import BCOO
from .formats import BCSR

__all__ = ["todense", "todense_p", "empty", "eye"]


def todense(arr):
    """The dense array of a sparse array (a dense argument is returned as an array), as
    one `todense_p` equation over the array's buffers."""
    bufs, tree = tree_util.tree_flatten(arr)
    return S.todense(*bufs, tree=tree)


def empty(shape, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """An all-zero sparse array of `shape` with no stored elements (``nse=0``).

    Args:
      shape: the shape.
      dtype: the element dtype (default float32).
      index_dtype: the index dtype.
      sparse_format: ``'bcoo'`` (the only format with an empty constructor here).
      **kwds: ``n_batch``/``n_dense``/``nse`` of the layout.
    """
    if sparse_format != "bcoo":
        raise ValueError(f"sparse_format {sparse_format!r} not recognized")
    return BCOO._empty(shape, dtype=dtype, index_dtype=index_dtype, **kwds)


def eye(N, M=None, k=0, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """A sparse identity-like matrix with ones on the `k`-th diagonal.

    Args:
      N, M: the shape (``M`` defaults to ``N``).
      k: the diagonal offset.
      dtype: the element dtype (default float32).
      index_dtype: the index dtype.
      sparse_format: ``'bcoo'`` or ``'bcsr'``.
      **kwds: ``n_batch``/``n_dense`` of the layout.
    """
    M = N if M is None else M
    if sparse_format == "bcoo":
        return BCOO._eye(N, M, k, dtype=dtype, index_dtype=index_dtype, **kwds)
    if sparse_format == "bcsr":
        import olympus.numpy as jnp
        return BCSR.fromdense(jnp.eye(N, M, k, dtype=dtype), index_dtype=index_dtype)
    raise ValueError(f"sparse_format {sparse_format!r} not recognized")
