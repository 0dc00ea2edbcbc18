"""`make_olympuspr`: trace a Python function on example arguments into a ClosedOlympuspr."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from olympus_ir.avals import ShapedArray

from . import key_reuse, sharding_types, tree_util
from .core import current_trace, get_aval
from .lax_ops.collectives import bound_mesh_axes
from .staging import DebugInfo, fun_source_info, trace_to_olympuspr


class NotAnArrayError(TypeError):
    """An argument that is neither an array nor a scalar, where an array was needed."""


def invalid_argument_error(fun: Callable, x: Any, path: str) -> TypeError:
    """JAX's error for a non-array argument of a traced function, naming its pytree path."""
    return TypeError(
        f"Error interpreting argument to {fun} as an abstract array. The problematic value is "
        f"of type {type(x)} and was passed to the function at path {path}.\n"
        "This typically means that a jit-wrapped function was called with a non-array "
        "argument, and this argument was not marked as static using the static_argnums or "
        "static_argnames parameters of olympus.jit.")


def abstractify_arguments(fun: Callable, leaves: Sequence, names_of: Callable) -> list:
    """The avals of a traced function's argument leaves; a leaf that is not an array raises
    `invalid_argument_error` (`names_of()` gives the leaves' paths, computed only then)."""
    try:
        return [abstractify(x) for x in leaves]
    except NotAnArrayError:
        names = names_of()
        for i, x in enumerate(leaves):
            try:
                abstractify(x)
            except NotAnArrayError:
                path = names[i] if i < len(names) else f"args[{i}]"
                raise invalid_argument_error(fun, x, path) from None
        raise


def abstractify(x: Any) -> ShapedArray:
    """The aval of an argument: arrays, numpy values, Python scalars (weak) or specs."""
    try:
        return get_aval(x)
    except TypeError:
        pass
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        from olympus_ir.avals import raise_to_shaped

        return raise_to_shaped(x)
    raise NotAnArrayError(
        f"Argument '{x!r}' of type {type(x)} is not a valid OLYMPUS type."
    )


def arg_names_of(fun: Callable, args: Sequence, kwargs: dict, static_argnums=(),
                 static_argnames=()) -> tuple[str, ...]:
    """Names for the flat dynamic leaves: parameter names plus pytree paths."""
    try:
        sig = inspect.signature(fun)
        ba = sig.bind(*args, **kwargs)
        names = []
        positional = [p for p in sig.parameters.values() if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        var = [p.name for p in sig.parameters.values()
               if p.kind == inspect.Parameter.VAR_POSITIONAL]
        for i, a in enumerate(args):
            if i in static_argnums:
                continue
            if i < len(positional):
                nm = positional[i].name
            elif var:
                nm = f"{var[0]}[{i - len(positional)}]"
            else:
                nm = f"args[{i}]"
            names.extend(_leaf_names(nm, a))
        for k in sorted(kwargs):
            if k in static_argnames:
                continue
            names.extend(_leaf_names(k, kwargs[k]))
        del ba
        return tuple(names)
    except (TypeError, ValueError):
        n = sum(len(tree_util.tree_leaves(a)) for a in args) + sum(
            len(tree_util.tree_leaves(v)) for v in kwargs.values())
        return tuple(f"args[{i}]" for i in range(n))


def _leaf_names(name: str, tree: Any) -> list[str]:
    leaves = tree_util.tree_flatten_with_path(tree)[0]
    return [name + tree_util.keystr(p) for p, _ in leaves]


def make_olympuspr(fun: Callable, static_argnums: int | Sequence[int] = (),
                   axis_env: Sequence[tuple[Any, int]] | None = None,
                   return_shape: bool = False):
    """Returns a function that traces `fun` on its arguments and returns a ClosedOlympuspr.

    `axis_env` (``[(name, size), ...]``) binds axis names for the collectives `fun` applies
    (``psum(x, 'i')``), as an enclosing mapped transformation would."""
    if not callable(fun):
        raise TypeError("the first argument must be callable")  # JAX's words
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = tuple(static_argnums)
    axis_env = [(name, int(size)) for name, size in (axis_env or [])]

    @functools.wraps(fun)
    def make(*args, **kwargs):
        # Typed like jit's trace (arguments on Explicit mesh axes keep their sharding).
        with bound_mesh_axes(axis_env):
            closed, out_tree, out_avals = trace_fun(fun, args, kwargs, static_argnums, (),
                                                    "make_olympuspr", out_types=[])
        if return_shape:
            from olympus_ir.avals import ShapeDtypeStruct

            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                      for a in out_avals]
            return closed, tree_util.tree_unflatten(out_tree, shapes)
        return closed

    return make


def trace_fun(fun, args, kwargs, static_argnums, static_argnames, traced_for,
              in_avals=None, out_types=None):
    """Trace `fun(*args, **kwargs)` with non-static leaves abstract.

    Returns (closed_olympuspr, out_tree, out_avals). A list `out_types` receives the
    results' sharding types (`sharding_types`; None for replicated or untyped).
    """
    nargs = len(args)
    static_argnums = tuple(i % nargs if -nargs <= i < 0 else i for i in static_argnums)
    dyn_args = [a for i, a in enumerate(args) if i not in static_argnums]
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
    leaves, in_tree = tree_util.tree_flatten((tuple(dyn_args), dyn_kwargs))
    if in_avals is None:
        in_avals = abstractify_arguments(fun, leaves, lambda: arg_names_of(
            fun, args, kwargs, static_argnums, static_argnames))
    names = arg_names_of(fun, args, kwargs, static_argnums, static_argnames)
    if len(names) != len(in_avals):
        names = tuple(f"args[{i}]" for i in range(len(in_avals)))
    dbg = DebugInfo(traced_for, fun_source_info(fun), names)
    out_store = {}

    def flat_fun(*flat):
        if out_types is not None:
            sharding_types.begin(current_trace(), flat, leaves)
        dyn_a, dyn_k = tree_util.tree_unflatten(in_tree, list(flat))
        it = iter(dyn_a)
        full = [a if i in static_argnums else next(it) for i, a in enumerate(args)]
        kw = dict(kwargs)
        kw.update(dyn_k)
        out = fun(*full, **kw)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_store["tree"] = out_tree
        if out_types is not None and current_trace().types is not None:
            out_types[:] = [sharding_types.type_of(x) for x in out_leaves]
        return out_leaves

    closed, _ = trace_to_olympuspr(flat_fun, in_avals, dbg)
    if key_reuse.enabled:  # olympus_debug_key_reuse: checked where JAX checks, once traced
        key_reuse.check_key_reuse_olympuspr(closed)
    return closed, out_store["tree"], closed.out_avals
