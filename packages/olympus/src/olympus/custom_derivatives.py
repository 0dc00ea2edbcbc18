"""User-defined derivatives (JAX's ``jax.custom_derivatives``): `custom_jvp`, `custom_vjp`,
`custom_gradient`, `closure_convert`, and the primitives a call of a custom function binds
(``custom_jvp_call``, ``custom_vjp_call``)."""

from ._src.custom_derivatives import (
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
)

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p",
           "custom_vjp", "custom_vjp_call_p"]
