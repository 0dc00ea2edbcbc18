"""Every primitive has a lowering rule, lowers to the expected op, and is exercised by
an executing test somewhere in this directory."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from _lower_util import Builder, closed_fn, fake_exported

from olympus_ir import MemorySpace, ShapedArray
from olympus_ir import primitives as P
from olympus_ir.core import primitives_by_name
from olympus_ir.prims.convolution import ConvDimensionNumbers as CDN
from olympus_ir.prims.indexing import GatherDimensionNumbers as GDN
from olympus_ir.prims.indexing import ScatterDimensionNumbers as SDN
from olympus_ir.prims.linalg_lapack import FftType
from olympus_ir.prims.random import RandomAlgorithm
from olympus_ir.prims.transfers import ArrayCopySemantics as ACS
from olympus_ir.shape_poly import symbolic_shape
from olympus_lower import get_lowering_rule, lower_olympuspr, lowering_rules

F32, I32, U32, BOOL = (np.dtype(t) for t in (np.float32, np.int32, np.uint32, np.bool_))
TEST_DIR = Path(__file__).resolve().parent


#: Every primitive has a lowering rule (the collectives lower inside shard_map).
NOT_LOWERED: set = set()
#: custom_lin's rule raises (test_custom_derivatives.py): it lowers to no op.
RAISES = {P.custom_lin_p, P.check_p}  # check: only a debug check lowers (to nothing)
#: The ref primitives are discharged before lowering: their rules report an undischarged
#: program (test_refs.py).
RAISES |= set(P.REF_PRIMITIVES)
#: The typed-key primitives are rewritten to their key data before lowering (in olympus):
#: their rules report a program that was not (test_random.py).
RAISES |= set(P.KEY_PRIMITIVES)
#: As in JAX, the one-sided collectives lower only for GPUs (test_sharding.py).
RAISES |= {P.psend_p, P.precv_p}


def _real_primitives():
    # Primitives registered by tests (ours or others in the same process) are not real.
    return sorted((p for n, p in primitives_by_name.items()
                   if "_test_" not in n and p not in NOT_LOWERED), key=lambda p: p.name)


def test_every_primitive_has_a_lowering_rule():
    missing = []
    for p in _real_primitives():
        try:
            get_lowering_rule(p)
        except NotImplementedError:
            missing.append(p.name)
    assert not missing, f"primitives without a lowering rule: {missing}"
    assert all(p in lowering_rules for p in _real_primitives())


def test_every_primitive_is_exercised_by_a_test():
    sources = "\n".join(f.read_text() for f in TEST_DIR.glob("test_*.py")
                        if f.name != "test_coverage.py")
    unexercised = [p.name for p in _real_primitives()
                   if f"P.{p.name}_p" not in sources and f'"{p.name}"' not in sources]
    assert not unexercised, f"primitives no executing test uses: {unexercised}"


# --- each primitive lowers to the op one expects --------------------------------------------

UNARY_OPS = {
    "neg": "stablehlo.negate", "sign": "stablehlo.sign", "floor": "stablehlo.floor",
    "ceil": "stablehlo.ceil", "round": "stablehlo.round_nearest_afz",
    "is_finite": "stablehlo.is_finite", "exp": "stablehlo.exponential",
    "exp2": "stablehlo.exponential", "log": "stablehlo.log", "log1p": "stablehlo.log_plus_one",
    "expm1": "stablehlo.exponential_minus_one", "tanh": "stablehlo.tanh",
    "logistic": "stablehlo.logistic", "sin": "stablehlo.sine", "cos": "stablehlo.cosine",
    "tan": "stablehlo.tan", "asin": "chlo.asin", "acos": "chlo.acos", "atan": "chlo.atan",
    "sinh": "chlo.sinh", "cosh": "chlo.cosh", "asinh": "chlo.asinh", "acosh": "chlo.acosh",
    "atanh": "chlo.atanh", "sqrt": "stablehlo.sqrt", "rsqrt": "stablehlo.rsqrt",
    "cbrt": "stablehlo.cbrt", "square": "stablehlo.multiply", "erf": "chlo.erf",
    "erfc": "chlo.erfc", "erf_inv": "chlo.erf_inv", "lgamma": "chlo.lgamma",
    "digamma": "chlo.digamma", "abs": "stablehlo.abs", "integer_pow": "stablehlo.multiply",
    "reduce_precision": "stablehlo.reduce_precision", "copy": "return %arg0",
    "stop_gradient": "return %arg0", "name": "return %arg0", "stage": "return %arg0",
}
BINARY_OPS = {
    "add": "stablehlo.add", "add_any": "stablehlo.add", "sub": "stablehlo.subtract", "mul": "stablehlo.multiply",
    "div": "stablehlo.divide", "rem": "stablehlo.remainder", "pow": "stablehlo.power",
    "max": "stablehlo.maximum", "min": "stablehlo.minimum", "atan2": "stablehlo.atan2",
    "nextafter": "chlo.next_after", "complex": "stablehlo.complex",
    "eq": "stablehlo.compare EQ", "ne": "stablehlo.compare NE", "lt": "stablehlo.compare LT",
    "le": "stablehlo.compare LE", "gt": "stablehlo.compare GT", "ge": "stablehlo.compare GE",
    "eq_to": "TOTALORDER", "le_to": "TOTALORDER", "lt_to": "TOTALORDER",
}
INT_OPS = {
    "not": "stablehlo.not", "population_count": "stablehlo.popcnt",
    "clz": "stablehlo.count_leading_zeros", "and": "stablehlo.and", "or": "stablehlo.or",
    "xor": "stablehlo.xor", "shift_left": "stablehlo.shift_left",
    "shift_right_arithmetic": "stablehlo.shift_right_arithmetic",
    "shift_right_logical": "stablehlo.shift_right_logical", "mulhi": "chlo.mulhi",
}
PARAMS = {"integer_pow": {"y": 3}, "round": {"rounding_method": 0}, "name": {"name": "a"},
          "reduce_precision": {"exponent_bits": 5, "mantissa_bits": 10}}


class _Leaves:
    """A tree stand-in for buffer_callback's in_tree/out_tree (lowering reads only the
    leaf count)."""

    def __init__(self, n):
        self.num_leaves = n


class _Layout:
    """A memory layout as the lowering reads one (``major_to_minor``)."""

    def __init__(self, major_to_minor):
        self.major_to_minor = major_to_minor


def _single(prim, in_avals, **params):
    b = Builder()
    vs = [b.arg(a) for a in in_avals]
    out = b.eqn(prim, *vs, **params)
    return b.build(out if prim.multiple_results else [out])


def _dim_as_value_case(b):
    bld = Builder()
    bld.arg(ShapedArray((b,), F32))
    return bld.build([bld.eqn(P.dim_as_value_p, dim=2 * b)])


def _cases():
    A = ShapedArray
    x3, i3, c3 = A((3,), F32), A((3,), I32), A((3,), np.complex64)
    cases = {}
    for n, op in UNARY_OPS.items():
        cases[n] = (_single(P.primitive_by_name(n), [x3], **PARAMS.get(n, {})), [op])
    for n, op in BINARY_OPS.items():
        cases[n] = (_single(P.primitive_by_name(n), [x3, x3]), [op])
    for n, op in INT_OPS.items():
        nargs = 1 if P.primitive_by_name(n) in P.UNARY else 2
        cases[n] = (_single(P.primitive_by_name(n), [i3] * nargs), [op, "tensor<3xi32>"])
    cases["real"] = (_single(P.real_p, [c3]), ["stablehlo.real", "-> tensor<3xf32>"])
    cases["imag"] = (_single(P.imag_p, [c3]), ["stablehlo.imag", "-> tensor<3xf32>"])
    cases["conj"] = (_single(P.conj_p, [c3]), ["stablehlo.complex", "stablehlo.negate"])
    cases["convert_element_type"] = (
        _single(P.convert_element_type_p, [x3], new_dtype=I32, weak_type=False),
        ["stablehlo.convert %arg0 : (tensor<3xf32>) -> tensor<3xi32>"])
    cases["bitcast_convert_type"] = (
        _single(P.bitcast_convert_type_p, [x3], new_dtype=U32),
        ["stablehlo.bitcast_convert %arg0 : (tensor<3xf32>) -> tensor<3xui32>"])
    cases["select_n"] = (_single(P.select_n_p, [A((3,), BOOL), x3, x3]),
                         ["stablehlo.select %arg0, %arg2, %arg1"])
    cases["clamp"] = (_single(P.clamp_p, [A((), F32), x3, A((), F32)]),
                      ["stablehlo.clamp %arg0, %arg1, %arg2 : (tensor<f32>, tensor<3xf32>"])
    m = A((2, 3), F32)
    cases["broadcast_in_dim"] = (
        _single(P.broadcast_in_dim_p, [x3], shape=(2, 3), broadcast_dimensions=(1,)),
        ["stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>"])
    cases["reshape"] = (_single(P.reshape_p, [m], new_sizes=(6,), dimensions=None),
                        ["stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<6xf32>"])
    cases["transpose"] = (_single(P.transpose_p, [m], permutation=(1, 0)),
                          ["stablehlo.transpose %arg0, dims = [1, 0]"])
    cases["squeeze"] = (_single(P.squeeze_p, [A((1, 3), F32)], dimensions=(0,)),
                        ["stablehlo.reshape %arg0 : (tensor<1x3xf32>) -> tensor<3xf32>"])
    cases["expand_dims"] = (_single(P.expand_dims_p, [x3], dimensions=(1,)),
                            ["stablehlo.reshape %arg0 : (tensor<3xf32>) -> tensor<3x1xf32>"])
    cases["concatenate"] = (_single(P.concatenate_p, [x3, x3], dimension=0),
                            ["stablehlo.concatenate %arg0, %arg1, dim = 0"])
    cases["pad"] = (_single(P.pad_p, [x3, A((), F32)], padding_config=((1, 2, 1),)),
                    ["stablehlo.pad %arg0, %arg1, low = [1], high = [2], interior = [1]"])
    cases["rev"] = (_single(P.rev_p, [x3], dimensions=(0,)),
                    ["stablehlo.reverse %arg0, dims = [0]"])
    cases["slice"] = (_single(P.slice_p, [x3], start_indices=(1,), limit_indices=(3,)),
                      ["stablehlo.slice %arg0 [1:3]"])
    cases["iota"] = (_single(P.iota_p, [], dtype=I32, shape=(4,), dimension=0),
                     ["stablehlo.iota dim = 0 : tensor<4xi32>"])
    bdim, = symbolic_shape("b")
    cases["dim_as_value"] = (
        _dim_as_value_case(bdim),
        ['%arg0: tensor<i32> {jax.global_constant = "b"}', "stablehlo.multiply %arg0"])
    for n in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
        op = {"reduce_sum": "add", "reduce_prod": "multiply", "reduce_max": "maximum",
              "reduce_min": "minimum"}[n]
        cases[n] = (_single(P.primitive_by_name(n), [m], axes=(1,)),
                    [f"applies stablehlo.{op} across dimensions = [1]", "-> tensor<2xf32>"])
    for n in ("reduce_and", "reduce_or", "reduce_xor"):
        cases[n] = (_single(P.primitive_by_name(n), [A((2, 3), BOOL)], axes=(0,)),
                    [f"applies stablehlo.{n[7:]} across dimensions = [0]"])
    for n in ("argmax", "argmin"):
        cases[n] = (_single(P.primitive_by_name(n), [m], axes=(1,), index_dtype=I32),
                    ["stablehlo.reduce(%arg0 init:", "stablehlo.iota dim = 1",
                     "-> (tensor<2xf32>, tensor<2xi32>)"])
    cases["dot_general"] = (
        _single(P.dot_general_p, [m, A((3, 4), F32)],
                dimension_numbers=(((1,), (0,)), ((), ()))),
        ["stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]"])
    cases["dynamic_slice"] = (
        _single(P.dynamic_slice_p, [m, A((), I32), A((), I32)], slice_sizes=(1, 2)),
        ["stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [1, 2]"])
    cases["dynamic_update_slice"] = (
        _single(P.dynamic_update_slice_p, [m, A((1, 2), F32), A((), I32), A((), I32)]),
        ["stablehlo.dynamic_update_slice %arg0, %arg1, %arg2, %arg3"])
    gdn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    cases["gather"] = (
        _single(P.gather_p, [m, A((4, 1), I32)], dimension_numbers=gdn, slice_sizes=(1, 3),
                mode="clip"),
        ['"stablehlo.gather"(%arg0, %arg1)', "slice_sizes = array<i64: 1, 3>"])
    sdn = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
              scatter_dims_to_operand_dims=(0,))
    for n, op in (("scatter", None), ("scatter_add", "add"), ("scatter_mul", "multiply"),
                  ("scatter_min", "minimum"), ("scatter_max", "maximum"),
                  ("scatter_sub", "subtract")):
        cases[n] = (_single(P.primitive_by_name(n), [m, A((4, 1), I32), A((4, 3), F32)],
                            dimension_numbers=sdn, mode="drop"),
                    ['"stablehlo.scatter"(%arg0, %arg1, %arg2)']
                    + ([f"stablehlo.{op}"] if op else []))
    for n in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
        cases[n] = (_single(P.primitive_by_name(n), [m], axis=1, reverse=False),
                    ['"stablehlo.reduce_window"(%arg0', "window_dimensions = array<i64: 1, 3>"])
    cases["sort"] = (_single(P.sort_p, [m], dimension=1, is_stable=True, num_keys=1),
                     ['"stablehlo.sort"(%arg0)', "TOTALORDER"])
    cases["rng_bit_generator"] = (
        _single(P.rng_bit_generator_p, [A((4,), U32)], shape=(2,), dtype=U32,
                algorithm=RandomAlgorithm.RNG_PHILOX),
        ["stablehlo.rng_bit_generator", "algorithm = PHILOX"])
    cases["ffi_call"] = (
        _single(P.ffi_call_p, [x3], result_avals=(x3,), vmap_method=None, target_name="t",
                has_side_effect=False, input_layouts=((0,),), output_layouts=((0,),),
                input_output_aliases=(), custom_call_api_version=4,
                legacy_backend_config=None, attributes=(("n", 3),)),
        ["stablehlo.custom_call @t", "backend_config = {n = 3 : i64}"])
    cases["buffer_callback"] = (
        _single(P.buffer_callback_p, [x3], callback=print, result_avals=(x3,),
                in_tree=_Leaves(1), out_tree=_Leaves(1), vmap_method=None,
                has_side_effect=True, input_output_aliases=((0, 0),),
                command_buffer_compatible=False),
        ["stablehlo.custom_call @xla_buffer_python_cpu_callback(%arg0)",
         "has_side_effect = true", "mhlo.backend_config = {index = 0 : ui64}",
         "output_operand_aliases"])
    cases["threefry2x32"] = (_single(P.threefry2x32_p, [A((2,), U32)] * 4),
                             ["stablehlo.shift_left", "tensor<2xui32>"])
    br = closed_fn([x3], lambda b, v: [b.eqn(P.neg_p, v)])
    cases["cond"] = (_single(P.cond_p, [A((), I32), x3], branches=(br, br)),
                     ['"stablehlo.case"(%arg0)'])
    cnd = closed_fn([A((), I32)], lambda b, v: [b.eqn(P.lt_p, v, v)])
    body = closed_fn([A((), I32)], lambda b, v: [b.eqn(P.add_p, v, v)])
    cases["while"] = (_single(P.while_p, [A((), I32)], cond_olympuspr=cnd,
                              body_olympuspr=body, cond_nconsts=0, body_nconsts=0),
                      ["stablehlo.while("])
    sb = closed_fn([x3, A((), F32)], lambda b, c, v: [c, v])
    cases["scan"] = (_single(P.scan_p, [x3, A((2,), F32)], olympuspr=sb, length=2,
                             reverse=False, num_consts=0, num_carry=1,
                             linear=(False, False), unroll=1),
                     ["stablehlo.while(", "stablehlo.dynamic_slice"])
    cases["closed_call"] = (_single(P.closed_call_p, [x3], call_olympuspr=br),
                            ["stablehlo.negate %arg0"])
    cases["xla_metadata_call"] = (
        _single(P.xla_metadata_call_p, [x3], olympuspr=br, scheduling_group="g"),
        ['call @xla_metadata_call(%arg0) {mhlo.frontend_attributes = {scheduling_group = "g"}}',
         "stablehlo.negate %arg0"])
    cases["call_exported"] = (_single(P.call_exported_p, [x3], exported=fake_exported(br)),
                              ["call @call_exported_f(%arg0)", "stablehlo.negate"])

    jit_params = P.jit_params(dict(
        in_shardings=(), out_shardings=(), in_layouts=(), out_layouts=(), donated_invars=(),
        ctx_mesh=None, name="neg", keep_unused=False, inline=False, compiler_options_kvs=()),
        br)
    cases["jit"] = (_single(P.jit_p, [x3], **jit_params),
                    ["call @neg(%arg0)", "func.func private @neg(", "stablehlo.negate %arg0"])
    cases["custom_linear_solve"] = (
        _single(P.linear_solve_p, [x3], const_lengths=P.LinearSolveTuple(0, 0, 0, 0),
                jaxprs=P.LinearSolveTuple(br, None, br, None)), ["stablehlo.negate %arg0"])
    cases["optimization_barrier"] = (_single(P.optimization_barrier_p, [x3, i3]),
                                     ["stablehlo.optimization_barrier %arg0, %arg1"])
    cases["tile"] = (_single(P.tile_p, [m], reps=(2, 1)),
                     ["stablehlo.broadcast_in_dim %arg0, dims = [1, 3]",
                      "-> tensor<4x3xf32>"])
    cases["split"] = (_single(P.split_p, [m], sizes=(1, 2), axis=1),
                      ["stablehlo.slice %arg0 [0:2, 0:1]", "stablehlo.slice %arg0 [0:2, 1:3]"])
    cases["stack"] = (_single(P.stack_p, [x3, x3], axis=0),
                      ["stablehlo.concatenate", "-> tensor<2x3xf32>"])
    cases["unstack"] = (_single(P.unstack_p, [m], axis=0),
                        ["stablehlo.slice %arg0 [0:1, 0:3]", "stablehlo.slice %arg0 [1:2, 0:3]"])
    for n, params in (("custom_jvp_call", dict(jvp=print, num_consts=0)),
                      ("custom_vjp_call", dict(fwd=print, bwd=print, num_consts=0)),
                      ("checkpoint", dict(prevent_cse=True))):
        cases[n] = (_single(P.primitive_by_name(n), [x3], call_olympuspr=br, **params),
                    ["stablehlo.negate %arg0"])
    cases["linear_call"] = (_single(P.linear_call_p, [x3], callee=br, transpose_thunk=print,
                                    num_callee_consts=0, num_res=0),
                            ["stablehlo.negate %arg0"])
    cases["remat_opt"] = (_single(P.remat_opt_p, [x3], num_consts=0, num_res=0,
                                  fwd_jaxpr=br, fun_jaxpr_thunk=print),
                          ["stablehlo.negate %arg0"])
    # custom_partitioning on one device: its body, inline (test_sharding.py: partitioned)
    cases["custom_partitioning"] = (
        _single(P.custom_partitioning_p, [x3], call=br, partition=print,
                propagate_user_sharding=None, infer_sharding_from_operands=None,
                decode_shardings=True, sharding_rule=None, in_tree=None, out_tree=None,
                static_args=()),
        ["stablehlo.negate %arg0"])
    cases["layout_constraint"] = (
        _single(P.layout_constraint_p, [m], layout=_Layout((1, 0))),
        ["stablehlo.custom_call @LayoutConstraint(%arg0) {backend_config = \"\", "
         "operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = "
         "[dense<[0, 1]> : tensor<2xindex>]}"])
    cases["debug_callback"] = (
        _single(P.debug_callback_p, [x3], callback=print, effect=P.debug_effect),
        ["stablehlo.custom_call @xla_ffi_python_cpu_callback", "has_side_effect = true"])
    cases["pure_callback"] = (
        _single(P.pure_callback_p, [x3], callback=print, result_avals=(x3,),
                vmap_method=None, sharding=None),
        ["stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {backend_config = \"\", "
         "mhlo.backend_config"])
    cases["io_callback"] = (
        _single(P.io_callback_p, [x3], callback=print, result_avals=(x3,), ordered=True,
                sharding=None),
        ["stablehlo.custom_call @xla_ffi_python_cpu_callback", "has_side_effect = true"])
    nchw = CDN((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    cases["conv_general_dilated"] = (
        _single(P.conv_general_dilated_p, [A((1, 2, 5, 5), F32), A((3, 2, 3, 3), F32)],
                window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
                rhs_dilation=(1, 1), dimension_numbers=nchw, feature_group_count=1,
                batch_group_count=1, precision=None, preferred_element_type=None),
        ["stablehlo.convolution(%arg0, %arg1)", "-> tensor<1x3x5x5xf32>"])
    for n, op in (("reduce_window_sum", "add"), ("reduce_window_max", "maximum"),
                  ("reduce_window_min", "minimum")):
        cases[n] = (_single(P.primitive_by_name(n), [m], window_dimensions=(1, 2),
                            window_strides=(1, 1), padding=((0, 0), (0, 0))),
                    ['"stablehlo.reduce_window"(%arg0', f"stablehlo.{op}",
                     "window_dimensions = array<i64: 1, 2>"])
    s0 = A((), F32)
    add2 = closed_fn([s0, s0], lambda b, u, v: [b.eqn(P.add_p, u, v)])
    cases["reduce"] = (_single(P.reduce_p, [m, s0], computation=None, jaxpr=add2,
                               dimensions=(1,)), ["stablehlo.reduce(%arg0 init: %arg1)"])
    rw = dict(window_dimensions=(1, 2), window_strides=(1, 1), padding=((0, 0), (0, 0)))
    cases["reduce_window"] = (
        _single(P.reduce_window_p, [m, s0], jaxpr=add2.olympuspr, consts=(),
                base_dilation=(1, 1), window_dilation=(1, 1), **rw),
        ['"stablehlo.reduce_window"(%arg0, %arg1)'])
    cases["select_and_gather_add"] = (
        _single(P.select_and_gather_add_p, [m, m], select_prim=P.ge_p, base_dilation=(1, 1),
                window_dilation=(1, 1), **rw), ['"stablehlo.reduce_window"(%arg1, %arg0'])
    cases["approx_top_k"] = (
        _single(P.approx_top_k_p, [A((2, 8), F32)], k=3, reduction_dimension=-1,
                recall_target=0.95, is_max_k=True, reduction_input_size_override=-1,
                aggregate_to_topk=True),
        ["stablehlo.custom_call @ApproxTopK(%arg0, %0, %cst, %c)",
         "called_computations = [@top_k_gt_f32_comparator]", "is_fallback = true"])
    cases["select_and_scatter_add"] = (
        _single(P.select_and_scatter_add_p, [A((2, 2), F32), m], select_prim=P.le_p, **rw),
        ['"stablehlo.select_and_scatter"(%arg1, %arg0'])
    ge2 = closed_fn([s0, s0], lambda b, u, v: [b.eqn(P.ge_p, u, v)])
    cases["select_and_scatter"] = (
        _single(P.select_and_scatter_p, [m, A((2, 2), F32), s0], select_jaxpr=ge2.olympuspr,
                select_consts=(), scatter_jaxpr=add2.olympuspr, scatter_consts=(), **rw),
        ['"stablehlo.select_and_scatter"(%arg0, %arg1, %arg2)'])
    cases["create_token"] = (_single(P.create_token_p, []), ["stablehlo.create_token"])
    cases["platform_index"] = (_single(P.platform_index_p, [], platforms=(("tpu",), None)),
                               ["stablehlo.constant dense<1> : tensor<i32>"])
    bt = Builder()
    bt_tok = bt.eqn(P.create_token_p)
    cases["after_all"] = (bt.build([bt.eqn(P.after_all_p, bt_tok, bt_tok)]),
                          ["stablehlo.after_all %0, %0"])
    sin1 = closed_fn([A((3,), F32)], lambda b, v: [b.eqn(P.sin_p, v)])
    cases["composite"] = (_single(P.composite_p, [x3], name="my.sin", attributes=(),
                                  version=0, jaxpr=sin1),
                          ['stablehlo.composite "my.sin" %arg0'])
    cases["dce_sink"] = (_single(P.dce_sink_p, [x3], prevent_mlir_dce=True),
                         ["stablehlo.custom_call @dce_sink(%arg0)"])
    cases["shard_alike"] = (_single(P.shard_alike_p, [x3, i3]),
                            ["sdy.sharding_group %arg0 group_id=0 : tensor<3xf32>",
                             "sdy.sharding_group %arg1 group_id=0 : tensor<3xi32>"])
    bm = Builder()
    neg = bm.eqn(P.neg_p, bm.arg(x3))
    cases["xla_metadata_value"] = (
        bm.build([bm.eqn(P.xla_metadata_value_p, neg, xla_metadata_kvs=(("a", 1), ("b", True)))]),
        ['stablehlo.negate %arg0 {mhlo.frontend_attributes = {a = "1", b = "true"}}'])
    sq = A((3, 3), F32)
    cases["cholesky"] = (_single(P.cholesky_p, [sq]),
                         ["stablehlo.custom_call @lapack_spotrf_ffi(%arg0)"])
    cases["triangular_solve"] = (
        _single(P.triangular_solve_p, [sq, m.update(shape=(3, 2))], left_side=True,
                lower=True),
        ["stablehlo.custom_call @lapack_strsm_ffi(%arg0, %arg1)"])
    cases["lu"] = (_single(P.lu_p, [sq]),
                   ["stablehlo.custom_call @lapack_sgetrf_ffi(%arg0)", "stablehlo.while("])
    cases["qr"] = (_single(P.qr_p, [m], full_matrices=True),
                   ["stablehlo.custom_call @lapack_sgeqrf_ffi(%arg0)",
                    "stablehlo.custom_call @lapack_sorgqr_ffi"])
    cases["eigh"] = (_single(P.eigh_p, [sq]),
                     ["stablehlo.custom_call @lapack_ssyevd_ffi(%arg0)"])
    cases["svd"] = (_single(P.svd_p, [m]),
                    ["stablehlo.custom_call @lapack_sgesdd_ffi(%arg0)"])
    cases["eig"] = (_single(P.eig_p, [sq], compute_right_eigenvectors=True),
                    ["stablehlo.custom_call @lapack_sgeev_ffi(%arg0)", "stablehlo.complex"])
    cases["fft"] = (_single(P.fft_p, [x3], fft_type=FftType.RFFT, fft_lengths=(3,)),
                    ["stablehlo.fft %arg0, type = RFFT, length = [3]",
                     "-> tensor<2xcomplex<f32>>"])
    # A transfer is the identity on CPU (as JAX lowers it); the result names its memory.
    cases["device_put"] = (
        _single(P.device_put_p, [m], devices=(MemorySpace.Host,), srcs=(None,),
                copy_semantics=(ACS.ALWAYS_COPY,)),
        ['mhlo.memory_kind = "pinned_host"', "return %arg0"])
    v2 = A((2,), F32)
    cases["hessenberg"] = (_single(P.hessenberg_p, [sq]),
                           ["stablehlo.custom_call @lapack_sgehrd_ffi(%arg0)"])
    cases["tridiagonal"] = (_single(P.tridiagonal_p, [sq], lower=True),
                            ["stablehlo.custom_call @lapack_ssytrd_ffi(%arg0)"])
    cases["schur"] = (_single(P.schur_p, [sq], compute_schur_vectors=True,
                              sort_eig_vals=False, select_callable=None),
                      ["stablehlo.custom_call @lapack_sgees_ffi(%arg0)"])
    cases["ormqr"] = (_single(P.ormqr_p, [sq, v2, m.update(shape=(3, 2))], left=True,
                              transpose=False),
                      ["stablehlo.custom_call @lapack_sormqr_ffi(%arg0, %arg1, %arg2)"])
    cases["householder_product"] = (_single(P.householder_product_p, [sq, v2]),
                                    ["stablehlo.custom_call @lapack_sorgqr_ffi(%arg0, %arg1)"])
    cases["lu_pivots_to_permutation"] = (
        _single(P.lu_pivots_to_permutation_p, [i3], permutation_size=4),
        ["stablehlo.while(", "-> tensor<4xi32>"])
    cases["symmetric_product"] = (
        _single(P.symmetric_product_p, [m, A((2, 2), F32)], alpha=1.0, beta=0.0),
        ["stablehlo.dot_general %arg0, %arg0", "precision = [HIGHEST, HIGHEST]"])
    cases["tridiagonal_solve"] = (
        _single(P.tridiagonal_solve_p, [x3, x3, x3, m.update(shape=(3, 2))],
                perturb_singular=False),
        ["stablehlo.custom_call @lapack_sgtsv_ffi(%arg0, %arg1, %arg2, %arg3)"])
    cases["rng_uniform"] = (_single(P.rng_uniform_p, [A((), F32), A((), F32)], shape=(3,)),
                            ["stablehlo.rng %arg0, %arg1", "distribution = UNIFORM"])
    cases["top_k"] = (_single(P.top_k_p, [m], k=2),
                      ["chlo.top_k(%arg0, k = 2)", "-> (tensor<2x2xf32>, tensor<2x2xi32>)"])
    cases.update(_sparse_cases())
    return cases


class BCOO:
    """What the `todense` lowering reads of a BCOO pytree node (the class itself lives in
    the olympus package, above this one)."""

    def __init__(self, data, indices):
        self.data, self.indices, self.shape = data, indices, (3, 4)
        self.indices_sorted = self.unique_indices = True


class _BCOOTree:
    num_leaves = 2

    def unflatten(self, leaves):
        return BCOO(*leaves)


def _sparse_cases():
    """The sparse family lowers to dense compositions: scatter-adds write stored elements,
    gathers read them, a sort finds the nonzeros."""
    A = ShapedArray
    d5, i52, i5, i4, m34 = (A((5,), F32), A((5, 2), I32), A((5,), I32), A((4,), I32),
                            A((3, 4), F32))
    sp, coo = P.SparseInfo((3, 4)), P.COOInfo((3, 4))
    dn = (((1,), (0,)), ((), ()))
    v4, v3 = A((4,), F32), A((3,), F32)
    dot = dict(dimension_numbers=dn, lhs_spinfo=sp, preferred_element_type=None)
    scatter, gather, sort = "stablehlo.scatter", "stablehlo.gather", "stablehlo.sort"
    return {
        "todense": (_single(P.todense_p, [d5, i52], tree=_BCOOTree()), [scatter]),
        "bcoo_todense": (_single(P.bcoo_todense_p, [d5, i52], spinfo=sp), [scatter]),
        "bcoo_fromdense": (_single(P.bcoo_fromdense_p, [m34], nse=5, n_batch=0, n_dense=0,
                                   index_dtype=I32), [sort, gather]),
        "bcoo_extract": (_single(P.bcoo_extract_p, [i52, m34], assume_unique=True), [gather]),
        "bcoo_transpose": (_single(P.bcoo_transpose_p, [d5, i52], permutation=(1, 0),
                                   spinfo=sp), ["stablehlo.concatenate"]),
        "bcoo_sort_indices": (_single(P.bcoo_sort_indices_p, [d5, i52], spinfo=sp), [sort]),
        "bcoo_sum_duplicates": (_single(P.bcoo_sum_duplicates_p, [d5, i52], spinfo=sp, nse=5),
                                [sort, scatter]),
        "bcoo_dot_general": (_single(P.bcoo_dot_general_p, [d5, i52, v4], **dot),
                             [gather, "stablehlo.dot_general", scatter]),
        "bcoo_dot_general_sampled": (_single(P.bcoo_dot_general_sampled_p,
                                             [A((3, 2), F32), A((2, 4), F32), i52],
                                             dimension_numbers=dn),
                                     ["stablehlo.dot_general", gather]),
        "bcoo_spdot_general": (_single(P.bcoo_spdot_general_p, [d5, i52, d5, i52],
                                       lhs_spinfo=sp, rhs_spinfo=P.SparseInfo((4, 3)),
                                       dimension_numbers=dn, preferred_element_type=None),
                               [sort, scatter]),
        "bcsr_todense": (_single(P.bcsr_todense_p, [d5, i5, i4], spinfo=sp), [scatter]),
        "bcsr_fromdense": (_single(P.bcsr_fromdense_p, [m34], nse=5, n_batch=0, n_dense=0,
                                   index_dtype=I32), [sort]),
        "bcsr_extract": (_single(P.bcsr_extract_p, [i5, i4, m34]), [gather]),
        "bcsr_dot_general": (_single(P.bcsr_dot_general_p, [d5, i5, i4, v4], **dot),
                             [gather, scatter]),
        "coo_todense": (_single(P.coo_todense_p, [d5, i5, i5], spinfo=coo), [scatter]),
        "coo_fromdense": (_single(P.coo_fromdense_p, [m34], nse=5, index_dtype=I32), [sort]),
        "coo_matvec": (_single(P.coo_matvec_p, [d5, i5, i5, v4], spinfo=coo, transpose=False),
                       [gather, scatter]),
        "coo_matmat": (_single(P.coo_matmat_p, [d5, i5, i5, A((3, 2), F32)], spinfo=coo,
                               transpose=True), [gather, scatter]),
        "csr_todense": (_single(P.csr_todense_p, [d5, i5, i4], shape=(3, 4)), [scatter]),
        "csr_fromdense": (_single(P.csr_fromdense_p, [m34], nse=5, index_dtype=I32), [sort]),
        "csr_matvec": (_single(P.csr_matvec_p, [d5, i5, i4, v3], shape=(3, 4), transpose=True),
                       [gather, scatter]),
        "csr_matmat": (_single(P.csr_matmat_p, [d5, i5, i4, A((4, 2), F32)], shape=(3, 4),
                               transpose=False), [gather, scatter]),
    }


CASES = _cases()

# The sharding family and the collectives, inside a shard_map over a 4 x 2 mesh.
from test_sharding import lowered_text  # noqa: E402

SHARDED_CASES = {
    "psum": dict(axis_name="x"), "pmax": dict(axis_name="x"), "pmin": dict(axis_name="x"),
    "all_gather": dict(axis_name="x", axis_size=4, axis=0, tiled=True),
    "psum_scatter": dict(axis_name="x", axis_size=4, scatter_dimension=0, tiled=True),
    "ppermute": dict(axis_name="x", perm=((0, 1), (1, 0))),
    "all_to_all": dict(axis_name="x", axis_size=4, split_axis=0, concat_axis=1, tiled=True),
    "pvary": dict(axes=("x",)), "psum_invariant": dict(axes=("x",)),
}
SHARDED_OPS = {"psum": "stablehlo.all_reduce", "pmax": "stablehlo.maximum",
               "pmin": "stablehlo.minimum", "all_gather": "stablehlo.all_gather",
               "psum_scatter": "stablehlo.reduce_scatter",
               "ppermute": "stablehlo.collective_permute", "all_to_all": "stablehlo.all_to_all",
               "pvary": "sdy.manual_computation", "psum_invariant": "stablehlo.all_reduce",
               "shard_map": "sdy.manual_computation", "axis_index": "stablehlo.partition_id",
               "sharding_constraint": "sdy.sharding_constraint",
               "inspect_sharding": "stablehlo.custom_call @InspectSharding",
               # six operands: lowered by test_sharding.py's own case
               "ragged_all_to_all": "stablehlo.custom_call @ragged_all_to_all"}


#: Lowered through a decomposition the olympus package registers (test_decompositions.py
#: lowers them through stand-ins).
DECOMPOSED = {*P.SPECIAL, P.cholesky_update_p, P.scaled_dot_p}


def test_op_table_covers_every_primitive():
    assert sorted([*CASES, *SHARDED_OPS]) == sorted(
        p.name for p in _real_primitives() if p not in RAISES and p not in DECOMPOSED)


@pytest.mark.parametrize("name", sorted(SHARDED_CASES))
def test_sharded_primitive_lowers_to_expected_op(name):
    text = lowered_text(P.primitive_by_name(name), **SHARDED_CASES[name])
    assert SHARDED_OPS[name] in text and SHARDED_OPS["shard_map"] in text
    assert re.search(rf"module @jit_{name} ", text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_primitive_lowers_to_expected_op(name):
    closed, expected = CASES[name]
    text = lower_olympuspr(closed, name=name).as_text()
    for s in expected:
        assert s in text, f"{name}: {s!r} not in\n{text}"
    assert re.search(rf"module @jit_{name} ", text)
