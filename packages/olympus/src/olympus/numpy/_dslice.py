"""``olympus.ds``: a slice given by a start (static or traced) and a static size, for
indexing with a dynamic start (``x[olympus.ds(i, 2)]`` is ``x[i:i+2]`` with `i` traced), as
JAX's ``jax.ds``. Indexing with one is a ``dynamic_slice``, which clamps the start so that
the window stays inside the array (and a stride > 1 keeps every stride-th element of the
window)."""

from __future__ import annotations

import builtins
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace import tree_util

__all__ = ["Slice", "dslice", "ds", "apply_dslices"]


def _is_static(v) -> bool:
    return isinstance(v, (int, np.integer))


@dataclass(frozen=True)
class Slice:
    """A slice of `size` elements from `start`, every `stride`-th."""

    start: Any
    size: Any
    stride: int = 1

    def __post_init__(self):
        if self.stride < 0:
            raise ValueError("`stride` must be >= 0.")

    @property
    def is_dynamic_start(self) -> bool:
        return not _is_static(self.start)

    @property
    def is_dynamic_size(self) -> bool:
        return not _is_static(self.size)

    @classmethod
    def from_slice(cls, slc: slice, size: int) -> Slice:
        start, stop, step = slc.indices(size)
        if step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        return cls(start, builtins.max(0, -(-(stop - start) // step)), step)


def _flatten(s: Slice):
    dyn_start, dyn_size = s.is_dynamic_start, s.is_dynamic_size
    children = (s.start if dyn_start else None, s.size if dyn_size else None)
    aux = (None if dyn_start else s.start, None if dyn_size else s.size, s.stride)
    return children, aux


def _unflatten(aux, children):
    start, size = (c if c is not None else a for c, a in zip(children, aux[:2]))
    return Slice(start, size, aux[2])


tree_util.register_pytree_node(Slice, _flatten, _unflatten)


def dslice(start, size=None, stride=None):
    """``dslice(None)`` is ``:``, ``dslice(j)`` is ``:j``, ``dslice(i, j)`` is ``i:i+j``
    and ``dslice(i, j, s)`` is ``i:i+j:s``, with `i` allowed to be traced."""
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)


ds = dslice


def _index_axes(idx: tuple, ndim: int) -> list:
    """The array axis each index element applies to (None for None/Ellipsis)."""
    n_real = 0
    for i in idx:
        if i is None or i is Ellipsis:
            continue
        n_real += getattr(i, "ndim", 1) if _is_bool_array(i) else 1
    axes, d = [], 0
    for i in idx:
        if i is None:
            axes.append(None)
        elif i is Ellipsis:
            axes.append(None)
            d += ndim - n_real
        else:
            axes.append(d)
            d += getattr(i, "ndim", 1) if _is_bool_array(i) else 1
    return axes


def _is_bool_array(i) -> bool:
    dt = getattr(i, "dtype", None)
    return dt is not None and np.dtype(dt) == np.bool_ and getattr(i, "ndim", 0) > 0


def apply_dslices(x, idx: tuple):
    """`x` with every `Slice` in `idx` applied (a dynamic_slice on its axis), and `idx`
    with those entries replaced by ``:``."""
    shape = prom.aval_of(x).shape
    axes = _index_axes(idx, len(shape))
    rest = list(idx)
    for k, (i, d) in enumerate(zip(idx, axes)):
        if not isinstance(i, Slice):
            continue
        if d is None or d >= len(shape):
            raise IndexError(f"Too many indices for an array of shape {shape}")
        if i.is_dynamic_size:
            raise ValueError("olympus.ds: the size of a dynamic slice must be static, got "
                             f"{i.size!r}")
        size, stride, n = operator.index(i.size), i.stride, shape[d]
        window = (size - 1) * stride + 1 if size else 0
        if window > n:
            raise IndexError(f"olympus.ds: a slice of {size} elements with stride {stride} "
                             f"does not fit in axis {d} of size {n}")
        # dynamic_slice wraps a negative start once and clamps the window into the axis.
        start = i.start
        start = np.int32(start) if _is_static(start) else lax.convert_element_type(
            prom.to_operand(start), np.int32)
        starts = [np.int32(0)] * len(shape)
        starts[d] = start
        sizes = list(shape)
        sizes[d] = window
        x = lax.dynamic_slice(x, starts, sizes)
        if stride > 1:
            strides = [1] * len(shape)
            strides[d] = stride
            x = lax.slice(x, [0] * len(shape), sizes, strides)
        shape = prom.aval_of(x).shape
        rest[k] = slice(None)
    return x, tuple(rest)
