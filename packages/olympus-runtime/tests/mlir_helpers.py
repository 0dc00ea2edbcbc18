"""Tiny StableHLO modules for the runtime tests, parsed from MLIR text.

olympus-runtime may not depend on olympus_lower (which owns the MLIR context recipe the
packages use), and the runtime itself builds no context, so the tests parse their modules
in a context of their own: jaxlib's dialects registered, one per thread (MLIR contexts are
not thread-safe), on the context's default thread pool.
"""

from __future__ import annotations

import threading

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext, _sdy, _stablehlo

from olympus_ir import dtypes

_local = threading.local()

MLIR_TYPES = {
    dtypes.bool_: "i1", dtypes.int8: "i8", dtypes.int16: "i16", dtypes.int32: "i32",
    dtypes.int64: "i64", dtypes.uint8: "ui8", dtypes.uint16: "ui16", dtypes.uint32: "ui32",
    dtypes.uint64: "ui64", dtypes.float16: "f16", dtypes.bfloat16: "bf16",
    dtypes.float32: "f32", dtypes.float64: "f64", dtypes.complex64: "complex<f32>",
    dtypes.complex128: "complex<f64>",
}


def make_context() -> ir.Context:
    """A context that parses StableHLO, Shardy and func text (JAXLIB.md §1)."""
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    _stablehlo.register_dialect(ctx)
    _sdy.register_dialect(ctx)
    return ctx


def context() -> ir.Context:
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = make_context()
    return ctx


def parse(text: str) -> ir.Module:
    with context(), ir.Location.unknown():
        return ir.Module.parse(text)


def tensor(shape, dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{MLIR_TYPES[dtypes.dtype(dtype)]}>"


def binary_module(op: str, shape=(3,), dtype="float32", name="jit_f", arg_attrs=("", "")) -> ir.Module:
    t = tensor(shape, dtype)
    a0 = f" {{{arg_attrs[0]}}}" if arg_attrs[0] else ""
    a1 = f" {{{arg_attrs[1]}}}" if arg_attrs[1] else ""
    return parse(f"""
module @{name} {{
  func.func public @main(%a: {t}{a0}, %b: {t}{a1}) -> {t} {{
    %0 = stablehlo.{op} %a, %b : {t}
    return %0 : {t}
  }}
}}""")


def unary_module(op: str, shape=(3,), dtype="float32", name="jit_g", arg_attr="") -> ir.Module:
    t = tensor(shape, dtype)
    a0 = f" {{{arg_attr}}}" if arg_attr else ""
    return parse(f"""
module @{name} {{
  func.func public @main(%a: {t}{a0}) -> {t} {{
    %0 = stablehlo.{op} %a : {t}
    return %0 : {t}
  }}
}}""")
