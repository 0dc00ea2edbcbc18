"""The bad-input corpus: unusual or wrong inputs to every public Olympus module.

Each case is a snippet written with `olympus` names. It runs after the prelude ::

    import numpy as np
    import olympus
    import olympus.numpy as jnp
    from olympus import lax

and its outcome is the value of its last line (if that line is an expression) or the
exception it raises. For reference JAX the same snippet runs with the names translated
mechanically (`translate`: ``olympus`` -> ``jax``, ``olympuspr`` -> ``jaxpr``).

`smoke=True` cases (about fifty, one or more per module, including the known crash) run in
the default test command; `message=True` cases also compare the first line of the error
message with JAX's (after the same translation), for errors whose wording users rely on.

This module is data: it imports nothing but the standard library, so each case's own
subprocess starts quickly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    smoke: bool = False
    message: bool = False


PRELUDE = ("import numpy as np\nimport olympus\nimport olympus.numpy as jnp\n"
           "from olympus import lax\n")


def translate(source: str) -> str:
    """The same source with JAX's names (config options: ``olympus_x`` -> ``jax_x``)."""
    source = source.replace("Olympuspr", "Jaxpr").replace("olympuspr", "jaxpr")
    source = re.sub(r"\bolympus_", "jax_", source)
    return re.sub(r"\bolympus\b", "jax", source)


CASES: list[Case] = []


def case(id_: str, source: str, smoke: bool = False, message: bool = False) -> None:
    CASES.append(Case(id_, source.strip("\n"), smoke, message))


# ----------------------------------------------------------------------------- jit
case("jit.not_callable_int", "olympus.jit(3)", smoke=True, message=True)
case("jit.not_callable_none", "olympus.jit(None)")
case("jit.not_callable_str", "olympus.jit('f')")
case("jit.static_argnums_out_of_range", "olympus.jit(lambda x: x, static_argnums=3)(1.)",
     smoke=True, message=True)
case("jit.static_argnums_negative_out_of_range",
     "olympus.jit(lambda x: x, static_argnums=-3)(1.)", message=True)
case("jit.static_argnums_str", "olympus.jit(lambda x: x, static_argnums='x')(1.)")
case("jit.static_argnums_float", "olympus.jit(lambda x: x, static_argnums=0.5)(1.)")
case("jit.static_argnames_unknown", "olympus.jit(lambda x: x, static_argnames='y')(1.)")
case("jit.static_argnames_int", "olympus.jit(lambda x: x, static_argnames=0)(1.)")
case("jit.static_unhashable_list",
     "olympus.jit(lambda x, s: x * len(s), static_argnums=1)(1., [1, 2])", smoke=True)
case("jit.static_unhashable_dict",
     "olympus.jit(lambda x, s: x, static_argnums=1)(1., {'a': 1})")
case("jit.static_array", "olympus.jit(lambda x: x, static_argnums=0)(jnp.ones(3))")
case("jit.static_numpy_array", "olympus.jit(lambda x: x, static_argnums=0)(np.ones(3))")
case("jit.static_argnames_unhashable_kw",
     "olympus.jit(lambda x, s: x, static_argnames='s')(1., s=[1])")
case("jit.static_custom_eq_without_hash", """
class K:
    def __eq__(self, other):
        return True
    __hash__ = None
olympus.jit(lambda x, k: x, static_argnums=1)(1., K())""")
case("jit.static_hash_raises", """
class K:
    def __hash__(self):
        raise RuntimeError('no hash')
olympus.jit(lambda x, k: x, static_argnums=1)(1., K())""")
case("jit.donate_argnums_out_of_range",
     "olympus.jit(lambda x: x, donate_argnums=3)(1.)", smoke=True, message=True)
case("jit.donate_argnums_negative", "olympus.jit(lambda x: x, donate_argnums=-1)(jnp.ones(3))")
case("jit.donate_and_static_same",
     "olympus.jit(lambda x: x, static_argnums=0, donate_argnums=0)(1.)")
case("jit.donate_argnames_unknown", "olympus.jit(lambda x: x, donate_argnames='y')(jnp.ones(2))")
case("jit.donated_array_reused", """
x = jnp.ones(3)
f = olympus.jit(lambda x: x + 1, donate_argnums=0)
y = f(x)
x + 1""", smoke=True)
case("jit.donated_array_is_deleted", """
x = jnp.ones(3)
olympus.jit(lambda x: x + 1, donate_argnums=0)(x)
x.is_deleted()""")
case("jit.deleted_array_op", """
x = jnp.ones(3)
x.delete()
x * 2""", smoke=True)
case("jit.deleted_array_to_jit", """
x = jnp.ones(3)
x.delete()
olympus.jit(lambda a: a + 1)(x)""")
case("jit.deleted_array_repr", """
x = jnp.ones(3)
x.delete()
repr(x)""")
case("jit.deleted_array_numpy", """
x = jnp.ones(3)
x.delete()
np.asarray(x)""")
case("jit.double_delete", """
x = jnp.ones(3)
x.delete()
x.delete()""")
case("jit.return_string", "olympus.jit(lambda x: 'a')(1.)", smoke=True)
case("jit.return_object", "olympus.jit(lambda x: object())(1.)")
case("jit.return_none", "olympus.jit(lambda x: None)(1.)")
case("jit.return_nested", "olympus.jit(lambda x: {'a': (x, [x * 2]), 'b': None})(1.)")
case("jit.unexpected_kwarg", "olympus.jit(lambda x: x)(1., z=2)")
case("jit.missing_arg", "olympus.jit(lambda x, y: x)(1.)")
case("jit.too_many_args", "olympus.jit(lambda x: x)(1., 2.)")
case("jit.string_arg", "olympus.jit(lambda x: x)('abc')", smoke=True, message=True)
case("jit.object_arg", "olympus.jit(lambda x: x)(object())")
case("jit.none_arg", "olympus.jit(lambda x: x)(None)")
case("jit.python_int_overflow", "olympus.jit(lambda x: x)(2**40)", smoke=True)
case("jit.python_int_huge", "olympus.jit(lambda x: x)(2**70)")
case("jit.python_negative_huge", "olympus.jit(lambda x: x + 1)(-2**63)")
case("jit.numpy_int64_overflow", "olympus.jit(lambda x: x)(np.int64(2**40))")
case("jit.numpy_uint64_max", "olympus.jit(lambda x: x)(np.uint64(2**64 - 1))")
case("jit.complex_arg", "olympus.jit(lambda x: x * 2)(1 + 2j)")
case("jit.nan_arg", "olympus.jit(lambda x: x + 1)(float('nan'))")
case("jit.float64_numpy_arg", "olympus.jit(lambda x: x)(np.arange(3.0))")
case("jit.object_numpy_arg", "olympus.jit(lambda x: x)(np.array([1, 'a'], dtype=object))")
case("jit.bool_conversion_of_tracer",
     "olympus.jit(lambda x: x if x > 0 else -x)(1.)", smoke=True, message=True)
case("jit.int_of_tracer", "olympus.jit(lambda x: int(x))(1.)")
case("jit.float_of_tracer", "olympus.jit(lambda x: float(x))(1.)")
case("jit.item_of_tracer", "olympus.jit(lambda x: x.item())(1.)", smoke=True, message=True)
case("jit.tolist_of_tracer", "olympus.jit(lambda x: x.tolist())(jnp.ones(2))")
case("jit.numpy_of_tracer", "olympus.jit(lambda x: np.asarray(x))(jnp.ones(2))",
     message=True)
case("jit.tracer_as_shape", "olympus.jit(lambda n: jnp.zeros(n))(3)")
case("jit.tracer_as_range", "olympus.jit(lambda n: sum(range(n)))(3)")
case("jit.tracer_as_index_of_list", "olympus.jit(lambda i: [1, 2, 3][i])(1)")
case("jit.tracer_in_python_if_bool", "olympus.jit(lambda x: bool(x))(1.)")
case("jit.tracer_hash", "olympus.jit(lambda x: hash(x))(1.)")
case("jit.tracer_len_scalar", "olympus.jit(lambda x: len(x))(1.)")
case("jit.tracer_iter_scalar", "olympus.jit(lambda x: list(x))(1.)")
case("jit.leaked_tracer", """
leak = []
olympus.jit(lambda x: leak.append(x) or x)(1.)
leak[0] + 1""", smoke=True)
case("jit.leaked_tracer_checked", """
leak = []
with olympus.check_tracer_leaks():
    olympus.jit(lambda x: leak.append(x) or x)(1.)""")
case("jit.generator_function", """
def gen(x):
    yield x
olympus.jit(gen)(1.)""")
case("jit.infinite_recursion", """
def f(x):
    return g(x)
g = olympus.jit(f)
g(1.)""")
case("jit.backend_unknown", "olympus.jit(lambda x: x, backend='tpu')(1.)")
case("jit.keep_unused_value", "olympus.jit(lambda x, y: x, keep_unused=True)(1., 2.)")
case("jit.zero_args", "olympus.jit(lambda: jnp.ones(2))()")
case("jit.kwargs_only", "olympus.jit(lambda *, x: x + 1)(x=1.)")
case("jit.varargs", "olympus.jit(lambda *xs: sum(xs))(1., 2., 3.)")
case("jit.jit_of_jit", "olympus.jit(olympus.jit(lambda x: x * 2))(3.)")
case("jit.wrong_pytree_second_call", """
f = olympus.jit(lambda t: t[0] + t[1])
f((1., 2.))
f([1., 2.])""")
case("jit.shape_change_second_call", """
f = olympus.jit(lambda x: x.sum())
f(jnp.ones(2))
f(jnp.ones((2, 3)))""")
case("jit.lambda_raising_inside", "olympus.jit(lambda x: 1 / 0)(1.)")
case("jit.key_error_inside", "olympus.jit(lambda d: d['missing'])({'a': 1.})")

# -------------------------------------------------------------------------- stages
case("stages.trace_callable", "olympus.jit(lambda x: x * 2).trace(1.)(1.)", smoke=True)
case("stages.lower_compile_call_wrong_dtype",
     "olympus.jit(lambda x: x * 2).lower(1.).compile()(jnp.int32(1))", smoke=True)
case("stages.lower_compile_call_wrong_shape",
     "olympus.jit(lambda x: x * 2).lower(jnp.ones(3)).compile()(jnp.ones(4))")
case("stages.lower_compile_call_extra_arg",
     "olympus.jit(lambda x: x * 2).lower(1.).compile()(1., 2.)")
case("stages.lower_compile_call_pytree_mismatch",
     "olympus.jit(lambda t: t[0]).lower((1., 2.)).compile()([1., 2.])")
