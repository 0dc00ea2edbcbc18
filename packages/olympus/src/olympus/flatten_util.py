"""Flatten a pytree of arrays into one 1-D array and back (``ravel_pytree``).

Optimizers and solvers written for a single vector use it to work on a whole pytree of
parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_trace import tree_util

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Ravel a pytree of arrays and scalars into one 1-D array.

    Returns ``(flat, unravel)``: ``flat`` concatenates the raveled leaves in flattening
    order, in the dtype the leaves' dtypes promote to; ``unravel(v)`` splits a vector
    like ``flat`` back into a pytree of ``pytree``'s structure, leaf shapes and dtypes.
    A pytree without leaves gives an empty float32 vector.

    When all leaves share one dtype, ``unravel`` accepts a vector of any dtype and keeps
    it; otherwise it requires ``flat``'s dtype and casts each leaf back to its own.
    ``unravel`` functions compare equal (and hash alike) when they would unravel alike,
    so one can be a static argument of ``jit``.
    """
    leaves, treedef = tree_util.tree_flatten(pytree)
    flat, sizes, shapes, from_dtypes, to_dtype = _ravel_leaves(leaves)
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)


def _canonical_dtype(x: Any) -> np.dtype:
    """The dtype Olympus gives ``x`` as an array (Python scalars: the default dtypes)."""
    if isinstance(x, (bool, int, float, complex)):
        return dtypes.python_scalar_dtype(x)
    dt = getattr(x, "dtype", None)
    if dt is None or isinstance(x, type):
        raise TypeError(f"Cannot determine dtype of {x!r}")
    return dtypes.canonicalize_dtype(np.dtype(dt))


def _ravel_leaves(leaves: list) -> tuple:
    from . import lax
    from . import numpy as onp

    if not leaves:
        return onp.zeros((0,), np.float32), (), (), None, None
    from_dtypes = tuple(_canonical_dtype(x) for x in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    arrays = [onp.asarray(x) for x in leaves]
    shapes = tuple(tuple(np.shape(a)) for a in arrays)
    sizes = tuple(int(np.prod(s, dtype=np.int64)) for s in shapes)
    if all(dt == to_dtype for dt in from_dtypes):
        # One dtype: no casts, so weak types survive and `unravel` keeps its input's dtype.
        flat = lax.concatenate([lax.reshape(a, (n,)) for a, n in zip(arrays, sizes)], 0)
        return flat, sizes, shapes, None, None
    parts = [lax.reshape(lax.convert_element_type(a, to_dtype), (n,)) for a, n in zip(arrays, sizes)]
    return lax.concatenate(parts, 0), sizes, shapes, from_dtypes, to_dtype


class _Unravel:
    """The inverse of one ``ravel_pytree`` call: hashable and comparable by what it does."""

    __slots__ = ("treedef", "sizes", "shapes", "from_dtypes", "to_dtype")

    def __init__(self, treedef, sizes, shapes, from_dtypes, to_dtype):
        self.treedef = treedef
        self.sizes = sizes
        self.shapes = shapes
        self.from_dtypes = from_dtypes  # None when all leaves share one dtype
        self.to_dtype = to_dtype

    def _key(self) -> tuple:
        return (self.treedef, self.sizes, self.shapes, self.from_dtypes, self.to_dtype)

    def __eq__(self, other: object) -> bool:
        if type(other) is not _Unravel:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<unravel function for {self.treedef}>"

    def __call__(self, flat: Any) -> Any:
        from . import lax
        from . import numpy as onp

        if not self.sizes:
            return self.treedef.unflatten([])
        if self.to_dtype is not None:
            flat_dtype = _canonical_dtype(flat)
            if flat_dtype != self.to_dtype:
                raise TypeError(
                    f"unravel function given array of dtype {flat_dtype}, "
                    f"but expected dtype {self.to_dtype}"
                )
        flat = onp.asarray(flat)
        total = sum(self.sizes)
        if flat.ndim != 1 or flat.shape[0] != total:
            raise ValueError(
                f"Sum of sizes {total} must be equal to dimension 0 of the operand shape "
                f"{list(flat.shape)}"
            )
        chunks, start = [], 0
        for n, shape in zip(self.sizes, self.shapes):
            chunks.append(lax.reshape(lax.slice(flat, (start,), (start + n,)), shape))
            start += n
        if self.from_dtypes is not None:
            chunks = [lax.convert_element_type(c, dt) for c, dt in zip(chunks, self.from_dtypes)]
        return self.treedef.unflatten(chunks)
