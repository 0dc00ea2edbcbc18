"""`safe_map` and `safe_zip`: map and zip that insist on equal lengths.

They live at this path because JAX's documentation (the custom-interpreter guide) imports
them from ``jax._src.util``; the messages are JAX's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["safe_map", "safe_zip"]


def safe_map(f: Callable, *args: Iterable) -> list:
    """``list(map(f, *args))``; ValueError if the arguments differ in length."""
    seqs = [list(a) for a in args]
    if seqs:
        n = len(seqs[0])
        for i, s in enumerate(seqs[1:], start=2):
            if len(s) != n:
                rel = "shorter" if len(s) < n else "longer"
                raise ValueError(f"safe_map() argument {i} is {rel} than argument 1")
    return list(map(f, *seqs))


def safe_zip(*args: Iterable) -> list[tuple[Any, ...]]:
    """``list(zip(*args))``; ValueError if the arguments differ in length."""
    seqs = [list(a) for a in args]
    if seqs:
        n = len(seqs[0])
        for i, s in enumerate(seqs[1:], start=1):
            if len(s) != n:
                lengths = tuple(len(x) for x in seqs)
                raise ValueError(f"safe_zip() argument {i} has length {len(s)} but argument 0 "
                                 f"has length {n}. All lengths: {lengths}")
    return list(zip(*seqs))