case("stages.lower_compile_call_kwarg",
     "olympus.jit(lambda x: x).lower(1.).compile()(x=1.)")
case("stages.lower_missing_arg", "olympus.jit(lambda x, y: x).lower(1.)")
case("stages.lower_shape_dtype_struct",
     "olympus.jit(lambda x: x.sum()).lower(olympus.ShapeDtypeStruct((3,), jnp.float32))"
     ".compile()(jnp.ones(3))")
case("stages.shape_dtype_struct_bad_dtype", "olympus.ShapeDtypeStruct((3,), 'foo')")
case("stages.shape_dtype_struct_negative", "olympus.ShapeDtypeStruct((-1,), jnp.float32)")
case("stages.shape_dtype_struct_float_dim", "olympus.ShapeDtypeStruct((2.5,), jnp.float32)")
case("stages.lower_struct_then_call_array",
     "olympus.jit(lambda x: x).lower(olympus.ShapeDtypeStruct((), jnp.float32))"
     ".compile()(np.float32(1))")
case("stages.compiled_call_numpy_float64",
     "olympus.jit(lambda x: x).lower(jnp.ones(2)).compile()(np.ones(2))")
case("stages.lower_static_unhashable",
     "olympus.jit(lambda x, s: x, static_argnums=1).lower(1., [1])")
case("stages.lower_compile_static_call",
     "olympus.jit(lambda x, s: x * s, static_argnums=1).lower(1., 2).compile()(3.)")
case("stages.compile_twice",
     "l = olympus.jit(lambda x: x).lower(1.)\nl.compile() is not None and l.compile() is not None")
case("stages.in_tree", "str(olympus.jit(lambda x, y: x).lower(1., 2.).in_tree)")
case("stages.as_text_type", "type(olympus.jit(lambda x: x).lower(1.).as_text()).__name__")
case("stages.cost_analysis_type",
     "type(olympus.jit(lambda x: x).lower(1.).compile().cost_analysis()).__name__")
case("stages.lower_string_arg", "olympus.jit(lambda x: x).lower('a')")
case("stages.eval_shape_method", "olympus.jit(lambda x: x * 2).eval_shape(jnp.ones(3)).shape")
case("stages.traced_jaxpr_type", "str(olympus.jit(lambda x: x).trace(1.).olympuspr)")

# --------------------------------------------------------------------- grad / vjp
case("grad.not_callable", "olympus.grad(3)", smoke=True)
case("grad.int_input", "olympus.grad(lambda x: x * 2)(3)", smoke=True, message=True)
case("grad.int_array_input", "olympus.grad(lambda x: (x * 2).sum())(jnp.arange(3))")
case("grad.bool_input", "olympus.grad(lambda x: x * 2.)(True)")
case("grad.non_scalar_output", "olympus.grad(lambda x: x * 2)(jnp.ones(3))", smoke=True,
     message=True)
case("grad.complex_output", "olympus.grad(lambda x: x * 1j)(1.)")
case("grad.int_output", "olympus.grad(lambda x: jnp.int32(3))(1.)")
case("grad.tuple_output", "olympus.grad(lambda x: (x, x))(1.)")
case("grad.none_output", "olympus.grad(lambda x: None)(1.)")
case("grad.argnums_out_of_range", "olympus.grad(lambda x: x, argnums=2)(1.)", message=True)
case("grad.argnums_negative", "olympus.grad(lambda x, y: x * y, argnums=-1)(2., 3.)")
case("grad.argnums_str", "olympus.grad(lambda x: x, argnums='x')(1.)")
case("grad.argnums_empty_tuple", "olympus.grad(lambda x: x, argnums=())(1.)")
case("grad.argnums_duplicate", "olympus.grad(lambda x, y: x * y, argnums=(0, 0))(2., 3.)")
case("grad.has_aux_not_pair", "olympus.grad(lambda x: x, has_aux=True)(1.)")
case("grad.has_aux_triple", "olympus.grad(lambda x: (x, 1, 2), has_aux=True)(1.)")
case("grad.of_abs_at_zero", "olympus.grad(jnp.abs)(0.)", smoke=True)
case("grad.of_sqrt_at_zero", "olympus.grad(jnp.sqrt)(0.)")
case("grad.of_where_nan_branch", "olympus.grad(lambda x: jnp.where(x > 0, jnp.log(x), 0.))(0.)")
case("grad.of_maximum_tie", "olympus.grad(lambda x: jnp.maximum(x, 1.))(1.)")
case("grad.of_max_ties", "olympus.grad(lambda x: jnp.max(x))(jnp.ones(3))")
case("grad.of_sort", "olympus.grad(lambda x: jnp.sort(x)[0])(jnp.array([3., 1., 2.]))")
case("grad.of_round", "olympus.grad(jnp.round)(1.3)")
case("grad.of_floor_divide", "olympus.grad(lambda x: x // 2.)(3.)")
case("grad.of_argmax_output", "olympus.grad(lambda x: jnp.argmax(x))(jnp.ones(3))")
case("grad.of_integer_pow_zero", "olympus.grad(lambda x: x ** 0)(0.)")
case("grad.of_pow_zero_base", "olympus.grad(lambda x: x ** 0.5)(0.)")
case("grad.of_norm_at_zero", "olympus.grad(jnp.linalg.norm)(jnp.zeros(3))")
case("grad.of_while_loop",
     "olympus.grad(lambda x: lax.while_loop(lambda c: c < 3., lambda c: c + x, 0.))(1.)",
     message=True)
case("grad.of_stop_gradient", "olympus.grad(lambda x: olympus.lax.stop_gradient(x) * x)(2.)")
case("grad.float16_input", "olympus.grad(lambda x: x * x)(jnp.float16(2.))")
case("grad.bfloat16_input", "olympus.grad(lambda x: x * x)(jnp.bfloat16(2.))")
case("grad.nan_input", "olympus.grad(jnp.sin)(float('nan'))")
case("grad.inf_input", "olympus.grad(jnp.exp)(float('inf'))")
case("grad.dict_input", "olympus.grad(lambda d: d['a'] * 2)({'a': 1.})")
case("grad.list_input_with_int", "olympus.grad(lambda l: l[0] * l[1])([1., 2])")
case("grad.none_leaf", "olympus.grad(lambda t: t[0] * 2)((1., None))")
case("grad.string_leaf", "olympus.grad(lambda t: t[0] * 2)((1., 'a'))")
case("grad.value_and_grad_non_scalar",
     "olympus.value_and_grad(lambda x: x)(jnp.ones(2))")
case("grad.hessian_int", "olympus.hessian(lambda x: x ** 3)(2)")
case("grad.jacfwd_int", "olympus.jacfwd(lambda x: x * 2)(jnp.arange(3))")
case("grad.jacrev_int", "olympus.jacrev(lambda x: x * 2)(jnp.arange(3))")
case("grad.jacrev_empty", "olympus.jacrev(lambda x: x * 2)(jnp.ones(0))")
case("grad.jacfwd_scalar_fn_of_tuple", "olympus.jacfwd(lambda t: t[0] * t[1])((1., 2.))")
case("vjp.wrong_cotangent_dtype", "olympus.vjp(jnp.sin, 1.)[1](jnp.int32(1))",
     smoke=True, message=True)
case("vjp.wrong_cotangent_shape", "olympus.vjp(jnp.sin, jnp.ones(3))[1](jnp.ones(2))",
     message=True)
case("vjp.wrong_cotangent_tree", "olympus.vjp(lambda x: (x, x), 1.)[1](1.)")
case("vjp.cotangent_float64_numpy", "olympus.vjp(jnp.sin, 1.)[1](np.float64(1.))")
case("vjp.cotangent_python_float", "olympus.vjp(jnp.sin, 1.)[1](1.)")
case("vjp.not_callable", "olympus.vjp(3, 1.)")
case("vjp.no_primals", "olympus.vjp(lambda: 1.)")
case("vjp.has_aux_bad", "olympus.vjp(lambda x: x, 1., has_aux=True)")
case("vjp.int_primal", "olympus.vjp(lambda x: x * 2, 3)[1](jnp.int32(1))")
case("vjp.float0_cotangent_for_int",
     "olympus.vjp(lambda x: x * 2, 3)[1](np.zeros((), dtype=olympus.dtypes.float0))")
case("jvp.tangent_dtype_mismatch", "olympus.jvp(jnp.sin, (1.,), (jnp.int32(1),))",
     smoke=True, message=True)
case("jvp.tangent_shape_mismatch", "olympus.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),))",
     message=True)
case("jvp.primals_not_tuple", "olympus.jvp(jnp.sin, 1., 1.)", message=True)
case("jvp.tree_mismatch", "olympus.jvp(lambda x, y: x * y, (1., 2.), (1.,))", message=True)
case("jvp.tangent_float64", "olympus.jvp(jnp.sin, (1.,), (np.float64(1.),))")
case("jvp.int_primal_float_tangent", "olympus.jvp(lambda x: x * 2, (3,), (1.,))")
case("linearize.int_input", "olympus.linearize(lambda x: x * 2, 3)")
case("linearize.call_wrong_shape", "olympus.linearize(jnp.sin, jnp.ones(3))[1](jnp.ones(2))")
case("custom_jvp.missing_jvp", """
f = olympus.custom_jvp(lambda x: x * 2)
olympus.grad(f)(1.)""")
case("custom_jvp.jvp_wrong_output_type", """
f = olympus.custom_jvp(lambda x: x * 2)
f.defjvp(lambda p, t: (p[0] * 2, jnp.int32(1)))
olympus.jvp(f, (1.,), (1.,))""")
case("custom_jvp.jvp_returns_single", """
f = olympus.custom_jvp(lambda x: x * 2)
f.defjvp(lambda p, t: p[0] * 2)
olympus.jvp(f, (1.,), (1.,))""")
case("custom_vjp.missing_defvjp", """
f = olympus.custom_vjp(lambda x: x * 2)
olympus.grad(f)(1.)""")
case("custom_vjp.bwd_wrong_arity", """
f = olympus.custom_vjp(lambda x: x * 2)
f.defvjp(lambda x: (x * 2, None), lambda res, g: (g, g))
olympus.grad(f)(1.)""", smoke=True)
case("custom_vjp.bwd_not_tuple", """
f = olympus.custom_vjp(lambda x: x * 2)
f.defvjp(lambda x: (x * 2, None), lambda res, g: g * 2)
olympus.grad(f)(1.)""")
case("custom_vjp.bwd_wrong_shape", """
f = olympus.custom_vjp(lambda x: x * 2)
f.defvjp(lambda x: (x * 2, None), lambda res, g: (jnp.ones(3),))
olympus.grad(f)(1.)""")
case("checkpoint.bad_policy", "olympus.checkpoint(lambda x: x, policy=3)(1.)")
case("checkpoint.static_argnums_oob", "olympus.checkpoint(lambda x: x, static_argnums=(4,))(1.)")

