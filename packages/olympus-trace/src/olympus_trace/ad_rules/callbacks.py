"""JVP rule for ``debug_callback``: the callback sees the primal values only (tangents
are ignored) and, having no results, contributes no tangents. No transpose rule is
needed: with no results it is never on the linear path."""

from __future__ import annotations

from olympus_ir.prims.callbacks import debug_callback_p

from ..ad import jvp_rules
from ..core import bind


def _debug_callback_jvp(primals, tangents, **params):
    bind(debug_callback_p, *primals, **params)
    return [], []


jvp_rules[debug_callback_p] = _debug_callback_jvp
