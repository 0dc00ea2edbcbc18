"""Types `vmap` maps as a whole (JAX's vmappable registry).

A sparse array is a pytree of buffers, but mapping its buffers leaf by leaf would keep
the batched shape in the rebuilt array. A registered type is instead one ``in_axes`` /
``out_axes`` leaf: its handler says which buffer axes carry the mapped axis and rebuilds
the value, per element inside the trace and batched again outside.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from olympus_trace.hitypes import hi_typeof, hitype_handlers, lo_mapped_axes, lower_value

__all__ = ["register_vmappable", "is_vmappable", "mapped_size", "to_elt", "from_elt", "expand",
           "collapse", "flat_index"]

# type -> (to_elt, from_elt); see `register_vmappable`.
_handlers: dict[type, tuple[Callable, Callable]] = {}


def register_vmappable(cls: type, to_elt: Callable, from_elt: Callable) -> None:
    """Make `vmap` map values of `cls` as a whole.

    ``to_elt(value, axis, size)`` checks an ``in_axes`` entry and returns
    ``(buffers, buffer_axes, rebuild)``: each buffer is mapped along its axis (or not,
    for None) and ``rebuild(element_buffers)`` makes one element's value.
    ``from_elt(element, axis, size)`` checks an ``out_axes`` entry and returns
    ``(buffers, buffer_axes, rebuild)``: the buffers leave the trace batched along their
    axes and ``rebuild(batched_buffers)`` makes the batched value.
    """
    _handlers[cls] = (to_elt, from_elt)


def is_vmappable(x: Any) -> bool:
    return type(x) in _handlers or type(x) in hitype_handlers


def mapped_size(x: Any, axis: int) -> int | None:
    """The size of `x`'s mapped axis, or None when `axis` is out of its range (its
    handler's error then says why, as in JAX, which skips the rank check for these)."""
    if type(x) in hitype_handlers:  # a high-level value: its first array's
        lo = lower_value(hi_typeof(x), x)
        if not lo:
            return None
        x = lo[0]
    shape = tuple(x.shape)
    return shape[axis] if -len(shape) <= axis < len(shape) else None


def _hi_elt(x: Any, axis: Any, size: int) -> tuple[list, list, Callable]:
    """A high-level value (olympus.experimental.hijax) is mapped as its arrays, each along
    the axis its type's `dec_rank` gives for `axis` (an int maps them all along it)."""
    ty = hi_typeof(x)
    return (lower_value(ty, x), lo_mapped_axes(ty, size, axis),
            lambda parts: ty.raise_val(*parts))


def _whole(x: Any) -> tuple[list, list, Callable]:
    """An unmapped value passes through as its pytree buffers."""
    from olympus_trace import tree_util

    bufs, tree = tree_util.tree_flatten(x)
    return bufs, [None] * len(bufs), lambda parts: tree_util.tree_unflatten(tree, parts)


def to_elt(x: Any, axis: int | None, size: int) -> tuple[list, list, Callable]:
    if axis is None:
        return _whole(x)
    h = _handlers.get(type(x))
    return _hi_elt(x, axis, size) if h is None else h[0](x, axis, size)


def from_elt(x: Any, axis: int | None, size: int) -> tuple[list, list, Callable]:
    if axis is None:
        return _whole(x)
    h = _handlers.get(type(x))
    return _hi_elt(x, axis, size) if h is None else h[1](x, axis, size)


def expand(values: Sequence, axes: Sequence, size: int, handler: Callable
           ) -> tuple[list, list, list]:
    """Replace each vmappable among `values` by its buffers: returns the flat values, their
    axes, and per value a ``(count, rebuild)`` pair (``rebuild`` None for a plain leaf)."""
    flat: list = []
    flat_axes: list = []
    parts: list = []
    for v, d in zip(values, axes):
        if is_vmappable(v):
            bufs, bdims, rebuild = handler(v, d, size)
            flat.extend(bufs)
            flat_axes.extend(bdims)
            parts.append((len(bufs), rebuild))
        else:
            flat.append(v)
            flat_axes.append(d)
            parts.append((1, None))
    return flat, flat_axes, parts


def collapse(flat: Sequence, parts: Sequence) -> list:
    """The inverse of `expand`: rebuild each vmappable from its run of buffers."""
    out = []
    i = 0
    for n, rebuild in parts:
        out.append(flat[i] if rebuild is None else rebuild(list(flat[i:i + n])))
        i += n
    return out


def flat_index(parts: Sequence, i: int) -> int:
    """The value index in `expand`'s input of flat buffer `i`."""
    end = 0
    for k, (n, _) in enumerate(parts):
        end += n
        if i < end:
            return k
    return i
