"""Lowering a closed olympuspr to a StableHLO module.

`lower_olympuspr` builds ``module @jit_<name>`` holding one ``func.func public @main``
whose arguments are the olympuspr's inputs (after any hoisted constants) and whose
results are its outputs. Each equation is lowered by the rule registered for its
primitive in `olympus_lower.rules.lowering_rules`.

Constants (``closed.consts``) are embedded as ``stablehlo.constant`` ops, except that
a constant whose size in bytes is larger than `const_hoist_threshold`
(`DEFAULT_CONST_HOIST_THRESHOLD` = 1 MiB by default; ``None`` never hoists) becomes an
extra leading argument of ``@main``. `LoweredModule.hoisted_consts` holds those values,
in argument order, so the caller can pass them first.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir import (
    ClosedOlympuspr,
    DropVar,
    Literal,
    Olympuspr,
    ShapedArray,
    SourceInfo,
    shape_poly,
)
from olympus_ir.avals import MemorySpace, memory_kind_to_space, memory_space_to_kind

from .context import get_context
from .dynamic_shapes import dim_env, is_static
from .mlir_utils import attach_xla_metadata, aval_to_ir_type, ir_constant
from .rules import get_lowering_rule
from .rules.callbacks import thread_effect_tokens

__all__ = [
    "lower_olympuspr", "LoweredModule", "LoweringRuleContext", "LoweringError",
    "DEFAULT_CONST_HOIST_THRESHOLD", "portable_artifact_target", "ModuleContext",
]

#: Constants larger than this many bytes are passed as leading arguments (1 MiB).
DEFAULT_CONST_HOIST_THRESHOLD: int | None = 1 << 20

_RESULT_INFO = "olympus.result_info"


def portable_artifact_target() -> str:
    """The default StableHLO version of portable artifacts: the WEEK_4 compatibility
    requirement of the installed jaxlib (``1.15.0`` with jaxlib 0.10.2), as jax.export
    uses."""
    return hlo.get_version_from_compatibility_requirement(
        hlo.StablehloCompatibilityRequirement.WEEK_4
    )


class LoweringError(Exception):
    """The lowering produced an invalid module or a rule returned the wrong types."""


class ModuleContext:
    """The module a lowering builds (JAX's ``ModuleContext``, the fields rules read)."""

    __slots__ = ("_lowerer",)

    def __init__(self, lowerer: _Lowerer):
        self._lowerer = lowerer

    @property
    def module(self) -> ir.Module:
        return self._lowerer.module

    @property
    def context(self) -> ir.Context:
        return self._lowerer.module.context

    @property
    def platforms(self) -> tuple[str, ...]:
        return self._lowerer.platforms

    @property
    def keepalives(self) -> list:
        return self._lowerer.keepalive

    def add_keepalive(self, obj: Any) -> None:
        self._lowerer.keepalive.append(obj)

    def __repr__(self) -> str:
        return f"ModuleContext(platforms={self.platforms!r})"


class LoweringRuleContext:
    """What a lowering rule knows about the equation it lowers."""

    __slots__ = ("primitive", "avals_in", "avals_out", "source_info", "_lowerer")

    @property
    def module(self) -> ir.Module:
        """The module being built (a rule that adds functions to it, e.g. an inlined
        exported module, inserts them here)."""
        return self._lowerer.module

    @property
    def platforms(self) -> tuple[str, ...]:
        """The platforms this module is lowered for (``("cpu",)`` unless exporting)."""
        return self._lowerer.platforms

    @property
    def num_partitions(self) -> int:
        """The number of devices the module is partitioned over (1: not partitioned)."""
        return self._lowerer.num_partitions

    def keep_alive(self, obj: Any) -> None:
        """Keep `obj` alive as long as the lowered module (something the compiler calls
        back into by address, e.g. an ``InspectSharding`` callback)."""
        self._lowerer.keepalive.append(obj)

    @property
    def platform_index(self) -> ir.Value | None:
        """With several `platforms`: ``@main``'s leading i32 argument, the index of the
        platform the module runs on; None otherwise."""
        return self._lowerer.platform_index

    def mark_uses_dim_vars(self) -> None:
        """Record that the module calls shape-polymorphic code (an `Exported` lowered
        with symbolic shapes): its shapes must be refined before compiling, and an export
        of it uses global constants (JAX's ``shape_poly_state.uses_dim_vars``)."""
        self._lowerer.uses_dim_vars = True

    def __init__(self, lowerer: _Lowerer, primitive: Any, avals_in: list[ShapedArray],
                 avals_out: list[ShapedArray], source_info: SourceInfo | None):
        self._lowerer = lowerer
        self.primitive = primitive
        self.avals_in = avals_in
        self.avals_out = avals_out
        self.source_info = source_info

    @property
    def module_context(self) -> ModuleContext:
        """The module being built, as JAX's ``ctx.module_context`` (``module``,
        ``context``, ``platforms``, ``keepalives``)."""
        return ModuleContext(self._lowerer)

    def replace(self, **changes: Any) -> LoweringRuleContext:
        """A copy with some of `primitive`, `avals_in`, `avals_out` replaced (JAX's
        ``ctx.replace``, e.g. to call another rule on other types)."""
        unknown = set(changes) - {"primitive", "avals_in", "avals_out", "source_info"}
        if unknown:
            raise TypeError(f"LoweringRuleContext.replace: unknown fields {sorted(unknown)}")
        fields = dict(primitive=self.primitive, avals_in=self.avals_in,
                      avals_out=self.avals_out, source_info=self.source_info)
        fields.update(changes)
        return LoweringRuleContext(self._lowerer, **fields)

    def is_forward_compat(self) -> bool:
        """Whether the module must stay loadable by older runtimes (an export): False."""
        return False

    def __repr__(self) -> str:
        return (f"LoweringRuleContext(primitive={self.primitive}, "
                f"avals_in={tuple(self.avals_in)!r}, avals_out={list(self.avals_out)!r}, "
                f"platforms={self.platforms!r})")

    def lower_sub(self, closed: ClosedOlympuspr | Olympuspr,
                  operands: Sequence[ir.Value]) -> list[ir.Value]:
        """Lower a nested olympuspr at the current insertion point (e.g. inside a region
        block the rule created) with `operands` bound to its inputs; its consts are
        embedded as constants. Returns the values of its outputs."""
        if isinstance(closed, Olympuspr):
            closed = ClosedOlympuspr(closed, [])
        jpr = closed.olympuspr
        if len(operands) != len(jpr.invars):
            raise LoweringError(
                f"lower_sub: got {len(operands)} operands for an olympuspr with "
                f"{len(jpr.invars)} inputs"
            )
        consts = [ir_constant(np.asarray(c, v.aval.dtype))
                  for v, c in zip(jpr.constvars, closed.consts, strict=True)]
        return self._lowerer.lower_body(jpr, consts, list(operands))

    def define_function(self, name: str, closed: ClosedOlympuspr) -> str:
        """Add ``func.func private @name`` (the name uniquified) computing `closed` to the
        module; returns its symbol (e.g. a composite's decomposition)."""
        return self._lowerer.define_function(name, closed)

    def call_function(self, name: str, closed: ClosedOlympuspr,
                      operands: Sequence[ir.Value]) -> list[ir.Value]:
        """``func.call`` of a private ``func.func @name`` holding `closed` (a nested jit):
        one function per distinct (olympuspr, name), a name taken already getting the
        module's next ``_<n>`` suffix, as JAX names them. As in JAX, the platform index
        and the dimension variables of the module come first (see `define_function`)."""
        lw = self._lowerer
        key = (id(closed), name)
        entry = lw.functions.get(key)
        if entry is None:
            entry = lw.functions[key] = (lw.define_function(name, closed), closed)
        fn = entry[0]
        out_types = [aval_to_ir_type(a) for a in closed.out_avals]
        call = func.CallOp(out_types, ir.FlatSymbolRefAttr.get(fn),
                           lw.global_constant_values() + list(operands))
        return list(call.results)

    def next_shard_group(self) -> int:
        """A fresh ``sdy.sharding_group`` id of this module (``shard_alike``)."""
        self._lowerer.shard_groups += 1
        return self._lowerer.shard_groups - 1

    def next_channel(self) -> int:
        """A fresh channel handle id for a collective of this module."""
        self._lowerer.channels += 1
        return self._lowerer.channels

    def register_host_callback(self, fn: Any) -> int:
        """Add `fn` to the module's host callbacks; returns its index (the custom
        call's ``mhlo.backend_config = {index = k}``)."""
        self._lowerer.host_callbacks.append(fn)
        return len(self._lowerer.host_callbacks) - 1


def _eqn_location(eqn: Any) -> ir.Location:
    si = eqn.source_info
    scope = getattr(si, "name_stack", "")
    name = f"{scope}/{eqn.primitive.name}" if scope else eqn.primitive.name
    if si is not None and getattr(si, "file", None):
        # The column is known when tracing recorded it (`precise_source_info`).
        child = ir.Location.file(str(si.file), int(si.line or 0),
                                 int(getattr(si, "column", None) or 0))
        return ir.Location.name(name, childLoc=child)
    return ir.Location.name(name)


class _Lowerer:
    def __init__(self, name: str, platforms: tuple[str, ...] = ("cpu",)):
        self.name = name
        self.host_callbacks: list = []
        self.keepalive: list = []
        self.num_partitions = 1
        self.channels = 0
        self.shard_groups = 0
        self.module: ir.Module | None = None
        self.platforms = platforms
        self.platform_index: ir.Value | None = None
        #: the module's dimension variables (their values: `dynamic_shapes.dim_env`)
        self.dim_vars: tuple[str, ...] = ()
        self.uses_dim_vars = False
        #: (id of a closed olympuspr, name) -> (symbol name, the olympuspr, kept alive)
        self.functions: dict = {}
        self.symbols: set[str] = {"main"}
        self._suffix = 0

    def define_function(self, name: str, closed: ClosedOlympuspr) -> str:
        """Add ``func.func private @name`` (uniquified) computing `closed`; its symbol."""
        symbol = name
        # Symbols other rules put in the module (an inlined `call_exported`) count too.
        self.symbols.update(ir.StringAttr(op.attributes["sym_name"]).value
                            for op in self.module.body.operations
                            if "sym_name" in op.attributes)
        while symbol in self.symbols:
            symbol = f"{name}_{self._suffix}"
            self._suffix += 1
        self.symbols.add(symbol)
        jpr = closed.olympuspr
        names = self.global_constant_names()
        i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        in_types = [i32] * len(names) + [aval_to_ir_type(a) for a in closed.in_avals]
        out_types = [aval_to_ir_type(a) for a in closed.out_avals]
        with ir.InsertionPoint(self.module.body), ir.Location.unknown():
            fn = func.FuncOp(symbol, ir.FunctionType.get(in_types, out_types))
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
            if names:
                fn.arg_attrs = ir.ArrayAttr.get(
                    [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get(n)})
                     for n in names] + [ir.DictAttr.get({}) for _ in closed.in_avals])
            block = fn.add_entry_block()
            args = list(block.arguments)
            lead, args = args[:len(names)], args[len(names):]
            saved = self.platform_index
            if saved is not None:
                self.platform_index = lead.pop(0)
            dims = (dim_env(dict(zip(self.dim_vars, lead))) if self.dim_vars
                    else contextlib.nullcontext())
            try:
                with ir.InsertionPoint(block), dims:
                    consts = [ir_constant(np.asarray(c, v.aval.dtype))
                              for v, c in zip(jpr.constvars, closed.consts, strict=True)]
                    outs = self.lower_body(jpr, consts, args)
                    func.ReturnOp(outs)
            finally:
                self.platform_index = saved
        return symbol

    def global_constant_names(self) -> list[str]:
        """The leading arguments of every function of the module, as JAX lowers them:
        ``_platform_index`` (lowered for several platforms), then the dimension
        variables."""
        return (["_platform_index"] if self.platform_index is not None else []) + list(
            self.dim_vars)

    def global_constant_values(self) -> list[ir.Value]:
        """The values of `global_constant_names` where the lowering is now."""
        from .dynamic_shapes import current_dim_env

        env = current_dim_env() if self.dim_vars else {}
        return ([self.platform_index] if self.platform_index is not None else []) + [
            env[v] for v in self.dim_vars]

    def lower_body(self, jpr: Olympuspr, const_vals: Sequence[ir.Value],
                   arg_vals: Sequence[ir.Value]) -> list[ir.Value]:
        env: dict[Any, ir.Value] = {}
        for v, x in zip(jpr.constvars, const_vals, strict=True):
            env[v] = x
        for v, x in zip(jpr.invars, arg_vals, strict=True):
            env[v] = x

        def read(a: Any) -> ir.Value:
            if isinstance(a, Literal):
                return ir_constant(np.asarray(a.val, a.aval.dtype))
            try:
                return env[a]
            except KeyError:
                raise LoweringError(
                    f"olympuspr for {self.name!r} reads variable {a!r} before it is defined"
                ) from None

        for eqn in jpr.eqns:
            prim = eqn.primitive
            rule = get_lowering_rule(prim, self.platforms)
            with _eqn_location(eqn):
                ins = [read(a) for a in eqn.invars]
                rctx = LoweringRuleContext(
                    self, prim, [a.aval for a in eqn.invars],
                    [v.aval for v in eqn.outvars], eqn.source_info,
                )
                try:
                    outs = rule(rctx, *ins, **eqn.params)
                except (NotImplementedError, LoweringError):
                    raise
                except Exception as e:
                    if hasattr(e, "add_note"):  # Python >= 3.11
                        e.add_note(f"while lowering equation `{eqn!r}` of {self.name!r}")
                    raise
            if isinstance(outs, ir.Value):
                outs = [outs]
            outs = list(outs)
            if len(outs) != len(eqn.outvars):
                raise LoweringError(
                    f"lowering rule for '{prim.name}' returned {len(outs)} values for "
                    f"{len(eqn.outvars)} outputs"
                )
            si = eqn.source_info
            if si is not None and si.xla_metadata:
                for o in outs:
                    attach_xla_metadata(o, si.xla_metadata)
            for v, o in zip(eqn.outvars, outs, strict=True):
                expected = aval_to_ir_type(v.aval)
                if o.type != expected:
                    raise LoweringError(
                        f"lowering rule for '{prim.name}' produced {o.type} where the "
                        f"olympuspr expects {expected} ({v.aval.str_short()})"
                    )
                if not isinstance(v, DropVar):
                    env[v] = o
        return [read(v) for v in jpr.outvars]


