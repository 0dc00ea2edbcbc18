"""Batching rule of ``check`` (checkify of a vmapped function): the batch reduces to one
error, the first failing member's (its code and payload), so the check stays unbatched,
as JAX's checkify-of-vmap gives a single error."""

from __future__ import annotations

import numpy as np

from olympus_ir.prims.checks import check_p

from .. import lax_ops
from ..batching import batching_rules, moveaxis
from ..core import bind, get_aval


def _check_batch_rule(axis_data, vals, dims, *, err_tree, debug=False):
    size = axis_data.size
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims, strict=True)]
    batched = [d is not None for d in dims]
    # Leaf 0 is the error's `pred` (see olympus.experimental.checkify.Error).
    pred = vals[0] if batched[0] else lax_ops.broadcast_in_dim(vals[0], (size,), ())
    first = lax_ops.argmax(lax_ops.convert_element_type(pred, np.dtype(np.int32), False), 0,
                           np.dtype(np.int32))
    out = []
    for v, b in zip(vals, batched, strict=True):
        if not b:
            out.append(v)
            continue
        shape = get_aval(v).shape
        zeros = [lax_ops.convert_element_type(0, np.dtype(np.int32), False)] * (len(shape) - 1)
        piece = lax_ops.dynamic_slice(v, [first, *zeros], (1, *shape[1:]))
        out.append(lax_ops.squeeze(piece, (0,)))
    bind(check_p, *out, err_tree=err_tree, debug=debug)
    return [], []


batching_rules[check_p] = _check_batch_rule
