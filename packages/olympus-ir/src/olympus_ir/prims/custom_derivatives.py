"""Primitives whose differentiation the user controls: ``custom_jvp_call``,
``custom_vjp_call`` with its linear stand-in ``custom_lin``, and ``checkpoint``
(rematerialization).

Each call-like one holds the function as a `ClosedOlympuspr` param (`call_olympuspr`), whose
inputs are the operands (hoisted constants first) and whose outputs are the results; every
interpreter but autodiff just runs it. The user's rules ride along as Python callables in
params (`jvp`; `fwd` and `bwd`), so these equations can be printed and checked but not
serialized.

* ``custom_jvp_call(*consts, *args; call_olympuspr, jvp, num_consts, symbolic_zeros)``:
  `jvp(primals, tangents) -> (outs, tangent_outs)` over the non-const operands.
* ``custom_vjp_call(*consts, *args; call_olympuspr, fwd, bwd, num_consts)``:
  `fwd(primals) -> (outs, residuals, residual_tree)`; `bwd` goes into `custom_lin`.
* ``custom_lin(*residuals, *tangents; num_res, bwd, out_avals)``: the tangent outputs of a
  custom_vjp function, linear in `tangents`; its transpose calls `bwd`. It is only ever
  staged and transposed: evaluating it means forward-mode differentiation of a custom_vjp
  function, an error (as in JAX).
* ``checkpoint(*args; call_olympuspr, prevent_cse)``: reverse mode recomputes the function
  instead of storing its intermediate values.
"""

from __future__ import annotations

from ..avals import ShapedArray
from ..core import def_shape_rule, new_primitive
from .control_flow import check_call_args

__all__ = ["custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p", "checkpoint_p"]

custom_jvp_call_p = new_primitive("custom_jvp_call", multiple_results=True)


@def_shape_rule(custom_jvp_call_p)
def custom_jvp_call_shape_rule(*avals, call_olympuspr, jvp, num_consts, symbolic_zeros=False):
    check_call_args("custom_jvp_call", call_olympuspr, avals)
    return list(call_olympuspr.out_avals)


custom_vjp_call_p = new_primitive("custom_vjp_call", multiple_results=True)


@def_shape_rule(custom_vjp_call_p)
def custom_vjp_call_shape_rule(*avals, call_olympuspr, fwd, bwd, num_consts):
    check_call_args("custom_vjp_call", call_olympuspr, avals)
    return list(call_olympuspr.out_avals)


custom_lin_p = new_primitive("custom_lin", multiple_results=True)


@def_shape_rule(custom_lin_p)
def custom_lin_shape_rule(*avals, num_res, bwd, out_avals):
    if isinstance(num_res, bool) or not isinstance(num_res, int) or \
            not 0 <= num_res <= len(avals):
        raise TypeError(f"custom_lin num_res must be an integer in [0, {len(avals)}] (the "
                        f"number of operands), got {num_res!r}.")
    if not all(isinstance(a, ShapedArray) for a in out_avals):
        raise TypeError(f"custom_lin out_avals must be ShapedArrays, got {out_avals!r}.")
    return list(out_avals)


checkpoint_p = new_primitive("checkpoint", multiple_results=True)


@def_shape_rule(checkpoint_p)
def checkpoint_shape_rule(*avals, call_olympuspr, prevent_cse=True):
    check_call_args("checkpoint", call_olympuspr, avals)
    return list(call_olympuspr.out_avals)


#: The error of evaluating `custom_lin` (JVP, batching or lowering of it): forward-mode
#: differentiation of a custom_vjp function. JAX's wording.
JVP_OF_CUSTOM_VJP_MSG = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
