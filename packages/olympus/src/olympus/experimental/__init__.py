"""`olympus.experimental`: APIs JAX keeps under ``jax.experimental``: `io_callback` and
the `checkify` module."""

from .._src.callbacks import io_callback

__all__ = ["io_callback"]
