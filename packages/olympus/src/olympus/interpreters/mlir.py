"""`olympus.interpreters.mlir`: lowering rules of primitives to StableHLO (JAX's
``jax.interpreters.mlir``).

`register_lowering` fills the table Olympus's lowering consults
(`olympus_lower.rules.lowering_rules`, or the per-platform table for a rule given a
platform). A rule is ``rule(ctx, *operands, **params) -> list of ir.Value`` built at the
current insertion point with ``jaxlib.mlir`` ops (``ir`` here; the StableHLO dialect is
``olympus._src.lib.mlir.dialects.hlo``); `ctx` is a `LoweringRuleContext` with
``avals_in``, ``avals_out``, ``primitive`` and ``platforms``.
"""

from __future__ import annotations

import io as _io
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as _hlo

from olympus_ir import dtypes as _dtypes
from olympus_ir.avals import ShapedArray
from olympus_ir.core import Primitive
from olympus_lower import LoweringRuleContext
from olympus_lower import make_context as make_ir_context
from olympus_lower import mlir_utils as _mu
from olympus_lower.lowering import ModuleContext
from olympus_lower.rules._registry import lowering_rules as _lowerings
from olympus_lower.rules._registry import platform_lowering_rules as _platform_specific_lowerings

__all__ = [
    "LoweringRule", "LoweringRuleContext", "ModuleContext", "Value", "aval_to_ir_type", "aval_to_ir_types",
    "custom_call",
    "dense_int_array", "dense_int_elements", "dtype_to_ir_type", "flatten_ir_types",
    "flatten_ir_values", "i32_attr", "i64_attr", "ir", "ir_constant", "ir_constants",
    "lower_fun", "make_ir_context", "module_to_bytecode", "module_to_string",
    "register_lowering", "token_type",
]

LoweringRule = Callable[..., Sequence[ir.Value]]
Value = Any

# JAX's platform names; "gpu" stands for each GPU platform.
_KNOWN_PLATFORMS = ("cpu", "cuda", "gpu", "oneapi", "rocm", "tpu")
_PLATFORM_ALIASES = {"gpu": ("cuda", "rocm", "oneapi")}


def register_lowering(prim: Primitive, rule: LoweringRule, platform: str | None = None,
                      inline: bool = True, cacheable: bool = True) -> None:
    """Register `rule` as the lowering of `prim`: for every platform (`platform` None) or
    for one, taking precedence there over the common rule. ``inline`` and ``cacheable``
    are accepted for JAX's signature (Olympus always lowers a rule inline)."""
    del inline, cacheable
    if not isinstance(prim, Primitive):
        raise TypeError(f"register_lowering expects a Primitive, got {prim!r}")
    if not callable(rule):
        raise TypeError(f"register_lowering expects a callable rule, got {rule!r}")
    if platform is None:
        _lowerings[prim] = rule
        return
    if platform not in _KNOWN_PLATFORMS:
        raise NotImplementedError(
            f"Registering an MLIR lowering rule for primitive {prim} for an unknown "
            f"platform {platform}. Known platforms are: {', '.join(_KNOWN_PLATFORMS)}.")
    for p in _PLATFORM_ALIASES.get(platform, (platform,)):
        _platform_specific_lowerings.setdefault(p, {})[prim] = rule


def custom_call(call_target_name: str, *, result_types: Sequence[ir.Type],
                operands: Sequence[ir.Value], backend_config: Any = "",
                has_side_effect: bool = False, result_shapes: Sequence[ir.Value] | None = None,
                called_computations: Sequence[str] = (), api_version: int = 2,
                operand_output_aliases: dict[int, int] | None = None,
                operand_layouts: Sequence[Sequence[int]] | None = None,
                result_layouts: Sequence[Sequence[int]] | None = None,
                extra_attributes: dict[str, ir.Attribute] | None = None) -> Any:
    """Emit a ``stablehlo.custom_call`` to `call_target_name` at the insertion point and
    return the op (its ``.results`` are the rule's outputs), as JAX's helper of the same
    name. A dict `backend_config` (attributes) goes in ``mhlo.backend_config`` with API
    version 1, the form the StableHLO op accepts for it."""
    if backend_config is not None and not isinstance(backend_config, (str, bytes, dict)):
        raise ValueError(f"custom_call backend_config unexpected type: {backend_config}")
    operands = list(operands)
    result_types = list(result_types)
    i32 = ir.IntegerType.get_signless(32)
    if backend_config is None:
        config = ir.StringAttr.get("")
    elif isinstance(backend_config, (str, bytes)):
        config = ir.StringAttr.get(backend_config)
    else:
        config = ir.StringAttr.get("")
        api_version = 1
    attrs: dict[str, Any] = {
        "call_target_name": ir.StringAttr.get(call_target_name),
        "has_side_effect": ir.BoolAttr.get(has_side_effect),
        "backend_config": config,
        "api_version": ir.IntegerAttr.get(i32, api_version),
        "called_computations": ir.ArrayAttr.get(
            [ir.FlatSymbolRefAttr.get(n) for n in called_computations]),
    }
    if operand_output_aliases is not None:
        attrs["output_operand_aliases"] = ir.ArrayAttr.get([
            _hlo.OutputOperandAlias.get(
                output_tuple_indices=[out] if len(result_types) > 1 else [],
                operand_index=inp, operand_tuple_indices=[])
            for inp, out in operand_output_aliases.items()])
    if extra_attributes is not None:
        attrs.update(extra_attributes)
    if result_shapes is not None:  # dynamic result shapes: trailing shape operands
        if len(result_shapes) != len(result_types):
            raise ValueError("custom_call: result_shapes must give one shape per result")
        attrs["indices_of_shape_operands"] = ir.DenseIntElementsAttr.get(
            np.arange(len(operands), len(operands) + len(result_shapes), dtype=np.int64))
        if operand_layouts is not None:
            operand_layouts = [*operand_layouts, *([(0,)] * len(result_shapes))]
        operands = operands + list(result_shapes)

    def layouts(ls: Sequence[Sequence[int]], n: int, what: str) -> Any:
        if len(ls) != n:
            raise ValueError(f"custom_call: {what} must give one layout per {what[:-8]}")
        return ir.ArrayAttr.get([
            ir.DenseIntElementsAttr.get(np.atleast_1d(np.asarray(lay, dtype=np.int64)),
                                        type=ir.IndexType.get()) for lay in ls])

    if operand_layouts is not None:
        attrs["operand_layouts"] = layouts(operand_layouts, len(operands), "operand_layouts")
    if result_layouts is not None:
        attrs["result_layouts"] = layouts(result_layouts, len(result_types), "result_layouts")
    op = _hlo.CustomCallOp.build_generic(results=result_types, operands=operands,
                                         attributes=attrs)
    if isinstance(backend_config, dict):
        op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(backend_config)
    return op


