"""A cache of traced control-flow bodies, so calling `scan`/`cond`/`while_loop` again with
the same Python function and argument types does not trace it again.

Entries hang off the function by a weak reference (a dropped function drops its entries),
and each function keeps at most `ENTRIES_PER_FUNCTION`, least recently used first out. The
key is the caller's (argument structure and types, other functions) plus the config values,
which can change what tracing produces (x64, the threefry mode).

A traced body whose constants include a tracer of an enclosing transformation is never
stored: those constants belong to one trace. So what is cached is exactly what JAX caches
for the same call, and the rule for users is the same as for `jit`: a body must not depend
on Python state that changes between calls.

Reusing the traced object also lets op-by-op execution find the compiled primitive it
built last time (its cache is keyed by the sub-olympuspr object), instead of lowering it
again.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from olympus_trace.core import Tracer

from .._src.config import config as _config

__all__ = ["ENTRIES_PER_FUNCTION", "cached_trace", "clear", "memo_wrapper"]

ENTRIES_PER_FUNCTION = 8

T = TypeVar("T")

_entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_wrappers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def cached_trace(fun: Callable, key: tuple, build: Callable[[], tuple[T, Sequence[Any]]],
                 *, others: Sequence[Callable] = ()) -> T:
    """``build()`` returns ``(result, consts)``; `result` is remembered under (`fun`, `key`,
    `others`) unless a const is a tracer. `others` are the call's other functions (e.g. the
    other branches of a `cond`); the key holds them weakly, so an entry does not keep them
    (and what they close over) alive. Functions that cannot be weakly referenced or hashed,
    and unhashable keys, are simply traced every time."""
    try:
        full_key = (key, tuple(weakref.ref(f) for f in others),
                    tuple(_config._values.values()))
        with _lock:
            per_fun = _entries.get(fun)
            hit = per_fun.get(full_key) if per_fun is not None else None
            if hit is not None:
                per_fun.move_to_end(full_key)
                return hit
    except TypeError:  # a function is not weak-referenceable or hashable, or the key is not
        return build()[0]
    result, consts = build()
    if any(isinstance(c, Tracer) for c in consts):
        return result
    with _lock:
        per_fun = _entries.get(fun)
        if per_fun is None:
            per_fun = _entries[fun] = OrderedDict()
        per_fun[full_key] = result
        while len(per_fun) > ENTRIES_PER_FUNCTION:
            per_fun.popitem(last=False)
    return result


def memo_wrapper(kind: str, fun: Callable, make: Callable[[Callable], Callable]) -> Callable:
    """``make(f)``, the same object on every call for the same (`kind`, `fun`), so a
    wrapper built per call (e.g. `fori_loop`'s scan step) still hits `cached_trace`.

    `make` receives a stand-in for `fun` that refers to it weakly (the wrapper is stored
    with `fun` as a weak key, and must not keep it alive)."""
    try:
        ref = weakref.ref(fun)
        with _lock:
            per_fun = _wrappers.get(fun)
            if per_fun is not None and kind in per_fun:
                return per_fun[kind]
    except TypeError:
        return make(fun)

    def call_fun(*args, **kwargs):
        return ref()(*args, **kwargs)

    wrapper = make(call_fun)
    with _lock:
        return _wrappers.setdefault(fun, {}).setdefault(kind, wrapper)


def clear() -> None:
    """Forget every cached trace (for tests)."""
    with _lock:
        _entries.clear()
        _wrappers.clear()
