"""Compiling StableHLO modules to executables, with an in-memory cache.

`compile` takes a ``jaxlib.mlir.ir.Module`` (the only form ``compile_and_load`` accepts
together with host callbacks, JAXLIB.md §3), fingerprints its bytecode with sha256, and
compiles it once per (fingerprint, devices, partitions, donation, options, callbacks),
even when several threads ask at the same time. `Executable.execute` validates its
arguments in Python *before* calling into C++: jaxlib silently reinterprets a
same-size argument of the wrong dtype, and crashes on some sharding mismatches
(JAXLIB.md §0).
"""

from __future__ import annotations

import hashlib
import io
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jaxlib.xla_client as xc
import numpy as np
from jaxlib import _jax

from olympus_ir import ShapedArray, dtypes
from olympus_ir.avals import AbstractToken

from . import backend, persistent_cache, serialized
from ._once import OnceMap
from .sharding import (
    GSPMDSharding,
    _same_layout,
    named_from_hlo,
    sharding_in_memory,
)


class _LazyMlirIr:
    """Stands in for ``jaxlib.mlir.ir`` until first use: importing the MLIR bindings costs
    ~20 ms, and a process that never compiles (or hasn't yet) should not pay it."""

    def __getattr__(self, name: str) -> Any:
        from jaxlib.mlir import ir as real

        globals()["ir"] = real
        return getattr(real, name)


ir: Any = _LazyMlirIr()

__all__ = ["compile", "Executable", "compile_count", "clear_cache", "XlaRuntimeError",
           "fingerprint", "check_argument_types"]

#: The exception jaxlib raises for runtime and compile errors (``JaxRuntimeError``).
XlaRuntimeError = _jax.JaxRuntimeError

ArrayImpl = _jax.ArrayImpl
_array_result_handler = _jax.array_result_handler

_MLIR_ELEMENT_TYPES: dict[np.dtype, str] = {
    dtypes.bool_: "i1",
    dtypes.int8: "i8", dtypes.int16: "i16", dtypes.int32: "i32", dtypes.int64: "i64",
    dtypes.uint8: "ui8", dtypes.uint16: "ui16", dtypes.uint32: "ui32", dtypes.uint64: "ui64",
    dtypes.float16: "f16", dtypes.bfloat16: "bf16", dtypes.float32: "f32",
    dtypes.float64: "f64", dtypes.complex64: "complex<f32>", dtypes.complex128: "complex<f64>",
    **{dt: name for dt, name in dtypes.NARROW_MLIR_NAMES.items() if dt != dtypes.int1},
}
_DTYPE_OF_ELEMENT_TYPE = {v: k for k, v in _MLIR_ELEMENT_TYPES.items()}
_MLIR_ELEMENT_TYPES[dtypes.int1] = "i1"  # bool's type: a module's i1 reads back as bool

_DONATION_ATTRS = ("tf.aliasing_output", "jax.buffer_donor")

#: How many executables are kept after their last user (a jitted function's cache entry,
#: the eager lane) let go of them: a function made afresh with the same program (a new
#: lambda each call) finds its executable here instead of compiling again.
KEEP_RECENT = 64


class _Loaded:
    """A compiled XLA executable, the host callbacks it calls (kept alive with it), and its
    persistent cache key."""

    __slots__ = ("loaded", "callbacks", "cache_key", "__weakref__")

    def __init__(self, loaded: Any, callbacks: tuple, cache_key: str | None = None):
        self.loaded = loaded
        self.callbacks = callbacks
        self.cache_key = cache_key


# Both caches hold their values weakly: an executable lives while an `Executable` (held by
# a jitted function's signature cache or the eager lane) uses it, plus the `KEEP_RECENT`
# most recent ones, so compiling programs without end keeps memory bounded.
_loaded_cache = OnceMap(weak=True)  # compile key -> _Loaded
_executables = OnceMap(weak=True, keep=KEEP_RECENT)  # (compile key, avals, committed) -> Executable
_count_lock = threading.Lock()
_compile_count = 0


def compile_count() -> int:
    """How many XLA compilations this process has run through `compile`."""
    return _compile_count


def clear_cache() -> None:
    """Forget every cached executable (the next `compile` of a module compiles again)."""
    _executables.clear()
    _loaded_cache.clear()


