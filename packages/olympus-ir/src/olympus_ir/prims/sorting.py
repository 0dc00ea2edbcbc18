"""``sort(*operands; dimension, is_stable, num_keys)``: sorts operands together along one
dimension, ordering lexicographically by the first ``num_keys`` of them."""

from __future__ import annotations

import numpy as np

from ..core import def_shape_rule, new_primitive

__all__ = ["sort_p"]

sort_p = new_primitive("sort", multiple_results=True)


@def_shape_rule(sort_p)
def sort_shape_rule(*operands, dimension, is_stable=True, num_keys=1):
    if not operands:
        raise TypeError("sort requires at least one operand, got 0.")
    shape = operands[0].shape
    if any(x.shape != shape for x in operands):
        raise TypeError("sort requires all operands to have equal shapes, got "
                        + ", ".join(str(x.shape) for x in operands) + ".")
    if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)) \
            or not 0 <= dimension < len(shape):
        raise TypeError(f"sort dimension {dimension!r} is out of range [0, {len(shape)}) for "
                        f"operands of shape {shape}.")
    if isinstance(num_keys, bool) or not isinstance(num_keys, (int, np.integer)) \
            or not 1 <= num_keys <= len(operands):
        raise TypeError(f"sort num_keys={num_keys!r} must be between 1 and the number of "
                        f"operands ({len(operands)}).")
    return list(operands)
