"""Exchanging arrays with other libraries through DLPack (JAX's ``jax.dlpack``)."""

from ._src.dlpack import from_dlpack, is_supported_dtype

__all__ = ["from_dlpack", "is_supported_dtype"]
