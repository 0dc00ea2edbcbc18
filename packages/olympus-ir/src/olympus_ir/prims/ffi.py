"""Foreign function calls: ``ffi_call``, a call of a C/C++ handler registered with XLA's
typed FFI (``olympus.ffi``).

``ffi_call(*args; target_name, result_avals, has_side_effect, vmap_method, input_layouts,
output_layouts, input_output_aliases, custom_call_api_version, legacy_backend_config,
attributes)`` returns values of `result_avals`; the parameters are JAX's, in JAX's order of
printing. `attributes` is a sorted tuple of ``(name, value)`` pairs (hashable: numpy arrays
and dicts are wrapped in `HashableArray` / `FrozenDict`), passed to the handler as named
FFI attributes. With `has_side_effect` the equation has the ``FFI`` effect: it is never
removed as dead code.

``buffer_callback(*args; callback, result_avals, in_tree, out_tree, vmap_method,
has_side_effect, input_output_aliases, command_buffer_compatible)`` calls the Python
function `callback` through jaxlib's built-in ``xla_buffer_python_cpu_callback`` handler,
handing it the operand and result *buffers* (``callback(ctx, out_tree_of_buffers,
*args, **kwargs)`` rebuilt with `in_tree` / `out_tree`); it writes its results in place.
It batches and lowers as an ``ffi_call`` does; with `has_side_effect` it has the
``BufferCallback`` effect.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..avals import ShapedArray
from ..core import def_shape_rule, new_primitive
from .callbacks import VMAP_METHODS, Effect, effect_rules

__all__ = ["ffi_call_p", "FfiEffect", "ffi_effect", "HashableArray", "FrozenDict",
           "buffer_callback_p", "buffer_callback_effect"]


class FfiEffect(Effect):
    """The effect of an ``ffi_call`` with ``has_side_effect=True`` (printed ``FFI``)."""

    __slots__ = ()

    def __reduce__(self):
        return (_the_ffi_effect, ())


ffi_effect = FfiEffect("FFI", ordered=False)


def _the_ffi_effect() -> FfiEffect:
    return ffi_effect


class HashableArray:
    """A numpy array attribute, hashed and compared by value (it is embedded in the
    program as a dense attribute, so it is small)."""

    __slots__ = ("val",)

    def __init__(self, val: np.ndarray):
        self.val = np.array(val, copy=True)
        self.val.setflags(write=False)

    def __hash__(self) -> int:
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, HashableArray) and self.val.dtype == other.val.dtype
                and self.val.shape == other.val.shape
                and bool(np.array_equal(self.val, other.val)))

    def __repr__(self) -> str:
        return repr(self.val)


class FrozenDict:
    """A dict attribute, hashed by its sorted items."""

    __slots__ = ("_d",)

    def __init__(self, d: dict):
        self._d = dict(d)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._d.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrozenDict) and self._d == other._d

    def __repr__(self) -> str:
        return f"FrozenDict({self._d!r})"


ffi_call_p = new_primitive("ffi_call", multiple_results=True)


@def_shape_rule(ffi_call_p)
def ffi_call_shape_rule(*avals: Any, result_avals, vmap_method, target_name, has_side_effect,
                        input_layouts, output_layouts, input_output_aliases,
                        custom_call_api_version, legacy_backend_config, attributes):
    if not isinstance(target_name, str):
        raise TypeError(f"ffi_call target_name must be a string, got {target_name!r}.")
    if not isinstance(result_avals, tuple) or not all(
            isinstance(a, ShapedArray) for a in result_avals):
        raise TypeError(f"ffi_call result_avals must be a tuple of ShapedArray, got "
                        f"{result_avals!r}.")
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise TypeError(f"ffi_call vmap_method must be None or one of {VMAP_METHODS}, got "
                        f"{vmap_method!r}.")
    if len(input_layouts) != len(avals):
        raise TypeError(f"ffi_call has {len(avals)} operands but {len(input_layouts)} input "
                        "layouts.")
    if len(output_layouts) != len(result_avals):
        raise TypeError(f"ffi_call has {len(result_avals)} results but {len(output_layouts)} "
                        "output layouts.")
    return list(result_avals)


effect_rules[ffi_call_p] = lambda eqn: ffi_effect if eqn.params["has_side_effect"] else None


class BufferCallbackEffect(Effect):
    """The effect of a ``buffer_callback`` with ``has_side_effect=True`` (printed
    ``BufferCallback``)."""

    __slots__ = ()

    def __reduce__(self):
        return (_the_buffer_callback_effect, ())


buffer_callback_effect = BufferCallbackEffect("BufferCallback", ordered=False)


def _the_buffer_callback_effect() -> BufferCallbackEffect:
    return buffer_callback_effect


buffer_callback_p = new_primitive("buffer_callback", multiple_results=True)


@def_shape_rule(buffer_callback_p)
def buffer_callback_shape_rule(*avals: Any, callback, result_avals, in_tree, out_tree,
                               vmap_method, has_side_effect, input_output_aliases,
                               command_buffer_compatible):
    if not callable(callback):
        raise TypeError(f"buffer_callback callback must be callable, got {callback!r}.")
    if not isinstance(result_avals, tuple) or not all(
            isinstance(a, ShapedArray) for a in result_avals):
        raise TypeError(f"buffer_callback result_avals must be a tuple of ShapedArray, got "
                        f"{result_avals!r}.")
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise TypeError(f"buffer_callback vmap_method must be None or one of "
                        f"{VMAP_METHODS}, got {vmap_method!r}.")
    if in_tree.num_leaves != len(avals) or out_tree.num_leaves != len(result_avals):
        raise TypeError(f"buffer_callback has {len(avals)} operands and {len(result_avals)} "
                        f"results, but its trees hold {in_tree.num_leaves} and "
                        f"{out_tree.num_leaves} leaves.")
    for i, o in input_output_aliases:
        if not (0 <= i < len(avals) and 0 <= o < len(result_avals)):
            raise TypeError(f"buffer_callback alias {i}:{o} is out of range.")
    return list(result_avals)


effect_rules[buffer_callback_p] = (
    lambda eqn: buffer_callback_effect if eqn.params["has_side_effect"] else None)
