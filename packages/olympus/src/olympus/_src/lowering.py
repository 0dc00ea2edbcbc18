"""The olympus package's door to olympus-lower.

olympus-lower (and the MLIR bindings under it) is imported on the first lowering, not by
``import olympus``: a process pays for it only once it compiles something. Lowering rules
that this package defines (custom_jvp/custom_vjp calls, checkpoint) are queued here and
registered with olympus-lower when it is first needed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["register_lowering", "lower_olympuspr"]

_queued: list[tuple[Any, Callable]] = []
_lower: Callable | None = None


def register_lowering(prim: Any, rule: Callable) -> None:
    """Register `rule` for `prim` with olympus-lower, now if it is loaded, else on first use."""
    if "olympus_lower" in sys.modules:
        sys.modules["olympus_lower"].register_lowering(prim)(rule)
    else:
        _queued.append((prim, rule))


def _load() -> Callable:
    global _lower
    import olympus_lower

    while _queued:
        prim, rule = _queued.pop()
        olympus_lower.register_lowering(prim)(rule)
    _lower = olympus_lower.lower_olympuspr
    return _lower


def lower_olympuspr(*args: Any, **kwargs: Any) -> Any:
    """`olympus_lower.lower_olympuspr`, importing olympus-lower on first use."""
    return (_lower or _load())(*args, **kwargs)
