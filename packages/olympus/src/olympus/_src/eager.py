"""Op-by-op execution: the evaluation rule olympus-trace calls outside any trace.

Each (primitive, params, operand types) is lowered once to a one-equation module,
compiled once (the runtime's EagerCache), and then costs one execute per call.
"""

from __future__ import annotations

import olympus_runtime as rt
from olympus_ir.core import ClosedOlympuspr, Eqn, Olympuspr, Var, abstract_eval
from olympus_lower import lower_olympuspr
from olympus_ir.dtypes import config as _dtype_config
from olympus_trace import core as trace_core

_cache = rt.EagerCache()
_Array = rt.Array


class _ByIdentity:
    """Hashes an unhashable param (e.g. a sub-olympuspr) by identity, keeping it alive."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __hash__(self):
        return id(self.v)

    def __eq__(self, other):
        return isinstance(other, _ByIdentity) and other.v is self.v


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    try:
        hash(v)
        return v
    except TypeError:
        return _ByIdentity(v)


def _build(prim, in_avals, params):
    def build():
        invars = [Var(a) for a in in_avals]
        out = abstract_eval(prim, *in_avals, **params)
        outs = out if prim.multiple_results else [out]
        outvars = [Var(a) for a in outs]
        j = Olympuspr([], invars, outvars, [Eqn(prim, invars, outvars, params)])
        lowered = lower_olympuspr(ClosedOlympuspr(j, []), name=prim.name)
        return lowered.module, list(outs)

    return build


#: Device copies of Python scalar operands (1.0, 2, True...): ops reuse the same small set
#: of constants over and over, and Arrays are immutable, so one transfer serves all uses.
_scalar_arrays: dict = {}
_PY_SCALARS = (bool, int, float, complex)


def _as_array(x):
    if type(x) is _Array:
        return x
    if type(x) in _PY_SCALARS:
        key = (type(x), x, repr(x), _x64())
        a = _scalar_arrays.get(key)
        if a is None:
            a = rt.device_put(x)
            if len(_scalar_arrays) < 1024:
                _scalar_arrays[key] = a
        return a
    if isinstance(x, trace_core.Tracer):
        raise trace_core.escaped_tracer_error(x)
    return rt.device_put(x)


def _x64() -> bool:
    return _dtype_config.enable_x64


def eval_primitive(prim, args, params):
    arrays = [_as_array(a) for a in args]
    in_avals = tuple(a.aval for a in arrays)
    key = (prim.name, _freeze(params), in_avals)
    exe = _cache.get(key, _build(prim, in_avals, params))
    outs = exe.execute(arrays)
    return outs if prim.multiple_results else outs[0]


def install() -> None:
    trace_core.set_eval_rule(eval_primitive)


def compile_count() -> int:
    return _cache.compile_count

