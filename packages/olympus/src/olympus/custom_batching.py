"""Functions with user-defined batching (JAX's ``jax.custom_batching``)."""

from ._src.custom_batching import custom_vmap, sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]