_DONATION_HELP = ("See an explanation at "
                  "https://docs.jax.dev/en/latest/faq.html#buffer-donation.")


def _donation_mask(donated: Any, n: int) -> list[bool]:
    donated = tuple(donated)
    if donated and len(donated) == n and all(isinstance(d, (bool, np.bool_)) for d in donated):
        return [bool(d) for d in donated]
    mask = [False] * n
    for i in donated:
        i = int(i)
        if not 0 <= i < n:
            raise ValueError(f"donated argument index {i} out of range for {n} arguments")
        mask[i] = True
    return mask


def _type_key(aval: ShapedArray) -> tuple:
    return (aval.shape, aval.dtype)


_INVALID_NAME_CHARS = re.compile(r"[^\w.-]")


def transfer_memory_spaces(jpr: Olympuspr) -> bool:
    """Whether `jpr` (or a sub-olympuspr) moves a value to or from a memory space (a
    ``device_put`` to a `MemorySpace`, as offloaded checkpoint residuals are)."""
    from olympus_ir.stats import sub_olympusprs

    for e in jpr.eqns:
        if e.primitive.name == "device_put" and any(
                isinstance(d, MemorySpace) for d in e.params["devices"]):
            return True
        if any(transfer_memory_spaces(sub) for _, sub in sub_olympusprs(e.params)):
            return True
    return False


