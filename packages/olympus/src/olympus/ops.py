"""Segment reductions (JAX's ``jax.ops``)."""

from ._src.segment import segment_max, segment_min, segment_prod, segment_sum

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
