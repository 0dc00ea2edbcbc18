"""Helpers shared by the rule modules."""

from __future__ import annotations

import numpy as np

from .. import lax_ops as lax
from ..ad import Zero, instantiate, is_undefined_primal  # noqa: F401
from ..core import get_aval


def aval_of(x):
    return x.aval if (isinstance(x, Zero) or is_undefined_primal(x)) else get_aval(x)


def unbroadcast(ct, aval):
    """Sum `ct` down to `aval`'s shape: the transpose of the implicit rank-0 broadcast of
    elementwise primitives."""
    if isinstance(ct, Zero):
        return Zero(aval)
    cshape = get_aval(ct).shape
    if cshape == aval.shape:
        return ct
    if aval.shape == ():
        return lax.reduce_sum(ct, tuple(range(len(cshape))))
    raise ValueError(f"cannot unbroadcast {cshape} to {aval.shape}")  # pragma: no cover


def scalar(v, like):
    """`v` as a constant of `like`'s dtype (weak when `like` is weak)."""
    a = get_aval(like)
    return np.array(v, a.dtype)[()] if not a.weak_type else lax._scalar_like(v, a.dtype, True)


def bcast_like(t, x):
    """Broadcast tangent `t` to the shape of `x` (rank-0 operands of elementwise ops)."""
    ts, xs = get_aval(t).shape, get_aval(x).shape
    if ts == xs:
        return t
    return lax.broadcast_in_dim(t, xs, ())
