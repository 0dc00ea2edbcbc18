"""`olympus.config`: process-wide settings, declared once each.

Every option is an `Option` in `OPTIONS`: its JAX name (``olympus_*``), default, the
environment variable that overrides the default (the name upper-cased), how a new value
is checked, and what else must follow a change (jaxlib's C++ state, the IR's promotion
mode, ...). ``config.update(name, value)`` sets one; ``config.<name>`` reads one. Options
that change how a function traces or runs under ``jit`` (``jit_key``) are also part of the
jit cache key, in Python and in jaxlib's C++ fast path, so turning one on reaches
signatures compiled before.

Options with a context-manager form in JAX have one here as a `State` (``debug_nans``,
``transfer_guard_host_to_device``, ...): ``with olympus.debug_nans(True): ...`` sets the
option for the block and restores it after (also usable as a decorator); ``.value``
reads it. Contexts are process-wide, not per thread.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from jaxlib import _jax

from . import logging_config
from .inert_options import INERT_OPTIONS

__all__ = ["Option", "OPTIONS", "Config", "config", "State", "enable_x64", "disable_jit",
           "debug_nans", "debug_infs", "log_compiles", "explain_cache_misses",
           "transfer_guard", "transfer_guard_host_to_device", "transfer_guard_device_to_host",
           "transfer_guard_device_to_device", "numpy_dtype_promotion", "numpy_rank_promotion",
           "default_prng_impl", "PRNG_IMPLS",
           "default_matmul_precision", "TRANSFER_GUARD_LEVELS", "MATMUL_PRECISIONS",
           "enable_checks", "debug_key_reuse", "enable_custom_prng", "softmax_custom_jvp",
           "no_tracing", "no_execution", "allow_f16_reductions",
           "olympus2tf_associative_scan_reductions", "legacy_prng_key",
           "array_garbage_collection_guard", "remove_size_one_mesh_axis_from_type",
           "thread_guard", "auto_pcast", "make_user_context", "UserContext"]

TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
#: The PRNG implementations `olympus.random` has (``olympus_default_prng_impl``'s values).
PRNG_IMPLS = ("threefry2x32", "rbg", "unsafe_rbg")
MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
)


# --- how values are checked (JAX's wording) ------------------------------------------------


def _bool(name: str) -> Callable[[Any], bool]:
    def parse(v):
        if isinstance(v, str):
            return _truth(v, name)
        return bool(v)
    return parse


def _truth(v: str, where: str) -> bool:
    s = v.strip().lower()
    if s in ("1", "true", "t", "yes", "y", "on"):
        return True
    if s in ("0", "false", "f", "no", "n", "off"):
        return False
    raise ValueError(f"invalid truth value {v!r} for environment {where!r}")


def _int(name: str) -> Callable[[Any], int]:
    def parse(v):
        return int(v)
    return parse


def _enum(values: Sequence[str], allow_none: bool) -> Callable[[Any], Any]:
    def parse(v):
        if v is None and allow_none:
            return None
        if not isinstance(v, str) or v not in values:
            prefix = "None or in" if allow_none else "in"
            raise ValueError(f"new enum value must be {prefix} {list(values)}, "
                             f"got {v} of type {type(v)}.")
        return v
    return parse


def _inert_parse(name: str, kind: Any) -> Callable[[Any], Any]:
    """The check of an `inert_options` entry of `kind`."""
    if isinstance(kind, tuple):
        return _enum(kind, False)
    if kind == "bool":
        return _bool(name)
    optional = kind.endswith("?")
    convert = {"int": int, "float": float, "str": str}[kind.rstrip("?")]

    def parse(v):
        return None if v is None and optional else convert(v)
    return parse


def _platforms(v: Any) -> Any:
    """``olympus_platforms`` / ``olympus_platform_name``: only the CPU exists here."""
    if v is None or v == "":
        return v
    for p in str(v).split(","):
        if p.strip().lower() != "cpu":
            raise RuntimeError(f"Unable to initialize backend '{p.strip()}': Olympus has "
                               f"only the CPU backend (got {v!r}).")
    return str(v)


def _dtype_promotion(v: Any) -> str:
    if v not in ("standard", "strict"):
        raise ValueError(f"{v!r} is not a valid NumpyDtypePromotion")
    return v


class Option:
    """One setting: `name` (``olympus_*``), `default` (overridden by the environment
    variable ``NAME``), `parse` (checks and normalizes a new value), `on_change` (called
    with the new value after it is stored), and `jit_key` (part of the jit cache key)."""

    __slots__ = ("name", "default", "parse", "on_change", "jit_key", "help")

    def __init__(self, name: str, default: Any, parse: Callable[[Any], Any], *,
                 on_change: Callable[[Any], None] | None = None, jit_key: bool = False,
                 help: str = ""):
        self.name, self.default, self.parse = name, default, parse
        self.on_change, self.jit_key, self.help = on_change, jit_key, help

    def initial(self) -> Any:
        env = os.environ.get(self.name.upper())
        if env is None or env == "":
            return self.default
        if isinstance(self.default, bool):
            return _truth(env, self.name.upper())
        return self.parse(env)


# --- what follows a change -----------------------------------------------------------------


def _set_x64(v: bool) -> None:
    import olympus_runtime as rt

    rt.set_x64(v)


def _set_num_cpu_devices(v: int) -> None:
    import olympus_runtime as rt

    rt.set_num_cpu_devices(v)


def _set_disable_jit(v: bool) -> None:
    import olympus_runtime as rt

    rt.config.set_disable_jit(v)  # the C++ jit fast path reads this state


def _set_debug_key_reuse(v: bool) -> None:
    """Key-reuse checking on or off: the trace layer's analysis and the eager bookkeeping
    (`olympus.random._key_reuse`), which nothing pays for while it is off."""
    from ..random import _key_reuse

    _key_reuse.set_enabled(bool(v))


def _set_explain_cache_misses(v: bool) -> None:
    """While explaining, jaxlib's post-call hook counts the C++ fast path's cache hits."""
    import olympus_runtime as rt

    from .cache_explain import count_fast_path_hit

    rt.config.post_hook_state.set_global(count_fast_path_hit if v else None)


def _set_dtype_promotion(v: str) -> None:
    from olympus_ir import dtypes

    dtypes.config.set_numpy_dtype_promotion(v)


def _set_rank_promotion(v: str) -> None:
    from olympus_trace import promotion

    promotion.set_rank_promotion(v)


def _set_matmul_precision(v: str | None) -> None:
    from olympus_trace.lax_ops import linalg

    linalg.set_default_precision(v)


_GUARD_DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device")


def _update_transfer_guards(_: Any = None) -> None:
    """jaxlib's guard state (read by its C++ transfers) for each direction: the direction's
    own option if set, else ``olympus_transfer_guard``, else allow."""
    state = _jax.guard_lib.global_state()
    levels = _jax.guard_lib.TransferGuardLevel
    general = config._values.get("olympus_transfer_guard")
    for d in _GUARD_DIRECTIONS:
        v = config._values.get(f"olympus_transfer_guard_{d}") or general
        setattr(state, d, None if v is None else getattr(levels, v.upper()))


_guard_parse = _enum(TRANSFER_GUARD_LEVELS, allow_none=True)


def _collectives(v: Any) -> str:
    if v not in ("gloo", "mpi"):
        raise ValueError("olympus_cpu_collectives_implementation must be 'gloo' or 'mpi', "
                         f"got {v!r}")
    return v


def _set_collectives(v: str) -> None:
    import olympus_runtime as rt

    rt.distributed.collectives_implementation = v


def _default_device(v: Any) -> Any:
    from .sharding import check_device

    return check_device(v)


def _set_default_device(v: Any) -> None:
    import olympus_runtime as rt

    rt.config.default_device_state.set_global(v)


def _cache_option(name: str) -> Callable[[Any], Any]:
    """A persistent-cache setting: checked and stored by olympus_runtime.persistent_cache
    (under its unprefixed name); environment strings are converted first."""
    key = name.removeprefix("olympus_")

    def parse(v):
        from olympus_runtime import persistent_cache

        if isinstance(v, str) and key != "compilation_cache_dir":
            v = _truth(v, name.upper()) if key == "enable_compilation_cache" else (
                float(v) if key.endswith("_secs") else int(v))
        persistent_cache.set_option(key, v)
        return persistent_cache.get_option(key)
    return parse


def _push_cache_option(name: str) -> Callable[[Any], None]:
    key = name.removeprefix("olympus_")

    def push(v):
        from olympus_runtime import persistent_cache

        persistent_cache.set_option(key, v)
    return push

OPTIONS: dict[str, Option] = {o.name: o for o in [
    Option("olympus_enable_x64", False, _bool("olympus_enable_x64"), on_change=_set_x64,
           help="64-bit dtypes (float64, int64) instead of their 32-bit counterparts."),
    Option("olympus_disable_jit", False, _bool("olympus_disable_jit"),
           on_change=_set_disable_jit, help="Run jitted functions op by op, in Python."),
    Option("olympus_num_cpu_devices", 1, _int("olympus_num_cpu_devices"),
           on_change=_set_num_cpu_devices, help="Virtual CPU devices (before first use)."),
    Option("olympus_check_tracer_leaks", False, _bool("olympus_check_tracer_leaks")),
    Option("olympus_threefry_partitionable", True, _bool("olympus_threefry_partitionable"),
           jit_key=True,  # read when a program holding keys is lowered, as JAX's
           help="JAX 0.10.2's default threefry stream (read by olympus.random)."),
    Option("olympus_default_prng_impl", "threefry2x32", _enum(PRNG_IMPLS, False),
           jit_key=True,  # raw keys are wrapped with it when traced
           help="The PRNG implementation of keys made without an explicit impl."),
    Option("olympus_debug_nans", False, _bool("olympus_debug_nans"), jit_key=True,
           help="Raise FloatingPointError where an operation first produces a NaN."),
    Option("olympus_debug_infs", False, _bool("olympus_debug_infs"), jit_key=True,
           help="Raise FloatingPointError where an operation first produces an inf."),
    Option("olympus_log_compiles", False, _bool("olympus_log_compiles"), jit_key=True,
           help="Log (at WARNING) every trace, lowering and compilation of a jit."),
    Option("olympus_explain_cache_misses", False, _bool("olympus_explain_cache_misses"),
           on_change=_set_explain_cache_misses,
           help="Log why each retrace of a jitted function happened; count every hit."),
    Option("olympus_transfer_guard", None, _guard_parse, on_change=_update_transfer_guards,
           help="Guard level of all host/device transfers."),
    *[Option(f"olympus_transfer_guard_{d}", None, _guard_parse,
             on_change=_update_transfer_guards, help=f"Guard level of {d} transfers.")
      for d in _GUARD_DIRECTIONS],
    Option("olympus_numpy_dtype_promotion", "standard", _dtype_promotion,
           on_change=_set_dtype_promotion, jit_key=True,
           help="'standard' (implicit promotion) or 'strict' (only weak types promote)."),
    Option("olympus_numpy_rank_promotion", "allow",
           _enum(("allow", "warn", "raise"), allow_none=False),
           on_change=_set_rank_promotion, jit_key=True,
           help="What broadcasting operands of different ranks does: allow, warn, raise."),
    Option("olympus_default_matmul_precision", None, _enum(MATMUL_PRECISIONS, True),
           on_change=_set_matmul_precision, jit_key=True,
           help="Precision of matmuls and convolutions that do not give one."),
    Option("olympus_cpu_collectives_implementation", "gloo", _collectives,
           on_change=_set_collectives,
           help="CPU collectives across processes (olympus.distributed): gloo or mpi."),
    Option("olympus_default_device", None, _default_device, on_change=_set_default_device,
           help="Where uncommitted arrays and computations go (None: the first device)."),
    # JAX's remaining boolean and enum flags. no_tracing and no_execution are enforced by
    # jit, enable_checks verifies each olympuspr jit traces; the others are accepted and
    # stored for code that reads them (their effects concern backends, key checking and
    # sharding types Olympus does not have on CPU).
    *[Option(f"olympus_{name}", default, _bool(f"olympus_{name}"), jit_key=key, help=text)
      for name, default, key, text in (
        ("enable_checks", False, False, "Verify every olympuspr jit traces (slow)."),
        ("enable_custom_prng", False, False, "Deprecated; kept for compatibility."),
        ("softmax_custom_jvp", False, False, "Deprecated; kept for compatibility."),
        ("no_tracing", False, False, "Raise instead of tracing a function for jit."),
        ("no_execution", False, True, "Raise instead of executing a compiled function."),
        ("allow_f16_reductions", True, False, "Allow float16/bfloat16 sum reductions."),
        ("olympus2tf_associative_scan_reductions", False, False,
         "Lower cumulative reductions as associative scans (for olympus2tf)."),
        ("remove_size_one_mesh_axis_from_type", False, False,
         "Drop size-one mesh axes from sharding types."),
        ("thread_guard", False, False,
         "Raise when a multi-controller computation is started from another thread."),
        ("auto_pcast", True, False, "Insert pcasts automatically in shard_map."),
    )],
    # Part of the jit key, as JAX's: a program is checked when traced with the flag on.
    Option("olympus_debug_key_reuse", False, _bool("olympus_debug_key_reuse"),
           on_change=_set_debug_key_reuse, jit_key=True,
           help="Check typed PRNG keys for reuse (olympus.experimental.key_reuse)."),
    Option("olympus_legacy_prng_key", "allow", _enum(("allow", "warn", "error"), False),
           help="What passing a raw uint32 key to olympus.random does: allow, warn, error."),
    Option("olympus_array_garbage_collection_guard", None,
           _enum(("allow", "log", "fatal"), True),
           help="What collecting an array with a reference cycle does: allow, log, fatal."),
    *[Option(name, default, _cache_option(name), on_change=_push_cache_option(name),
             help=text) for name, default, text in (
        ("olympus_compilation_cache_dir", None, "The persistent compilation cache's directory."),
        ("olympus_enable_compilation_cache", True, "Use the persistent compilation cache."),
        ("olympus_persistent_cache_min_compile_time_secs", 1.0,
         "Cache only executables that took at least this long to compile."),
        ("olympus_persistent_cache_min_entry_size_bytes", 0,
         "Cache only executables at least this large."),
        ("olympus_compilation_cache_max_size", -1,
         "The cache's size cap in bytes (-1: none; LRU eviction)."),
    )],
    Option("olympus_platforms", None, _platforms,
           help="Comma-separated platforms to initialize (only 'cpu' exists)."),
    Option("olympus_platform_name", "", _platforms, help="Deprecated: the default platform."),
    Option("olympus_logging_level", "NOTSET", _enum(logging_config.LEVELS, True),
           on_change=logging_config.set_logging_level,
           help="The level of every olympus logger (None: leave them as they are)."),
    Option("olympus_debug_log_modules", "", str,
           on_change=logging_config.set_debug_log_modules,
           help="Comma-separated logger names that log everything to stderr."),
    Option("olympus_traceback_filtering", "auto",
           _enum(("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"),
                 False),
           help="How internal frames are filtered out of tracebacks (stored)."),
    *[Option(f"olympus_{name}", default, _inert_parse(f"olympus_{name}", kind),
             help="No effect on the CPU backend (see olympus._src.inert_options).")
      for name, default, kind in INERT_OPTIONS],
]}

#: Part of the C++ jit fast path's cache key (jaxlib includes its value in every lookup).
_jit_key_state = _jax.config.Config("olympus_trace_options", (), include_in_jit_key=True,
                                    include_in_trace_context=True)
_JIT_KEY_NAMES = tuple(n for n, o in OPTIONS.items() if o.jit_key)


class Config:
    """Settings with JAX-style names: ``config.update("olympus_debug_nans", True)``,
    ``config.olympus_debug_nans``."""

    def __init__(self) -> None:
        self._values = {n: o.initial() for n, o in OPTIONS.items()}
        #: The jit-key options' values, in `_JIT_KEY_NAMES` order (read by jit's keys).
        self.jit_key: tuple = tuple(self._values[n] for n in _JIT_KEY_NAMES)
        #: Whether jit must check outputs for NaN/inf (debug_nans or debug_infs is on).
        self.check_special = False

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"'Config' object has no attribute '{name}'") from None

    def read(self, name: str) -> Any:
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._values[name]

    def update(self, name: str, value: Any) -> None:
        opt = OPTIONS.get(name)
        if opt is None:
            raise AttributeError(f"Unrecognized config option: {name}")
        value = opt.parse(value)
        self._values[name] = value
        if opt.on_change is not None:
            opt.on_change(value)
        if opt.jit_key:
            self._refresh_jit_key()

    def _refresh_jit_key(self) -> None:
        self.jit_key = tuple(self._values[n] for n in _JIT_KEY_NAMES) + tuple(
            c._value for c in _USER_CONTEXTS)
        _jit_key_state.set_global(self.jit_key)
        self.check_special = bool(self._values["olympus_debug_nans"]
                                  or self._values["olympus_debug_infs"])

    def _apply_initial(self) -> None:
        """Push options whose environment value differs from the default to their
        dependents (jaxlib's state, the IR, ...)."""
        for name, opt in OPTIONS.items():
            if opt.on_change is not None and self._values[name] != opt.default:
                opt.on_change(self._values[name])
        self._refresh_jit_key()

    def values(self) -> dict[str, Any]:
        """A snapshot of every option's value."""
        return dict(self._values)

    def parse_flags_with_absl(self) -> None:
        """Apply the ``--olympus_*`` command-line flags (before any ``--``) once, as
        absl flags would: ``--name=value``, ``--name`` / ``--noname`` for booleans;
        names that are not options are ignored (absl's ``known_only``)."""
        if self.__dict__.get("_parsed_argv"):
            return
        import itertools
        import sys

        for arg in itertools.takewhile(lambda a: a != "--", sys.argv[1:]):
            if not arg.startswith(("--olympus_", "--noolympus_")):
                continue
            name, eq, value = arg[2:].partition("=")
            if not eq:  # a boolean flag: --name or --noname
                value = "true"
                if name.startswith("no") and name not in OPTIONS:
                    name, value = name[2:], "false"
                opt = OPTIONS.get(name)
                if opt is None or not isinstance(opt.default, bool):
                    continue
            if name in OPTIONS:
                self.update(name, value)
        self.__dict__["_parsed_argv"] = True


config = Config()


class State:
    """An option's context-manager form, as JAX's config states: ``state(new_value)`` is a
    context manager (and decorator) setting the option inside; ``state.value`` reads it."""

    def __init__(self, option: str, default_arg: Any = ...):
        self._option = option
        self._default_arg = default_arg
        self.__name__ = option.removeprefix("olympus_")

    @property
    def value(self) -> Any:
        return config._values[self._option]

    def __call__(self, new_val: Any = ...) -> contextlib.AbstractContextManager:
        if new_val is ...:
            if self._default_arg is ...:
                raise TypeError(f"Context manager for {self.__name__} config option requires "
                                "an argument representing the new value for the config "
                                "option.")
            new_val = self._default_arg
        OPTIONS[self._option].parse(new_val)  # bad values fail here, not on entry
        return _Setting(((self._option, new_val),))

    def __bool__(self):
        raise TypeError(
            f"bool() not supported for instances of type '{type(self).__name__}' (did you "
            f"mean to use '{type(self).__name__}.value' instead?)")

    def __repr__(self) -> str:
        return f"<olympus config state {self._option}={self.value!r}>"


class _Setting(contextlib.ContextDecorator):
    """Set options on entry, restore them on exit (re-entrant: a stack of saves)."""

    def __init__(self, pairs: tuple):
        self._pairs = pairs
        self._saved: list = []

    def __enter__(self):
        self._saved.append([(n, config._values[n]) for n, _ in self._pairs])
        try:
            for n, v in self._pairs:
                config.update(n, v)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for n, v in reversed(self._saved.pop()):
            config.update(n, v)
        return False


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """``with olympus.enable_x64():`` 64-bit dtypes inside the block (or 32-bit with
    ``False``); the previous setting is restored on exit. Process-wide, like
    ``config.update("olympus_enable_x64", ...)``."""
    with _Setting((("olympus_enable_x64", bool(new_val)),)):
        yield


def disable_jit(disable: bool = True) -> contextlib.AbstractContextManager:
    """``with olympus.disable_jit():`` jitted functions run op by op in Python (their
    values concrete, so they can be printed and inspected) inside the block."""
    return _Setting((("olympus_disable_jit", bool(disable)),))


class UserContext:
    """A context of the user's whose value is part of every jit cache key
    (``olympus.make_user_context``): ``with ctx(v):`` sets it for the block, so a jitted
    function called under a new value is traced and compiled again; ``ctx.value`` reads
    it."""

    def __init__(self, default_value: Any = None):
        hash(default_value)
        self._value = default_value
        _USER_CONTEXTS.append(self)
        config._refresh_jit_key()

    @property
    def value(self) -> Any:
        return self._value

    @contextlib.contextmanager
    def __call__(self, new_val: Any) -> Iterator[None]:
        hash(new_val)  # part of a cache key: must be hashable
        prev, self._value = self._value, new_val
        config._refresh_jit_key()
        try:
            yield
        finally:
            self._value = prev
            config._refresh_jit_key()

    def __repr__(self) -> str:
        return f"<olympus user context value={self._value!r}>"


_USER_CONTEXTS: list[UserContext] = []


def make_user_context(default_value: Any = None) -> UserContext:
    """A new jit-cache-sensitive context (see `UserContext`)."""
    return UserContext(default_value)


enable_checks = State("olympus_enable_checks")
debug_key_reuse = State("olympus_debug_key_reuse")
enable_custom_prng = State("olympus_enable_custom_prng")
softmax_custom_jvp = State("olympus_softmax_custom_jvp")
no_tracing = State("olympus_no_tracing")
no_execution = State("olympus_no_execution")
allow_f16_reductions = State("olympus_allow_f16_reductions")
olympus2tf_associative_scan_reductions = State("olympus_olympus2tf_associative_scan_reductions")
legacy_prng_key = State("olympus_legacy_prng_key")
array_garbage_collection_guard = State("olympus_array_garbage_collection_guard")
remove_size_one_mesh_axis_from_type = State("olympus_remove_size_one_mesh_axis_from_type")
thread_guard = State("olympus_thread_guard")
auto_pcast = State("olympus_auto_pcast")
debug_nans = State("olympus_debug_nans")
debug_infs = State("olympus_debug_infs")
log_compiles = State("olympus_log_compiles")
explain_cache_misses = State("olympus_explain_cache_misses")
transfer_guard_host_to_device = State("olympus_transfer_guard_host_to_device")
transfer_guard_device_to_host = State("olympus_transfer_guard_device_to_host")
transfer_guard_device_to_device = State("olympus_transfer_guard_device_to_device")
numpy_dtype_promotion = State("olympus_numpy_dtype_promotion")
numpy_rank_promotion = State("olympus_numpy_rank_promotion")
default_matmul_precision = State("olympus_default_matmul_precision")
default_prng_impl = State("olympus_default_prng_impl")


def transfer_guard(new_val: str) -> contextlib.AbstractContextManager:
    """``with olympus.transfer_guard("disallow"):`` the same guard level for transfers in
    every direction inside the block (JAX's levels: allow, log, disallow, log_explicit,
    disallow_explicit; the ``*_explicit`` ones also guard ``device_put``)."""
    _guard_parse(new_val)
    return _Setting(tuple((f"olympus_transfer_guard_{d}", new_val)
                          for d in _GUARD_DIRECTIONS))
