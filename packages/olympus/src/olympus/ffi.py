"""`olympus.ffi`: call C/C++ functions written against XLA's typed FFI (as ``jax.ffi``).

A handler compiled against the headers in `include_dir` (``xla/ffi/api/ffi.h``, shipped
with jaxlib) is registered with `register_ffi_target` (a PyCapsule from `pycapsule` of a
``ctypes`` function pointer, the symbol ``XLA_FFI_DEFINE_HANDLER_SYMBOL`` defines), then
called with `ffi_call`, eagerly, under `jit` and under `vmap` (by its `vmap_method`).
Registration goes through jaxlib's ``xla_client.register_custom_call_target``: the
handler must be registered before a program calling it is compiled.

`ffi_lowering` / `build_ffi_lowering_function` build lowering rules (``rule(ctx,
*operands, **params)``) for user primitives registered with
``olympus_lower.rules.register_lowering``.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from typing import Any

import jaxlib
import numpy as np

import olympus_runtime as _rt
from olympus_ir.avals import ShapedArray
from olympus_ir.prims.callbacks import VMAP_METHODS
from olympus_ir.prims.ffi import FrozenDict, HashableArray
from olympus_lower.rules.ffi import build_ffi_lowering_function
from olympus_trace import lax_ops
from olympus_trace.core import get_aval

__all__ = [
    "build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir", "pycapsule",
    "register_ffi_target", "register_ffi_target_as_batch_partitionable", "register_ffi_type",
    "register_ffi_type_id",
]


def register_ffi_target(name: str, fn: Any, platform: str = "cpu", api_version: int = 1,
                        **kwargs: Any) -> None:
    """Register the handler `fn` (a PyCapsule, or a dict of stage name -> PyCapsule) as
    the FFI target `name`. `api_version` 1 is the typed FFI, 0 the legacy custom call."""
    import jaxlib.xla_client as xc

    if not isinstance(name, str):
        raise TypeError(f"register_ffi_target: name must be a string, got {name!r}")
    return xc.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """Deprecated in JAX: registering a type by id is not supported with this jaxlib; raises
    ValueError (use `register_ffi_type`).
    """
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(name: str, type_registration: Any, platform: str = "cpu") -> None:
    """Register a custom FFI type (a dict with ``type_id`` and optional ``type_info``
    PyCapsules)."""
    import jaxlib.xla_client as xc

    return xc.register_custom_type(name, type_registration, platform=platform)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Mark the FFI target `name` as batch-partitionable, so the SPMD partitioner may split
    its leading (batch) dimension across devices.
    """
    import jaxlib.xla_client as xc

    xc.register_custom_call_as_batch_partitionable(name)


