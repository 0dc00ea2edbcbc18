"""Autodiff rules the collectives (olympus_trace.collectives, which registers the JVPs of
psum/pmax/pmin/all_gather and psum's transpose) still lack: axis_index's zero JVP and the
transpose of all_gather (each member's cotangent is its block of the psum of the gathered
cotangents). Registered only where no rule exists yet."""

from __future__ import annotations

import numpy as np

from .. import lax_ops as lax
from ..ad import Zero, jvp_rules, transpose_rules
from ..collectives import all_gather_p, axis_index_p, psum_p
from ..core import bind, get_aval
from .elementwise import _zero_jvp


def _all_gather_transpose(ct, x, *, axis_name, axis_size, axis=0, tiled=False):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    total = bind(psum_p, ct, axis_name=axis_name)
    shape = get_aval(total).shape
    block = x.aval.shape[axis] if tiled else 1
    me = bind(axis_index_p, axis_name=axis_name)
    idx_dt = get_aval(me).dtype
    starts = [np.zeros((), idx_dt)] * len(shape)
    starts[axis] = lax.mul(me, np.array(block, idx_dt))
    sizes = list(shape)
    sizes[axis] = block
    part = lax.dynamic_slice(total, starts, sizes)
    return [lax.reshape(part, x.aval.shape)]


if axis_index_p not in jvp_rules:
    _zero_jvp(axis_index_p)
if all_gather_p not in transpose_rules:
    transpose_rules[all_gather_p] = _all_gather_transpose
