"""``ffi_call`` -> ``stablehlo.custom_call @<target>`` of XLA's typed FFI.

With ``custom_call_api_version=4`` (the typed FFI, the default) the handler's named
attributes travel in ``mhlo.backend_config`` as an MLIR dictionary, each value converted by
`ir_attribute` (numpy scalars keep their type, Python ints are i64 and floats f64, as in
JAX); with an older version the opaque `legacy_backend_config` string is passed instead.
Layouts are minor-to-major, as XLA takes them. `build_ffi_lowering_function` is the
builder ``olympus.ffi`` exposes for user lowering rules.

``buffer_callback`` is a typed-FFI call of jaxlib's built-in
``xla_buffer_python_cpu_callback`` handler, whose ``index`` attribute selects the Python
function in the module's host-callback list (as for the other callbacks). jaxlib calls
that function with an execution context and one buffer per operand, then per result; the
function here rebuilds the user's trees from them and refuses a returned value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir import dtypes
from olympus_ir.prims.ffi import FrozenDict, HashableArray, buffer_callback_p, ffi_call_p

from .. import mlir_utils as mu
from ._registry import register_lowering
from .callbacks import keep_callback_error

__all__ = ["ir_attribute", "build_ffi_lowering_function", "emit_ffi_call"]


def ir_attribute(value: Any) -> ir.Attribute:
    """An FFI attribute value as an MLIR attribute (JAX's conversions)."""
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, HashableArray):
        value = value.val
    if isinstance(value, FrozenDict):
        value = value._d
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), value)
    if isinstance(value, dict):
        return ir.DictAttr.get({str(k): ir_attribute(v) for k, v in value.items()})
    if isinstance(value, np.generic) and value.ndim == 0:
        dt = np.dtype(value.dtype)
        t = mu.dtype_to_ir_type(dt)
        if dtypes.is_float(dt):
            return ir.FloatAttr.get(t, float(value))
        if dtypes.is_integer(dt):
            return ir.IntegerAttr.get(t, int(value))
    if isinstance(value, np.ndarray):
        return ir.DenseElementsAttr.get(np.ascontiguousarray(value),
                                        type=mu.dtype_to_ir_type(value.dtype))
    if isinstance(value, (tuple, list)):
        return ir.ArrayAttr.get([ir_attribute(v) for v in value])
    raise TypeError(f"ffi_call: attribute value {value!r} of type {type(value).__name__} "
                    "cannot be passed to an FFI handler.")


def _layout_attr(layout: Sequence[int]) -> ir.DenseIntElementsAttr:
    return ir.DenseIntElementsAttr.get(np.asarray(layout, np.int64), type=ir.IndexType.get())


def _default_layout(aval) -> tuple[int, ...]:
    return tuple(range(aval.ndim - 1, -1, -1))


def emit_ffi_call(ctx, target_name: str, operands: Sequence[ir.Value], *,
                  has_side_effect: bool = False, operand_layouts=None, result_layouts=None,
                  operand_output_aliases: Mapping[int, int] | None = None,
                  api_version: int = 4, backend_config: Any = None,
                  attributes: Mapping[str, Any] | None = None) -> list:
    """One custom call of `target_name` with `ctx`'s result types."""
    avals_out = ctx.avals_out
    typed = None
    if api_version >= 4:
        if backend_config is not None and not isinstance(backend_config, dict):
            raise ValueError("When api_version > 4, backend_config must be a dictionary.")
        # As JAX emits it: the dictionary in the unregistered ``mhlo.backend_config``
        # attribute, ``backend_config = ""`` and the default API version; XLA's importer
        # makes that a typed-FFI call (API_VERSION_TYPED_FFI in the HLO).
        typed = ir.DictAttr.get({**{k: ir_attribute(v) for k, v in (backend_config or {}).items()},
                                 **{k: ir_attribute(v) for k, v in (attributes or {}).items()}})
        config, api_version = ir.StringAttr.get(""), 1
    else:
        if attributes:
            raise ValueError("The use of ffi_call attributes requires a custom call API "
                             f"version of at least 4; got api_version={api_version}.")
        config = ir.StringAttr.get(backend_config or "")
    i32 = ir.IntegerType.get_signless(32)
    in_layouts = operand_layouts or [_default_layout(a) for a in ctx.avals_in]
    out_layouts = result_layouts or [_default_layout(a) for a in avals_out]
    aliases = sorted((operand_output_aliases or {}).items())
    op = hlo.CustomCallOp(
        [mu.aval_to_ir_type(a) for a in avals_out], list(operands), target_name,
        has_side_effect=bool(has_side_effect),
        backend_config=config,
        api_version=ir.IntegerAttr.get(i32, int(api_version)),
        operand_layouts=ir.ArrayAttr.get([
            _layout_attr(lay if lay is not None else _default_layout(a))
            for lay, a in zip(in_layouts, ctx.avals_in, strict=True)]),
        result_layouts=ir.ArrayAttr.get([
            _layout_attr(lay if lay is not None else _default_layout(a))
            for lay, a in zip(out_layouts, avals_out, strict=True)]),
        output_operand_aliases=ir.ArrayAttr.get([
            hlo.OutputOperandAlias.get([o] if len(avals_out) > 1 else [], i, [])
            for i, o in aliases]),
    )
    if typed is not None:
        op.attributes["mhlo.backend_config"] = typed
    return list(op.results)


