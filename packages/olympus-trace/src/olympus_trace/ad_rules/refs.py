"""JVP rules of the ref primitives: the tangent of a ref is a ref (of the tangents).

``new_ref(x)``'s tangent is ``new_ref(ẋ)``; ``get``/``freeze`` read the tangent ref too;
``swap``/``addupdate`` write the value's tangent into the tangent ref. Writing a
differentiated value into a ref that has no tangent (a ref the differentiated function
did not create or take as a differentiated argument) is JAX's error. No transpose rules:
reverse mode discharges the refs of a linear olympuspr first (each ref becomes a value,
see `olympus_trace.ad.backward_pass`), so only pure primitives are transposed.
"""

from __future__ import annotations

from olympus_ir import dtypes
from olympus_ir.prims.refs import addupdate_p, freeze_p, get_p, new_ref_p, swap_p

from ..ad import TangentTrace, Zero, instantiate, jvp_always, jvp_rules
from ..core import bind, current_trace, get_aval
from ..staging import OlympusprTrace


def _new_ref_jvp(primals, tangents, **params):
    out = bind(new_ref_p, primals[0], **params)
    if not dtypes.is_inexact(get_aval(primals[0]).dtype):
        return out, Zero(get_aval(out))
    t = instantiate(tangents[0])
    trace = current_trace()
    if isinstance(trace, TangentTrace):  # record the tangent ref even if `t` is a constant
        return out, OlympusprTrace.process_primitive(trace, new_ref_p, (t,), params)
    return out, bind(new_ref_p, t, **params)


def _freeze_jvp(primals, tangents):
    return bind(freeze_p, primals[0]), bind(freeze_p, tangents[0])


def _get_jvp(primals, tangents, *, indexer):
    ref, *idx = primals
    out = bind(get_p, ref, *idx, indexer=indexer)
    ref_dot = tangents[0]
    if isinstance(ref_dot, Zero):
        return out, Zero.from_value(out)
    return out, bind(get_p, ref_dot, *idx, indexer=indexer)


def _write_jvp(prim, what):
    def rule(primals, tangents, *, indexer):
        ref, val, *idx = primals
        ref_dot, val_dot = tangents[0], tangents[1]
        out = bind(prim, ref, val, *idx, indexer=indexer)
        if isinstance(ref_dot, Zero):
            if not isinstance(val_dot, Zero):
                raise Exception(  # noqa: TRY002 - JAX raises a plain Exception here
                    f"performing a {what} operation with a differentiated value on a "
                    "non-differentiated array reference of type "
                    f"{get_aval(ref)}. Move the array reference to be an argument of the "
                    "differentiated function?")
            tangent_out = [] if prim.multiple_results else Zero.from_value(out)
            return out, tangent_out
        tangent_out = bind(prim, ref_dot, instantiate(val_dot), *idx, indexer=indexer)
        return out, tangent_out
    return rule


jvp_rules[new_ref_p] = _new_ref_jvp
jvp_always.add(new_ref_p)
jvp_rules[freeze_p] = _freeze_jvp
jvp_rules[get_p] = _get_jvp
jvp_rules[swap_p] = _write_jvp(swap_p, "set/swap")
jvp_rules[addupdate_p] = _write_jvp(addupdate_p, "addupdate")