# ----------------------------------------------------------------- module inspection

def fingerprint(module: ir.Module) -> str:
    """sha256 of the module's MLIR bytecode (hex). A module that calls jaxlib's LAPACK
    kernels (``lapack_*``, and the perturbed tridiagonal solve registered with them) gets
    them registered here, on first need (importing them costs ~1 s)."""
    bc = _bytecode(module)
    if b"lapack_" in bc or b"tridiagonal_solve_perturbed_ffi" in bc:
        from .custom_calls import register_lapack_targets

        register_lapack_targets()
    return hashlib.sha256(bc).hexdigest()


def _bytecode(module: ir.Module) -> bytes:
    buf = io.BytesIO()
    module.operation.write_bytecode(file=buf)
    return buf.getvalue()


def _main_function(module: ir.Module) -> Any:
    for op in module.body.operations:
        if op.operation.name == "func.func" and "sym_name" in op.attributes and (
            ir.StringAttr(op.attributes["sym_name"]).value == "main"
        ):
            return op
    raise ValueError("compile: the module has no `main` function")


def _tensor_spec(t: Any) -> tuple[tuple[int, ...], np.dtype | None] | None:
    """(shape, dtype) of a static tensor type, or None for tokens/dynamic shapes."""
    try:
        rt = ir.RankedTensorType(t)
    except (ValueError, TypeError):
        return None
    if not rt.has_static_shape:
        return None
    return tuple(rt.shape), _DTYPE_OF_ELEMENT_TYPE.get(str(rt.element_type))


def _signature(main: Any) -> tuple[list, list]:
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    return [_tensor_spec(t) for t in ftype.inputs], [_tensor_spec(t) for t in ftype.results]


def _avals_from(specs: list, what: str) -> list[ShapedArray]:
    out = []
    for i, spec in enumerate(specs):
        if spec is None or spec[1] is None:
            raise ValueError(
                f"compile: cannot infer {what}[{i}] from the module's main signature; "
                f"pass {what} explicitly"
            )
        out.append(ShapedArray(spec[0], spec[1]))
    return out


#: How a token (``!stablehlo.token``) crosses the runtime boundary: an empty bool buffer,
#: as JAX passes tokens to and from PJRT (``core.get_token_aval``).
TOKEN_BUFFER_AVAL = ShapedArray((0,), np.bool_)


def _to_aval(a: Any) -> ShapedArray:
    if type(a) is ShapedArray:
        return a
    if type(a) is AbstractToken:
        return TOKEN_BUFFER_AVAL
    return ShapedArray(a.shape, a.dtype, getattr(a, "weak_type", False))


def _check_avals(avals: list, specs: list, what: str) -> None:
    if len(avals) != len(specs):
        raise ValueError(
            f"compile: {len(avals)} {what} were given but the module's main function has "
            f"{len(specs)} {'arguments' if what == 'in_avals' else 'results'}"
        )
    for i, (aval, spec) in enumerate(zip(avals, specs, strict=True)):
        if spec is None:
            continue
        shape, dt = spec
        if tuple(aval.shape) != shape or (dt is not None and aval.dtype != dt):
            mlir = f"tensor<{'x'.join(map(str, shape)) + 'x' if shape else ''}" + (
                f"{_MLIR_ELEMENT_TYPES.get(dt, '?')}>"
            )
            raise ValueError(
                f"compile: {what}[{i}] is {aval.str_short()} but the module's main function "
                f"has type {mlir} there"
            )


def _donated_in_module(main: Any, nargs: int) -> set[int]:
    if "arg_attrs" not in main.attributes:
        return set()
    attrs = ir.ArrayAttr(main.attributes["arg_attrs"])
    return {
        i for i in range(min(nargs, len(attrs)))
        if any(name in ir.DictAttr(attrs[i]) for name in _DONATION_ATTRS)
    }


