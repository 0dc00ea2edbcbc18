"""The executable cache behind op-by-op (eager) execution.

The meta-package runs each primitive applied outside ``jit`` as a tiny compiled program.
`EagerCache` maps a hashable key, such as ``(primitive name, frozen params, in avals)``,
to an `Executable`, building (lowering + compiling) it once per key even when several
threads miss at the same time. A warm lookup is one dict access.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from ._once import OnceMap
from .compiler import Executable, compile

__all__ = ["EagerCache", "execute_single"]


class EagerCache:
    """Executables keyed by a hashable key, built on first use.

    ``build()`` returns ``(module, out_avals)`` or ``(module, in_avals, out_avals)``;
    without in avals they are read from the module's main signature. The module is
    compiled for `device` (default: the default device); the device is part of the key.
    """

    def __init__(self, *, committed: bool = True) -> None:
        self._table = OnceMap()
        self._committed = committed
        self._lock = threading.Lock()
        self._compile_count = 0

    def get(self, key: Hashable, build: Callable[[], tuple], device: Any = None) -> Executable:
        full = key if device is None else (key, device)
        exe = self._table.get(full)
        if exe is not None:
            return exe
        return self._table.get_or_create(full, lambda: self._build(build, device))

    def _build(self, build: Callable[[], tuple], device: Any) -> Executable:
        built = build()
        if len(built) == 2:
            module, out_avals = built
            in_avals = None
        elif len(built) == 3:
            module, in_avals, out_avals = built
        else:
            raise ValueError(
                "EagerCache: build() must return (module, out_avals) or "
                f"(module, in_avals, out_avals), got a {len(built)}-tuple"
            )
        exe = compile(
            module,
            devices=None if device is None else [device],
            in_avals=in_avals,
            out_avals=out_avals,
            committed=self._committed,
        )
        with self._lock:
            self._compile_count += 1
        return exe

    @property
    def compile_count(self) -> int:
        """How many times this cache called ``build`` and compiled (one per key)."""
        return self._compile_count

    def clear(self) -> None:
        self._table.clear()

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._table


def execute_single(exe: Executable, args: Sequence[Any]) -> Any:
    """Run a one-output executable and return that output Array."""
    return exe.execute(args)[0]
