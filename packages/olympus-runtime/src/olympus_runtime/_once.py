"""A thread-safe map whose values are built at most once per key.

Used by the compile caches: when several threads ask for the same missing key, one of
them builds the value and the others wait for it (or for its exception), so an
executable is compiled once. Different keys build in parallel.

With ``weak=True`` the map holds its values weakly (they live as long as someone else
uses them) plus, strongly, the `keep` most recently built or found: a cache that never
grows beyond what the program still uses, yet still serves a value asked for again soon
after its last user let go of it.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
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
    def __init__(self, *, weak: bool = False, keep: int = 0) -> None:
        self._values: Any = weakref.WeakValueDictionary() if weak else {}
        self._recent: OrderedDict | None = OrderedDict() if weak and keep > 0 else None
        self._keep = keep
        self._pending: dict[Hashable, _Pending] = {}
        self._lock = threading.Lock()

    def _touch(self, key: Hashable, value: Any) -> None:
        """Hold `value` strongly as one of the `keep` most recent (weak maps only)."""
        recent = self._recent
        if recent is None:
            return
        with self._lock:
            recent[key] = value
            recent.move_to_end(key)
            while len(recent) > self._keep:
                recent.popitem(last=False)

    def get(self, key: Hashable) -> Any:
        value = self._values.get(key)
        if value is not None and self._recent is not None:
            self._touch(key, value)
        return value

    def get_or_create(self, key: Hashable, factory: Callable[[], Any]) -> Any:
        value = self.get(key)
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
        self._touch(key, value)
        pending.value = value
        pending.event.set()
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            if self._recent is not None:
                self._recent.clear()

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._values