def _with_buffer_donors(module: ir.Module, donate: Sequence[int], nargs: int) -> ir.Module:
    """A copy of `module` whose `donate` arguments carry ``jax.buffer_donor = true``."""
    with module.context, ir.Location.unknown():
        clone = ir.Module.parse(_bytecode(module))
        main = _main_function(clone)
        old = (
            ir.ArrayAttr(main.attributes["arg_attrs"])
            if "arg_attrs" in main.attributes else None
        )
        new = []
        for i in range(nargs):
            entries = {}
            if old is not None and i < len(old):
                entries = {na.name: na.attr for na in ir.DictAttr(old[i])}
            if i in donate:
                entries["jax.buffer_donor"] = ir.BoolAttr.get(True)
            new.append(ir.DictAttr.get(entries))
        main.attributes["arg_attrs"] = ir.ArrayAttr.get(new)
    return clone


# ----------------------------------------------------------------- compile

def _compile_options(device_ids: tuple[int, ...], num_partitions: int,
                     options: tuple[tuple[str, Any], ...], shardy: bool,
                     propagate_to_outputs: list[bool],
                     propagate_to_params: list[bool] | None = None) -> Any:
    opts = xc.CompileOptions()
    opts.num_replicas = 1
    opts.num_partitions = num_partitions
    opts.device_assignment = xc.DeviceAssignment.create(
        np.array([list(device_ids)], dtype=np.int32)
    )
    build = opts.executable_build_options
    if num_partitions > 1:
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = shardy
        build.allow_spmd_sharding_propagation_to_output = propagate_to_outputs
    elif propagate_to_params is not None:
        # One device: nothing is partitioned, but JAX asks the same of XLA for the
        # arguments and results it left unspecified, and the compiled module's header
        # shows it (`allow_spmd_sharding_propagation_to_parameters={true}`).
        if any(propagate_to_params):
            build.allow_spmd_sharding_propagation_to_parameters = propagate_to_params
        if any(propagate_to_outputs):
            build.allow_spmd_sharding_propagation_to_output = propagate_to_outputs
    if options:
        opts.env_option_overrides = list(options)
    return opts


def _uses_shardy(module: ir.Module) -> bool:
    return any(op.operation.name == "sdy.mesh" for op in module.body.operations)


def _unsharded_args(main: Any) -> list[bool]:
    """Per argument of `main`: True if it carries no sharding attribute."""
    nargs = len(main.arguments)
    if "arg_attrs" not in main.attributes:
        return [True] * nargs
    attrs = ir.ArrayAttr(main.attributes["arg_attrs"])
    return [i >= len(attrs) or not any(k in ir.DictAttr(attrs[i])
                                       for k in ("sdy.sharding", "mhlo.sharding"))
            for i in range(nargs)]


def _unsharded_results(main: Any, nresults: int) -> list[bool]:
    """Per result: True if it carries no sharding attribute (XLA may choose one)."""
    if "res_attrs" not in main.attributes:
        return [True] * nresults
    attrs = ir.ArrayAttr(main.attributes["res_attrs"])
    out = []
    for i in range(nresults):
        d = ir.DictAttr(attrs[i]) if i < len(attrs) else None
        out.append(d is None or not ("sdy.sharding" in d or "mhlo.sharding" in d))
    return out