# ----------------------------------------------------------------------------- vmap
case("vmap.not_callable", "olympus.vmap(3)")
case("vmap.axis_out_of_range", "olympus.vmap(jnp.sin, in_axes=2)(jnp.ones(3))", smoke=True,
     message=True)
case("vmap.negative_axis_out_of_range", "olympus.vmap(jnp.sin, in_axes=-3)(jnp.ones(3))")
case("vmap.mismatched_sizes",
     "olympus.vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(4))", smoke=True, message=True)
case("vmap.in_axes_tree_mismatch",
     "olympus.vmap(lambda x, y: x + y, in_axes=(0, 0, 0))(jnp.ones(3), jnp.ones(3))",
     message=True)
case("vmap.in_axes_list_not_tuple",
     "olympus.vmap(lambda x, y: x + y, in_axes=[0, 0])(jnp.ones(3), jnp.ones(3))")
case("vmap.in_axes_float", "olympus.vmap(jnp.sin, in_axes=0.5)(jnp.ones(3))")
case("vmap.in_axes_str", "olympus.vmap(jnp.sin, in_axes='0')(jnp.ones(3))")
case("vmap.all_none", "olympus.vmap(jnp.sin, in_axes=None)(jnp.ones(3))", message=True)
case("vmap.scalar_input", "olympus.vmap(jnp.sin)(1.)", smoke=True, message=True)
case("vmap.python_list_input", "olympus.vmap(jnp.sin)([1., 2.])")
case("vmap.empty_batch", "olympus.vmap(jnp.sin)(jnp.ones((0, 3)))")
case("vmap.out_axes_out_of_range", "olympus.vmap(jnp.sin, out_axes=3)(jnp.ones(3))")
case("vmap.out_axes_none_but_batched", "olympus.vmap(jnp.sin, out_axes=None)(jnp.ones(3))",
     message=True)
case("vmap.out_axes_none_unbatched",
     "olympus.vmap(lambda x: jnp.float32(2.), out_axes=None)(jnp.ones(3))")
case("vmap.axis_size_mismatch",
     "olympus.vmap(lambda x: x, axis_size=4)(jnp.ones(3))")
case("vmap.axis_size_no_inputs", "olympus.vmap(lambda: jnp.ones(2), axis_size=3)()")
case("vmap.no_inputs_no_size", "olympus.vmap(lambda: jnp.ones(2))()")
case("vmap.dict_in_axes", "olympus.vmap(lambda d: d['a'] * 2, in_axes=({'a': 0},))({'a': jnp.ones(3)})")
case("vmap.dict_in_axes_wrong_key",
     "olympus.vmap(lambda d: d['a'] * 2, in_axes=({'b': 0},))({'a': jnp.ones(3)})")
case("vmap.kwargs_batched", "olympus.vmap(lambda x, y=1.: x * y)(jnp.ones(3), y=jnp.ones(3))")
case("vmap.bool_of_tracer", "olympus.vmap(lambda x: 1. if x > 0 else 2.)(jnp.ones(3))")
case("vmap.unhashable_static_under_vmap",
     "olympus.vmap(olympus.jit(lambda x, s: x, static_argnums=1), in_axes=(0, None))"
     "(jnp.ones(3), [1])", smoke=True)
case("vmap.nested_mismatch",
     "olympus.vmap(olympus.vmap(lambda x, y: x * y))(jnp.ones((2, 3)), jnp.ones((2, 4)))")
case("vmap.spmd_axis_name_unknown",
     "olympus.vmap(lambda x: olympus.lax.psum(x, 'j'), axis_name='i')(jnp.ones(3))")
case("vmap.psum_axis_ok", "olympus.vmap(lambda x: olympus.lax.psum(x, 'i'), axis_name='i')(jnp.arange(3.))")
case("vmap.return_string", "olympus.vmap(lambda x: 'a')(jnp.ones(3))")
case("vmap.in_axes_on_none_leaf", "olympus.vmap(lambda t: t[0], in_axes=((0, 0),))((jnp.ones(3), None))")

# ---------------------------------------------------------------- numpy: creation
case("numpy.zeros_huge_shape", "jnp.zeros((2**62, 2**62))", smoke=True)
case("numpy.zeros_huge_1d", "jnp.zeros((2**62,))")
case("numpy.ones_product_overflows_int64", "jnp.ones((2**40, 2**40, 2**40))")
case("numpy.zeros_negative_dim", "jnp.zeros((-1, 3))", smoke=True, message=True)
case("numpy.zeros_float_dim", "jnp.zeros((2.5,))", message=True)
case("numpy.zeros_none_shape", "jnp.zeros(None)")
case("numpy.zeros_str_shape", "jnp.zeros('3')")
case("numpy.zeros_bad_dtype", "jnp.zeros(3, dtype='foo')")
case("numpy.zeros_object_dtype", "jnp.zeros(3, dtype=object)")
case("numpy.zeros_str_dtype", "jnp.zeros(3, dtype=str)")
case("numpy.ones_numpy_int_shape", "jnp.ones(np.int64(3))")
case("numpy.ones_array_shape", "jnp.ones(jnp.array([2, 3]))")
case("numpy.full_bad_fill", "jnp.full((2,), 'a')")
case("numpy.full_shape_mismatch_fill", "jnp.full((2,), jnp.ones(3))")
case("numpy.empty_zero_dims", "jnp.empty((0, 5))")
case("numpy.array_uint8_negative", "jnp.array(-1, dtype=jnp.uint8)", smoke=True,
     message=True)
case("numpy.array_int8_overflow", "jnp.array(300, dtype=jnp.int8)", message=True)
case("numpy.asarray_uint32_negative_list", "jnp.asarray([-1, 2], dtype=jnp.uint32)")
case("numpy.array_python_int_too_big", "jnp.array(2**40)", message=True)
case("numpy.array_ragged", "jnp.array([[1, 2], [3]])", smoke=True)
case("numpy.array_of_strings", "jnp.array(['a', 'b'])")
case("numpy.array_of_none", "jnp.array(None)")
case("numpy.array_of_objects", "jnp.array([object()])")
case("numpy.array_mixed_arrays_scalars", "jnp.array([jnp.ones(2), 1.])")
case("numpy.array_nested_arrays", "jnp.array([jnp.ones(2), jnp.zeros(2)])")
case("numpy.array_float_nan_to_int", "jnp.array(float('nan'), dtype=jnp.int32)")
case("numpy.array_inf_to_int", "jnp.array([np.inf], dtype=jnp.int32)")
case("numpy.array_complex_to_float", "jnp.array(1 + 2j, dtype=jnp.float32)")
case("numpy.array_ndmin", "jnp.array(1., ndmin=3).shape")
case("numpy.arange_zero_step", "jnp.arange(0, 5, 0)", message=True)
case("numpy.arange_negative_range", "jnp.arange(5, 0)")
case("numpy.arange_nan", "jnp.arange(float('nan'))")
case("numpy.arange_inf", "jnp.arange(float('inf'))")
case("numpy.arange_tracer", "olympus.jit(lambda n: jnp.arange(n))(3)", smoke=True)
case("numpy.linspace_negative_num", "jnp.linspace(0, 1, -1)", message=True)
case("numpy.linspace_zero_num", "jnp.linspace(0, 1, 0)")
case("numpy.linspace_float_num", "jnp.linspace(0, 1, 2.5)")
case("numpy.eye_negative", "jnp.eye(-1)")
case("numpy.eye_float", "jnp.eye(2.5)")
case("numpy.identity_huge", "jnp.identity(2**40)")
case("numpy.tri_negative_k", "jnp.tri(3, k=-5)")
case("numpy.full_like_bad_shape", "jnp.full_like(jnp.ones(2), 1., shape=(-1,))")
case("numpy.frombuffer_bad_size", "jnp.frombuffer(b'abc', dtype=jnp.int32)")

