"""Placing values on devices: ``sharding_constraint``.

* ``sharding_constraint(x; sharding)``: x itself, asking the SPMD partitioner to lay it out
  as `sharding` says (a `NamedSharding`-like object: ``spec``, ``num_devices``,
  ``with_spec(spec)``). The IR treats the sharding as an opaque, hashable parameter.
"""

from __future__ import annotations

from ..core import def_shape_rule, new_primitive

__all__ = ["sharding_constraint_p"]

sharding_constraint_p = new_primitive("sharding_constraint")


@def_shape_rule(sharding_constraint_p)
def sharding_constraint_shape_rule(x, *, sharding):
    spec = getattr(sharding, "spec", None)
    if spec is not None and len(spec) > x.ndim:
        raise ValueError(
            f"Sharding {sharding!r} is only valid for values of rank at least {len(spec)}, "
            f"but was applied to a value of rank {x.ndim}.")
    return x
