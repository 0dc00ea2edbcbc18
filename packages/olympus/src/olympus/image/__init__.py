"""Image resampling (JAX's ``jax.image``): ``resize``, ``scale_and_translate`` and
``ResizeMethod``."""

from .._src.image_resize import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
