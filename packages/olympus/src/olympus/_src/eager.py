"""Op-by-op execution: the evaluation rule olympus-trace calls outside any trace.

Each (primitive, params) gets its own jitted one-primitive function, so a call goes
through jaxlib's C++ jit fast path: the first call per operand signature traces, lowers
and compiles a one-equation module; later calls only execute it.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

import olympus_runtime as rt
from olympus_ir.core import ClosedOlympuspr, Olympuspr
from olympus_ir.prims.callbacks import debug_callback_p
from olympus_trace import core as trace_core

from .config import config as _config

_check_not_deleted = rt.check_not_deleted

#: (primitive, params...) -> the jitted function applying that primitive.
_prim_jits: dict = {}
#: The same for params compared by identity (sub-olympusprs, Python callables): a loop
#: body traced anew each call is a new key each call, so these are kept least recently
#: used first out, at most `IDENTITY_KEYED_MAX` of them.
_prim_jits_by_identity: OrderedDict = OrderedDict()
IDENTITY_KEYED_MAX = 256


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


def _by_identity(v) -> bool:
    """Whether `v` (or an element of it) is a value made afresh per traced call: a
    sub-olympuspr or a Python callable, both compared by identity."""
    if isinstance(v, tuple):
        return any(_by_identity(x) for x in v)
    return (isinstance(v, (_ByIdentity, Olympuspr, ClosedOlympuspr))
            or (callable(v) and not isinstance(v, type)))


def _identity_keyed_jit(key, prim, params):
    fn = _prim_jits_by_identity.get(key)
    if fn is None:
        fn = _prim_jits_by_identity[key] = _make_prim_jit(prim, params)
        while len(_prim_jits_by_identity) > IDENTITY_KEYED_MAX:
            _prim_jits_by_identity.popitem(last=False)
    else:
        try:
            _prim_jits_by_identity.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile
            pass
    return fn


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
        if any(_by_identity(v) for v in key[1:]):
            fn = _identity_keyed_jit(key, prim, params)
        else:
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
    """How many signatures jitted functions (the eager lanes' among them) have compiled in
    this process; tests read its change over a block of eager operations."""
    from .jit import counters

    return counters["compile"]
