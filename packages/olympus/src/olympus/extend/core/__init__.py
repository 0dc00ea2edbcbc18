"""`olympus.extend.core`: the olympuspr data structures (``ClosedOlympuspr``,
``Olympuspr``, ``OlympusprEqn``, ``Var``, ``Literal``), ``Primitive``, and the helpers
``olympus.core`` keeps only as deprecated names (here without the warning), as JAX's
``jax.extend.core`` exports them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from olympus import core as _core
from olympus_ir.core import ClosedOlympuspr, DropVar, Literal, Olympuspr, Primitive, Var
from olympus_ir.core import Eqn as OlympusprEqn
from olympus_ir.shape_poly import InconclusiveDimensionOperation
from olympus_ir.verify import OlympusprTypeError

from . import primitives as primitives

# The helpers olympus.core serves only through its deprecation path.
CallPrimitive = _core._DEPRECATED["CallPrimitive"][1]
DebugInfo = _core._DEPRECATED["DebugInfo"][1]
Effect = _core._DEPRECATED["Effect"][1]
Effects = _core._DEPRECATED["Effects"][1]
check_olympuspr = _core._DEPRECATED["check_olympuspr"][1]
concrete_or_error = _core._DEPRECATED["concrete_or_error"][1]
find_top_trace = _core._DEPRECATED["find_top_trace"][1]
gensym = _core._DEPRECATED["gensym"][1]
get_opaque_trace_state = _core._DEPRECATED["get_opaque_trace_state"][1]
olympusprs_in_params = _core._DEPRECATED["olympusprs_in_params"][1]
new_olympuspr_eqn = _core._DEPRECATED["new_olympuspr_eqn"][1]
no_effects = _core._DEPRECATED["no_effects"][1]
primal_dtype_to_tangent_dtype = _core._DEPRECATED["primal_dtype_to_tangent_dtype"][1]
valid_olympustype = _core._DEPRECATED["valid_olympustype"][1]
nonempty_axis_env_DO_NOT_USE = _core._DEPRECATED["nonempty_axis_env_DO_NOT_USE"][1]
unsafe_am_i_under_a_jit_DO_NOT_USE = _core._DEPRECATED["unsafe_am_i_under_a_jit_DO_NOT_USE"][1]
unsafe_am_i_under_a_vmap_DO_NOT_USE = _core._DEPRECATED[
    "unsafe_am_i_under_a_vmap_DO_NOT_USE"][1]
unsafe_get_axis_names_DO_NOT_USE = _core._DEPRECATED["unsafe_get_axis_names_DO_NOT_USE"][1]


def olympuspr_as_fun(closed_olympuspr: ClosedOlympuspr, *args: Any) -> Any:
    """A function evaluating `closed_olympuspr` on its arguments (a list of outputs); with
    `args` given, the outputs of that call."""
    def fun(*a: Any) -> list:
        return _core.eval_olympuspr(closed_olympuspr.olympuspr, closed_olympuspr.consts, *a)

    return fun(*args) if args else fun


def subolympusprs(olympuspr: Olympuspr) -> Iterator[Olympuspr]:
    """The olympusprs in the parameters of `olympuspr`'s equations (one level deep)."""
    for eqn in olympuspr.eqns:
        yield from olympusprs_in_params(eqn.params)


__all__ = [
    "CallPrimitive", "ClosedOlympuspr", "DebugInfo", "DropVar", "Effect", "Effects",
    "InconclusiveDimensionOperation", "Literal", "Olympuspr", "OlympusprEqn",
    "OlympusprTypeError", "Primitive", "Var", "check_olympuspr", "concrete_or_error",
    "find_top_trace", "gensym", "get_opaque_trace_state", "new_olympuspr_eqn",
    "no_effects", "olympuspr_as_fun", "olympusprs_in_params", "primal_dtype_to_tangent_dtype",
    "primitives", "subolympusprs", "valid_olympustype",
]
