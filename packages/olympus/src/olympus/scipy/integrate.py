"""`olympus.scipy.integrate`: `trapezoid`."""

from __future__ import annotations

import functools

import olympus
import olympus.numpy as jnp

__all__ = ["trapezoid"]


@functools.partial(olympus.jit, static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of `y` along `axis` by the trapezoidal rule (sample points `x`, or
    spacing `dx`)."""
    return jnp.trapezoid(y, x, dx, axis)
