"""The warnings and error the sparse formats raise about inefficient layouts."""

from __future__ import annotations

__all__ = ["SparseEfficiencyError", "SparseEfficiencyWarning", "CuSparseEfficiencyWarning"]


class SparseEfficiencyError(ValueError):
    """An operation would store many explicit zeros (e.g. ``update_layout`` adding
    batch or dense dimensions); pass ``on_inefficient`` to allow it."""


class SparseEfficiencyWarning(UserWarning):
    """An operation stores many explicit zeros (``on_inefficient='warn'``)."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """A cuSPARSE kernel could not be used (kept for JAX's API; Olympus runs on CPU)."""