def lower_fun(fun: Callable, multiple_results: bool = True) -> Callable:
    """A lowering rule from a traceable function: `fun(*operands, **params)` (returning
    a list of outputs, or one output without `multiple_results`) is traced at the
    equation's input avals and lowered in place."""
    def f_lowered(ctx: LoweringRuleContext, *args: ir.Value, **params: Any):
        from olympus_trace.core import EvalTrace
        from olympus_trace.staging import trace_to_olympuspr

        def flat(*xs):
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]

        closed, _ = trace_to_olympuspr(flat, ctx.avals_in, parent=EvalTrace())
        return ctx.lower_sub(closed, args)

    return f_lowered


def dtype_to_ir_type(dtype: Any) -> ir.Type:
    """The MLIR element type of `dtype`."""
    return _mu.dtype_to_ir_type(np.dtype(dtype))


def aval_to_ir_type(aval: ShapedArray) -> ir.Type:
    """The MLIR tensor type of `aval`."""
    return _mu.aval_to_ir_type(aval)


def aval_to_ir_types(aval: ShapedArray) -> tuple[ir.Type, ...]:
    return (aval_to_ir_type(aval),)


def _constant_array(val: Any, aval: Any) -> np.ndarray:
    if aval is not None:
        return np.asarray(val, aval.dtype)
    x = np.asarray(val)
    if isinstance(val, (bool, int, float, complex)):
        x = np.asarray(val, _dtypes.canonicalize_dtype(_dtypes.python_scalar_dtype(val)))
    return np.asarray(x, _dtypes.canonicalize_dtype(x.dtype))


def ir_constant(val: Any, *, const_lowering: dict | None = None,
                aval: Any = None) -> ir.Value:
    """A ``stablehlo.constant`` holding `val` (an array or scalar; its dtype from `aval`
    if given, else the canonical dtype of `val`)."""
    del const_lowering
    return _mu.ir_constant(_constant_array(val, aval))


def ir_constants(val: Any, *, const_lowering: dict | None = None,
                 aval: Any = None) -> tuple[ir.Value, ...]:
    return (ir_constant(val, const_lowering=const_lowering, aval=aval),)


def dense_int_array(xs: Sequence[int]) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get([int(x) for x in xs])


def dense_int_elements(xs: Sequence[int]) -> ir.DenseIntElementsAttr:
    return _mu.dense_i64_elements(np.asarray(xs, np.int64))


def i32_attr(i: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(i))


def i64_attr(i: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(i))


def token_type() -> ir.Type:
    return _hlo.TokenType.get()


def flatten_ir_values(xs: Any) -> list[ir.Value]:
    """The values of a nest of lists/tuples of ``ir.Value``, in order."""
    if isinstance(xs, (list, tuple)):
        return [v for x in xs for v in flatten_ir_values(x)]
    return [xs]


def flatten_ir_types(xs: Any) -> list[ir.Type]:
    if isinstance(xs, (list, tuple)):
        return [t for x in xs for t in flatten_ir_types(x)]
    return [xs]


def module_to_string(module: ir.Module, enable_debug_info: bool | None = None) -> str:
    out = _io.StringIO()
    module.operation.print(file=out, enable_debug_info=bool(enable_debug_info))
    return out.getvalue()


def module_to_bytecode(module: ir.Module) -> bytes:
    out = _io.BytesIO()
    module.operation.write_bytecode(out)
    return out.getvalue()
