"""`buffer_callback`: a host callback that works on device buffers in place (JAX's
``jax.experimental.buffer_callback``).

The callback is called as ``callback(ctx, out, *args, **kwargs)``: `ctx` is jaxlib's
`ExecutionContext`, `out` has the structure of `result_shape_dtypes` and `args` /
`kwargs` that of the call, with one `Buffer` per array. On CPU a `Buffer` is a view of
device memory (``np.asarray`` / ``np.from_dlpack`` read it without a copy); operand
buffers are read-only, result buffers writable, and the callback fills the results in
place and returns None. jaxlib owns the three classes (its ``xla_buffer_python_cpu_callback``
handler makes them); they are re-exported here under this module's name, as JAX does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jaxlib._jax import ffi as _ffi

import olympus_runtime as _rt
from olympus_trace import lax_ops, tree_util
from olympus_trace.core import get_aval

from .._src.callbacks import _result_avals
from ..ffi import check_alias as _check_alias

__all__ = ["Buffer", "ExecutionContext", "ExecutionStage", "buffer_callback"]

Buffer = _ffi.Buffer
ExecutionContext = _ffi.ExecutionContext
ExecutionStage = _ffi.ExecutionStage
for _cls in (Buffer, ExecutionContext, ExecutionStage):
    _cls.__module__ = __name__


def buffer_callback(callback: Callable[..., None], result_shape_dtypes: object, *,
                    has_side_effect: bool = False, vmap_method: str | None = None,
                    input_output_aliases: dict[int, int] | None = None,
                    command_buffer_compatible: bool = False) -> Callable[..., Any]:
    """A function of arrays (pytrees of them) that runs `callback` on their buffers and
    returns the arrays it wrote, structured as `result_shape_dtypes`.

    `has_side_effect` keeps an unused call alive; `vmap_method` is as for
    `olympus.pure_callback`; `input_output_aliases` maps a flat input index to the flat
    output index that reuses its buffer; `command_buffer_compatible` only matters on GPU."""
    result_avals, out_tree = _result_avals(result_shape_dtypes)

    def wrapped_callback(*args: Any, **kwargs: Any):
        flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
        flat_args = [a if isinstance(a, _rt.Array) or hasattr(a, "aval") else np.asarray(a)
                     for a in flat_args]
        in_avals = [get_aval(a) for a in flat_args]
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            # JAX bounds the input index by the number of positional arguments.
            i, o = _check_alias(i, o, len(args), in_avals, result_avals)
            aliases.append((i, o))
        outs = lax_ops.buffer_callback(
            *flat_args, callback=callback, result_avals=result_avals, in_tree=in_tree,
            out_tree=out_tree, vmap_method=vmap_method, has_side_effect=has_side_effect,
            input_output_aliases=tuple(aliases),
            command_buffer_compatible=command_buffer_compatible)
        return tree_util.tree_unflatten(out_tree, list(outs))

    return wrapped_callback
