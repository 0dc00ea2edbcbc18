"""Eager key-reuse bookkeeping (``olympus_debug_key_reuse``): concrete key arrays remember
which of their keys were consumed.

The static analysis (which primitive consumes, forwards or makes keys) is the trace layer's
(`olympus_trace.key_reuse`); here its signatures are applied to concrete `PRNGKeyArray`
values, as JAX 0.10.2 does: a primitive evaluated eagerly, or a jitted function called
outside a trace, first refuses keys its signature consumes that are already consumed
("Previously-consumed key passed to random_bits at index 0", "... to jit-compiled function
at index 0"; a jitted function's closed-over keys count after its arguments), then marks
the inputs it consumed and its outputs (fresh keys unconsumed, forwarded keys sharing their
input's state, all others consumed).

Nothing here runs while the option is off: turning it on swaps in the checking eager
evaluation rule, and `jit` takes its checked path (off the C++ fast path) only under the
option, which is part of the jit key.
"""

from __future__ import annotations

import os
import sys
import types

import numpy as np

import olympus
import olympus_ir
import olympus_lower
import olympus_runtime
import olympus_trace
from olympus_ir.prims.control_flow import jit_p
from olympus_trace import core as _trace_core
from olympus_trace import key_reuse as _analysis
from olympus_trace import tree_util
from olympus_trace.core import get_aval
from olympus_trace.errors import KeyReuseError

from .._src import eager as _eager
from ._prng import PRNGKeyArray

__all__ = ["set_enabled", "enabled", "check_signature", "update_consumption",
           "checked_jit_call"]


def enabled() -> bool:
    return _analysis.enabled


def set_enabled(on: bool) -> None:
    """Turn checking on or off (the config option's hook)."""
    _analysis.enabled = on
    _trace_core.set_eval_rule(_checked_eval if on else _eager.eval_primitive)


_FIRST_USE = ("PRNG key first used at the above location was subsequently reused at the "
              "following location:")

#: The directories of Olympus's packages: their frames are left out of where a key was used.
_OWN_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (
    olympus, olympus_ir, olympus_trace, olympus_lower, olympus_runtime))


def _user_traceback() -> types.TracebackType | None:
    """The caller's stack outside Olympus's packages, as a traceback (outermost first)."""
    tb = None
    frame = sys._getframe(1)
    while frame is not None:  # innermost outwards, each linking to the one inside it
        if not frame.f_code.co_filename.startswith(_OWN_DIRS):
            tb = types.TracebackType(tb, frame, frame.f_lasti, frame.f_lineno)
        frame = frame.f_back
    return tb


def check_signature(sig, args, funcname: str) -> None:
    """Refuse the concrete keys among `args` that `sig` consumes and that are consumed. The
    error's cause carries the traceback of the key's first use, as JAX's does."""
    for sink in sig.sinks:
        if sink.idx >= len(args):
            continue
        key = args[sink.idx]
        if type(key) is PRNGKeyArray and np.any(np.logical_and(key._consumed, sink.mask)):
            err = KeyReuseError(
                f"Previously-consumed key passed to {funcname} at index {sink.idx}")
            first = getattr(key, "_used_at", None)
            if first is not None:
                raise err from KeyReuseError(_FIRST_USE).with_traceback(first)
            raise err


def update_consumption(sig, args_in, args_out) -> None:
    """Mark what a call with signature `sig` consumed and made."""
    for sink in sig.sinks:
        if sink.idx < len(args_in):
            key = args_in[sink.idx]
            if type(key) is PRNGKeyArray:
                key._consumed = _merge(key._consumed, sink.mask)
                if np.any(sink.mask):
                    key._used_at = _user_traceback()
    for out in args_out:
        if type(out) is PRNGKeyArray:
            out._consumed = True
    for src in sig.sources:
        if src.idx < len(args_out) and type(args_out[src.idx]) is PRNGKeyArray:
            args_out[src.idx]._consumed = _freeze(np.logical_not(src.mask))
    for fwd in sig.forwards:
        if fwd.in_idx < len(args_in) and fwd.out_idx < len(args_out):
            src_key, out = args_in[fwd.in_idx], args_out[fwd.out_idx]
            if type(src_key) is PRNGKeyArray and type(out) is PRNGKeyArray:
                out._consumed = src_key._consumed


def _freeze(mask):
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim == 0 or mask.all() or not mask.any():
        return bool(mask.all()) if mask.size else False
    return mask


def _merge(before, mask):
    return _freeze(np.logical_or(before, mask))


def _checked_eval(prim, args, params):
    """The eager evaluation rule while checking: `prim`'s signature applied to `args`.
    Only calls given concrete keys (a nested jit's closed-over keys count) are checked;
    the others evaluate as they do unchecked (their results are fresh)."""
    if prim is jit_p:
        name, inputs = "jit-compiled function", [*args, *params["olympuspr"].consts]
    else:
        name, inputs = prim.name, args
    if not any(type(a) is PRNGKeyArray for a in inputs):
        return _eager.eval_primitive(prim, args, params)
    try:
        sig = _analysis.key_reuse_signature_from_primitive(
            prim, [get_aval(a) for a in args], params)
    except KeyReuseError:
        raise
    except (TypeError, ValueError):  # bad operands: the evaluation below raises its own
        sig = None
    if sig is None:
        return _eager.eval_primitive(prim, args, params)
    inputs = list(inputs)
    check_signature(sig, inputs, name)
    out = _eager.eval_primitive(prim, args, params)
    update_consumption(sig, inputs, list(out) if prim.multiple_results else [out])
    return out


def checked_jit_call(jitted, args, kwargs):
    """A jitted function called outside a trace while checking: its olympuspr's signature
    (traced, and so checked, once per signature) applied to the flat arguments and the
    closed-over constants. Returns (outputs, the `SpecializedCall`)."""
    call, leaves = jitted._specialize(args, kwargs)
    sig = call.__dict__.get("key_reuse_signature")
    if sig is None:
        sig = call.key_reuse_signature = _analysis.olympuspr_type_signature(call.closed)
    inputs = [*leaves, *call.closed.consts]
    check_signature(sig, inputs, "jit-compiled function")
    outs, call = jitted._compiled_call(args, kwargs)
    update_consumption(sig, inputs, tree_util.tree_leaves(outs))
    return outs, call


def slice_keys(keys: PRNGKeyArray, idx: tuple, out: PRNGKeyArray) -> None:
    """Indexing a concrete key array while checking. A basic index (integers and slices)
    is a ``slice``: it consumes the keys it selects and gives fresh ones (so taking the same
    key twice is reuse, as in JAX); any other index forwards the array's state."""
    shape = keys.shape
    basic = all(isinstance(i, (int, np.integer, slice)) or i is Ellipsis for i in idx)
    if not basic or not shape:
        out._consumed = bool(np.any(keys._consumed))
        return
    mask = np.zeros(shape, dtype=bool)
    mask[idx] = True
    sig = _analysis.KeyReuseSignature(_analysis.Sink(0, mask), _analysis.Source(0))
    check_signature(sig, [keys], "slice")
    update_consumption(sig, [keys], [out])
