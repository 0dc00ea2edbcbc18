"""`random_bcoo`: a random BCOO array with a given fraction of stored elements."""

from __future__ import annotations

import math
import operator

import numpy as np

import olympus
import olympus.numpy as jnp

from .bcoo import BCOO

__all__ = ["random_bcoo"]


def random_bcoo(key, shape, *, dtype=jnp.float32, indices_dtype=None, nse=0.2, n_batch=0,
                n_dense=0, unique_indices=True, sorted_indices=False, generator=None,
                **kwds):
    """A random BCOO array.

    Args:
      key: a PRNG key.
      shape: the shape.
      dtype: the element dtype.
      indices_dtype: the index dtype (default int32).
      nse: stored elements per batch, or a fraction (< 1) of the sparse size.
      n_batch, n_dense: the layout.
      unique_indices: draw positions without repetition.
      sorted_indices: sort the indices.
      generator: ``generator(key, shape, dtype, **kwds)`` for the values (default
        ``olympus.random.uniform``).
    """
    generator = olympus.random.uniform if generator is None else generator
    shape = tuple(shape)
    n_sparse = len(shape) - n_batch - n_dense
    if n_sparse < 0 or n_batch < 0 or n_dense < 0:
        raise ValueError(f"Invalid {n_batch=}, {n_dense=} for {shape=}")
    batch, sparse, dense = (shape[:n_batch], shape[n_batch:n_batch + n_sparse],
                            shape[n_batch + n_sparse:])
    size = math.prod(sparse)
    if 0 <= nse < 1:
        nse = int(math.ceil(nse * size))
    nse = operator.index(nse)
    if unique_indices and nse > size:
        raise ValueError(f"{nse=} is larger than the number of sparse elements {size}")
    idt = np.dtype(indices_dtype or np.int32)
    data_key, index_key = olympus.random.split(key)
    data = generator(data_key, batch + (nse,) + dense, dtype, **kwds)
    nb = math.prod(batch)
    keys = olympus.random.split(index_key, max(nb, 1))
    flat = jnp.stack([olympus.random.choice(k, size, (nse,), replace=not unique_indices)
                      for k in (keys if nb else keys[:1])])[:max(nb, 1)]
    if sorted_indices:
        flat = jnp.sort(flat, axis=-1)
    coords = jnp.stack(jnp.unravel_index(flat, sparse), -1) if sparse else \
        jnp.zeros(flat.shape + (0,), idt)
    indices = coords.astype(idt).reshape(batch + (nse, n_sparse))
    return BCOO((data, indices), shape=shape, indices_sorted=sorted_indices,
                unique_indices=unique_indices)
