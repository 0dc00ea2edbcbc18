"""`olympus.monitoring`: listeners for the events Olympus records (as ``jax.monitoring``).

Olympus records, for every compilation of a jitted function (eager operations included),
the durations of its three stages with ``fun_name=<function name>``:
``/olympus/core/compile/olympuspr_trace_duration``,
``/olympus/core/compile/olympuspr_to_mlir_module_duration`` and
``/olympus/core/compile/backend_compile_duration`` (also as time spans and, at each
stage's start, as a scalar holding the start time), and an event
``/olympus/jit/cache_miss`` (``fun_name=``) each time a jitted function is traced for a new
signature. Listeners are called synchronously, in registration order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "record_event", "record_event_duration_secs", "record_event_time_span", "record_scalar",
    "register_event_listener", "register_event_duration_secs_listener",
    "register_event_time_span_listener", "register_scalar_listener",
    "unregister_event_listener", "unregister_event_duration_listener",
    "unregister_event_time_span_listener", "unregister_scalar_listener",
    "clear_event_listeners", "get_event_listeners", "get_event_duration_listeners",
    "get_event_time_span_listeners", "get_scalar_listeners",
    "TRACE_EVENT", "LOWER_EVENT", "COMPILE_EVENT", "CACHE_MISS_EVENT",
]

TRACE_EVENT = "/olympus/core/compile/olympuspr_trace_duration"
LOWER_EVENT = "/olympus/core/compile/olympuspr_to_mlir_module_duration"
COMPILE_EVENT = "/olympus/core/compile/backend_compile_duration"
CACHE_MISS_EVENT = "/olympus/jit/cache_miss"

_event_listeners: list[Callable[..., Any]] = []
_duration_listeners: list[Callable[..., Any]] = []
_time_span_listeners: list[Callable[..., Any]] = []
_scalar_listeners: list[Callable[..., Any]] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Call every event listener with ``(event, **kwargs)``."""
    for callback in list(_event_listeners):
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Call every duration listener with ``(event, duration, **kwargs)``."""
    for callback in list(_duration_listeners):
        callback(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Call every time-span listener with ``(event, start_time, end_time, **kwargs)``."""
    for callback in list(_time_span_listeners):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Call every scalar listener with ``(event, value, **kwargs)``."""
    for callback in list(_scalar_listeners):
        callback(event, value, **kwargs)


def register_event_listener(callback: Callable[..., Any]) -> None:
    """Call `callback(event, **kwargs)` on every event Olympus records (compiles, cache hits
    and misses; JAX's event names with `olympus` in place of `jax`).
    """
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback: Callable[..., Any]) -> None:
    """Call `callback(event, duration_secs, **kwargs)` on every timed event (tracing,
    lowering, compiling, persistent-cache reads).
    """
    _duration_listeners.append(callback)


def register_event_time_span_listener(callback: Callable[..., Any]) -> None:
    """Call `callback(event, start_time, end_time, **kwargs)` on every timed event."""
    _time_span_listeners.append(callback)


def register_scalar_listener(callback: Callable[..., Any]) -> None:
    """Call `callback(event, value, **kwargs)` on every scalar Olympus records."""
    _scalar_listeners.append(callback)


def _unregister(listeners: list, callback: Callable[..., Any], kind: str) -> None:
    if callback not in listeners:
        raise ValueError(f"{callback!r} is not a registered {kind} listener")
    listeners.remove(callback)


def unregister_event_listener(callback: Callable[..., Any]) -> None:
    """Remove an event listener; ValueError if it is not registered."""
    _unregister(_event_listeners, callback, "event")


def unregister_event_duration_listener(callback: Callable[..., Any]) -> None:
    """Remove an event-duration listener; ValueError if it is not registered."""
    _unregister(_duration_listeners, callback, "event duration")


def unregister_event_time_span_listener(callback: Callable[..., Any]) -> None:
    """Remove a time-span listener; ValueError if it is not registered."""
    _unregister(_time_span_listeners, callback, "event time span")


def unregister_scalar_listener(callback: Callable[..., Any]) -> None:
    """Remove a scalar listener; ValueError if it is not registered."""
    _unregister(_scalar_listeners, callback, "scalar")


def get_event_listeners() -> list[Callable[..., Any]]:
    """The registered event listeners, in registration order (a copy)."""
    return list(_event_listeners)


def get_event_duration_listeners() -> list[Callable[..., Any]]:
    """The registered event-duration listeners (a copy)."""
    return list(_duration_listeners)


def get_event_time_span_listeners() -> list[Callable[..., Any]]:
    """The registered time-span listeners (a copy)."""
    return list(_time_span_listeners)


def get_scalar_listeners() -> list[Callable[..., Any]]:
    """The registered scalar listeners (a copy)."""
    return list(_scalar_listeners)


def clear_event_listeners() -> None:
    """Remove every listener of every kind."""
    for listeners in (_event_listeners, _duration_listeners, _time_span_listeners,
                      _scalar_listeners):
        listeners.clear()
