"""JVP rules of the random-bit primitives: their operands and results are unsigned
integers, so they have no derivative."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..ad import jvp_rules
from ._util import zero_jvp

for _p in (P.rng_bit_generator_p, P.threefry2x32_p):
    jvp_rules[_p] = zero_jvp(_p)