def pycapsule(funcptr) -> Any:
    """Wrap a ``ctypes`` function pointer (e.g. ``ctypes.cdll.LoadLibrary(p).handler``) in a
    PyCapsule, the form `register_ffi_target` takes."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return new(funcptr, None, destructor(0))


def include_dir() -> str:
    """The directory of the C/C++ headers shipped with jaxlib (``xla/ffi/api/ffi.h``)."""
    base = jaxlib.__file__
    if base is not None:
        root = os.path.dirname(os.path.abspath(base))
    elif getattr(jaxlib, "__path__", None):
        root = list(jaxlib.__path__)[0]
    else:
        raise RuntimeError("Cannot determine jaxlib directory: neither __file__ nor __path__ "
                           "is available")
    return os.path.join(root, "include")


def ffi_lowering(target_name: str, *, operand_layouts=None, result_layouts=None,
                 backend_config=None, skip_ffi_layout_processing: bool = False,
                 **lowering_args: Any):
    """A lowering rule calling the FFI target `target_name` (JAX's `ffi_lowering`; in
    Olympus the same rule `build_ffi_lowering_function` builds)."""
    return build_ffi_lowering_function(
        target_name, operand_layouts=operand_layouts, result_layouts=result_layouts,
        backend_config=backend_config, skip_ffi_layout_processing=skip_ffi_layout_processing,
        **lowering_args)


def _result_aval(r: Any) -> ShapedArray:
    if not (hasattr(r, "shape") and hasattr(r, "dtype")):
        raise ValueError("All elements of result_shape_dtypes must have shape and dtype "
                         f"attributes; got {r!r}")
    from olympus_ir import dtypes

    return ShapedArray(tuple(r.shape), dtypes.canonicalize_dtype(r.dtype))


def _minor_to_major(aval, layout, what: str):
    """A layout given major-to-minor (JAX's convention for `ffi_call`) as XLA's
    minor-to-major tuple; None is row-major."""
    if layout is None:
        return tuple(range(aval.ndim - 1, -1, -1))
    if hasattr(layout, "major_to_minor"):
        layout = layout.major_to_minor
    layout = tuple(int(d) for d in layout)
    if sorted(layout) != list(range(aval.ndim)):
        raise ValueError(f"The {what} layout {layout} must be a permutation of "
                         f"range({aval.ndim}) for an array of shape {aval.shape}.")
    return layout[::-1]


def _hashable_attributes(kwargs: dict) -> tuple:
    out = []
    for k, v in sorted(kwargs.items()):
        if isinstance(v, np.ndarray):
            out.append((k, HashableArray(v)))
        elif isinstance(v, dict):
            out.append((k, FrozenDict(v)))
        else:
            try:
                hash(v)
            except TypeError as e:
                raise TypeError(f"Non-hashable keyword argument to ffi_call {k}: {v}") from e
            out.append((k, v))
    return tuple(out)


def ffi_call(target_name: str, result_shape_dtypes: Any, *, has_side_effect: bool = False,
             vmap_method: str | None = None, input_layouts: Sequence | None = None,
             output_layouts: Any = None, input_output_aliases: dict[int, int] | None = None,
             custom_call_api_version: int = 4, legacy_backend_config: str | None = None):
    """A function calling the registered FFI target `target_name` with its positional
    array arguments; keyword arguments become the handler's named attributes. Returns one
    array if `result_shape_dtypes` is one shape/dtype object, else a list (a tuple if it
    was a tuple)."""
    allowed = [*VMAP_METHODS, None]
    if vmap_method not in allowed:
        raise ValueError(f"vmap_method must be on of the allowed methods {allowed}, "
                         f"but got: {vmap_method}")
    multiple = isinstance(result_shape_dtypes, Sequence)
    results = tuple(result_shape_dtypes) if multiple else (result_shape_dtypes,)
    result_avals = tuple(_result_aval(r) for r in results)
    out_layouts = output_layouts if multiple else (output_layouts,)
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires "
                         f"custom_call_api_version < 4; got {custom_call_api_version}.")

    def wrapped(*args: Any, **kwargs: Any):
        args = [a if isinstance(a, (_rt.Array,)) or hasattr(a, "aval") else np.asarray(a)
                for a in args]
        in_avals = [get_aval(a) for a in args]
        if input_layouts is None:
            in_lay = tuple(_minor_to_major(a, None, "input") for a in in_avals)
        else:
            if len(input_layouts) != len(in_avals):
                raise ValueError(f"The number of input arguments ({len(in_avals)}) must equal "
                                 f"the number of input layouts ({len(input_layouts)}).")
            in_lay = tuple(_minor_to_major(a, lay, "input")
                           for a, lay in zip(in_avals, input_layouts))
        if out_layouts is None:
            out_lay = tuple(_minor_to_major(a, None, "output") for a in result_avals)
        else:
            if len(out_layouts) != len(result_avals):
                raise ValueError(f"The number of outputs ({len(result_avals)}) must equal the "
                                 f"number of output layouts ({len(out_layouts)}).")
            out_lay = tuple(_minor_to_major(a, lay, "output")
                            for a, lay in zip(result_avals, out_layouts))
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = check_alias(i, o, len(args), in_avals, result_avals)
            if in_lay[i] != out_lay[o]:
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                                 f"referring to an input with layout {in_lay[i]} and an output "
                                 f"with a different layout {out_lay[o]}.")
            aliases.append((i, o))
        outs = lax_ops.ffi_call(
            *args, target_name=target_name, result_avals=result_avals,
            has_side_effect=has_side_effect, vmap_method=vmap_method, input_layouts=in_lay,
            output_layouts=out_lay, input_output_aliases=tuple(aliases),
            custom_call_api_version=custom_call_api_version,
            legacy_backend_config=legacy_backend_config,
            attributes=_hashable_attributes(kwargs))
        if multiple:
            return tuple(outs) if isinstance(result_shape_dtypes, tuple) else list(outs)
        return outs[0]

    return wrapped


def check_alias(i, o, nargs: int, in_avals, result_avals) -> tuple[int, int]:
    """One `input_output_aliases` entry (input `i` -> output `o`) checked as JAX checks it:
    both indices in range (the input's by the positional arguments) and the same shape and
    dtype on both sides. Returns the indices as ints."""
    i, o = int(i), int(o)
    if i >= nargs or i >= len(in_avals):
        raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                         f"input index {i} outside the range [0, {nargs}).")
    if o >= len(result_avals):
        raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                         f"output index {o} outside the range [0, {len(result_avals)}).")
    a, r = in_avals[i], result_avals[o]
    if (a.shape, a.dtype) != (r.shape, r.dtype):
        raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                         f"referring to an input with abstract value {a} and an output "
                         f"with a different abstract value {r}.")
    return i, o