# ------------------------------------------------------------- numpy: elementwise
case("numpy.int_floor_divide_by_zero", "jnp.arange(-2, 3) // 0", smoke=True)
case("numpy.int_remainder_by_zero", "jnp.arange(-2, 3) % 0", smoke=True)
case("numpy.uint_floor_divide_by_zero", "jnp.arange(4, dtype=jnp.uint8) // jnp.uint8(0)")
case("numpy.int_min_floor_divide_minus_one", "jnp.int32(-2**31) // jnp.int32(-1)")
case("numpy.int_min_remainder_minus_one", "jnp.int32(-2**31) % jnp.int32(-1)")
case("numpy.divmod_by_zero", "jnp.divmod(jnp.arange(3), 0)")
case("numpy.float_divide_by_zero", "jnp.array([1., -1., 0.]) / 0.")
case("numpy.int_power_negative_static", "jnp.arange(3) ** -1", message=True)
case("numpy.int_power_negative_array", "jnp.power(jnp.arange(1, 4), jnp.array([-1, -2, -1]))")
case("numpy.int_power_array_exponent", "jnp.power(jnp.arange(4), jnp.array([0, 1, 2, 3]))")
case("numpy.left_shift_too_far", "jnp.left_shift(jnp.int8(1), jnp.int8(9))")
case("numpy.right_shift_negative", "jnp.right_shift(jnp.int8(-64), jnp.int8(-1))")
case("numpy.add_shape_mismatch", "jnp.ones(3) + jnp.ones(4)", smoke=True, message=True)
case("numpy.add_string", "jnp.ones(3) + 'a'")
case("numpy.add_none", "jnp.ones(3) + None")
case("numpy.add_list", "jnp.ones(3) + [1, 2, 3]")
case("numpy.add_tuple_ragged", "jnp.add(jnp.ones(2), (1, (2, 3)))")
case("numpy.bitwise_and_float", "jnp.bitwise_and(jnp.ones(2), jnp.ones(2))")
case("numpy.invert_float", "~jnp.ones(2)")
case("numpy.sqrt_negative", "jnp.sqrt(jnp.array([-1., 4.]))")
case("numpy.log_zero", "jnp.log(jnp.array([0., -1.]))")
case("numpy.arccos_out_of_domain", "jnp.arccos(2.)")
case("numpy.exp_overflow_float16", "jnp.exp(jnp.float16(12.))")
case("numpy.uint8_plus_negative_python_int", "jnp.uint8(3) + (-1)")
case("numpy.int8_plus_python_int_too_big", "jnp.int8(3) + 1000", message=True)
case("numpy.uint32_plus_int32_promotion", "(jnp.uint32(1) + jnp.int32(1)).dtype")
case("numpy.bool_minus_bool", "jnp.array(True) - jnp.array(False)")
case("numpy.negative_bool", "jnp.negative(jnp.array([True]))")
case("numpy.abs_int_min", "jnp.abs(jnp.int32(-2**31))")
case("numpy.comparison_weak", "(jnp.asarray(1.) < 2.).dtype")
case("numpy.where_one_arg_jit", "olympus.jit(lambda x: jnp.where(x))(jnp.ones(3))")
case("numpy.where_two_args", "jnp.where(jnp.ones(3) > 0, 1.)")
case("numpy.where_shape_mismatch", "jnp.where(jnp.ones(3) > 0, jnp.ones(2), 0.)")
case("numpy.clip_min_greater_max", "jnp.clip(jnp.arange(5), 3, 1)")
case("numpy.clip_no_bounds", "jnp.clip(jnp.arange(5))")
case("numpy.round_negative_decimals", "jnp.round(jnp.array([1234.5]), -2)")
case("numpy.round_float_decimals", "jnp.round(1.5, 0.5)")
case("numpy.isclose_shape_mismatch", "jnp.isclose(jnp.ones(2), jnp.ones(3))")
case("numpy.nan_to_num_int", "jnp.nan_to_num(jnp.arange(3))")
case("numpy.heaviside_nan", "jnp.heaviside(jnp.array([np.nan, 0., 1.]), 0.5)")
case("numpy.matmul_scalar", "jnp.matmul(jnp.ones(3), 2.)", message=True)
case("numpy.matmul_shape_mismatch", "jnp.ones((2, 3)) @ jnp.ones((4, 2))", smoke=True)
case("numpy.dot_mixed_int_float", "jnp.dot(jnp.arange(3), jnp.ones(3))")
case("numpy.einsum_bad_spec", "jnp.einsum('ij,jk->il', jnp.ones((2, 2)), jnp.ones((2, 2)))")
case("numpy.einsum_operand_count", "jnp.einsum('ij,jk->ik', jnp.ones((2, 2)))")
case("numpy.einsum_dim_mismatch", "jnp.einsum('ij,jk->ik', jnp.ones((2, 3)), jnp.ones((2, 2)))")
case("numpy.einsum_ellipsis", "jnp.einsum('...i,...i->...', jnp.ones((2, 3)), jnp.ones(3))")
case("numpy.tensordot_bad_axes", "jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), axes=5)")
case("numpy.outer_empty", "jnp.outer(jnp.ones(0), jnp.ones(3))")
case("numpy.cross_bad_dim", "jnp.cross(jnp.ones(4), jnp.ones(4))")

# ------------------------------------------------------------ numpy: reductions
case("numpy.sum_axis_out_of_range", "jnp.sum(jnp.ones((2, 3)), axis=2)", smoke=True,
     message=True)
case("numpy.sum_axis_negative_out_of_range", "jnp.sum(jnp.ones((2, 3)), axis=-3)")
case("numpy.sum_axis_duplicate", "jnp.sum(jnp.ones((2, 3)), axis=(0, 0))")
case("numpy.sum_axis_float", "jnp.sum(jnp.ones((2, 3)), axis=0.5)")
case("numpy.sum_axis_array", "jnp.sum(jnp.ones((2, 3)), axis=jnp.array(0))")
case("numpy.sum_axis_tracer", "olympus.jit(lambda x, a: jnp.sum(x, axis=a))(jnp.ones((2, 3)), 0)")
case("numpy.sum_bad_dtype", "jnp.sum(jnp.ones(3), dtype='foo')")
case("numpy.sum_where_shape_mismatch", "jnp.sum(jnp.ones(3), where=jnp.array([True, False]))")
case("numpy.sum_out_arg", "jnp.sum(jnp.ones(3), out=np.zeros(()))")
case("numpy.max_empty", "jnp.max(jnp.ones(0))", smoke=True, message=True)
case("numpy.max_empty_initial", "jnp.max(jnp.ones(0), initial=-1.)")
case("numpy.min_empty_axis", "jnp.min(jnp.ones((0, 3)), axis=0)")
case("numpy.argmax_empty", "jnp.argmax(jnp.ones(0))", message=True)
case("numpy.argmax_nan", "jnp.argmax(jnp.array([1., np.nan, 3.]))")
case("numpy.argmax_axis_tuple", "jnp.argmax(jnp.ones((2, 2)), axis=(0, 1))")
case("numpy.mean_empty", "jnp.mean(jnp.ones(0))")
case("numpy.mean_int_overflow", "jnp.mean(jnp.array([2**31 - 1, 2**31 - 1], dtype=jnp.int32))")
case("numpy.std_ddof_equal_n", "jnp.std(jnp.arange(3.), ddof=3)", smoke=True)
case("numpy.std_ddof_greater_n", "jnp.std(jnp.arange(3.), ddof=4)")
case("numpy.var_ddof_negative", "jnp.var(jnp.arange(3.), ddof=-1)")
case("numpy.var_ddof_float", "jnp.var(jnp.arange(3.), ddof=0.5)")
case("numpy.var_empty", "jnp.var(jnp.ones(0))")
case("numpy.sum_int8_overflow", "jnp.sum(jnp.full(200, 100, dtype=jnp.int8))")
case("numpy.sum_int8_overflow_dtype", "jnp.sum(jnp.full(200, 100, dtype=jnp.int8), dtype=jnp.int8)")
case("numpy.prod_empty", "jnp.prod(jnp.ones(0, dtype=jnp.int32))")
case("numpy.cumsum_axis_out_of_range", "jnp.cumsum(jnp.ones(3), axis=1)")
case("numpy.cumsum_bool", "jnp.cumsum(jnp.array([True, True]))")
case("numpy.median_empty", "jnp.median(jnp.ones(0))")
case("numpy.percentile_out_of_range", "jnp.percentile(jnp.arange(5.), 150)")
case("numpy.quantile_negative", "jnp.quantile(jnp.arange(5.), -0.5)")
case("numpy.quantile_bad_method", "jnp.quantile(jnp.arange(5.), 0.5, method='foo')")
case("numpy.average_weights_zero", "jnp.average(jnp.arange(3.), weights=jnp.zeros(3))")
case("numpy.average_weights_shape", "jnp.average(jnp.arange(3.), weights=jnp.ones(2))")
case("numpy.count_nonzero_axis_oob", "jnp.count_nonzero(jnp.ones(3), axis=1)")
case("numpy.all_on_strings_like", "jnp.all(jnp.array([1, 0]), axis=None, keepdims=True)")
case("numpy.nanmax_all_nan", "jnp.nanmax(jnp.array([np.nan, np.nan]))")
case("numpy.logsumexp_empty", "olympus.nn.logsumexp(jnp.ones(0))")

# ------------------------------------------------------------- numpy: shapes
case("numpy.reshape_size_mismatch", "jnp.ones(6).reshape((4, 2))", smoke=True, message=True)
case("numpy.reshape_two_minus_one", "jnp.ones(6).reshape((-1, -1))")
case("numpy.reshape_negative_two", "jnp.ones(6).reshape((-2, 3))")
case("numpy.reshape_float", "jnp.ones(6).reshape((2.0, 3))")
case("numpy.reshape_minus_one_zero_size", "jnp.ones(0).reshape((-1, 0))")
case("numpy.reshape_tracer_shape", "olympus.jit(lambda x, n: x.reshape(n))(jnp.ones(6), 6)")
case("numpy.reshape_bad_order", "jnp.reshape(jnp.ones(6), (2, 3), order='K')")
case("numpy.transpose_bad_perm", "jnp.transpose(jnp.ones((2, 3)), (0, 0))", message=True)
case("numpy.transpose_wrong_len", "jnp.transpose(jnp.ones((2, 3)), (0,))")
case("numpy.swapaxes_oob", "jnp.swapaxes(jnp.ones((2, 3)), 0, 2)")
case("numpy.moveaxis_duplicate", "jnp.moveaxis(jnp.ones((2, 3)), (0, 0), (1, 0))")
case("numpy.expand_dims_oob", "jnp.expand_dims(jnp.ones(3), 3)")
case("numpy.squeeze_non_one", "jnp.squeeze(jnp.ones((2, 1)), axis=0)", message=True)
case("numpy.squeeze_oob", "jnp.squeeze(jnp.ones((2, 1)), axis=5)")
case("numpy.broadcast_to_incompatible", "jnp.broadcast_to(jnp.ones(3), (4,))", message=True)
case("numpy.broadcast_to_fewer_dims", "jnp.broadcast_to(jnp.ones((2, 3)), (3,))")
case("numpy.broadcast_to_negative", "jnp.broadcast_to(jnp.ones(1), (-1,))")
case("numpy.broadcast_shapes_bad", "jnp.broadcast_shapes((2,), (3,))")
case("numpy.concatenate_rank_mismatch", "jnp.concatenate([jnp.ones(2), jnp.ones((2, 2))])",
     smoke=True)
case("numpy.concatenate_empty_list", "jnp.concatenate([])")
case("numpy.concatenate_axis_oob", "jnp.concatenate([jnp.ones(2), jnp.ones(2)], axis=1)")
case("numpy.concatenate_scalars", "jnp.concatenate([jnp.float32(1), jnp.float32(2)])")
case("numpy.concatenate_axis_none", "jnp.concatenate([jnp.ones((2, 2)), jnp.ones(3)], axis=None)")
case("numpy.stack_shape_mismatch", "jnp.stack([jnp.ones(2), jnp.ones(3)])")
case("numpy.stack_empty", "jnp.stack([])")
case("numpy.stack_axis_oob", "jnp.stack([jnp.ones(2), jnp.ones(2)], axis=3)")
case("numpy.split_uneven", "jnp.split(jnp.ones(5), 2)", message=True)
case("numpy.split_zero", "jnp.split(jnp.ones(5), 0)")
case("numpy.array_split_uneven", "[a.shape for a in jnp.array_split(jnp.ones(5), 2)]")
case("numpy.tile_float_reps", "jnp.tile(jnp.ones(2), 2.5)", smoke=True)
case("numpy.tile_negative_reps", "jnp.tile(jnp.ones(2), -1)")
case("numpy.repeat_negative", "jnp.repeat(jnp.ones(2), -1)")
case("numpy.repeat_float", "jnp.repeat(jnp.ones(2), 1.5)")
case("numpy.repeat_array_mismatch", "jnp.repeat(jnp.ones(3), jnp.array([1, 2]))")
case("numpy.repeat_tracer_repeats", "olympus.jit(lambda r: jnp.repeat(jnp.ones(2), r))(2)")
case("numpy.roll_axis_oob", "jnp.roll(jnp.ones(3), 1, axis=1)")
case("numpy.flip_axis_oob", "jnp.flip(jnp.ones(3), axis=1)")
case("numpy.pad_negative", "jnp.pad(jnp.ones(3), -1)")
case("numpy.pad_bad_mode", "jnp.pad(jnp.ones(3), 1, mode='foo')")
case("numpy.pad_reflect_too_wide", "jnp.pad(jnp.ones(2), 5, mode='reflect')")
case("numpy.pad_wrong_len", "jnp.pad(jnp.ones((2, 2)), ((1, 1), (1, 1), (1, 1)))")
case("numpy.ravel_multi_index_oob", "jnp.ravel_multi_index((jnp.array([5]),), (3,))")
case("numpy.unravel_index_oob", "jnp.unravel_index(10, (2, 3))")
case("numpy.diagonal_bad_axes", "jnp.diagonal(jnp.ones((2, 2)), axis1=0, axis2=0)")
case("numpy.trace_1d", "jnp.trace(jnp.ones(3))")
case("numpy.astype_bad", "jnp.ones(3).astype('foo')")
case("numpy.astype_nan_to_int", "jnp.array([np.nan, np.inf, -np.inf, 3e9]).astype(jnp.int32)")
case("numpy.astype_float64_no_x64", "jnp.ones(3).astype(jnp.float64).dtype")
case("numpy.view_bad_itemsize", "jnp.ones(3, dtype=jnp.float32).view(jnp.int8).shape")

