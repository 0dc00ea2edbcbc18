"""Op-by-op execution: the evaluation rule olympus-trace calls outside any trace.

Each (primitive, params) gets its own jitted one-primitive function, so a call goes
through jaxlib's C++ jit fast path: the first call per operand signature traces, lowers
and compiles a one-equation module; later calls only execute it.
"""

from __future__ import annotations

import numpy as np

import olympus_runtime as rt
from olympus_ir.prims.callbacks import debug_callback_p
from olympus_trace import core as trace_core

from .config import config as _config

_check_not_deleted = rt.check_not_deleted

#: (primitive, params...) -> the jitted function applying that primitive.
_prim_jits: dict = {}


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


def _make_prim_jit(prim, params):
    from .jit import jit

    def apply(*args):
        return trace_core.bind(prim, *args, **params)

    apply.__name__ = apply.__qualname__ = prim.name
    return jit(apply)


def eval_primitive(prim, args, params):
    if prim is debug_callback_p:  # a host call: run it here, nothing to compile
        params["callback"](*[np.asarray(a, trace_core.get_aval(a).dtype) for a in args])
        return []
    key = (prim, *params.items())
    try:
        fn = _prim_jits.get(key)
    except TypeError:  # an unhashable param value
        key = (prim, _freeze(params))
        fn = _prim_jits.get(key)
    if fn is None:
        fn = _prim_jits[key] = _make_prim_jit(prim, params)
    if _config._values["olympus_disable_jit"]:
        return fn._olympus_jit.compiled_call(*args)
    try:
        return fn(*args)
    except ValueError:  # PJRT's answer to a deleted (donated) buffer: say so clearly
        _check_not_deleted(*args)
        raise


def install() -> None:
    trace_core.set_eval_rule(eval_primitive)


def compile_count() -> int:
    """How many one-primitive executables op-by-op execution has compiled."""
    from .eager_ops import lane_jits

    return sum(len(fn._olympus_jit._calls) for fn in [*_prim_jits.values(), *lane_jits])
