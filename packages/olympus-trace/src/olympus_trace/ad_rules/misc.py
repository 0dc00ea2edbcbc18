"""JVP and transpose rules for selection (select_n, clamp) and for the primitives with no
derivative: iota and the random-bit primitives (no differentiable inputs), argmax/argmin
(integer results) and bitcast_convert_type (a reinterpretation of bits, not a smooth map)."""

from __future__ import annotations

from olympus_ir import primitives as P

from .. import lax_ops as lax
from ..ad import Zero, add_tangents, is_undefined_primal, jvp_rules, tangent_aval, transpose_rules
from ..core import bind, get_aval
from ._util import inst, zeros
from .elementwise import _zero_jvp

for _p in (P.iota_p, P.rng_bit_generator_p, P.threefry2x32_p, P.argmax_p, P.argmin_p,
           P.bitcast_convert_type_p):
    _zero_jvp(_p)


# --- select_n: linear in the cases ------------------------------------------------------------


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = bind(P.select_n_p, which, *cases)
    ts = tangents[1:]
    if all(isinstance(t, Zero) for t in ts):
        return out, Zero(tangent_aval(get_aval(out)))
    return out, bind(P.select_n_p, which, *[inst(t) for t in ts])


def _select_n_transpose(ct, which, *cases):
    if is_undefined_primal(which):  # pragma: no cover - the predicate is never linear
        raise NotImplementedError("select_n is not linear in its predicate")
    out = [None]
    if isinstance(ct, Zero):
        return out + [Zero(c.aval) if is_undefined_primal(c) else None for c in cases]
    z = zeros(get_aval(ct))
    for i, c in enumerate(cases):
        if is_undefined_primal(c):
            out.append(bind(P.select_n_p, which,
                            *[ct if j == i else z for j in range(len(cases))]))
        else:
            out.append(None)
    return out


jvp_rules[P.select_n_p] = _select_n_jvp
transpose_rules[P.select_n_p] = _select_n_transpose


# --- clamp ------------------------------------------------------------------------------------


def _clamp_jvp(primals, tangents):
    lo, x, hi = primals
    tlo, tx, thi = tangents
    out = bind(P.clamp_p, lo, x, hi)
    shape = get_aval(out).shape
    z = zeros(tangent_aval(get_aval(out)))

    def fit(t):
        return t if get_aval(t).shape == shape else lax.broadcast_in_dim(t, shape, ())

    t = Zero(tangent_aval(get_aval(out)))
    if not isinstance(tx, Zero):
        inside = lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi))
        t = add_tangents(t, lax.select(inside, tx, z))
    if not isinstance(tlo, Zero):
        below = lax.bitwise_and(lax.gt(lo, x), lax.lt(lo, hi))
        if get_aval(below).shape != shape:
            below = lax.broadcast_in_dim(below, shape, ())
        t = add_tangents(t, lax.select(below, fit(tlo), z))
    if not isinstance(thi, Zero):
        above = lax.lt(hi, x)
        if get_aval(above).shape != shape:
            above = lax.broadcast_in_dim(above, shape, ())
        t = add_tangents(t, lax.select(above, fit(thi), z))
    return out, t


jvp_rules[P.clamp_p] = _clamp_jvp