def memory_kinds(in_avals: Sequence[Any], out_avals: Sequence[Any],
                 jpr: Olympuspr) -> tuple[list[str | None], list[str | None]] | None:
    """The ``mhlo.memory_kind`` of each argument and result, or None when every value is in
    device memory and nothing moves between memory spaces (JAX then leaves them out): once
    memory spaces are in play every result names its kind and a host argument names its."""
    def host(a):
        return getattr(a, "memory_space", MemorySpace.Device) is MemorySpace.Host

    if not (any(map(host, in_avals)) or any(map(host, out_avals))
            or transfer_memory_spaces(jpr)):
        return None
    ins = [memory_space_to_kind(a.memory_space) if host(a) else None for a in in_avals]
    outs = [memory_space_to_kind(getattr(a, "memory_space", MemorySpace.Device))
            for a in out_avals]
    return ins, outs


def module_name(fun_name: str) -> str:
    """The StableHLO module's symbol for a jitted function: ``jit_<name>`` with characters
    outside ``[A-Za-z0-9_.-]`` replaced by ``_`` and trailing underscores dropped, as JAX
    names it (``<lambda>`` gives ``jit__lambda``)."""
    return _INVALID_NAME_CHARS.sub("_", f"jit_{fun_name}").rstrip("_")


class LoweredModule:
    """A lowered StableHLO module and what a caller needs to run it.

    * ``module``: the ``ir.Module``.
    * ``in_avals``: the avals of every ``@main`` argument, hoisted constants first;
      ``num_args == len(in_avals)``.
    * ``dim_vars``: with symbolic shapes, the dimension variables whose int32 values are
      the first ``len(dim_vars)`` arguments (see `olympus_lower.shape_refinement` to run).
    * ``hoisted_consts``: the values to pass for the next ``len(hoisted_consts)``
      arguments; ``hoisted_const_indices`` their positions in ``closed.consts``.
    * ``out_avals``: the avals of the results.
    * ``host_callbacks``: the Python functions the module's host-callback custom calls
      call, by index; pass them to the compiler (``host_callbacks=``).
    * ``uses_dim_vars``: the module has dimension variables or calls shape-polymorphic
      code; with static ``@main`` types it must be refined before compiling
      (`olympus_lower.shape_refinement.refine_static_module`).
    * ``keepalive``: objects the compiler calls back into while compiling the module.
    """

    def __init__(self, module: ir.Module, *, name: str, in_avals: list[ShapedArray],
                 out_avals: list[ShapedArray], hoisted_consts: tuple,
                 hoisted_const_indices: tuple[int, ...], donated: tuple[bool, ...],
                 host_callbacks: tuple = (), dim_vars: tuple[str, ...] = (),
                 uses_dim_vars: bool = False, keepalive: tuple = ()):
        self.module = module
        self.name = name
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.hoisted_consts = hoisted_consts
        self.hoisted_const_indices = hoisted_const_indices
        self.donated = donated
        self.host_callbacks = tuple(host_callbacks)
        self.dim_vars = tuple(dim_vars)
        self.uses_dim_vars = bool(uses_dim_vars or dim_vars)
        self.keepalive = keepalive

    @property
    def num_args(self) -> int:
        return len(self.in_avals)

    @property
    def num_hoisted(self) -> int:
        return len(self.dim_vars) + len(self.hoisted_consts)

    def as_text(self, debug_info: bool = False) -> str:
        """Pretty MLIR text (no trailing newline). With `debug_info`, op locations are
        printed: ``loc("<primitive>"("file":line:0))`` from each equation."""
        text = self.module.operation.get_asm(enable_debug_info=debug_info)
        return text.rstrip("\n")

    def as_hlo(self):
        """The module as XLA HLO (jaxlib's ``XlaComputation``: ``as_hlo_text()``,
        ``as_hlo_module()``...), converted by XLA's own StableHLO importer."""
        from jaxlib import _jax

        return _jax.mlir.mlir_module_to_xla_computation(
            self.module.operation.get_asm(binary=True, enable_debug_info=True),
            use_tuple_args=False,
            return_tuple=False)

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return f"LoweredModule(jit_{self.name}, num_args={self.num_args})"

    def to_bytecode(self) -> bytes:
        buf = io.BytesIO()
        self.module.operation.write_bytecode(file=buf)
        return buf.getvalue()

    def portable_artifact(self, target: str | None = None) -> bytes:
        """A StableHLO portable artifact (VHLO) for `target` (default:
        `portable_artifact_target()`, the WEEK_4 compatibility version). Serializes
        bytecode of the module; ``.module`` itself is left untouched."""
        if target is None:
            target = portable_artifact_target()
        return _jax.mlir.serialize_portable_artifact(self.to_bytecode(), target)


