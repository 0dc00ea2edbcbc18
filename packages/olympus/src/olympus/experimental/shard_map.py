"""The deprecated ``shard_map`` of ``jax.experimental.shard_map``: `olympus.shard_map`
with the mesh positional and ``check_rep`` for ``check_vma``; reading it warns, as in JAX."""

from __future__ import annotations

import warnings


def _shard_map(f, mesh, in_specs, out_specs, check_rep=True):
    """Please use `olympus.shard_map`."""
    from .._src.shard_map import shard_map

    return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                     check_vma=check_rep)


def __getattr__(name: str):
    if name == "shard_map":
        warnings.warn("olympus.experimental.shard_map is deprecated in v0.8.0. Used "
                      "olympus.shard_map instead.", DeprecationWarning, stacklevel=2)
        return _shard_map
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