def _normalize_options(options: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    if not options:
        return ()
    out = []
    for k, v in sorted(options.items()):
        if not isinstance(k, str) or not isinstance(v, (str, bool, int, float)):
            raise TypeError(
                f"compile: options must map str to str/bool/int/float, got {k!r}: {v!r}"
            )
        out.append((k, v))
    return tuple(out)


def compile(
    module: ir.Module | str,
    *,
    devices: Sequence[Any] | None = None,
    num_partitions: int = 1,
    donated_args: Sequence[int] = (),
    out_avals: Sequence[Any] | None = None,
    in_avals: Sequence[Any] | None = None,
    options: Mapping[str, Any] | None = None,
    host_callbacks: Sequence[Callable] = (),
    committed: bool = True,
    mesh: Any = None,
    out_shardings: Sequence[Any] | None = None,
) -> Executable:
    """Compile `module`'s ``main`` for `devices` (default: the default device).

    `in_avals` / `out_avals` are olympus_ir ``ShapedArray`` s (or anything with shape,
    dtype, weak_type). They are checked against the main function's signature; when
    omitted they are read from it (with ``weak_type=False``). `out_avals` become the
    outputs' ``aval`` (so weak types survive). `donated_args` are argument indices whose
    buffers the executable may reuse; arguments that carry no ``tf.aliasing_output`` /
    ``jax.buffer_donor`` attribute get ``jax.buffer_donor = true`` (on a copy of the
    module). `options` are XLA debug options (``{"xla_cpu_enable_fast_math": False}``).
    `host_callbacks` are passed to ``compile_and_load`` (index k is the module's
    ``mhlo.backend_config = {index = k}``). Cached: compiling the same module again
    returns the same `Executable`.

    With several partitions, `mesh` (a `Mesh` over `devices`, in their order) makes the
    executable's argument and result shardings `NamedSharding` s on it wherever the
    compiled layout has one; `out_shardings` (a sharding or None per result) are the
    result shardings as the caller spelled them, used where the compiled layout is theirs
    (``P('x', None)`` stays that, not the shortest equivalent ``P('x')``).

    `module` may also be MLIR text, compiled as it is (no MLIR context is built): then
    `in_avals` and `out_avals` are required, nothing is donated, no host callbacks are
    passed, and every result must carry its sharding (XLA chooses none).
    """
    if isinstance(module, str):
        return _compile_text(module, devices, num_partitions, in_avals, out_avals, options,
                             committed)
    if not isinstance(module, ir.Module):
        raise TypeError(
            f"compile: expected a jaxlib.mlir.ir.Module or MLIR text, got {type(module).__name__}")
    devices = _check_devices(devices, num_partitions)

    main = _main_function(module)
    in_specs, out_specs = _signature(main)
    nargs = len(in_specs)
    in_avals = _avals_from(in_specs, "in_avals") if in_avals is None else [
        _to_aval(a) for a in in_avals]
    out_avals = _avals_from(out_specs, "out_avals") if out_avals is None else [
        _to_aval(a) for a in out_avals]
    _check_avals(in_avals, in_specs, "in_avals")
    _check_avals(out_avals, out_specs, "out_avals")

    donate = tuple(sorted({int(i) for i in donated_args}))
    for i in donate:
        if not 0 <= i < nargs:
            raise ValueError(f"compile: donated_args has {i}, but there are {nargs} arguments")
    already = _donated_in_module(main, nargs)
    # Everything read from `main` is read now: `main` belongs to the caller's module,
    # which may be replaced by a copy below (and an op outliving its module crashes).
    propagate_to_outputs = _unsharded_results(main, len(out_specs))
    propagate_to_params = _unsharded_args(main)
    shardy = _uses_shardy(module)
    name = _module_name(module)
    del main
    original = module  # noqa: F841  (kept alive until compile returns)
    if set(donate) - already:
        module = _with_buffer_donors(module, set(donate) - already, nargs)
    donated = tuple(sorted(already | set(donate)))

    opts = _normalize_options(options)
    callbacks = tuple(host_callbacks)
    device_ids = tuple(d.id for d in devices)
    key = (fingerprint(module), device_ids, num_partitions, donated, opts,
           tuple(id(cb) for cb in callbacks))

    def build_loaded() -> _Loaded:
        compile_options = _compile_options(
            device_ids, num_partitions, opts, shardy, propagate_to_outputs,
            propagate_to_params)
        settings = ["module", device_ids, num_partitions, donated, opts, shardy,
                    propagate_to_outputs, len(callbacks)]
        def compile_fn():
            _refuse_float6(module.operation.get_asm(large_elements_limit=1))
            return backend.get_client().compile_and_load(
                module, executable_devices=_jax.DeviceList(devices),
                compile_options=compile_options, host_callbacks=list(callbacks))

        return _load_or_compile(
            compile_fn,
            key[0], settings, devices, compile_options, callbacks, name)

    spelled = None if out_shardings is None else tuple(out_shardings)
    exe_key = (key, tuple(in_avals), tuple(out_avals), bool(committed), mesh, spelled)
    return _executables.get_or_create(
        exe_key,
        lambda: Executable(_loaded_cache.get_or_create(key, build_loaded), in_avals,
                           out_avals, devices, key[0], donated, num_partitions,
                           bool(committed), name, mesh, spelled),
    )


def _check_devices(devices: Sequence[Any] | None, num_partitions: Any) -> tuple:
    """The devices a program runs on: one per partition, distinct (default: the first)."""
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int) or (
        num_partitions < 1
    ):
        raise ValueError(f"compile: num_partitions must be a positive int, got {num_partitions!r}")
    if devices is None:
        client_devices = backend.devices()
        if num_partitions > len(client_devices):
            raise ValueError(
                f"compile: num_partitions={num_partitions} but there are only "
                f"{len(client_devices)} devices (set olympus_num_cpu_devices)"
            )
        devices = [backend.default_device()] if num_partitions == 1 else \
            client_devices[:num_partitions]
    devices = tuple(devices)
    if len(devices) != num_partitions:
        raise ValueError(
            f"compile: {len(devices)} devices given for num_partitions={num_partitions}; "
            "pass one device per partition"
        )
    if len(set(devices)) != len(devices):
        raise ValueError(f"compile: devices must be distinct, got {list(devices)}")
    return devices


