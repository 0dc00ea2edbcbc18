"""The report `checking_leaks` gives when tracers outlive their trace: JAX's plain
``Exception("Leaked trace DynamicOlympusprTrace. Leaked tracer(s): ...")`` naming each
leaked tracer, where it was traced, and a chain of the objects keeping it alive."""

from __future__ import annotations

import gc
import types
from typing import Any

__all__ = ["leaked_tracer_error"]


def leaked_tracer_error(trace_name: str, tracers: list) -> Exception:
    """The exception for `tracers` leaked from the trace called `trace_name`."""
    ignore = {id(tracers)}
    parts = [f"{t!r}{t._origin_msg()}{_why_alive(t, ignore)}" for t in tracers]
    return Exception(f"Leaked trace {trace_name}. Leaked tracer(s):\n\n"
                     + "\n\n".join(parts) + "\n")


# Each step scans the heap (gc.get_referrers): the chain stops after this many links.
_MAX_CHAIN = 6


def _referrers(x: Any, ignore: set) -> list:
    refs = [r for r in gc.get_referrers(x)
            if id(r) not in ignore and not isinstance(r, (types.FrameType, types.CellType))]
    # A module's namespace first: the shortest explanation of why a value stays alive.
    return sorted(refs, key=lambda r: not (isinstance(r, dict) and "__name__" in r
                                           and "__builtins__" in r))


def _why_alive(x: Any, ignore: set) -> str:
    """``<list 1407...> is referred to by __main__.outs`` lines, from `x` up to a module."""
    lines: list[str] = []
    seen: set[int] = set()
    # This walk's own lists refer to what they hold: never a reason to be alive.
    ignore = ignore | {id(lines), id(seen)}
    child = x
    while (id(child) not in seen and not isinstance(child, types.ModuleType)
           and len(lines) < _MAX_CHAIN):
        parents = _referrers(child, ignore)
        ignore.add(id(parents))
        if not parents:
            break
        parent = parents[0]
        # An object's (or module's) attribute dict stands for the object itself.
        if isinstance(parent, dict):
            owners = _referrers(parent, ignore)
            ignore.add(id(owners))
            owners = [o for o in owners if getattr(o, "__dict__", None) is parent]
            ignore.add(id(owners))
            if owners:
                parent = owners[0]
        name = _tracer_type_name(child)
        lines.append(f"<{name} {id(child)}> is referred to by {_describe(parent, child)}")
        seen.add(id(child))
        child = parent
    return "\n" + "\n".join(lines) if lines else ""


def _tracer_type_name(x: Any) -> str:
    return getattr(x, "error_type_name", type(x).__name__)


def _describe(container: Any, child: Any) -> str:
    if isinstance(container, types.ModuleType):
        keys = [k for k, v in vars(container).items() if v is child]
        return f"{container.__name__}.{keys[0]}" if len(keys) == 1 else container.__name__
    name = f"<{type(container).__name__} {id(container)}>"
    if isinstance(container, (list, tuple)):
        idx = [i for i, v in enumerate(container) if v is child]
        return f"{name}[{idx[0]}]" if len(idx) == 1 else name
    if isinstance(container, dict):
        keys = [k for k, v in container.items() if v is child]
        return f"{name}[{keys[0]!r}]" if len(keys) == 1 else name
    d = getattr(container, "__dict__", None)
    if isinstance(d, dict):
        keys = [k for k, v in d.items() if v is child]
        if len(keys) == 1:
            return f"{name}.{keys[0]}"
    return name