def lower_olympuspr(
    closed: ClosedOlympuspr | Olympuspr,
    *,
    name: str,
    arg_names: Sequence[str | None] | None = None,
    donated: Sequence[int] | Sequence[bool] = (),
    result_names: Sequence[str] | None = None,
    num_replicas: int = 1,
    num_partitions: int = 1,
    const_hoist_threshold: int | None = DEFAULT_CONST_HOIST_THRESHOLD,
    meshes: Sequence[str] = (),
    arg_shardings: Sequence[str | None] | None = None,
    result_shardings: Sequence[str | None] | None = None,
    platforms: Sequence[str] | None = None,
    result_memory_kinds: Sequence[str | None] | None = None,
    arg_layouts: Sequence[str | None] | None = None,
    result_layouts: Sequence[str | None] | None = None,
) -> LoweredModule:
    """Lower `closed` to ``module @jit_<name>`` with a public ``@main``.

    * `arg_names`: one name per olympuspr input, used as ``loc("name")`` of the argument.
    * `donated`: indices (or a boolean mask) of donated inputs. A donated input gets
      ``tf.aliasing_output = <i>`` if an output of identical type is still unaliased;
      else, with several partitions, ``jax.buffer_donor = true``, and on one device no
      mark and JAX's "Some donated buffers were not usable" warning.
    * `result_names`: one per output, attached as ``{olympus.result_info = "..."}``.
    * `const_hoist_threshold`: consts with more bytes than this become leading arguments
      (see `LoweredModule.hoisted_consts`); ``None`` embeds every constant.
    * `meshes`: Shardy mesh ops (``sdy.mesh @mesh = <["x"=4]>``), placed first in the
      module; `arg_shardings` / `result_shardings`: per olympuspr input / output, a
      ``#sdy.sharding<...>`` attribute (text) or None (left to the partitioner).
    * `platforms`: the platforms to lower for (default ``("cpu",)``). With more than one,
      ``@main`` takes a leading ``tensor<i32>`` platform index argument (marked
      ``{jax.global_constant = "_platform_index"}``, JAX's export calling convention),
      which rules read as `LoweringRuleContext.platform_index`; it is not in `in_avals`.
    * `result_memory_kinds`: per output, the memory kind (``"device"``,
      ``"pinned_host"``) a caller's output sharding asks for, or None. An output whose
      value is in another memory space goes through ``annotate_device_placement`` and
      its type (in `out_avals`) is in the asked-for space, as JAX lowers `out_shardings`
      with a memory kind.
    * `arg_layouts` / `result_layouts`: per olympuspr input / output, the
      ``mhlo.layout_mode`` XLA compiles it with (``"auto"``, ``"{0,1}"``), or None (default).
    """
    if isinstance(closed, Olympuspr):
        closed = ClosedOlympuspr(closed, [])
    closed = thread_effect_tokens(closed)  # orders host callbacks (rules/callbacks.py)
    jpr = closed.olympuspr
    n_in, n_out = len(jpr.invars), len(jpr.outvars)
    if arg_names is not None and len(arg_names) != n_in:
        raise ValueError(f"lower_olympuspr: got {len(arg_names)} arg_names for {n_in} inputs")
    if result_names is not None and len(result_names) != n_out:
        raise ValueError(
            f"lower_olympuspr: got {len(result_names)} result_names for {n_out} outputs"
        )
    donation = _donation_mask(donated, n_in)

    const_vals = [np.asarray(c, dtype=v.aval.dtype) for v, c in zip(jpr.constvars, closed.consts, strict=True)]
    hoisted_idx = tuple(
        i for i, c in enumerate(const_vals)
        if const_hoist_threshold is not None and c.nbytes > const_hoist_threshold
    )
    hoisted_set = set(hoisted_idx)
    # Symbolic shapes: the dimension variables' values come first, as int32 scalars (each
    # marked `jax.global_constant`, as JAX's lowering does, so shape refinement can
    # specialize the function to constant dimension values).
    dim_vars = symbolic_dim_vars(jpr.in_avals)
    n_hoisted = len(dim_vars) + len(hoisted_idx)
    in_avals = ([ShapedArray((), np.int32)] * len(dim_vars)
                + [jpr.constvars[i].aval for i in hoisted_idx] + list(jpr.in_avals))
    out_avals = [v.aval for v in jpr.outvars]
    placed = _placed_results(out_avals, result_memory_kinds)
    for i, kind in placed.items():
        out_avals[i] = out_avals[i].update(memory_space=memory_kind_to_space(kind))

    platforms = tuple(platforms) if platforms else ("cpu",)
    n_platform_args = 1 if len(platforms) > 1 else 0
    ctx = get_context()
    lowerer = _Lowerer(name, platforms)
    lowerer.dim_vars = dim_vars
    lowerer.num_partitions = num_partitions
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        lowerer.module = module
        i32 = ir.IntegerType.get_signless(32)
        mattrs = module.operation.attributes
        mattrs["sym_name"] = ir.StringAttr.get(module_name(name))
        mattrs["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, num_partitions)
        mattrs["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, num_replicas)

        in_types = [ir.RankedTensorType.get([], i32)] * n_platform_args + [
            aval_to_ir_type(a) for a in in_avals]
        out_types = [aval_to_ir_type(a) for a in out_avals]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("main", ir.FunctionType.get(in_types, out_types))
        fn.attributes["sym_visibility"] = ir.StringAttr.get("public")

        arg_attrs: list[dict[str, ir.Attribute]] = [{} for _ in in_avals]
        for k, name_ in enumerate(dim_vars):
            arg_attrs[k]["jax.global_constant"] = ir.StringAttr.get(name_)
        used_outputs: set[int] = set()
        unusable: list[str] = []
        for i, d in enumerate(donation):
            if not d:
                continue
            key = _type_key(jpr.invars[i].aval)
            for j, oa in enumerate(out_avals):
                if j not in used_outputs and _type_key(oa) == key:
                    used_outputs.add(j)
                    arg_attrs[n_hoisted + i]["tf.aliasing_output"] = ir.IntegerAttr.get(i32, j)
                    break
            else:
                if num_partitions > 1:  # the partitioner may still place it
                    arg_attrs[n_hoisted + i]["jax.buffer_donor"] = ir.BoolAttr.get(True)
                else:
                    unusable.append(str(jpr.invars[i].aval))
        if unusable:
            warnings.warn("Some donated buffers were not usable: "
                          f"{', '.join(unusable)}.\n{_DONATION_HELP}", stacklevel=2)
        if arg_shardings is not None:
            if len(arg_shardings) != n_in:
                raise ValueError(
                    f"lower_olympuspr: got {len(arg_shardings)} arg_shardings for {n_in} inputs")
            for i, sh in enumerate(arg_shardings):
                if sh is not None:
                    arg_attrs[n_hoisted + i]["sdy.sharding"] = ir.Attribute.parse(sh)
        for i, lay in enumerate(arg_layouts or ()):
            if lay is not None:
                arg_attrs[n_hoisted + i]["mhlo.layout_mode"] = ir.StringAttr.get(lay)
        kinds = memory_kinds(in_avals, out_avals, jpr)
        if kinds is not None:
            for d, k in zip(arg_attrs, kinds[0], strict=True):
                if k is not None:
                    d["mhlo.memory_kind"] = ir.StringAttr.get(k)
        if n_platform_args:
            arg_attrs.insert(0, {"jax.global_constant": ir.StringAttr.get("_platform_index")})
        if any(arg_attrs):
            fn.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in arg_attrs])
        res_attrs: list[dict[str, ir.Attribute]] = [{} for _ in out_avals]
        if result_names is not None:
            for d, r in zip(res_attrs, result_names, strict=True):
                d[_RESULT_INFO] = ir.StringAttr.get(str(r))
        if result_shardings is not None:
            if len(result_shardings) != n_out:
                raise ValueError(f"lower_olympuspr: got {len(result_shardings)} "
                                 f"result_shardings for {n_out} outputs")
            for d, sh in zip(res_attrs, result_shardings, strict=True):
                if sh is not None:
                    d["sdy.sharding"] = ir.Attribute.parse(sh)
        for d, lay in zip(res_attrs, result_layouts or (), strict=False):
            if lay is not None:
                d["mhlo.layout_mode"] = ir.StringAttr.get(lay)
        if kinds is not None:
            for d, k in zip(res_attrs, kinds[1], strict=True):
                d["mhlo.memory_kind"] = ir.StringAttr.get(k)
        if any(res_attrs):
            fn.result_attrs = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in res_attrs])
        if meshes:
            ip = ir.InsertionPoint(module.body.operations[0])
            for text in meshes:
                ip.insert(ir.Operation.parse(text))

        if arg_names is not None:
            arg_locs = [ir.Location.unknown()] * (n_platform_args + n_hoisted) + [
                ir.Location.name(str(a)) if a is not None else ir.Location.unknown()
                for a in arg_names
            ]
            entry = fn.add_entry_block(arg_locs)
        else:
            entry = fn.add_entry_block()

        with ir.InsertionPoint(entry):
            args = list(entry.arguments)
            if n_platform_args:
                lowerer.platform_index = args.pop(0)
            consts: list[ir.Value] = []
            k = len(dim_vars)
            for i, c in enumerate(const_vals):
                if i in hoisted_set:
                    consts.append(args[k])
                    k += 1
                else:
                    consts.append(ir_constant(c))
            if dim_vars:
                with dim_env(dict(zip(dim_vars, args[:len(dim_vars)]))):
                    outs = lowerer.lower_body(jpr, consts, args[n_hoisted:])
            else:
                outs = lowerer.lower_body(jpr, consts, args[n_hoisted:])
            for i, kind in placed.items():
                outs[i] = annotate_device_placement(outs[i], kind)
            func.ReturnOp(outs)

    try:
        module.operation.verify()
    except ir.MLIRError as e:
        msgs = "\n".join(
            f"  {d.message} at {d.location}" for d in getattr(e, "error_diagnostics", [])
        ) or f"  {e}"
        raise LoweringError(
            f"The StableHLO module lowered from the olympuspr {name!r} failed to "
            f"verify:\n{msgs}\nolympuspr:\n{jpr}"
        ) from e

    return LoweredModule(
        module, name=name, in_avals=in_avals, out_avals=out_avals,
        hoisted_consts=tuple(const_vals[i] for i in hoisted_idx),
        hoisted_const_indices=hoisted_idx, donated=tuple(donation),
        host_callbacks=tuple(lowerer.host_callbacks), dim_vars=dim_vars,
        uses_dim_vars=lowerer.uses_dim_vars,
        keepalive=tuple(lowerer.keepalive),
    )


