"""Small helpers shared by the batching rules."""

from __future__ import annotations

from collections.abc import Sequence

from .. import lax_ops
from ..batching import matchaxis, moveaxis
from ..core import get_aval


def rank(x, d) -> int:
    """The rank of `x` per batch member (without its batch dimension)."""
    return get_aval(x).ndim - (0 if d is None else 1)


def unbatched_shape(x, d) -> tuple[int, ...]:
    s = list(get_aval(x).shape)
    if d is not None:
        del s[d]
    return tuple(s)


def shift_axes(axes: Sequence[int], bdim: int) -> tuple[int, ...]:
    """Axes of the unbatched value -> axes of the value with a batch dimension at `bdim`."""
    return tuple(int(a) + 1 if a >= bdim else int(a) for a in axes)


def insert_at(seq: Sequence, pos: int, item) -> tuple:
    seq = list(seq)
    seq.insert(pos, item)
    return tuple(seq)


def position_after(dims_sorted: Sequence[int], k: int) -> int:
    """A position ``p`` with exactly `k` members of sorted `dims_sorted` below it: a new
    dimension inserted at ``p`` (the others at or above it shift by one) is then the k-th
    of its kind among `dims_sorted` plus itself."""
    return dims_sorted[k - 1] + 1 if k > 0 else 0


def align_elementwise(size: int, vals: Sequence, dims: Sequence, full: Sequence[bool] = ()):
    """Batch operands that broadcast like elementwise operands (a rank-0 operand may stand
    beside operands of any shape). Returns (new operands, out bdim).

    Every batched operand ends with its batch dimension at one position: that of the first
    batched operand of full rank, so no transpose is needed in the common case. Unbatched
    rank-0 operands stay as they are unless `full[i]` says operand i must have the full shape.
    """
    ranks = [rank(v, d) for v, d in zip(vals, dims, strict=True)]
    out_rank = max(ranks)
    full = list(full) + [False] * (len(vals) - len(full))
    target = next((d for d, r in zip(dims, ranks, strict=True) if d is not None and r == out_rank), 0)
    shape = None
    for v, d, r in zip(vals, dims, ranks, strict=True):
        if r == out_rank:
            shape = list(unbatched_shape(v, d))
            break
    shape.insert(target, size)
    shape = tuple(shape)
    new = []
    for v, d, r, f in zip(vals, dims, ranks, full, strict=True):
        if d is None and r == 0 and not f and out_rank > 0:
            new.append(v)  # an unbatched rank-0 operand broadcasts by itself
        elif r == 0 and out_rank > 0:
            if d is None:
                new.append(lax_ops.broadcast_in_dim(v, shape, ()))
            else:
                new.append(lax_ops.broadcast_in_dim(v, shape, (target,)))
        elif d is None and r == 0:  # out_rank == 0
            new.append(v if not f else lax_ops.broadcast_in_dim(v, shape, ()))
        else:
            new.append(matchaxis(size, d, target, v))
    return new, target


def to_front(x, d, size):
    """`x` with its batch dimension at 0 (broadcast when it has none)."""
    return matchaxis(size, d, 0, x)


__all__ = ["rank", "unbatched_shape", "shift_axes", "insert_at", "position_after",
           "align_elementwise", "to_front", "moveaxis", "matchaxis"]