def _compile_text(text: str, devices, num_partitions, in_avals, out_avals, options,
                  committed) -> Executable:
    """`compile` of MLIR text: through jaxlib's text overload, cached by its sha256."""
    if in_avals is None or out_avals is None:
        raise ValueError("compile: in_avals and out_avals are required for MLIR text")
    devices = _check_devices(devices, num_partitions)
    in_avals = [_to_aval(a) for a in in_avals]
    out_avals = [_to_aval(a) for a in out_avals]
    opts = _normalize_options(options)
    device_ids = tuple(d.id for d in devices)
    key = (hashlib.sha256(text.encode()).hexdigest(), device_ids, num_partitions, (), opts, ())

    def build_loaded() -> _Loaded:
        shardy = "sdy.mesh" in text
        propagate = [False] * len(out_avals)
        compile_options = _compile_options(device_ids, num_partitions, opts, shardy, propagate)
        settings = ["text", device_ids, num_partitions, (), opts, shardy, propagate, 0]
        def compile_fn():
            _refuse_float6(text)
            return backend.get_client().compile_and_load(
                text, _jax.DeviceList(devices), compile_options)

        return _load_or_compile(
            compile_fn,
            key[0], settings, devices, compile_options, (), "main")

    exe_key = (key, tuple(in_avals), tuple(out_avals), bool(committed))
    return _executables.get_or_create(
        exe_key,
        lambda: Executable(_loaded_cache.get_or_create(key, build_loaded), in_avals,
                           out_avals, devices, key[0], (), num_partitions, bool(committed),
                           "main"),
    )


#: XLA's CPU client has no float6 types (primitive types 36 and 35): a program holding a
#: float6 constant aborts the process in XLA, any other fails with this error. Both are
#: refused here, before XLA sees them, with the error JAX 0.10.2 gets from XLA.
_FLOAT6_TYPES = (("f6E2M3FN", 36, "F6E2M3FN"), ("f6E3M2FN", 35, "F6E3M2FN"))


def _refuse_float6(text: str) -> None:
    for mlir, number, name in _FLOAT6_TYPES:
        if mlir in text:
            raise XlaRuntimeError(f"INVALID_ARGUMENT: Invalid XLA PrimitiveType: {number} ({name})")


def _load_or_compile(compile_fn: Callable[[], Any], fingerprint: str, settings: list,
                     devices: tuple, compile_options: Any, callbacks: tuple,
                     name: str) -> _Loaded:
    """Run `compile_fn` (a jaxlib compile), unless the persistent cache has the executable:
    `settings` is everything `compile_options` was built from, for the cache key. The
    host callbacks are passed again when an executable is loaded (JAXLIB.md §7)."""
    global _compile_count
    env = serialized.environment(devices)
    key = persistent_cache.cache_key(fingerprint, settings, env)
    if persistent_cache.is_enabled():
        blob = persistent_cache.load(key, env, name)
        if blob is not None:
            try:
                loaded = backend.get_client().deserialize_executable(
                    blob, _jax.DeviceList(devices), compile_options,
                    host_callbacks=list(callbacks))
                persistent_cache.record_hit()
                return _Loaded(loaded, callbacks, key)
            except XlaRuntimeError as e:  # checked bytes jaxlib still refuses: a miss
                persistent_cache.reject(name, e)
    start = time.perf_counter()
    loaded = compile_fn()
    seconds = time.perf_counter() - start
    with _count_lock:
        _compile_count += 1
    if persistent_cache.is_enabled():
        persistent_cache.store(key, env, loaded.serialize(), seconds, name)
    return _Loaded(loaded, callbacks, key)  # keeps the callbacks (and so their ids) alive