def _placed_results(out_avals: Sequence[Any],
                    kinds: Sequence[str | None] | None) -> dict[int, str]:
    """Output index -> memory kind, for the outputs a caller places in another memory
    space than their value's."""
    if kinds is None:
        return {}
    if len(kinds) != len(out_avals):
        raise ValueError(f"lower_olympuspr: got {len(kinds)} result_memory_kinds for "
                         f"{len(out_avals)} outputs")
    return {i: k for i, (k, a) in enumerate(zip(kinds, out_avals)) if k is not None
            and memory_kind_to_space(k) is not getattr(a, "memory_space", MemorySpace.Device)}


def annotate_device_placement(value: ir.Value, kind: str) -> ir.Value:
    """`value` marked for XLA as placed in memory `kind` (JAX's custom call)."""
    op = hlo.CustomCallOp([value.type], [value], "annotate_device_placement",
                          has_side_effect=True, backend_config=ir.StringAttr.get(""))
    op.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
        {"_xla_buffer_placement": ir.StringAttr.get(kind)})
    return op.result


def symbolic_dim_vars(avals: Sequence[ShapedArray]) -> tuple[str, ...]:
    """The dimension variables of the avals' symbolic shapes, sorted (empty if static)."""
    if all(is_static(a.shape) for a in avals):
        return ()
    names: set[str] = set()
    for a in avals:
        for d in a.shape:
            names |= shape_poly.dim_vars(d)
    return tuple(sorted(names))
