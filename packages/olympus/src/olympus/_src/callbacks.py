"""Host callbacks: `pure_callback`, `io_callback`, `effects_barrier`.

A callback is a Python function a compiled program calls on the host. The function's
arguments are pytrees of numpy arrays; what it returns must match `result_shape_dtypes`
(a pytree of ``ShapeDtypeStruct`` or arrays), which is checked on the host when it
returns (a wrong count, shape or dtype is a RuntimeError, in JAX's words). An exception
raised by the function ends the program's execution: the caller gets jaxlib's
``JaxRuntimeError``, whose message holds the function's traceback and whose
``__cause__`` is the original exception.

`pure_callback` promises no side effects: an unused one is removed, and under `vmap` it
follows `vmap_method`; it is differentiable only through `custom_jvp` / `custom_vjp`.
`io_callback` has an effect: it always runs, in program order (``ordered=True`` also
forbids `vmap`, as in JAX).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olympus_ir import dtypes
from olympus_ir.avals import ShapedArray
from olympus_ir.prims.callbacks import VMAP_METHODS
from olympus_trace import lax_ops, tree_util

__all__ = ["pure_callback", "io_callback", "effects_barrier", "FlatCallback"]

_ALLOWED_VMAP = [*VMAP_METHODS, None]


class FlatCallback:
    """The user's function as the primitives call it: flat numpy arrays in (rebuilt into
    the call's argument pytrees), flat results out. Equal when the function and the
    argument structure are, so an eager call with the same function reuses its
    compilation."""

    __slots__ = ("callback_func", "in_tree", "__name__")

    def __init__(self, callback_func: Callable, in_tree: Any):
        self.callback_func = callback_func
        self.in_tree = in_tree
        self.__name__ = getattr(callback_func, "__name__", type(callback_func).__name__)

    def __call__(self, *flat_args):
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
        return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

    def __eq__(self, other):
        return (type(other) is FlatCallback and self.callback_func == other.callback_func
                and self.in_tree == other.in_tree)

    def __hash__(self):
        return hash((self.callback_func, self.in_tree))

    def __repr__(self) -> str:
        return (f"_FlatCallback(callback_func={self.callback_func!r}, "
                f"in_tree={self.in_tree!r})")


def _result_avals(result_shape_dtypes: Any) -> tuple[tuple[ShapedArray, ...], Any]:
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = []
    for i, leaf in enumerate(leaves):
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(
                "result_shape_dtypes must be a pytree of objects with `shape` and `dtype` "
                f"(e.g. olympus.ShapeDtypeStruct); leaf {i} is {leaf!r}")
        # As in JAX, results are never weakly typed.
        avals.append(ShapedArray(tuple(shape), dtypes.canonicalize_dtype(dtype)))
    return tuple(avals), tree


def _flat(callback: Callable, args: tuple, kwargs: dict, what: str):
    if not callable(callback):
        raise TypeError(f"{what}: callback must be callable, got {callback!r}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    return FlatCallback(callback, in_tree), flat_args


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """Call the side-effect-free host function ``callback(*args, **kwargs)`` from
    traced code and return its results, shaped as `result_shape_dtypes` says.

    `vmap_method` says how ``vmap`` batches the call: ``"sequential"`` (once per batch
    member), ``"sequential_unrolled"`` (the same, unrolled in the program),
    ``"expand_dims"`` (once, unbatched arguments with a leading axis of size 1),
    ``"broadcast_all"`` (once, every argument batched), ``"legacy_vectorized"`` (once,
    unbatched arguments as they are); None makes ``vmap`` an error."""
    if vmap_method not in _ALLOWED_VMAP:
        raise ValueError(f"vmap_method must be on of the allowed methods {_ALLOWED_VMAP}, "
                         f"but got: {vmap_method}")
    flat_cb, flat_args = _flat(callback, args, kwargs, "pure_callback")
    avals, out_tree = _result_avals(result_shape_dtypes)
    outs = lax_ops.pure_callback(*flat_args, callback=flat_cb, result_avals=avals,
                                 vmap_method=vmap_method, sharding=sharding)
    return tree_util.tree_unflatten(out_tree, list(outs))


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call the host function ``callback(*args, **kwargs)``, which may have side effects,
    from traced code and return its results (shaped as `result_shape_dtypes`). It is
    never removed; the calls of one program run in program order (``ordered=True``
    also rules out ``vmap``, as in JAX); it cannot be differentiated."""
    flat_cb, flat_args = _flat(callback, args, kwargs, "io_callback")
    avals, out_tree = _result_avals(result_shape_dtypes)
    outs = lax_ops.io_callback(*flat_args, callback=flat_cb, result_avals=avals,
                               ordered=bool(ordered), sharding=sharding)
    return tree_util.tree_unflatten(out_tree, list(outs))


def effects_barrier() -> None:
    """Wait until every computation dispatched so far (and so every host callback it
    makes) has finished."""
    import olympus_runtime as rt

    for a in rt.backend.get_client().live_arrays():
        if not a.is_deleted():
            a.block_until_ready()