# -------------------------------------------------------------- numpy: indexing
case("numpy.index_oob_static", "jnp.arange(3)[5]", smoke=True)
case("numpy.index_oob_negative_static", "jnp.arange(3)[-5]")
case("numpy.index_oob_static_jit", "olympus.jit(lambda x: x[5])(jnp.arange(3))")
case("numpy.index_oob_traced", "olympus.jit(lambda x, i: x[i])(jnp.arange(3), 7)")
case("numpy.index_oob_int_array", "jnp.arange(3)[jnp.array([0, 5, -7])]")
case("numpy.index_oob_numpy_int_array", "jnp.arange(3)[np.array([0, 5, -7])]")
case("numpy.index_empty_axis", "jnp.ones((0, 3))[0]")
case("numpy.index_too_many", "jnp.ones(3)[0, 0]", smoke=True, message=True)
case("numpy.index_float", "jnp.ones(3)[1.5]", message=True)
case("numpy.index_float_array", "jnp.ones(3)[jnp.array([1.5])]")
case("numpy.index_string", "jnp.ones(3)['a']")
case("numpy.index_list_of_ints", "jnp.arange(5)[[0, 2]]")
case("numpy.index_list_of_slices", "jnp.ones((3, 3))[[slice(0, 1), slice(0, 2)]]")
case("numpy.index_two_ellipsis", "jnp.ones((2, 2))[..., ...]")
case("numpy.index_bool_mask_wrong_shape", "jnp.arange(3)[jnp.array([True, False])]",
     message=True)
case("numpy.index_bool_mask_traced",
     "olympus.jit(lambda x: x[x > 1])(jnp.arange(3))", smoke=True, message=True)
case("numpy.index_bool_scalar", "jnp.arange(3)[True].shape")
case("numpy.index_none_ellipsis_combo", "jnp.ones((2, 3))[None, ..., None, 0].shape")
case("numpy.index_slice_zero_step", "jnp.arange(5)[::0]", message=True)
case("numpy.index_slice_tracer_bound",
     "olympus.jit(lambda x, i: x[:i])(jnp.arange(5), 2)")
case("numpy.index_huge_static_int", "jnp.arange(3)[2**40]")
case("numpy.index_uint8_array", "jnp.arange(5)[jnp.array([255], dtype=jnp.uint8)]")
case("numpy.at_set_oob", "jnp.arange(3).at[5].set(9)")
case("numpy.at_set_oob_negative", "jnp.arange(3).at[-5].set(9)")
case("numpy.at_set_mode_promise", "jnp.arange(3).at[5].set(9, mode='promise_in_bounds')")
case("numpy.at_set_bad_mode", "jnp.arange(3).at[1].set(9, mode='foo')")
case("numpy.at_set_shape_mismatch", "jnp.arange(3).at[:2].set(jnp.ones(3, dtype=jnp.int32))")
case("numpy.at_set_float_into_int", "jnp.arange(3).at[0].set(2.7)")
case("numpy.at_get_oob_fill", "jnp.arange(3.).at[5].get(mode='fill', fill_value=-1.)")
case("numpy.at_unknown_method", "jnp.arange(3).at[0].frobnicate(1)")
case("numpy.setitem", "x = jnp.arange(3)\nx[0] = 5", smoke=True, message=True)
case("numpy.take_oob_default", "jnp.take(jnp.arange(3.), 5)")
case("numpy.take_bad_mode", "jnp.take(jnp.arange(3), 1, mode='foo')")
case("numpy.take_along_axis_shape", "jnp.take_along_axis(jnp.ones((2, 3)), jnp.zeros(2, dtype=int), axis=1)")
case("numpy.nonzero_traced", "olympus.jit(lambda x: jnp.nonzero(x))(jnp.ones(3))", message=True)
case("numpy.nonzero_size_arg", "olympus.jit(lambda x: jnp.nonzero(x, size=2))(jnp.array([0, 1, 1]))")
case("numpy.unique_traced", "olympus.jit(jnp.unique)(jnp.ones(3))")
case("numpy.argwhere_traced", "olympus.jit(jnp.argwhere)(jnp.ones(3))")

# ---------------------------------------------------------- numpy: linalg, fft, misc
case("numpy.linalg_cholesky_not_pd", "jnp.linalg.cholesky(jnp.array([[1., 2.], [2., 1.]]))",
     smoke=True)
case("numpy.linalg_cholesky_not_square", "jnp.linalg.cholesky(jnp.ones((2, 3)))")
case("numpy.linalg_inv_singular", "jnp.linalg.inv(jnp.zeros((2, 2)))")
case("numpy.linalg_inv_not_square", "jnp.linalg.inv(jnp.ones((2, 3)))", message=True)
case("numpy.linalg_inv_int", "jnp.linalg.inv(jnp.eye(2, dtype=jnp.int32))")
case("numpy.linalg_solve_shape", "jnp.linalg.solve(jnp.eye(2), jnp.ones(3))")
case("numpy.linalg_solve_singular", "jnp.linalg.solve(jnp.zeros((2, 2)), jnp.ones(2))")
case("numpy.linalg_det_1d", "jnp.linalg.det(jnp.ones(3))")
case("numpy.linalg_det_empty", "jnp.linalg.det(jnp.ones((0, 0)))")
case("numpy.linalg_norm_bad_ord", "jnp.linalg.norm(jnp.ones(3), ord='fro')")
case("numpy.linalg_norm_axis_oob", "jnp.linalg.norm(jnp.ones(3), axis=2)")
case("numpy.linalg_eigh_nan", "jnp.linalg.eigh(jnp.array([[np.nan, 0.], [0., 1.]]))[0]")
case("numpy.linalg_svd_empty", "[a.shape for a in jnp.linalg.svd(jnp.ones((0, 3)))]")
case("numpy.linalg_matrix_power_negative_singular",
     "jnp.linalg.matrix_power(jnp.zeros((2, 2)), -1)")
case("numpy.linalg_matrix_power_float", "jnp.linalg.matrix_power(jnp.eye(2), 1.5)")
case("numpy.linalg_qr_bad_mode", "jnp.linalg.qr(jnp.eye(2), mode='foo')")
case("numpy.fft_zero_n", "jnp.fft.fft(jnp.ones(4), n=0)")
case("numpy.fft_negative_n", "jnp.fft.fft(jnp.ones(4), n=-1)")
case("numpy.fft_axis_oob", "jnp.fft.fft(jnp.ones(4), axis=1)")
case("numpy.fft_bad_norm", "jnp.fft.fft(jnp.ones(4), norm='foo')")
case("numpy.fft_empty", "jnp.fft.fft(jnp.ones(0))")
case("numpy.sort_axis_oob", "jnp.sort(jnp.ones(3), axis=1)")
case("numpy.sort_bad_kind", "jnp.sort(jnp.ones(3), kind='foo')")
case("numpy.argsort_nan", "jnp.argsort(jnp.array([3., np.nan, 1.]))")
case("numpy.searchsorted_unsorted", "jnp.searchsorted(jnp.array([3, 1, 2]), 2)")
case("numpy.searchsorted_bad_side", "jnp.searchsorted(jnp.array([1, 2]), 2, side='middle')")
case("numpy.histogram_negative_bins", "jnp.histogram(jnp.ones(3), bins=-1)")
case("numpy.histogram_bad_range", "jnp.histogram(jnp.ones(3), bins=3, range=(2, 1))")
case("numpy.interp_shape", "jnp.interp(1., jnp.ones(3), jnp.ones(2))")
case("numpy.polyfit_bad_deg", "jnp.polyfit(jnp.arange(3.), jnp.arange(3.), -1)")
case("numpy.convolve_empty", "jnp.convolve(jnp.ones(0), jnp.ones(3))")
case("numpy.convolve_bad_mode", "jnp.convolve(jnp.ones(3), jnp.ones(3), mode='foo')")
case("numpy.meshgrid_bad_indexing", "jnp.meshgrid(jnp.ones(2), indexing='foo')")
case("numpy.iinfo_float", "jnp.iinfo(jnp.float32)")
case("numpy.finfo_int", "jnp.finfo(jnp.int32)")
case("numpy.dtype_unknown", "jnp.dtype('float128')")
case("numpy.promote_types_bad", "jnp.promote_types(jnp.int32, 'foo')")
case("numpy.result_type_none", "jnp.result_type(None)")
case("numpy.array_equal_shapes", "jnp.array_equal(jnp.ones(2), jnp.ones(3))")
case("numpy.vectorize_bad_signature", "jnp.vectorize(lambda x: x, signature='(n)->')(jnp.ones(3))")
case("numpy.piecewise_mismatch", "jnp.piecewise(jnp.arange(3.), [jnp.arange(3) > 0], [1., 2., 3., 4.])")
case("numpy.array_bool_of_multi", "bool(jnp.ones(3))", message=True)
case("numpy.array_int_of_multi", "int(jnp.ones(3))")
case("numpy.array_len_scalar", "len(jnp.float32(1))")
case("numpy.array_iter_scalar", "list(jnp.float32(1))")
case("numpy.array_hash", "hash(jnp.ones(3))")
case("numpy.array_index_method_float", "[1, 2, 3][jnp.float32(1)]")
case("numpy.array_index_method_int", "[1, 2, 3][jnp.int32(1)]")
case("numpy.array_format_spec", "f'{jnp.float32(1.5):.2f}'")
case("numpy.array_format_spec_vector", "f'{jnp.ones(2):.2f}'")
case("numpy.array_tobytes", "len(jnp.ones(3, dtype=jnp.float32).tobytes())")
case("numpy.array_copy_to_host", "jnp.ones(3).copy_to_host_async()")

