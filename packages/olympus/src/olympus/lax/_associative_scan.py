"""`associative_scan`: a parallel prefix scan of an associative binary function, as a
composition of slices, pads and calls of the function (log-depth, like JAX's)."""

from __future__ import annotations

import numpy as np

from olympus_trace import lax_ops as lax
from olympus_trace import tree_util
from olympus_trace.core import get_aval
from olympus_trace.promotion import canonicalize_axis

from ._in_dim import slice_in_dim

__all__ = ["associative_scan"]


def _interleave(a, b, axis):
    """a[0], b[0], a[1], b[1], ... along `axis` (`a` as long as `b` or one longer): each is
    spread out with zeros between its elements and the two are added (or-ed for bools)."""
    na, nb = get_aval(a).shape[axis], get_aval(b).shape[axis]
    a_pad = [(0, 0, 0)] * get_aval(a).ndim
    b_pad = list(a_pad)
    a_pad[axis] = (0, 1 if na == nb else 0, 1)
    b_pad[axis] = (1, 0 if na == nb else 1, 1)
    dt = get_aval(a).dtype
    zero = np.zeros((), dt)
    op = lax.bitwise_or if dt == np.bool_ else lax.add
    return op(lax.pad(a, zero, a_pad), lax.pad(b, np.zeros((), get_aval(b).dtype), b_pad))


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """The inclusive prefix reduction of `elems` (a pytree of arrays sharing their length
    along `axis`) under `fn`, which must be associative and act elementwise along `axis`
    (it is called on slices of several lengths)."""
    leaves, tree = tree_util.tree_flatten(elems)
    if not leaves:
        raise ValueError("associative_scan requires at least one array input")
    if reverse:
        leaves = [lax.rev(x, (canonicalize_axis(axis, get_aval(x).ndim),)) for x in leaves]
    axis = canonicalize_axis(axis, get_aval(leaves[0]).ndim)
    n = get_aval(leaves[0]).shape[axis]
    if not all(get_aval(x).shape[axis] == n for x in leaves[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[get_aval(x).shape for x in leaves]})")

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return tree_util.tree_leaves(out)

    def scan(xs):
        m = get_aval(xs[0]).shape[axis]
        if m < 2:
            return xs
        # Combine neighbours pairwise, scan those (the odd positions of the result), then
        # fill in the even positions from the odd ones.
        odd = scan(combine([slice_in_dim(x, 0, -1, 2, axis) for x in xs],
                           [slice_in_dim(x, 1, None, 2, axis) for x in xs]))
        prev = odd if m % 2 else [slice_in_dim(o, 0, -1, 1, axis) for o in odd]
        even = combine(prev, [slice_in_dim(x, 2, None, 2, axis) for x in xs])
        even = [lax.concatenate([slice_in_dim(x, 0, 1, 1, axis), e], axis)
                for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(leaves)
    if reverse:
        out = [lax.rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)