def _module_name(module: ir.Module) -> str:
    attrs = module.operation.attributes
    if "sym_name" in attrs:
        return ir.StringAttr(attrs["sym_name"]).value
    return "main"


# ----------------------------------------------------------------- executables

def _layout_sharding(devices: tuple, op: Any, ndim: int, mesh: Any) -> Any:
    """The sharding object for a compiled argument/result layout: a `NamedSharding` on
    `mesh` when one lays the array out so, else a `GSPMDSharding`."""
    hlo = xc.HloSharding.from_proto(op)
    if mesh is not None and tuple(mesh._flat_devices_tuple) == tuple(devices):
        named = named_from_hlo(mesh, hlo, ndim)
        if named is not None:
            return named
    return GSPMDSharding(devices, hlo)


class Executable:
    """A compiled program with prebuilt output handlers and argument checks."""

    __slots__ = (
        "_holder", "loaded", "in_avals", "out_avals", "out_handlers", "devices", "fingerprint",
        "donated_args", "num_partitions", "committed", "name", "in_shardings",
        "out_shardings", "_in_specs", "_execute_sharded", "_donated_set", "cache_key",
        "__weakref__",
    )

    def __init__(self, loaded: Any, in_avals: Sequence[ShapedArray],
                 out_avals: Sequence[ShapedArray], devices: Sequence[Any], fingerprint: str,
                 donated_args: Sequence[int], num_partitions: int, committed: bool,
                 name: str, mesh: Any = None, out_shardings: Sequence[Any] | None = None):
        if isinstance(loaded, _Loaded):  # keep the shared holder (and its callbacks) alive
            self._holder, loaded = loaded, loaded.loaded
            self.cache_key = self._holder.cache_key
        else:
            self._holder = None
            self.cache_key = None
        self.loaded = loaded
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self.devices = tuple(devices)
        self.fingerprint = fingerprint
        self.donated_args = tuple(donated_args)
        self.num_partitions = num_partitions
        self.committed = committed
        self.name = name
        if num_partitions == 1:
            dev = self.devices[0]
            self.in_shardings = tuple(sharding_in_memory(dev, a) for a in self.in_avals)
            self.out_shardings = tuple(sharding_in_memory(dev, a) for a in self.out_avals)
        else:
            # (A program with no parameters or no results still reports one sharding.)
            self.in_shardings = tuple(
                _layout_sharding(self.devices, op, len(a.shape), mesh)
                for op, a in zip(loaded.get_parameter_shardings() if self.in_avals else (),
                                 self.in_avals, strict=True))
            self.out_shardings = tuple(
                _layout_sharding(self.devices, op, len(a.shape), mesh)
                for op, a in zip(loaded.get_output_shardings() if self.out_avals else (),
                                 self.out_avals, strict=True))
            if out_shardings is not None:
                self.out_shardings = tuple(
                    want if want is not None and type(want) is type(got)
                    and want.is_equivalent_to(got, len(a.shape)) else got
                    for want, got, a in zip(out_shardings, self.out_shardings,
                                            self.out_avals, strict=True))
        self.out_handlers = [
            _array_result_handler(aval, sharding, committed, _skip_checks=True)
            for aval, sharding in zip(self.out_avals, self.out_shardings, strict=True)
        ]
        self._in_specs = tuple((a.shape, a.dtype, s) for a, s in zip(
            self.in_avals, self.in_shardings, strict=True))
        self._execute_sharded = loaded.execute_sharded
        self._donated_set = frozenset(self.donated_args)

    # --- running ----------------------------------------------------------------

    def execute(self, args: Sequence[Any]) -> list[Any]:
        """Run on `args` (device Arrays matching `in_avals`); return the output Arrays."""
        check_argument_types([f"args[{i}]" for i in range(len(args))], self.in_avals, args)
        return self.run(args)

    __call__ = execute

    def run(self, args: Sequence[Any]) -> list[Any]:
        """`execute` for a caller that has checked the argument types itself (the jit layer,
        with its argument names): what would crash or silently misbehave inside jaxlib
        (an array on other devices or with another sharding, a deleted one, a donated one
        passed twice) is still refused here, before C++."""
        specs = self._in_specs
        for i, (a, spec) in enumerate(zip(args, specs, strict=True)):
            if a._sharding is not spec[2] or a.is_deleted():
                self._bad_arg(i, a)
        if self._donated_set:
            self._check_donation(args)
        return self._execute_sharded(args).consume_with_handlers(self.out_handlers)

    def _bad_arg(self, i: int, a: Any) -> None:
        where = f"Executable {self.name}: argument {i}"
        aval = a.aval
        if a.is_deleted():
            raise RuntimeError(
                f"{where} ({aval.str_short()}) has been deleted: it was deleted with "
                ".delete() or donated to an earlier computation, and cannot be used any more."
            )
        expected = self.in_shardings[i]
        actual = a._sharding
        actual_devices = list(actual._internal_device_list)
        wanted_devices = list(expected._internal_device_list)
        if actual_devices != wanted_devices or actual.memory_kind != expected.memory_kind:
            raise ValueError(
                f"{where} is on {_devices_str(actual_devices)}, but the executable runs on "
                f"{_devices_str(wanted_devices)}; move it with device_put first"
            )
        ndim = len(aval.shape)
        if len(wanted_devices) > 1 and not _same_layout(
            actual._to_xla_hlo_sharding(ndim), expected._to_xla_hlo_sharding(ndim)
        ):
            raise ValueError(
                f"{where} ({aval.str_short()}) has sharding {actual!r}, but the executable "
                f"expects {expected!r}; reshard it with device_put first"
            )
        # An equivalent sharding object that is not the interned one: fine to pass.
        return None

    def _check_donation(self, args: Sequence[Any]) -> None:
        ids: dict[int, int] = {}
        for i, a in enumerate(args):
            j = ids.setdefault(id(a), i)
            if j != i and (i in self._donated_set or j in self._donated_set):
                raise ValueError(
                    f"Executable {self.name}: the same Array is passed as arguments {j} and "
                    f"{i}, and one of them is donated; pass a copy instead"
                )

    # --- introspection ------------------------------------------------------------

    def cost_analysis(self) -> dict[str, float]:
        return dict(self.loaded.cost_analysis())

    def memory_analysis(self) -> Any:
        """The ``CompiledMemoryStats`` (argument/output/temp/alias sizes in bytes)."""
        return self.loaded.get_compiled_memory_stats()

    def as_text(self) -> str:
        """The optimized HLO, as XLA will run it."""
        return self.loaded.hlo_modules()[0].to_string()

    def hlo_modules(self) -> list:
        """The optimized HLO modules (``Compiled.runtime_executable().hlo_modules()``, as
        on JAX's runtime executable)."""
        return self.loaded.hlo_modules()

    def __repr__(self) -> str:
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        return f"Executable({self.name}: ({ins}) -> ({outs}) on {_devices_str(self.devices)})"


