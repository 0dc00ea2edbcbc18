"""JVP and transpose of ``sharding_constraint``: linear (the identity), so the tangent and
the cotangent get the same constraint."""

from __future__ import annotations

from olympus_ir.prims.sharding import sharding_constraint_p

from ..ad import Zero, jvp_rules, transpose_rules
from ..core import bind


def _constraint_jvp(primals, tangents, *, sharding):
    (x,), (t,) = primals, tangents
    out = bind(sharding_constraint_p, x, sharding=sharding)
    if isinstance(t, Zero):
        return out, t
    return out, bind(sharding_constraint_p, t, sharding=sharding)


def _constraint_transpose(ct, x, *, sharding):
    if isinstance(ct, Zero):
        return [ct]
    return [bind(sharding_constraint_p, ct, sharding=sharding)]


jvp_rules[sharding_constraint_p] = _constraint_jvp
transpose_rules[sharding_constraint_p] = _constraint_transpose