# ------------------------------------------------------------------------ lax
case("lax.add_dtype_mismatch", "lax.add(jnp.float32(1), jnp.int32(1))", smoke=True, message=True)
case("lax.add_shape_mismatch", "lax.add(jnp.ones(2), jnp.ones(3))", message=True)
case("lax.add_python_scalars", "lax.add(1, 2.)")
case("lax.dot_mixed_dtypes", "lax.dot(jnp.ones(3, jnp.int32), jnp.ones(3, jnp.float32))",
     smoke=True)
case("lax.dot_shape_mismatch", "lax.dot(jnp.ones(3), jnp.ones(4))", message=True)
case("lax.dot_general_bad_dims",
     "lax.dot_general(jnp.ones((2, 3)), jnp.ones((3, 2)), (((2,), (0,)), ((), ())))")
case("lax.dot_general_preferred_int",
     "lax.dot_general(jnp.ones((2, 3)), jnp.ones((3, 2)), (((1,), (0,)), ((), ())), "
     "preferred_element_type=jnp.int32)")
case("lax.reduce_axis_out_of_range", "lax.reduce(jnp.ones((2, 3)), 0., lax.add, (5,))",
     smoke=True)
case("lax.reduce_duplicate_axes", "lax.reduce(jnp.ones((2, 3)), 0., lax.add, (0, 0))")
case("lax.reduce_init_dtype", "lax.reduce(jnp.ones(3), 0, lax.add, (0,))")
case("lax.reduce_non_scalar_init", "lax.reduce(jnp.ones(3), jnp.zeros(2), lax.add, (0,))")
case("lax.sort_dimension_out_of_range", "lax.sort(jnp.ones((2, 3)), dimension=5)", smoke=True)
case("lax.sort_num_keys_zero", "lax.sort((jnp.ones(3), jnp.ones(3)), num_keys=0)")
case("lax.sort_shape_mismatch", "lax.sort((jnp.ones(3), jnp.ones(2)))")
case("lax.top_k_too_big", "lax.top_k(jnp.ones(3), 5)")
case("lax.top_k_negative", "lax.top_k(jnp.ones(3), -1)")
case("lax.argmax_axis_oob", "lax.argmax(jnp.ones(3), 2, jnp.int32)")
case("lax.cumsum_axis_oob", "lax.cumsum(jnp.ones(3), axis=3)")
case("lax.reshape_bad", "lax.reshape(jnp.ones(6), (4,))", message=True)
case("lax.reshape_negative", "lax.reshape(jnp.ones(6), (-1,))")
case("lax.reshape_dimensions_bad", "lax.reshape(jnp.ones((2, 3)), (6,), dimensions=(0, 0))")
case("lax.transpose_bad_perm", "lax.transpose(jnp.ones((2, 3)), (1, 1))")
case("lax.broadcast_in_dim_bad", "lax.broadcast_in_dim(jnp.ones(3), (4,), (0,))", message=True)
case("lax.broadcast_in_dim_dims_len",
     "lax.broadcast_in_dim(jnp.ones(3), (3, 3), (0, 1))")
case("lax.squeeze_non_one", "lax.squeeze(jnp.ones((2, 3)), (0,))")
case("lax.slice_oob", "lax.slice(jnp.ones(3), (0,), (5,))", message=True)
case("lax.slice_negative_start", "lax.slice(jnp.ones(3), (-1,), (2,))")
case("lax.slice_zero_stride", "lax.slice(jnp.ones(3), (0,), (3,), (0,))")
case("lax.dynamic_slice_negative_start", "lax.dynamic_slice(jnp.arange(5.), (-1,), (2,))",
     smoke=True)
case("lax.dynamic_slice_oob_start", "lax.dynamic_slice(jnp.arange(5.), (10,), (2,))")
case("lax.dynamic_slice_size_too_big", "lax.dynamic_slice(jnp.arange(5.), (0,), (6,))",
     message=True)
case("lax.dynamic_slice_wrong_rank", "lax.dynamic_slice(jnp.arange(5.), (0, 0), (2,))")
case("lax.dynamic_slice_float_index", "lax.dynamic_slice(jnp.arange(5.), (1.5,), (2,))")
case("lax.dynamic_slice_mixed_index_types",
     "lax.dynamic_slice(jnp.ones((2, 3)), (1, jnp.int8(1)), (1, 2))")
case("lax.dynamic_update_slice_dtype",
     "lax.dynamic_update_slice(jnp.ones(5), jnp.ones(2, dtype=jnp.int32), (0,))")
case("lax.dynamic_update_slice_too_big",
     "lax.dynamic_update_slice(jnp.ones(2), jnp.ones(5), (0,))")
case("lax.dynamic_update_slice_negative",
     "lax.dynamic_update_slice(jnp.zeros(5), jnp.ones(2), (-1,))")
case("lax.pad_negative_interior", "lax.pad(jnp.ones(3), 0., ((0, 0, -1),))")
case("lax.pad_too_negative", "lax.pad(jnp.ones(3), 0., ((-5, 0, 0),))")
case("lax.pad_value_dtype", "lax.pad(jnp.ones(3), jnp.int32(0), ((1, 1, 0),))")
case("lax.concatenate_dim_oob", "lax.concatenate([jnp.ones(2), jnp.ones(2)], 1)")
case("lax.concatenate_dtype", "lax.concatenate([jnp.ones(2), jnp.ones(2, jnp.int32)], 0)")
case("lax.convert_element_type_bad", "lax.convert_element_type(jnp.ones(2), 'foo')")
case("lax.bitcast_convert_type_size",
     "lax.bitcast_convert_type(jnp.ones(2, jnp.float32), jnp.int8).shape")
case("lax.integer_pow_negative_int", "lax.integer_pow(jnp.int32(2), -1)")
case("lax.integer_pow_float_exponent", "lax.integer_pow(2., 1.5)")
case("lax.shift_left_float", "lax.shift_left(1., 2.)")
case("lax.exp_int", "lax.exp(jnp.int32(1))", message=True)
case("lax.population_count_float", "lax.population_count(1.)")
case("lax.rem_by_zero_int", "lax.rem(jnp.int32(5), jnp.int32(0))")
case("lax.div_by_zero_int", "lax.div(jnp.int32(5), jnp.int32(0))")
case("lax.clamp_bad_order", "lax.clamp(3., jnp.arange(5.), 1.)")
case("lax.clamp_shape", "lax.clamp(jnp.zeros(2), jnp.arange(5.), 1.)")
case("lax.select_pred_dtype", "lax.select(jnp.ones(3), jnp.ones(3), jnp.zeros(3))")
case("lax.select_n_index_oob", "lax.select_n(jnp.int32(5), jnp.ones(2), jnp.zeros(2))")
case("lax.conv_bad_dimension_numbers",
     "lax.conv_general_dilated(jnp.ones((1, 1, 3, 3)), jnp.ones((1, 1, 2, 2)), (1, 1), "
     "'VALID', dimension_numbers=('NCHX', 'OIHW', 'NCHW'))", smoke=True, message=True)
case("lax.conv_bad_padding_string",
     "lax.conv_general_dilated(jnp.ones((1, 1, 3, 3)), jnp.ones((1, 1, 2, 2)), (1, 1), 'FOO')")
case("lax.conv_channel_mismatch",
     "lax.conv_general_dilated(jnp.ones((1, 2, 3, 3)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID')")
case("lax.conv_zero_stride",
     "lax.conv_general_dilated(jnp.ones((1, 1, 3, 3)), jnp.ones((1, 1, 2, 2)), (0, 1), 'VALID')")
case("lax.conv_kernel_too_big",
     "lax.conv_general_dilated(jnp.ones((1, 1, 3, 3)), jnp.ones((1, 1, 5, 5)), (1, 1), 'VALID')"
     ".shape")
case("lax.reduce_window_bad_dims",
     "lax.reduce_window(jnp.ones(4), 0., lax.add, (2, 2), (1,), 'VALID')")
case("lax.gather_bad_dnums",
     "lax.gather(jnp.ones(5), jnp.array([[1]]), lax.GatherDimensionNumbers(offset_dims=(), "
     "collapsed_slice_dims=(1,), start_index_map=(0,)), (1,))")
case("lax.scatter_add_bad_dnums",
     "lax.scatter_add(jnp.ones(5), jnp.array([[1]]), jnp.ones(1), "
     "lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(3,), "
     "scatter_dims_to_operand_dims=(0,)))")
case("lax.iota_negative", "lax.iota(jnp.int32, -1)")
case("lax.iota_bad_dtype", "lax.iota('foo', 3)")
case("lax.full_negative_shape", "lax.full((-2,), 1.)")
case("lax.psum_unbound_axis", "lax.psum(jnp.ones(2), 'i')", message=True)
case("lax.axis_index_unbound", "lax.axis_index('i')")

# --------------------------------------------------------------- control flow
case("lax.cond_branch_type_mismatch",
     "lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.)", smoke=True,
     message=True)
case("lax.cond_branch_shape_mismatch",
     "lax.cond(True, lambda x: x, lambda x: jnp.ones(3), 1.)")
case("lax.cond_branch_tree_mismatch",
     "lax.cond(True, lambda x: (x, x), lambda x: x, 1.)")
case("lax.cond_pred_array", "lax.cond(jnp.array([True, False]), lambda: 1., lambda: 2.)",
     message=True)
case("lax.cond_pred_float", "lax.cond(1.5, lambda: 1., lambda: 2.)")
case("lax.cond_pred_int_array", "lax.cond(jnp.int32(2), lambda: 1., lambda: 2.)")
case("lax.cond_pred_string", "lax.cond('a', lambda: 1., lambda: 2.)")
case("lax.cond_not_callable", "lax.cond(True, 1., 2.)")
case("lax.cond_missing_operand", "lax.cond(True, lambda x: x, lambda x: x)")
case("lax.cond_weak_vs_strong",
     "lax.cond(True, lambda: 1., lambda: jnp.float32(2.))")
