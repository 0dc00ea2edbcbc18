"""Calling an `Exported`: the pytree check, the ``call_exported`` primitive, and reverse
mode through the exported VJP.

As in JAX, the call is a `custom_vjp` function over the primitive: its forward pass keeps
the primal arguments as residuals, its backward pass calls ``exported.vjp()`` (for a
deserialized Exported, the VJP serialized with ``vjp_order``). Under a trace the call is
one ``call_exported`` equation, lowered by inlining the deserialized module
(`olympus_lower.rules.control_flow`); eagerly it runs as a cached jit of that equation.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_trace import tree_util
from olympus_trace.lax_ops.control_flow import call_exported as _bind_call_exported

__all__ = ["call_exported", "arg_descriptor"]


def _path_str(path) -> str:
    """``args[0]['a']`` / ``kwargs['b']`` for a path into the ``(args, kwargs)`` tuple."""
    head = "args" if getattr(path[0], "idx", None) == 0 else "kwargs"
    return head + tree_util.keystr(tuple(path[1:]))


@functools.lru_cache(256)
def _flat_arg_paths(in_tree) -> tuple[str, ...]:
    example = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    return tuple(_path_str(p) for p, _ in tree_util.tree_flatten_with_path(example)[0])


def arg_descriptor(in_tree, flat_idx: int, dim_idx: int | None) -> str:
    """How JAX names a flat argument of an exported function in errors:
    ``args[0]['a']``, with ``.shape[1]`` for a dimension."""
    s = _flat_arg_paths(in_tree)[flat_idx]
    return s if dim_idx is None else f"{s}.shape[{dim_idx}]"


def _check_tree(exported, in_tree) -> None:
    if in_tree == exported.in_tree:
        return
    # JAX fills both structures with 0 leaves, so a leaf shows as <class 'int'>.
    got = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    want = tree_util.tree_unflatten(exported.in_tree, [0] * exported.in_tree.num_leaves)
    msg = ("The invocation args and kwargs must have the same pytree structure "
           f"as when the function '{exported.fun_name}' was exported, but they "
           "have the following structural differences:\n" + "\n".join(
               f"   - {_path_str(path)} is a {thing1} in the invocation and a "
               f"{thing2} when exported, so {explanation}.\n"
               for path, thing1, thing2, explanation in
               tree_util.equality_errors(got, want)))
    raise ValueError(msg)


def _bool_zeros(shape):
    if all(isinstance(d, (int, np.integer)) for d in shape):
        return np.zeros(shape, np.bool_)
    import olympus.numpy as jnp  # a symbolic shape (under a shape-polymorphic trace)

    return jnp.zeros(shape, np.bool_)


def call_exported(exported) -> Any:
    """A function that calls `exported` with its ``(args, kwargs)`` structure."""
    from olympus._src.custom_derivatives import custom_vjp

    from ._exported import Exported

    if not isinstance(exported, Exported):
        raise ValueError("The exported argument must be an export.Exported. "
                         f"Found {exported}.")

    @custom_vjp
    def f_flat(*args_flat):
        return _bind_call_exported(*args_flat, exported=exported)

    def f_flat_fwd(*args_flat):
        return f_flat(*args_flat), args_flat

    def f_flat_bwd(args_flat, cts_out):
        exp_vjp = exported.vjp()
        want = exp_vjp.in_avals[len(args_flat):]
        # float0 cotangents (of integer outputs) travel as bool arrays, as in the module,
        # of the actual shape (the exported one may be symbolic).
        cts = [_bool_zeros(np.shape(c)) if a.dtype == dtypes.float0 else c
               for c, a in zip(cts_out, want)]
        in_cts = call_exported(exp_vjp)._flat(*args_flat, *cts)
        return tuple(None if a.dtype == dtypes.float0 else c
                     for c, a in zip(in_cts, exp_vjp.out_avals))

    f_flat.defvjp(f_flat_fwd, f_flat_bwd)

    def f_imported(*args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        _check_tree(exported, in_tree)
        outs = f_flat(*leaves)
        return tree_util.tree_unflatten(exported.out_tree, list(outs))

    f_imported._flat = f_flat
    return f_imported
