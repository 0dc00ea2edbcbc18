"""JVP and transpose rules of the host callbacks.

``debug_callback``: the callback sees the primal values only (tangents are ignored) and,
having no results, contributes no tangents; with no results it is never on the linear
path, so it needs no transpose rule.

``pure_callback`` and ``io_callback`` cannot be differentiated (the host function is
opaque): as in JAX, differentiating one is a ValueError pointing to ``custom_jvp`` /
``custom_vjp``, which is how a callback is made differentiable.
"""

from __future__ import annotations

from olympus_ir.prims.callbacks import debug_callback_p, io_callback_p, pure_callback_p

from ..ad import jvp_rules, transpose_rules
from ..core import bind


def _debug_callback_jvp(primals, tangents, **params):
    bind(debug_callback_p, *primals, **params)
    return [], []


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `olympus.custom_jvp` to "
                     "use callbacks while taking gradients.")


def _pure_callback_transpose(*args, **params):
    raise ValueError("Pure callbacks do not support transpose. Please use "
                     "`olympus.custom_vjp` to use callbacks while taking gradients.")


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_transpose(*args, **params):
    raise ValueError("IO callbacks do not support transpose.")


jvp_rules[debug_callback_p] = _debug_callback_jvp
jvp_rules[pure_callback_p] = _pure_callback_jvp
transpose_rules[pure_callback_p] = _pure_callback_transpose
jvp_rules[io_callback_p] = _io_callback_jvp
transpose_rules[io_callback_p] = _io_callback_transpose