case("lax.switch_index_oob", "lax.switch(5, [lambda: 1., lambda: 2.])")
case("lax.switch_index_negative", "lax.switch(-3, [lambda: 1., lambda: 2.])")
case("lax.switch_empty_branches", "lax.switch(0, [])")
case("lax.switch_float_index", "lax.switch(0.5, [lambda: 1., lambda: 2.])")
case("lax.while_carry_type_change",
     "lax.while_loop(lambda c: c < 10, lambda c: c + 0.5, 0)", smoke=True)
case("lax.while_carry_strong_type_change",
     "lax.while_loop(lambda c: c < 10, lambda c: (c + 0.5).astype(jnp.float32), jnp.int32(0))")
case("lax.while_cond_not_scalar",
     "lax.while_loop(lambda c: c < 3., lambda c: c + 1, jnp.zeros(2))", message=True)
case("lax.while_cond_not_bool", "lax.while_loop(lambda c: c, lambda c: c - 1, 3)")
case("lax.while_body_tree_change",
     "lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1,), (0, 1.))")
case("lax.while_not_callable", "lax.while_loop(True, lambda c: c, 0)")
case("lax.fori_carry_type_change", "lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0)", smoke=True)
case("lax.fori_float_bounds", "lax.fori_loop(0., 3., lambda i, c: c + i, 0.)")
case("lax.fori_mixed_bound_types",
     "lax.fori_loop(jnp.int8(0), jnp.int32(3), lambda i, c: c + 1, 0)")
case("lax.fori_reversed_bounds", "lax.fori_loop(5, 2, lambda i, c: c + 1, 0)")
case("lax.fori_traced_bounds",
     "olympus.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))(4)")
case("lax.fori_huge_trip", "lax.fori_loop(0, 2**40, lambda i, c: c, 0)")
case("lax.scan_carry_type_change",
     "lax.scan(lambda c, x: (c + x, c), 0, jnp.ones(3))[0]", smoke=True)
case("lax.scan_xs_length_mismatch",
     "lax.scan(lambda c, x: (c, x), 0., (jnp.ones(3), jnp.ones(4)))", message=True)
case("lax.scan_length_mismatch", "lax.scan(lambda c, x: (c, x), 0., jnp.ones(3), length=4)")
case("lax.scan_no_xs_no_length", "lax.scan(lambda c, x: (c, x), 0., None)")
case("lax.scan_length_only", "lax.scan(lambda c, x: (c + 1., c), 0., None, length=3)[1]")
case("lax.scan_scalar_xs", "lax.scan(lambda c, x: (c, x), 0., 1.)")
case("lax.scan_body_returns_single", "lax.scan(lambda c, x: c, 0., jnp.ones(3))")
case("lax.scan_body_carry_shape_change",
     "lax.scan(lambda c, x: (jnp.ones(2), x), 0., jnp.ones(3))")
case("lax.scan_zero_length", "lax.scan(lambda c, x: (c + x, x), 0., jnp.ones(0))")
case("lax.scan_reverse_unroll0", "lax.scan(lambda c, x: (c + x, c), 0., jnp.arange(3.), reverse=True, unroll=0)")
case("lax.map_non_array", "lax.map(lambda x: x, [1., 2.])")
case("lax.map_empty", "lax.map(lambda x: x * 2, jnp.ones(0))")
case("lax.associative_scan_bad_axis", "lax.associative_scan(lax.add, jnp.ones(3), axis=2)")

# ------------------------------------------------------------------------ random
case("random.key_float_seed", "olympus.random.key(1.5)", smoke=True)
case("random.key_array_seed", "olympus.random.key(jnp.ones(2))")
case("random.key_huge_seed", "olympus.random.key_data(olympus.random.key(2**40))")
case("random.key_negative_seed", "olympus.random.key_data(olympus.random.key(-1))")
case("random.key_string_seed", "olympus.random.key('a')")
case("random.prngkey_huge_seed", "olympus.random.PRNGKey(2**70)")
case("random.key_to_numpy", "np.asarray(olympus.random.key(0))", smoke=True, message=True)
case("random.key_arithmetic", "olympus.random.key(0) + 1")
case("random.key_float_conversion", "float(olympus.random.key(0))")
case("random.uniform_raw_uint_key", "olympus.random.uniform(jnp.array([0, 1], dtype=jnp.uint32))")
case("random.uniform_bad_key_shape", "olympus.random.uniform(jnp.array([0, 1, 2], dtype=jnp.uint32))")
case("random.uniform_int_key", "olympus.random.uniform(0)")
case("random.uniform_negative_shape", "olympus.random.uniform(olympus.random.key(0), (-1,))",
     smoke=True)
case("random.uniform_int_dtype", "olympus.random.uniform(olympus.random.key(0), (2,), dtype=jnp.int32)")
case("random.uniform_minval_gt_maxval",
     "olympus.random.uniform(olympus.random.key(0), (3,), minval=2., maxval=1.)")
case("random.uniform_shape_broadcast_bad",
     "olympus.random.uniform(olympus.random.key(0), (3,), minval=jnp.zeros(2))")
case("random.normal_int_dtype", "olympus.random.normal(olympus.random.key(0), (2,), jnp.int32)")
case("random.normal_float_shape", "olympus.random.normal(olympus.random.key(0), (2.5,))")
case("random.randint_bool_dtype",
     "olympus.random.randint(olympus.random.key(0), (3,), 0, 2, dtype=jnp.bool_)")
case("random.randint_float_dtype",
     "olympus.random.randint(olympus.random.key(0), (3,), 0, 2, dtype=jnp.float32)")
case("random.randint_minval_gt_maxval",
     "olympus.random.randint(olympus.random.key(0), (3,), 5, 1)")
case("random.randint_out_of_dtype_range",
     "olympus.random.randint(olympus.random.key(0), (3,), 0, 1000, dtype=jnp.int8)")
case("random.choice_no_replace_too_many",
     "olympus.random.choice(olympus.random.key(0), 3, (5,), replace=False)", message=True)
case("random.choice_empty", "olympus.random.choice(olympus.random.key(0), jnp.ones(0))")
case("random.choice_p_shape",
     "olympus.random.choice(olympus.random.key(0), 3, p=jnp.ones(2) / 2)")
case("random.choice_negative_p",
     "olympus.random.choice(olympus.random.key(0), 3, (4,), p=jnp.array([-1., 1., 1.]))")
case("random.permutation_axis_oob",
     "olympus.random.permutation(olympus.random.key(0), jnp.ones(3), axis=1)")
case("random.permutation_float_n", "olympus.random.permutation(olympus.random.key(0), 2.5)")
case("random.split_zero", "olympus.random.split(olympus.random.key(0), 0).shape")
case("random.split_negative", "olympus.random.split(olympus.random.key(0), -1)")
case("random.split_float", "olympus.random.split(olympus.random.key(0), 2.5)")
case("random.fold_in_float", "olympus.random.fold_in(olympus.random.key(0), 1.5)")
case("random.fold_in_huge", "olympus.random.key_data(olympus.random.fold_in(olympus.random.key(0), 2**40))")
case("random.bernoulli_p_out_of_range",
     "olympus.random.bernoulli(olympus.random.key(0), 1.5, (3,))")
case("random.categorical_axis_oob",
     "olympus.random.categorical(olympus.random.key(0), jnp.ones(3), axis=2)")
case("random.gamma_negative_a", "olympus.random.gamma(olympus.random.key(0), -1., (2,))")
case("random.beta_zero", "olympus.random.beta(olympus.random.key(0), 0., 1., (2,))")
case("random.truncated_normal_bad_bounds",
     "olympus.random.truncated_normal(olympus.random.key(0), 2., 1., (2,))")
case("random.wrap_key_data_bad_shape",
     "olympus.random.wrap_key_data(jnp.zeros(3, dtype=jnp.uint32))")
case("random.wrap_key_data_bad_dtype",
     "olympus.random.wrap_key_data(jnp.zeros(2, dtype=jnp.float32))")
case("random.key_impl_unknown", "olympus.random.key(0, impl='foo')")
case("random.key_in_jit_numpy", "olympus.jit(lambda k: np.asarray(k))(olympus.random.key(0))")
case("random.mixing_key_kinds",
     "olympus.random.split(olympus.random.PRNGKey(0)) + olympus.random.split(olympus.random.key(0))")

# ----------------------------------------------------------------------------- nn
case("nn.softmax_axis_oob", "olympus.nn.softmax(jnp.ones(3), axis=2)", smoke=True)
case("nn.softmax_int", "olympus.nn.softmax(jnp.arange(3))")
case("nn.softmax_empty", "olympus.nn.softmax(jnp.ones(0))")
case("nn.log_softmax_where_all_false",
     "olympus.nn.log_softmax(jnp.ones(3), where=jnp.zeros(3, dtype=bool))")
case("nn.one_hot_float_classes", "olympus.nn.one_hot(jnp.array([0, 1]), 2.5)")
case("nn.one_hot_negative_classes", "olympus.nn.one_hot(jnp.array([0, 1]), -1)")
case("nn.one_hot_oob_index", "olympus.nn.one_hot(jnp.array([0, 5, -1]), 3)")
case("nn.one_hot_float_input", "olympus.nn.one_hot(jnp.array([0.5, 1.]), 3)")
case("nn.one_hot_traced_classes",
     "olympus.jit(lambda n: olympus.nn.one_hot(jnp.array([0]), n))(3)")
case("nn.relu_int", "olympus.nn.relu(jnp.array([-1, 2]))")
case("nn.gelu_int", "olympus.nn.gelu(jnp.array([-1, 2]))")
case("nn.gelu_approximate_str", "olympus.nn.gelu(1., approximate='yes')")
case("nn.logsumexp_b_shape", "olympus.nn.logsumexp(jnp.ones(3), b=jnp.ones(2))")
case("nn.logsumexp_axis_oob", "olympus.nn.logsumexp(jnp.ones(3), axis=1)")
case("nn.standardize_empty", "olympus.nn.standardize(jnp.ones(0))")
case("nn.glu_odd_axis", "olympus.nn.glu(jnp.ones(3))")
case("nn.initializers_bad_shape",
     "olympus.nn.initializers.glorot_uniform()(olympus.random.key(0), (3,))")
case("nn.initializers_negative_shape",
     "olympus.nn.initializers.normal()(olympus.random.key(0), (-1,))")
case("nn.initializers_int_dtype",
     "olympus.nn.initializers.normal()(olympus.random.key(0), (2,), jnp.int32)")
case("nn.dot_product_attention_shapes",
     "olympus.nn.dot_product_attention(jnp.ones((1, 2, 3, 4)), jnp.ones((1, 2, 3, 5)), "
     "jnp.ones((1, 2, 3, 4)))")

# -------------------------------------------------------------------- scipy.special
case("scipy.gammaln_negative_int", "olympus.scipy.special.gammaln(jnp.array([-1., 0.]))",
     smoke=True)
