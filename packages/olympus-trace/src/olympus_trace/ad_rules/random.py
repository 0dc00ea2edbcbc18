"""JVP rules of the random-bit primitives: their operands and results are unsigned
integers or PRNG keys, so they have no derivative (keys' tangents are float0, as in JAX).
``random_gamma`` is differentiable in its shape parameter, by the implicit derivative."""

from __future__ import annotations

from olympus_ir import primitives as P

from .. import lax_ops as lax
from ..ad import Zero, jvp_rules
from ..core import bind
from ._util import aval_of, zero_jvp

for _p in (P.rng_bit_generator_p, P.threefry2x32_p, P.random_seed_p, P.random_wrap_p,
           P.random_unwrap_p, P.random_split_p, P.random_fold_in_p, P.random_bits_p,
           P.random_clone_p, P.consume_p, P.assert_consumed_value_p):
    jvp_rules[_p] = zero_jvp(_p)


#: ``gamma_sample_grad[0](samples, a, log_space)``: d sample / d a for Gamma samples held at
#: a fixed quantile (JAX's ``_gamma_grad``). It is built from the incomplete-gamma
#: composites of `olympus.lax`, above this package, which installs it on import.
gamma_sample_grad: list = []


def _random_gamma_jvp(primals, tangents, *, log_space):
    """As JAX's (``defjvp2``): the tangent in `a` times the implicit derivative of the
    sample at the sample drawn; the keys have no tangent."""
    keys, a = primals
    out = bind(P.random_gamma_p, keys, a, log_space=log_space)
    t = tangents[1]
    if isinstance(t, Zero):
        return out, Zero(aval_of(t))
    if not gamma_sample_grad:  # pragma: no cover - olympus.random installs it
        raise NotImplementedError("random_gamma's derivative needs olympus.random imported")
    return out, lax.mul(t, gamma_sample_grad[0](out, a, log_space))


jvp_rules[P.random_gamma_p] = _random_gamma_jvp
