"""Batching rule for ``debug_callback``: as in JAX, the user's callback runs once per
batch member, in order, with that member's slice of each batched operand (unbatched
operands are passed whole). The loop over members happens on the host, inside one
callback, so the batched program still makes a single host call."""

from __future__ import annotations

import numpy as np

from olympus_ir.prims.callbacks import debug_callback_p

from ..batching import batching_rules
from ..core import bind


def _debug_callback_batch_rule(axis_data, vals, dims, *, callback, **params):
    size = axis_data.size
    dims = tuple(dims)

    def batched_callback(*args):
        for i in range(size):
            callback(*[a if d is None else np.take(a, i, axis=d)
                       for a, d in zip(args, dims, strict=True)])

    batched_callback.__name__ = getattr(callback, "__name__", "callback")
    bind(debug_callback_p, *vals, callback=batched_callback, **params)
    return [], []


batching_rules[debug_callback_p] = _debug_callback_batch_rule