case("scipy.gammaln_int_input", "olympus.scipy.special.gammaln(jnp.array([3, 4]))")
case("scipy.erfinv_out_of_domain", "olympus.scipy.special.erfinv(jnp.array([-2., 1., 2.]))")
case("scipy.logit_edges", "olympus.scipy.special.logit(jnp.array([0., 1., 2.]))")
case("scipy.xlogy_zero", "olympus.scipy.special.xlogy(jnp.array([0., 0.]), jnp.array([0., -1.]))")
case("scipy.betainc_bad", "olympus.scipy.special.betainc(-1., 1., 0.5)")
case("scipy.gammainc_negative", "olympus.scipy.special.gammainc(-1., 1.)")
case("scipy.zeta_bad", "olympus.scipy.special.zeta(0.5, 1.)")
case("scipy.logsumexp_return_sign",
     "olympus.scipy.special.logsumexp(jnp.array([1., 2.]), b=jnp.array([1., -2.]), "
     "return_sign=True)")
case("scipy.factorial_negative", "olympus.scipy.special.factorial(-1.)")
case("scipy.i0_complex", "olympus.scipy.special.i0(1 + 1j)")
case("scipy.poch_bad", "olympus.scipy.special.poch(-1., 2.)")
case("scipy.special_wrong_arity", "olympus.scipy.special.gammaln(1., 2.)")

# ----------------------------------------------------------------- tree_util / tree
case("tree.map_structure_mismatch",
     "olympus.tree_util.tree_map(lambda a, b: a + b, (1, 2), (1,))", smoke=True, message=True)
case("tree.map_dict_keys_mismatch",
     "olympus.tree_util.tree_map(lambda a, b: a + b, {'a': 1}, {'b': 1})", message=True)
case("tree.map_list_vs_tuple",
     "olympus.tree_util.tree_map(lambda a, b: a + b, [1, 2], (1, 2))", message=True)
case("tree.map_none_vs_leaf",
     "olympus.tree_util.tree_map(lambda a, b: a, (None, 1), (1, 1))", message=True)
case("tree.map_not_callable", "olympus.tree_util.tree_map(3, [1, 2])")
case("tree.unflatten_wrong_count",
     "olympus.tree_util.tree_unflatten(olympus.tree_util.tree_structure((1, 2)), [1])",
     message=True)
case("tree.unflatten_not_treedef", "olympus.tree_util.tree_unflatten((1, 2), [1, 2])")
case("tree.flatten_cyclic", "l = []\nl.append(l)\nolympus.tree_util.tree_leaves(l)")
case("tree.flatten_deep", """
t = 1
for _ in range(5000):
    t = [t]
len(olympus.tree_util.tree_leaves(t))""")
case("tree.unsortable_dict_keys", "olympus.tree_util.tree_leaves({1: 'a', 'b': 2})")
case("tree.register_twice", """
class P:
    pass
olympus.tree_util.register_pytree_node(P, lambda p: ((), None), lambda a, c: P())
olympus.tree_util.register_pytree_node(P, lambda p: ((), None), lambda a, c: P())""",
     message=True)
case("tree.register_builtin", "olympus.tree_util.register_pytree_node(tuple, lambda p: ((), None), lambda a, c: ())")
case("tree.flatten_func_bad_return", """
class P:
    pass
olympus.tree_util.register_pytree_node(P, lambda p: 3, lambda a, c: P())
olympus.tree_util.tree_leaves(P())""")
case("tree.namedtuple_vs_tuple", """
import collections
Pt = collections.namedtuple('Pt', 'x y')
olympus.tree_util.tree_map(lambda a, b: a + b, Pt(1, 2), (1, 2))""")
case("tree.transpose_mismatch",
     "olympus.tree_util.tree_transpose(olympus.tree_util.tree_structure([0, 0]), "
     "olympus.tree_util.tree_structure((0, 0)), [(1, 2), (3,)])")
case("tree.reduce_empty_no_init", "olympus.tree_util.tree_reduce(lambda a, b: a + b, [])")
case("tree.all_strings", "olympus.tree_util.tree_all(['a', ''])")
case("tree.tree_module_map", "olympus.tree.map(lambda x: x * 2, {'a': [1, 2]})")
case("tree.tree_module_leaves_is_leaf_bad",
     "olympus.tree.leaves([1, [2]], is_leaf=3)")
case("tree.keystr_bad", "olympus.tree_util.keystr(3)")
case("tree.flatten_with_path_none", "olympus.tree_util.tree_flatten_with_path(None)")
case("tree.dataclass_missing_fields", """
import dataclasses
@dataclasses.dataclass
class D:
    a: float
olympus.tree_util.register_dataclass(D, data_fields=['b'], meta_fields=[])""")
case("tree.ravel_pytree_mixed_dtypes",
     "import olympus.flatten_util\nolympus.flatten_util.ravel_pytree({'a': jnp.ones(2), 'b': jnp.arange(2)})[0].dtype")
case("tree.ravel_pytree_unravel_wrong_size", """
import olympus.flatten_util
flat, unravel = olympus.flatten_util.ravel_pytree({'a': jnp.ones(2)})
unravel(jnp.ones(3))""")

# ------------------------------------------------------------------ debug / callbacks
case("debug.print_bad_format_key", "olympus.jit(lambda x: olympus.debug.print('{y}', x=x))(1.)",
     smoke=True, message=True)
case("debug.print_positional_missing", "olympus.debug.print('{} {}', 1.)")
case("debug.print_bad_format_spec", "olympus.jit(lambda x: olympus.debug.print('{:d}', x))(1.5)")
case("debug.print_not_string", "olympus.debug.print(3)")
case("debug.print_eager", "olympus.debug.print('x={x}', x=jnp.ones(2))")
case("debug.print_under_vmap",
     "olympus.vmap(lambda x: olympus.debug.print('{}', x) or x)(jnp.ones(2))")
case("debug.print_under_grad",
     "olympus.grad(lambda x: (olympus.debug.print('{}', x), x * 2)[1])(1.)")
case("debug.callback_raises", """
def boom(x):
    raise ValueError('boom')
olympus.jit(lambda x: olympus.debug.callback(boom, x) or x)(1.)""", smoke=True)
case("debug.callback_not_callable", "olympus.debug.callback(3, 1.)")
case("debug.callback_returns_value",
     "olympus.jit(lambda x: olympus.debug.callback(lambda v: 42, x) or x)(1.)")
case("debug.callback_under_vmap", """
seen = []
olympus.vmap(lambda x: olympus.debug.callback(lambda v: seen.append(np.asarray(v).shape), x) or x)(jnp.ones(3))
seen""")
case("debug.callback_ordered_jit", """
seen = []
f = olympus.jit(lambda x: olympus.debug.callback(seen.append, x, ordered=True) or x)
f(1.); f(2.)
olympus.block_until_ready(f(3.))
[float(v) for v in seen]""")
case("debug.callback_bad_kwarg", "olympus.debug.callback(print, 1., foo=3, bar_partial=1)")

# -------------------------------------------------------------------------- config
case("config.unknown_option", "olympus.config.update('olympus_no_such_option', True)", smoke=True,
     message=True)
case("config.bad_value_type", "olympus.config.update('olympus_enable_x64', 'maybe')")
case("config.read_unknown", "olympus.config.olympus_no_such_option")
case("config.enable_x64_context_dtype", """
with olympus.enable_x64(True):
    d = jnp.ones(2).dtype
str(d)""")
case("config.enable_x64_bad_arg", "olympus.enable_x64('yes')")
case("config.default_matmul_precision_bad",
     "olympus.config.update('olympus_default_matmul_precision', 'ultra')")
case("config.debug_nans", """
olympus.config.update('olympus_debug_nans', True)
olympus.jit(lambda x: jnp.log(x))(-1.)""")
case("config.disable_jit_context", """
with olympus.disable_jit():
    y = olympus.jit(lambda x: x * 2)(3.)
y""")
case("config.numpy_rank_promotion_raise", """
olympus.config.update('olympus_numpy_rank_promotion', 'raise')
jnp.ones(3) + jnp.ones((2, 3))""")
case("config.numpy_dtype_promotion_strict", """
olympus.config.update('olympus_numpy_dtype_promotion', 'strict')
jnp.ones(3, jnp.float32) + jnp.ones(3, jnp.int32)""")

# ---------------------------------------------------------------- devices / arrays
case("device.put_bad_device", "olympus.device_put(jnp.ones(2), device='cpu:7')")
case("device.put_string", "olympus.device_put('a')")
case("device.put_object", "olympus.device_put(object())")
case("device.put_list", "olympus.device_put([1., 2.])")
case("device.get_nested", "olympus.device_get({'a': jnp.ones(2)})")
case("device.block_until_ready_non_array", "olympus.block_until_ready(3)")
case("device.block_until_ready_deleted", "x = jnp.ones(2)\nx.delete()\nolympus.block_until_ready(x)")
case("device.devices_bad_backend", "olympus.devices('tpu')")
case("device.make_olympuspr_bad", "olympus.make_olympuspr(3)")
case("device.make_olympuspr_string_arg", "olympus.make_olympuspr(lambda x: x)('a')")
case("errors.is_exception_class",
     "issubclass(olympus.errors.ConcretizationTypeError, TypeError)")
case("kwargs.sum_axes", "jnp.sum(jnp.ones((2, 3)), axes=0)", smoke=True, message=True)
case("kwargs.zeros_dtyp", "jnp.zeros(3, dtyp=jnp.int32)", message=True)
case("kwargs.grad_argnum", "olympus.grad(lambda x: x, argnum=0)(1.)")
case("kwargs.vmap_in_axis", "olympus.vmap(jnp.sin, in_axis=0)(jnp.ones(3))")
case("kwargs.jit_static_argnum", "olympus.jit(lambda x: x, static_argnum=0)(1.)")
case("kwargs.scan_lenght", "lax.scan(lambda c, x: (c, x), 0., None, lenght=3)")
case("kwargs.random_normal_shap", "olympus.random.normal(olympus.random.key(0), shap=(2,))")
case("kwargs.reshape_newshape", "jnp.reshape(jnp.ones(6), newshape=(2, 3)).shape")
case("kwargs.cond_operand", "lax.cond(True, lambda x: x, lambda x: -x, operand=1.)")
case("kwargs.tree_map_is_leaf_typo",
     "olympus.tree_util.tree_map(lambda x: x, [1], isleaf=lambda x: False)")
case("errors.tracer_integer_conversion",
     "olympus.jit(lambda i: [1, 2][i])(jnp.int32(0))")
