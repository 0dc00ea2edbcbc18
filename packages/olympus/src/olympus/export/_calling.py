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


def _structure_errors(path, t1, t2):
    """(path, thing1, thing2, explanation) for each structural difference of two pytrees
    (the first found along each branch), worded as JAX's ``equality_errors``."""
    leaf1 = tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t1))
    leaf2 = tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t2))
    if leaf1 and leaf2:
        return
    if type(t1) is not type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f"{type(t1).__name__} of length {len(t1)}",
               f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
        return
    (k1, c1), m1 = _one_level(t1)
    (k2, c2), m2 = _one_level(t2)
    if len(c1) != len(c2):
        try:
            diff = " ".join(repr(getattr(k, "key", k)) for k in set(k1) ^ set(k2))
        except TypeError:
            diff = ""

        def n(c):
            return f"{len(c)} child" + ("ren" if len(c) > 1 else "")

        yield (path, f"{type(t1)} with {n(c1)}", f"{type(t2)} with {n(c2)}",
               "the numbers of children do not match"
               + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
        return
    if m1 != m2:
        yield (path, f"{type(t1)} with pytree metadata {m1}",
               f"{type(t2)} with pytree metadata {m2}",
               "the pytree node metadata does not match")
        return
    for k, a, b in zip(k1, c1, c2):
        yield from _structure_errors((*path, k), a, b)


def _one_level(t):
    pairs, meta = tree_util.flatten_one_level_with_keys(t)
    pairs = list(pairs)
    return ([k for k, _ in pairs], [c for _, c in pairs]), meta


def _check_tree(exported, in_tree) -> None:
    if in_tree == exported.in_tree:
        return
    got = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    want = tree_util.tree_unflatten(exported.in_tree, [0] * exported.in_tree.num_leaves)
    msg = ("The invocation args and kwargs must have the same pytree structure "
           f"as when the function '{exported.fun_name}' was exported, but they "
           "have the following structural differences:\n" + "\n".join(
               f"   - {_path_str(path)} is a {thing1} in the invocation and a "
               f"{thing2} when exported, so {explanation}.\n"
               for path, thing1, thing2, explanation in _structure_errors((), got, want)))
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
