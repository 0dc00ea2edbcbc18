"""JVP rule of ``check``: the check applies to the primal values (as in JAX, a check
on a gradient needs a custom_vjp); having no results, it contributes no tangents and is
never on the linear path."""

from __future__ import annotations

from olympus_ir.prims.checks import check_p

from ..ad import jvp_rules
from ..core import bind


def _check_jvp(primals, tangents, **params):
    bind(check_p, *primals, **params)
    return [], []


jvp_rules[check_p] = _check_jvp
