"""JVP rule for sort: the tangents follow the primal permutation, which is recovered by
sorting an iota alongside the operands (a non-key operand), then gathering."""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P

from .. import lax_ops as lax
from ..ad import Zero, jvp_rules, tangent_aval
from ..core import bind, get_aval
from ._util import take_along_axis


def _sort_jvp(primals, tangents, *, dimension, is_stable=True, num_keys=1):
    shape = get_aval(primals[0]).shape
    iota = lax.broadcasted_iota(np.int32, shape, dimension)
    outs = bind(P.sort_p, *primals, iota, dimension=dimension, is_stable=is_stable,
                num_keys=num_keys)
    perm = outs[-1]
    outs = list(outs[:-1])
    ts = [Zero(tangent_aval(get_aval(o))) if isinstance(t, Zero)
          else take_along_axis(t, perm, dimension) for o, t in zip(outs, tangents)]
    return outs, ts


jvp_rules[P.sort_p] = _sort_jvp
