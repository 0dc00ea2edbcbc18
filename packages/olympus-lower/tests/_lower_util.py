"""Test helpers: build olympusprs by hand and run lowered modules on the CPU with jaxlib.

`make_eqn(prim, *invars, **params)` makes one equation whose outvars come from
`olympus_ir.abstract_eval`; `Builder` collects equations into a `ClosedOlympuspr`.
`execute(lowered, *args)` compiles a `LoweredModule` with a PJRT CPU client and runs
it (inputs via ``batched_device_put``, outputs via ``array_result_handler``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc

from olympus_ir import (
    ClosedOlympuspr,
    Eqn,
    Literal,
    Olympuspr,
    ShapedArray,
    SourceInfo,
    Var,
    abstract_eval,
    dtypes,
)
from olympus_lower import LoweredModule, lower_olympuspr

bf16 = dtypes.bfloat16


# --- building olympusprs ----------------------------------------------------------------

def aval_of(x: Any) -> ShapedArray:
    return x.aval


def make_eqn(prim, *invars, source_info: SourceInfo | None = None, **params):
    """An equation applying `prim` to `invars` (Vars or Literals); returns (eqn, outvars)."""
    out = abstract_eval(prim, *[v.aval for v in invars], **params)
    out_avals = out if prim.multiple_results else [out]
    outvars = [Var(a) for a in out_avals]
    return Eqn(prim, list(invars), outvars, params, source_info), outvars


def lit(value: Any, dtype: Any, weak: bool = False) -> Literal:
    return Literal(value, ShapedArray((), np.dtype(dtype), weak))


class Builder:
    """Accumulates inputs, constants and equations of one olympuspr."""

    def __init__(self) -> None:
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self.eqns: list[Eqn] = []

    def arg(self, shape: tuple[int, ...] | ShapedArray, dtype: Any = None,
            weak: bool = False) -> Var:
        aval = shape if isinstance(shape, ShapedArray) else ShapedArray(shape, dtype, weak)
        v = Var(aval)
        self.invars.append(v)
        return v

    def const(self, value: Any, dtype: Any = None) -> Var:
        value = np.asarray(value, dtype)
        v = Var(ShapedArray(value.shape, value.dtype))
        self.constvars.append(v)
        self.consts.append(value)
        return v

    def eqn(self, prim, *invars, source_info: SourceInfo | None = None, **params):
        """Add ``prim(*invars, **params)``; returns its outvar (or list of outvars)."""
        e, outs = make_eqn(prim, *invars, source_info=source_info, **params)
        self.eqns.append(e)
        return outs if prim.multiple_results else outs[0]

    def build(self, outs) -> ClosedOlympuspr:
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        j = Olympuspr(self.constvars, self.invars, outs, self.eqns)
        return ClosedOlympuspr(j, self.consts)


def closed_fn(in_avals, body) -> ClosedOlympuspr:
    """A ClosedOlympuspr whose equations are built by ``body(builder, *invars) -> outs``."""
    b = Builder()
    vs = [b.arg(a) for a in in_avals]
    return b.build(body(b, *vs))


@dataclasses.dataclass(frozen=True)
class FakeExported:
    """What the ``call_exported`` rules read of an ``olympus.export.Exported`` (the real
    class lives in the olympus package, above this one)."""

    fun_name: str
    in_avals: tuple
    out_avals: tuple
    mlir_module_serialized: bytes
    platforms: tuple = ("cpu",)
    module_kept_var_idx: tuple | None = None
    nr_devices: int = 1
    disabled_safety_checks: tuple = ()
    uses_global_constants: bool = False

    def _arg_descriptor(self, i, dim):
        return f"args[{i}]" + ("" if dim is None else f".shape[{dim}]")

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"


def fake_exported(closed: ClosedOlympuspr, name: str = "f", platforms=("cpu",),
                  kept=None, **kw) -> FakeExported:
    """`closed` lowered for `platforms` as a portable artifact, with its signature."""
    n = len(closed.in_avals)
    kept = tuple(range(n)) if kept is None else tuple(kept)
    pruned = closed if len(kept) == n else ClosedOlympuspr(
        Olympuspr(closed.olympuspr.constvars, [closed.olympuspr.invars[i] for i in kept],
                  closed.olympuspr.outvars, closed.olympuspr.eqns), closed.consts)
    lowered = lower_olympuspr(pruned, name=name, platforms=platforms,
                              const_hoist_threshold=None)
    return FakeExported(name, tuple(closed.in_avals), tuple(closed.out_avals),
                        lowered.portable_artifact(), tuple(platforms), kept, **kw)


# --- executing ------------------------------------------------------------------------------

class SingleDeviceSharding(_jax.SingleDeviceSharding):
    memory_kind = property(lambda s: s._memory_kind)

    def _to_xla_hlo_sharding(self, ndim):
        return xc.HloSharding.replicate()


class _Cpu:
    _inst = None

    def __init__(self) -> None:
        try:
            from jaxlib import utils as _utils

            _utils.absl_set_min_log_level(1)
        except Exception:  # pragma: no cover - logging only
            pass
        self.client = xc.make_cpu_client()
        self.device = self.client.devices()[0]
        self.devices = _jax.DeviceList(tuple(self.client.devices()))
        self.sharding = SingleDeviceSharding(self.device)

    @classmethod
    def get(cls) -> _Cpu:
        if cls._inst is None:
            cls._inst = cls()
        return cls._inst


def compile_module(lowered: LoweredModule):
    cpu = _Cpu.get()
    return cpu.client.compile_and_load(lowered.module, cpu.devices, xc.CompileOptions())


def execute(lowered: LoweredModule, *args: Any, x64: bool | None = None,
            exe: Any = None) -> list[np.ndarray]:
    """Compile (unless `exe` is given) and run `lowered` on `args` (hoisted consts are
    prepended automatically); returns numpy copies of the outputs."""
    cpu = _Cpu.get()
    if x64 is None:
        x64 = dtypes.is_x64_enabled()
    if exe is None:
        exe = compile_module(lowered)
    all_args = [*lowered.hoisted_consts, *args]
    if len(all_args) != lowered.num_args:
        raise TypeError(f"expected {lowered.num_args} arguments, got {len(all_args)}")
    bufs = []
    for aval, x in zip(lowered.in_avals, all_args, strict=True):
        x = np.asarray(x, dtype=aval.dtype)
        assert x.shape == aval.shape, (x.shape, aval)
        bufs.append(_jax.batched_device_put(
            aval, cpu.sharding, [x], [cpu.device], True, False,
            _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL, x64,
        ))
    handlers = [_jax.array_result_handler(a, cpu.sharding, True, _skip_checks=True)
                for a in lowered.out_avals]
    outs = exe.execute_sharded(bufs).consume_with_handlers(handlers)
    return [_to_numpy(o, a) for o, a in zip(outs, lowered.out_avals, strict=True)]


_bits_exes: dict = {}


def _to_numpy(arr, aval) -> np.ndarray:
    """A numpy copy of a device array. BF16 buffers do not support the Python buffer
    protocol, so they are read through a cached ``bitcast_convert -> u16`` executable."""
    if np.dtype(aval.dtype) != bf16:
        return np.array(arr)
    from olympus_ir import primitives as P

    key = tuple(aval.shape)
    if key not in _bits_exes:
        b = Builder()
        x = b.arg(key, bf16)
        lowered = lower_olympuspr(
            b.build([b.eqn(P.bitcast_convert_type_p, x, new_dtype=np.dtype(np.uint16))]),
            name="bf16_bits")
        _bits_exes[key] = (lowered, compile_module(lowered))
    lowered, exe = _bits_exes[key]
    cpu = _Cpu.get()
    h = _jax.array_result_handler(lowered.out_avals[0], cpu.sharding, True, _skip_checks=True)
    (bits,) = exe.execute_sharded([arr]).consume_with_handlers([h])
    return np.array(bits).view(bf16)


def run(closed: ClosedOlympuspr, *args: Any, name: str = "f", x64: bool | None = None,
        **lower_kw) -> tuple[LoweredModule, list[np.ndarray]]:
    """Lower (which verifies), compile and execute; returns (lowered, outputs)."""
    lowered = lower_olympuspr(closed, name=name, **lower_kw)
    return lowered, execute(lowered, *args, x64=x64)


def run_one(prim, *args: Any, **params: Any) -> tuple[str, list[np.ndarray]]:
    """Lower, verify and execute ``prim(*args, **params)`` on numpy `args`; returns (the
    module's text, the outputs)."""
    b = Builder()
    vs = [b.arg(np.shape(a), np.asarray(a).dtype) for a in args]
    out = b.eqn(prim, *vs, **params)
    lowered, outs = run(b.build(out if prim.multiple_results else [out]), *args,
                        name=prim.name)
    return lowered.as_text(), outs


# --- numeric references and comparison ----------------------------------------------------

def tolerance(dtype: Any) -> dict[str, float]:
    dt = np.dtype(dtype)
    if dt == bf16:
        return dict(rtol=2e-2, atol=2e-2)
    if dt == np.float16:
        return dict(rtol=3e-3, atol=3e-3)
    if dt in (np.float32, np.complex64):
        return dict(rtol=2e-5, atol=2e-6)
    if dt in (np.float64, np.complex128):
        return dict(rtol=1e-12, atol=1e-13)
    return dict(rtol=0, atol=0)


def assert_close(actual, expected, dtype=None, err_msg: str = "", **tol) -> None:
    actual = np.asarray(actual)
    dtype = np.dtype(dtype if dtype is not None else actual.dtype)
    tol = {**tolerance(dtype), **tol}
    expected = np.asarray(expected)
    if dtype == bf16 or dtype == np.float16:
        actual = actual.astype(np.float32)
        expected = np.asarray(expected, dtype=np.float64).astype(np.float32)
    if dtypes.is_inexact(dtype):
        np.testing.assert_allclose(actual, expected, equal_nan=True, err_msg=err_msg, **tol)
    else:
        np.testing.assert_array_equal(actual, expected.astype(actual.dtype), err_msg=err_msg)


def erf_inv_ref(y: np.ndarray) -> np.ndarray:
    """Inverse error function by Newton iteration on math.erf."""
    y = np.asarray(y, np.float64)
    out = np.empty_like(y)
    for i, v in np.ndenumerate(y):
        if v <= -1:
            out[i] = -np.inf if v == -1 else np.nan
            continue
        if v >= 1:
            out[i] = np.inf if v == 1 else np.nan
            continue
        x = 0.0
        for _ in range(100):
            err = math.erf(x) - v
            x -= err / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        out[i] = x
    return out


def digamma_ref(x: np.ndarray) -> np.ndarray:
    """Digamma by recurrence to x >= 6 and the asymptotic series (x > 0 only)."""
    x = np.asarray(x, np.float64)
    out = np.empty_like(x)
    for i, v in np.ndenumerate(x):
        acc = 0.0
        while v < 6:
            acc -= 1 / v
            v += 1
        f = 1 / (v * v)
        out[i] = acc + math.log(v) - 0.5 / v - f * (
            1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))
    return out
