"""Rematerialization (JAX's ``jax.ad_checkpoint``): `checkpoint_name` to name values for
checkpoint policies, `print_saved_residuals` to see what reverse mode saves, the policies
(`checkpoint_policies`), and the answers a policy may give (`Recompute`, `Saveable`,
`Offloadable`)."""

from ._src.ad_checkpoint import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint_policies,
    print_saved_residuals,
    saved_residuals,
)
from ._src.custom_derivatives import checkpoint_name

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint_name", "checkpoint_policies",
           "print_saved_residuals", "saved_residuals"]
