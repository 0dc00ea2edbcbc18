"""The key-reuse checker's internals, under the names JAX's ``_core`` module has (its tests
import them): the signatures and the analysis are `olympus_trace.key_reuse`'s; this module
adds the entry points that trace a Python function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olympus_trace.key_reuse import (
    ConsumedMask,
    DynamicKeyReuseSignature,
    Forward,
    KeyReuseSignature,
    Sink,
    Source,
    assert_consumed,
    assert_consumed_value_p,
    assert_unconsumed,
    check_key_reuse_olympuspr,
    consume,
    consume_p,
    dynamic_key_reuse_signature,
    key_reuse_signature_from_eqn,
    key_reuse_signature_from_primitive,
    key_reuse_signatures,
    olympuspr_type_signature,
    unknown_signature,
)
from olympus_trace.make_olympuspr import trace_fun

from ...random._key_reuse import check_signature, checked_jit_call, update_consumption

__all__ = ["Sink", "Source", "Forward", "KeyReuseSignature", "DynamicKeyReuseSignature",
           "dynamic_key_reuse_signature", "key_reuse_signatures", "unknown_signature",
           "key_reuse_signature_from_eqn", "key_reuse_signature_from_primitive",
           "olympuspr_type_signature", "check_key_reuse_olympuspr", "function_type_signature",
           "check_key_reuse", "consume", "consume_p", "assert_consumed", "assert_unconsumed",
           "assert_consumed_value_p", "ConsumedMask", "check_signature",
           "update_consumption", "checked_jit_call"]


def function_type_signature(fun: Callable[..., Any], *args: Any) -> KeyReuseSignature:
    """The key-reuse signature of `fun` traced on (the types of) `args`."""
    closed, _, _ = trace_fun(fun, args, {}, (), (), "key_reuse")
    return olympuspr_type_signature(closed)


def check_key_reuse(fun: Callable[..., Any], /, *args: Any) -> None:
    """Trace `fun` on `args` and raise `KeyReuseError` if it reuses a key."""
    function_type_signature(fun, *args)