def build_ffi_lowering_function(target_name: str, *, operand_layouts=None, result_layouts=None,
                                backend_config=None, skip_ffi_layout_processing=False,
                                **lowering_args):
    """A lowering rule ``rule(ctx, *operands, **params)`` calling the FFI target
    `target_name`, with the equation's `params` as the handler's attributes."""
    api_version = lowering_args.pop("api_version", 4)
    if api_version < 4 and backend_config is not None and not isinstance(backend_config, str):
        raise ValueError("When api_version < 4, backend_config must be a string.")
    has_side_effect = lowering_args.pop("has_side_effect", False)
    aliases = lowering_args.pop("operand_output_aliases", None)
    if lowering_args:
        raise TypeError(f"build_ffi_lowering_function got unexpected arguments "
                        f"{sorted(lowering_args)}")

    def rule(ctx, *operands, **params):
        return emit_ffi_call(ctx, target_name, operands, has_side_effect=has_side_effect,
                             operand_layouts=operand_layouts, result_layouts=result_layouts,
                             operand_output_aliases=aliases, api_version=api_version,
                             backend_config=backend_config,
                             attributes=params if api_version >= 4 else None)

    return rule


@register_lowering(ffi_call_p)
def _ffi_call_lowering(ctx, *operands, target_name, has_side_effect, input_layouts,
                       output_layouts, input_output_aliases, custom_call_api_version,
                       legacy_backend_config, attributes, result_avals, vmap_method):
    return emit_ffi_call(
        ctx, target_name, operands, has_side_effect=has_side_effect,
        operand_layouts=input_layouts, result_layouts=output_layouts,
        operand_output_aliases=dict(input_output_aliases),
        api_version=custom_call_api_version,
        backend_config=legacy_backend_config if custom_call_api_version < 4 else None,
        attributes=dict(attributes))


_BUFFER_CALLBACK_TARGET = "xla_buffer_python_cpu_callback"


def buffer_callback_host(callback, in_tree, out_tree):
    """The function jaxlib's buffer-callback handler calls: ``(ctx, *operand_buffers,
    *result_buffers)`` -> `callback(ctx, results_tree, *args, **kwargs)`, which must
    return None (JAX's ValueError otherwise)."""
    n_in = in_tree.num_leaves

    def host(exec_ctx, *buffers):
        try:
            args, kwargs = in_tree.unflatten(buffers[:n_in])
            outs = out_tree.unflatten(buffers[n_in:])
            if callback(exec_ctx, outs, *args, **kwargs) is not None:
                raise ValueError("buffer_callback callback must not return any values.")
        except BaseException as e:
            keep_callback_error(e)
            raise
        return ()

    host.__name__ = f"host_{getattr(callback, '__name__', 'callback')}"
    return host


@register_lowering(buffer_callback_p)
def _buffer_callback_lowering(ctx, *operands, callback, in_tree, out_tree, has_side_effect,
                              input_output_aliases, command_buffer_compatible, result_avals,
                              vmap_method):
    # command_buffer_compatible only changes the GPU target; on CPU it has no effect.
    index = ctx.register_host_callback(buffer_callback_host(callback, in_tree, out_tree))
    return emit_ffi_call(ctx, _BUFFER_CALLBACK_TARGET, operands,
                         has_side_effect=has_side_effect,
                         operand_output_aliases=dict(input_output_aliases),
                         attributes={"index": np.uint64(index)})
