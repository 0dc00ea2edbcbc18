"""A thread-safe map whose values are built at most once per key.

Used by the compile caches: when several threads ask for the same missing key, one of
them builds the value and the others wait for it (or for its exception), so an
executable is compiled once. Different keys build in parallel.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["OnceMap"]


class _Pending:
    __slots__ = ("event", "value", "error", "owner")

    def __init__(self, owner: int):
        self.event = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.owner = owner


class OnceMap:
    def __init__(self) -> None:
        self._values: dict[Hashable, Any] = {}
        self._pending: dict[Hashable, _Pending] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        return self._values.get(key)

    def get_or_create(self, key: Hashable, factory: Callable[[], Any]) -> Any:
        value = self._values.get(key)
        if value is not None:
            return value
        me = threading.get_ident()
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                return value
            pending = self._pending.get(key)
            owner = pending is None
            if owner:
                pending = self._pending[key] = _Pending(me)
        if not owner:
            if pending.owner == me:
                raise RuntimeError(f"recursive request for a value being built: {key!r}")
            pending.event.wait()
            if pending.error is not None:
                raise pending.error
            return pending.value
        try:
            value = factory()
        except BaseException as e:
            pending.error = e
            with self._lock:
                del self._pending[key]
            pending.event.set()
            raise
        with self._lock:
            self._values[key] = value
            del self._pending[key]
        pending.value = value
        pending.event.set()
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._values