def check_argument_types(names: Sequence[str], expected: Sequence[Any],
                         args: Sequence[Any]) -> None:
    """TypeError unless `args` are device Arrays of the `expected` shapes and dtypes (weak
    types may differ), naming every mismatched argument (by `names`)."""
    if len(args) != len(expected):
        raise TypeError(
            f"Compiled function expected {len(expected)} arguments, got {len(args)}.")
    bad = []
    for i, (a, e) in enumerate(zip(args, expected)):
        if type(a) is not ArrayImpl:
            raise TypeError(
                f"Argument '{names[i]}' of type {type(a).__name__} is not an olympus Array "
                f"(the computation was compiled for {e.str_short(short_dtypes=False)})")
        aval = a.aval
        if aval.shape != e.shape or aval.dtype != e.dtype:
            bad.append((names[i], e, aval))
    if bad:
        lines = [f"Argument '{n}' compiled with {e.str_short(short_dtypes=False)} and called "
                 f"with {g.str_short(short_dtypes=False)}" for n, e, g in bad]
        raise TypeError(
            "Argument types differ from the types for which this computation was compiled. "
            "The mismatches are:\n" + "\n".join(lines))


def _devices_str(devices: Sequence[Any]) -> str:
    return ", ".join(str(d) for d in devices) if devices else "no device"
