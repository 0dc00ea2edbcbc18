"""Small top-level helpers JAX has beside its transformations: ``copy_to_host_async``,
the deprecated ``host_ids``, the ``memory.Space`` enum and the ``ad`` marker types."""

from __future__ import annotations

import dataclasses
import enum
import warnings
from types import SimpleNamespace
from typing import Any

from olympus_trace import tree_util

__all__ = ["copy_to_host_async", "host_ids", "memory", "ad"]


def copy_to_host_async(x: Any) -> Any:
    """Start copying every array leaf of `x` to the host (so a later ``np.asarray`` does
    not wait for the transfer); returns `x`."""
    for leaf in tree_util.tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x


def host_ids(backend: Any = None) -> list[int]:
    """Deprecated alias of ``process_indices`` (JAX warns with this wording)."""
    from .sharding import process_indices

    warnings.warn("olympus.process_indexs has been renamed to olympus.process_indices. This "
                  "alias will eventually be removed; please update your code.", stacklevel=2)
    return process_indices(backend)


class MemorySpace(enum.Enum):
    """Where an array's memory lives: on the device, on the host, or either."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__


memory = SimpleNamespace(Space=MemorySpace)


@dataclasses.dataclass(frozen=True)
class GradValue:
    """Marker: differentiate with respect to this value."""


@dataclasses.dataclass(frozen=True)
class GradRef:
    """Marker: differentiate with respect to this reference."""


@dataclasses.dataclass(frozen=True)
class DontWant:
    """Marker: no cotangent is wanted for this input."""


@dataclasses.dataclass(frozen=True)
class DidntWant:
    """Marker in a cotangent tree: the input's cotangent was not asked for."""


tree_util.register_pytree_node(GradRef, lambda _: ((), None), lambda _a, _c: GradRef())
tree_util.register_pytree_node(DidntWant, lambda _: ((), None), lambda _a, _c: DidntWant())

ad = SimpleNamespace(DontWant=DontWant, DidntWant=DidntWant, GradRef=GradRef,
                     GradValue=GradValue)
