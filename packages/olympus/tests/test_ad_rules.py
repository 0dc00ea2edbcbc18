"""The JVP and transpose rules of every primitive, checked numerically.

For each case (a small function of one or a few primitives) one jitted check computes, in
float64 (x64 is enabled for this module):

* the JVP (`olympus.jvp`) against central finite differences,
* the linearized JVP (`olympus.linearize`) against the JVP,
* the transpose by the dot-product test ``<ct, J t> == <J^T ct, t>`` where ``J t`` comes
  from `olympus.linearize` and ``J^T ct`` from `olympus.vjp` (under the pairing
  ``Re(sum(a * b))``, the one JAX's complex cotangents use).

The coverage tests enumerate every primitive: each has a JVP rule and is exercised by some
case (or is in the justified NON_DIFFERENTIABLE set, whose zero rules are checked
directly); each primitive expected to be linear has a transpose rule that some case's
linear olympuspr exercises.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
import pytest

import olympus
from olympus import lax
from olympus.lax.control_flow import switch
from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import ShapeDtypeStruct
from olympus_ir.core import ClosedOlympuspr, primitives_by_name
from olympus_ir.prims.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from olympus_ir.prims.random import RandomAlgorithm
from olympus_ir.prims.transfers import ArrayCopySemantics as ACS
from olympus_trace import ad, tree_util
from olympus_trace.core import bind

EPS = 1e-6


@pytest.fixture(scope="module", autouse=True)
def x64():
    with olympus.enable_x64():
        yield


# --- cases ------------------------------------------------------------------------------------


class Case(NamedTuple):
    name: str
    fun: Any
    args: tuple
    rtol: float = 1e-6
    atol: float = 1e-6
    transpose: bool = True  # run the linearize/vjp checks (False: forward mode only)
    eps: float = EPS
    dot_rtol: float = 1e-9  # tolerance of the dot-product test
    ref: Any = None  # instead of finite differences: ref(args, tangents) -> expected tangents
    mode: str = "jvp"  # "vjp": reverse mode only (custom_vjp): <ct, FD> == <J^T ct, t>


def _rng(seed=0):
    return np.random.RandomState(seed)


def f64(*shape, lo=-2.0, hi=2.0, seed=0):
    return _rng(seed).uniform(lo, hi, shape).astype(np.float64)


def c128(*shape, seed=0):
    r = _rng(seed)
    return (r.uniform(-1, 1, shape) + 1j * r.uniform(-1, 1, shape)).astype(np.complex128)


def i32(*vals):
    return np.array(vals, np.int32) if len(vals) != 1 else np.int32(vals[0])


def p(prim, **params):
    """The function binding `prim` with `params`."""
    return lambda *args: bind(prim, *args, **params)


def distinct(*shape, seed=0):
    """float64 values with no ties (for max/min/sort/argmax)."""
    n = int(np.prod(shape))
    vals = _rng(seed).permutation(n).astype(np.float64) * 0.37 - 1.1
    return vals.reshape(shape)


CASES: list[Case] = []


def case(name, fun, *args, **kw):
    CASES.append(Case(name, fun, tuple(args), **kw))


# elementwise unary
X = f64(2, 3)
POS = f64(2, 3, lo=0.2, hi=2.0)
UNIT = f64(2, 3, lo=-0.85, hi=0.85)
for _name, _x in [("neg", X), ("exp", X), ("exp2", X), ("log", POS), ("log1p", POS),
                  ("expm1", X), ("tanh", X), ("logistic", X), ("sin", X), ("cos", X),
                  ("tan", UNIT), ("asin", UNIT), ("acos", UNIT), ("atan", X), ("sinh", X),
                  ("cosh", X), ("asinh", X), ("acosh", POS + 1.1), ("atanh", UNIT),
                  ("sqrt", POS), ("rsqrt", POS), ("cbrt", POS), ("square", X), ("erf", X),
                  ("erfc", X), ("erf_inv", UNIT), ("lgamma", POS), ("digamma", POS),
                  ("abs", X), ("copy", X)]:
    case(_name, p(primitives_by_name[_name]), _x)
case("digamma_wide", p(P.digamma_p), np.array([0.3, 1.7, 6.5, 25.0, -0.4, -2.7]))
case("lgamma_negative", p(P.lgamma_p), np.array([-0.4, -2.7, 3.3]))
case("reduce_precision", p(P.reduce_precision_p, exponent_bits=11, mantissa_bits=52), X)
case("stage", p(P.stage_p), X)
case("shard_alike", p(P.shard_alike_p), X, X * 2)
case("xla_metadata_value", p(P.xla_metadata_value_p, xla_metadata_kvs=(("a", 1),)), X)
# the special functions (JAX's rules): igamma/igammac in both operands, polygamma and
# regularized_incomplete_beta in x only (their other derivatives raise JAX's ValueError:
# test_lax_beta_zeta_bessel.py), the Bessel functions across 0
case("igamma", p(P.igamma_p), POS + 0.5, POS)
case("igammac", p(P.igammac_p), POS + 0.5, POS)
case("polygamma", lambda x: bind(P.polygamma_p, np.array([1.0, 2.0, 0.0]), x), POS[0] + 0.5)
case("regularized_incomplete_beta",
     lambda x: bind(P.regularized_incomplete_beta_p, np.array([0.5, 2.0, 3.5]),
                    np.array([1.5, 0.7, 2.0]), x), np.array([0.2, 0.5, 0.8]))
case("bessel_i0e", p(P.bessel_i0e_p), X)
case("bessel_i1e", p(P.bessel_i1e_p), X)
case("name", lambda x: lax.mul(p(P.name_p, name="n")(x), x), X)
for _y in (3, -2, 1, 0):
    case(f"integer_pow_{_y}", p(P.integer_pow_p, y=_y), POS)
case("piecewise_constant", lambda x: (lax.floor(x), lax.ceil(x), lax.round(x),
                                       lax.round(x, 1), lax.sign(x), lax.is_finite(x)),
     X + 0.25)
case("stop_gradient", lambda x: lax.mul(lax.stop_gradient(x), x), X,
     ref=lambda xs, ts: [xs[0] * ts[0]])
# A transfer that keeps the memory space (differentiating through a trip to host memory is
# refused by JAX itself; offloaded residuals are tested in test_ad_checkpoint.py).
case("device_put", lambda x: lax.mul(p(P.device_put_p, devices=(None,), srcs=(None,),
                                       copy_semantics=(ACS.ALWAYS_COPY,))(x)[0], x), X)
for _name in ("exp", "log", "sin", "sqrt", "tanh", "neg", "square", "conj"):
    case(f"{_name}_complex", p(primitives_by_name[_name]), c128(2, 3))
case("abs_complex", p(P.abs_p), c128(2, 3))
case("real_imag", lambda z: (lax.real(z), lax.imag(z)), c128(3))
case("conj_real", p(P.conj_p), f64(3))
case("complex", p(P.complex_p), f64(3), f64(3, seed=1))
case("complex_scalar_broadcast", p(P.complex_p), f64(3), np.float64(0.7))

# elementwise binary
Y = f64(2, 3, seed=1)
YPOS = f64(2, 3, lo=0.5, hi=2.0, seed=1)
for _name in ("add", "sub", "mul", "max", "min", "atan2"):
    case(_name, p(primitives_by_name[_name]), distinct(2, 3), distinct(2, 3, seed=1) + 0.05)
case("div", p(P.div_p), X, YPOS)
case("rem", p(P.rem_p), f64(2, 3, lo=0.1, hi=0.9) * 5.0 + 0.05, np.full((2, 3), 1.3))
case("pow", p(P.pow_p), POS, Y)
case("pow_scalar_exponent", p(P.pow_p), POS, np.float64(2.5))
case("pow_scalar_base", p(P.pow_p), np.float64(1.7), Y)
for _name in ("add", "sub", "mul", "div", "max", "min", "atan2", "rem"):
    case(f"{_name}_scalar_lhs", p(primitives_by_name[_name]), np.float64(0.77), YPOS)
    case(f"{_name}_scalar_rhs", p(primitives_by_name[_name]), YPOS, np.float64(0.77))
for _name in ("add", "mul", "div", "sub"):
    case(f"{_name}_complex", p(primitives_by_name[_name]), c128(3), c128(3, seed=1) + 2)
case("nextafter", p(P.nextafter_p), X, Y, ref=lambda xs, ts: [np.zeros_like(xs[0])])
case("compare", lambda x, y: (lax.eq(x, y), lax.ne(x, y), lax.lt(x, y), lax.le(x, y),
                              lax.gt(x, y), lax.ge(x, y)), X, Y)
case("integer_ops", lambda x, i: (
    lax.mul(x, lax.convert_element_type(
        lax.add(lax.bitwise_and(i, i), lax.bitwise_xor(lax.bitwise_or(i, i), lax.bitwise_not(i))),
        np.float64)),
    lax.shift_left(i, i), lax.shift_right_arithmetic(i, i), lax.shift_right_logical(i, i),
    lax.population_count(i), lax.clz(i)), f64(3), i32(1, 2, 3))
case("bool_ops", lambda x: lax.select(lax.bitwise_not(lax.bitwise_and(lax.gt(x, 0.0),
                                                                      lax.lt(x, 1.0))),
                                      x, lax.neg(x)), f64(5))

# conversions and selection
case("convert_f64_f32", lambda x: lax.convert_element_type(x, np.float32), X,
     rtol=1e-4, atol=1e-4, eps=1e-2, dot_rtol=1e-6)
case("convert_f64_c128", lambda x: lax.convert_element_type(x, np.complex128), X)
case("convert_to_int_and_back", lambda x: lax.convert_element_type(
    lax.convert_element_type(x, np.int32), np.float64), X + 0.3)
case("convert_c128_f64", lambda z: lax.convert_element_type(z, np.float64), c128(3))
case("bitcast", lambda x: (lax.bitcast_convert_type(x, np.int64),
                           lax.bitcast_convert_type(lax.bitcast_convert_type(x, np.int64),
                                                    np.float64)), X,
     ref=lambda xs, ts: [np.zeros_like(xs[0])])
case("select_n_bool", lambda w, a, b: lax.select_n(w, a, b),
     np.array([True, False, True]), f64(3), f64(3, seed=1))
case("select_n_int", lambda w, a, b, c: lax.select_n(w, a, b, c),
     np.array([0, 2, 1, 2], np.int32), f64(4), f64(4, seed=1), f64(4, seed=2))
case("select_n_scalar_pred", lambda w, a, b: lax.select_n(w, a, b), np.True_, f64(3),
     f64(3, seed=1))
case("select_n_one_case", lambda a: bind(P.select_n_p, np.int32(0), a), f64(3))
case("clamp", lambda lo, x, hi: lax.clamp(lo, x, hi), np.full(5, -0.5),
     np.array([-1.0, -0.2, 0.1, 0.4, 2.0]), np.full(5, 0.5))
case("clamp_scalar_bounds", lambda lo, x, hi: lax.clamp(lo, x, hi), np.float64(-0.5),
     np.array([-1.0, -0.2, 0.1, 0.4, 2.0]), np.float64(0.5))

# shape ops
case("broadcast_in_dim", p(P.broadcast_in_dim_p, shape=(4, 2, 3), broadcast_dimensions=(1, 2),
                           sharding=None), X)
case("broadcast_in_dim_unit", p(P.broadcast_in_dim_p, shape=(2, 4, 3),
                                broadcast_dimensions=(0, 1), sharding=None), f64(2, 1))
case("broadcast_scalar", p(P.broadcast_in_dim_p, shape=(2, 3), broadcast_dimensions=(),
                           sharding=None), np.float64(1.5))
case("reshape", p(P.reshape_p, new_sizes=(3, 2), dimensions=None, sharding=None), X)
case("reshape_dimensions", p(P.reshape_p, new_sizes=(6,), dimensions=(1, 0), sharding=None), X)
case("transpose", p(P.transpose_p, permutation=(2, 0, 1)), f64(2, 3, 4))
case("squeeze", p(P.squeeze_p, dimensions=(0, 2)), f64(1, 3, 1))
case("expand_dims", p(P.expand_dims_p, dimensions=(0, 3)), X)
case("concatenate", lambda a, b, c: lax.concatenate([a, b, c], 1), X, f64(2, 1), f64(2, 2))
case("concatenate_const", lambda a: lax.concatenate([a, np.ones((2, 2)), a], 1), X)
case("pad", lambda x, v: lax.pad(x, v, [(1, 2, 1), (0, -1, 0)]), X, np.float64(0.3))
case("pad_negative", lambda x, v: lax.pad(x, v, [(-1, 1, 2), (2, 0, 0)]), X, np.float64(0.3))
case("rev", p(P.rev_p, dimensions=(0, 1)), X)
case("tile", p(P.tile_p, reps=(2, 3)), X)
case("split", p(P.split_p, sizes=(1, 0, 2), axis=1), X)
case("stack", lambda a, b: bind(P.stack_p, a, b, axis=1), X, Y)
case("unstack", p(P.unstack_p, axis=1), X)
case("optimization_barrier", lambda a, b: bind(P.optimization_barrier_p, a, lax.mul(a, b)), X,
     Y)
case("slice", p(P.slice_p, start_indices=(0, 1), limit_indices=(2, 3), strides=None), X)
case("slice_strided", p(P.slice_p, start_indices=(1, 0), limit_indices=(5, 3), strides=(2, 2)),
     f64(5, 3))
case("iota_mul", lambda x: lax.mul(x, lax.convert_element_type(lax.iota(np.int32, 3),
                                                               np.float64)), f64(3))

# reductions
Z = f64(2, 3, 4)
case("reduce_sum", p(P.reduce_sum_p, axes=(0, 2), out_sharding=None), Z)
case("reduce_prod", p(P.reduce_prod_p, axes=(1,), out_sharding=None), Z)
case("reduce_prod_all", p(P.reduce_prod_p, axes=(0, 1), out_sharding=None), X)
case("reduce_prod_zero", p(P.reduce_prod_p, axes=(0,), out_sharding=None),
     np.array([[1.5, 0.0, 2.0], [0.0, 0.0, -1.5], [0.7, 1.1, 1.2]]))
case("reduce_max", p(P.reduce_max_p, axes=(1,), out_sharding=None), distinct(2, 3, 4))
case("reduce_min", p(P.reduce_min_p, axes=(0, 2), out_sharding=None), distinct(2, 3, 4))
case("argmax_argmin", lambda x: (lax.argmax(x, 1, np.int32), lax.argmin(x, 0, np.int32)),
     distinct(2, 3))
case("reduce_logical", lambda i: (lax.reduce_and(i, (0,)), lax.reduce_or(i, (0,)),
                                  lax.reduce_xor(i, (0,))), i32(1, 2, 3))

# dot_general
case("matmul", lambda a, b: lax.dot(a, b), f64(2, 3), f64(3, 4, seed=1))
case("matvec", lambda a, b: lax.dot(a, b), f64(2, 3), f64(3, seed=1))
case("dot_general_batch", p(P.dot_general_p, dimension_numbers=(((2,), (1,)), ((0,), (0,))),
                            precision=None, preferred_element_type=None, out_sharding=None),
     f64(2, 3, 4), f64(2, 4, 5, seed=1))
case("dot_general_permuted", p(P.dot_general_p,
                               dimension_numbers=(((0, 2), (2, 0)), ((3,), (1,))),
                               precision=None, preferred_element_type=None,
                               out_sharding=None),
     f64(3, 2, 4, 2), f64(4, 2, 3, 5, seed=1))
case("dot_general_outer", p(P.dot_general_p, dimension_numbers=(((), ()), ((), ())),
                            precision=None, preferred_element_type=None, out_sharding=None),
     f64(2), f64(3, seed=1))
case("dot_general_preferred", p(P.dot_general_p, dimension_numbers=(((1,), (0,)), ((), ())),
                                precision=None, preferred_element_type=np.float64,
                                out_sharding=None),
     f64(2, 3), f64(3, 2, seed=1))
case("dot_complex", lambda a, b: lax.dot(a, b), c128(2, 3), c128(3, 2, seed=1))

# indexing
case("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)), f64(3, 4),
     np.int32(1), np.int32(5))
case("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(1))),
     f64(3, 4), f64(2, 2, seed=1), np.int32(1))

_TAKE = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))


def _gather(dn, sizes, mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None):
    return lambda x, idx: bind(P.gather_p, x, idx, dimension_numbers=dn,
                               slice_sizes=sizes, indices_are_sorted=False,
                               unique_indices=False, mode=mode, fill_value=fill_value)


case("gather_rows", _gather(_TAKE, (1, 3)), f64(4, 3), np.array([[2], [0], [2]], np.int32))
case("gather_windows", _gather(GatherDimensionNumbers(offset_dims=(1, 2),
                                                      collapsed_slice_dims=(),
                                                      start_index_map=(0, 1)), (2, 2),
                               GatherScatterMode.CLIP),
     f64(4, 3), np.array([[0, 0], [1, 1], [3, 2]], np.int32))
case("gather_fill", _gather(_TAKE, (1, 3), GatherScatterMode.FILL_OR_DROP, 0.5),
     f64(4, 3), np.array([[1], [7], [-1]], np.int32))
case("gather_batching", _gather(GatherDimensionNumbers(
    offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
    start_indices_batching_dims=(0,)), (1, 1)), f64(3, 4), np.array([[1], [3], [0]], np.int32))

_SCATTER_ROWS = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
_SCATTER_ELEMS = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
_DUP = np.array([[2], [0], [2]], np.int32)
_UNIQ = np.array([[3], [0], [1]], np.int32)


def _scatter(prim, dn, idx, unique=False, mode=GatherScatterMode.FILL_OR_DROP):
    return lambda x, u: bind(prim, x, idx, u, dimension_numbers=dn, indices_are_sorted=False,
                             unique_indices=unique, mode=mode)


case("scatter_add", _scatter(P.scatter_add_p, _SCATTER_ROWS, _DUP), f64(4, 3), f64(3, 3, seed=1))
case("scatter_sub", _scatter(P.scatter_sub_p, _SCATTER_ROWS, _DUP), f64(4, 3), f64(3, 3, seed=1))
case("scatter_add_clip", _scatter(P.scatter_add_p, _SCATTER_ROWS,
                                  np.array([[5], [0], [-3]], np.int32),
                                  mode=GatherScatterMode.CLIP), f64(4, 3), f64(3, 3, seed=1))
case("scatter_add_drop", _scatter(P.scatter_add_p, _SCATTER_ROWS,
                                  np.array([[5], [0], [1]], np.int32)),
     f64(4, 3), f64(3, 3, seed=1))
case("scatter_unique", _scatter(P.scatter_p, _SCATTER_ROWS, _UNIQ, unique=True), f64(4, 3),
     f64(3, 3, seed=1))
case("scatter_duplicates", _scatter(P.scatter_p, _SCATTER_ROWS, _DUP), f64(4, 3),
     f64(3, 3, seed=1))
case("scatter_mul_unique", _scatter(P.scatter_mul_p, _SCATTER_ROWS, _UNIQ, unique=True),
     f64(4, 3), f64(3, 3, seed=1))
case("scatter_mul_operand_only", lambda x: _scatter(P.scatter_mul_p, _SCATTER_ROWS, _DUP)(
    x, f64(3, 3, seed=1)), f64(4, 3))
case("scatter_max", _scatter(P.scatter_max_p, _SCATTER_ELEMS, _DUP), np.array([0.1, 0.2, 0.3, 0.4]),
     np.array([0.5, -1.0, 0.15]))
case("scatter_min", _scatter(P.scatter_min_p, _SCATTER_ELEMS, _DUP), np.array([0.1, 0.2, 0.3, 0.4]),
     np.array([0.5, -1.0, 0.15]))

# cumulative
C = np.array([[0.5, 1.2, -0.7, 2.0], [1.1, -0.3, 0.9, 0.4], [0.8, 1.5, 0.2, -1.2]])
for _name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    for _axis, _rev in ((1, False), (0, True), (1, True)):
        case(f"{_name}_axis{_axis}{'_reverse' if _rev else ''}",
             p(primitives_by_name[_name], axis=_axis, reverse=_rev), C)
case("cumprod_zero", p(P.cumprod_p, axis=0, reverse=False), np.array([1.5, 0.0, 2.0, 0.0, 0.7]))
case("cumlogsumexp_large", p(P.cumlogsumexp_p, axis=0, reverse=False),
     np.array([800.0, -500.0, 801.0, 0.0]))

# sort
case("sort", p(P.sort_p, dimension=1, is_stable=True, num_keys=1), distinct(2, 5))
case("sort_with_values", p(P.sort_p, dimension=0, is_stable=True, num_keys=1),
     distinct(5, 2), f64(5, 2, seed=1))
case("sort_int_keys", lambda k, v: bind(P.sort_p, k, v, dimension=0, is_stable=True,
                                        num_keys=1),
     np.array([3, 1, 2, 1], np.int32), f64(4))


# control flow
def _lazy(build):
    """Build on first use (under x64, so float64 avals stay float64)."""
    return functools.lru_cache(maxsize=None)(build)


def _closed(fun, *avals):
    return olympus.make_olympuspr(fun)(*[ShapeDtypeStruct(a.shape, a.dtype) for a in avals])


case("cond", lambda i, x, y: switch(i, [lambda a, b: lax.mul(lax.sin(a), b),
                                            lambda a, b: lax.add(a, b),
                                            lambda a, b: (lax.mul(a, 2.0))], x, y),
     np.int32(0), f64(3), f64(3, seed=1))
case("cond_branch1", lambda i, x, y: switch(i, [lambda a, b: lax.mul(lax.sin(a), b),
                                                    lambda a, b: lax.exp(b)], x, y),
     np.int32(1), f64(3), f64(3, seed=1))
case("cond_multi_out", lambda x, y: lax.cond(lax.gt(x[0], 0.0),
                                             lambda a, b: (a, lax.mul(a, b), 3.0),
                                             lambda a, b: (lax.cos(b), b, 4.0), x, y),
     np.array([0.5, -1.0]), f64(2, seed=1))
case("cond_closure", lambda x: lax.cond(lax.gt(x[0], 0.0), lambda: lax.mul(x, x),
                                        lambda: x), np.array([0.5, -1.0]))
_CALL = _lazy(lambda: _closed(lambda a, b: [lax.mul(lax.sin(a), b), lax.exp(a)], f64(3),
                              f64(3)))
case("closed_call", lambda a, b: bind(P.closed_call_p, a, b, call_olympuspr=_CALL()), f64(3),
     f64(3, seed=1))
case("xla_metadata_call",
     lambda a, b: bind(P.xla_metadata_call_p, a, b, olympuspr=_CALL(), scheduling_group="g"),
     f64(3), f64(3, seed=1))


def _linear_solve(a, b):
    # A well-conditioned operator built from `a`; its solves by LU (custom_linear_solve's
    # JVP applies the operator's tangent, its transpose the transposed solve).
    m = a + 4 * np.eye(3)
    return olympus.lax.custom_linear_solve(
        lambda x: m @ x, b, lambda mv, y: olympus.numpy.linalg.solve(m, y),
        lambda vm, y: olympus.numpy.linalg.solve(m.T, y))


case("custom_linear_solve", _linear_solve, f64(3, 3), f64(3, seed=1))
_SCAN = _lazy(lambda: _closed(lambda w, c, x: [lax.add(lax.mul(c, w), lax.sin(x)),
                                               lax.mul(c, x)], f64(3), f64(3), f64(3)))
case("scan", lambda w, c, xs: bind(P.scan_p, w, c, xs, olympuspr=_SCAN(), length=4,
                                   reverse=False, num_consts=1, num_carry=1,
                                   linear=(False,) * 3, unroll=1),
     f64(3, lo=0.5, hi=0.9), f64(3, seed=1), f64(4, 3, seed=2))
_WCOND = _lazy(lambda: _closed(lambda i, x: [lax.lt(i, np.int32(3))], np.int32(0), f64(3)))
_WBODY = _lazy(lambda: _closed(lambda w, i, x: [lax.add(i, np.int32(1)),
                                                lax.sin(lax.mul(x, w))],
                               f64(3), np.int32(0), f64(3)))
case("while", lambda w, x: bind(P.while_p, w, np.int32(0), x, cond_olympuspr=_WCOND(),
                                body_olympuspr=_WBODY(), cond_nconsts=0,
                                body_nconsts=1)[1],
     f64(3), f64(3, seed=1), transpose=False)

# other families: convolution, windowed reductions, LAPACK, FFT, top_k
case("conv", lambda a, b: lax.conv_general_dilated(a, b, (2, 1), [(1, 0), (0, 1)]),
     f64(1, 2, 5, 4), f64(3, 2, 2, 2, seed=1))
case("conv_dilated", lambda a, b: lax.conv_general_dilated(
    a, b, (1, 1), "SAME", lhs_dilation=(2, 1), rhs_dilation=(1, 2)),
    f64(1, 2, 3, 4), f64(2, 2, 2, 2, seed=1))
case("reduce_window_sum", lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), "VALID"),
     f64(3, 4))
case("reduce_window_max", lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1),
                                                      "SAME"), distinct(3, 4))
case("reduce_window_min", lambda x: lax.reduce_window(x, np.inf, lax.min, (2, 1), (1, 1),
                                                      "VALID"), distinct(3, 4))
# the general reduce (JAX's JVP: a tree of the associative computation, linear in the
# tangents) and reduce_window (forward mode only: JAX's has no transpose either)
case("reduce", lambda x: lax.reduce(x, 1.0, lambda u, v: u * v, (0,)), f64(4, 3))
case("reduce_window", lambda x: lax.reduce_window(x, 0.0, lambda u, v: u + v * v, (2, 2),
                                                  (1, 1), "VALID"), f64(3, 4),
     transpose=False)
# max/min pooling's derivatives as JAX's primitives (linear in their first operand)
case("select_and_gather_add", lambda t: bind(
    P.select_and_gather_add_p, t, distinct(3, 4), select_prim=P.ge_p, window_dimensions=(2, 2),
    window_strides=(1, 1), padding=((0, 1), (1, 0)), base_dilation=(1, 1),
    window_dilation=(1, 1)), f64(3, 4))
case("select_and_scatter_add", lambda s: bind(
    P.select_and_scatter_add_p, s, distinct(3, 4), select_prim=P.le_p,
    window_dimensions=(2, 2), window_strides=(1, 2), padding=((0, 0), (0, 0))), f64(2, 2))
case("top_k", lambda x: lax.top_k(x, 3), distinct(2, 5))
case("fft", lambda z: lax.fft(z, "FFT", (4,)), c128(2, 4))
case("rfft", lambda x: lax.fft(x, "RFFT", (6,)), f64(2, 6))
case("irfft", lambda z: lax.fft(z, "IRFFT", (6,)), c128(2, 4))
case("ifft", lambda z: lax.fft(z, "IFFT", (4,)), c128(2, 4))
_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_WELL = np.eye(3) * 3.0 + f64(3, 3, lo=-0.5, hi=0.5, seed=3)
case("cholesky", lambda x: lax.linalg.cholesky(x), _SPD)
case("triangular_solve", lambda a, b: lax.linalg.triangular_solve(
    a, b, left_side=True, lower=True), _WELL, f64(3, 2, seed=1))
case("triangular_solve_right_transposed", lambda a, b: lax.linalg.triangular_solve(
    a, b, left_side=False, lower=False, transpose_a=True), _WELL, f64(2, 3, seed=1))
case("lu", lambda x: lax.linalg.lu(x), _WELL)
case("qr", lambda x: lax.linalg.qr(x, full_matrices=False), f64(4, 3))
case("eigh", lambda x: (lambda v, w: (w, v * v))(*lax.linalg.eigh(x)), _SPD)
case("svd", lambda x: (lambda u, s, vh: (s, u * u, vh * vh))(
    *lax.linalg.svd(x, full_matrices=False)), f64(4, 3))
_S = np.eye(3) + 0.3 * f64(3, 3, seed=5)  # real, well-separated eigenvalues 1, 2, 4
case("eig", lambda x: tuple(lax.linalg.eig(x, compute_left_eigenvectors=False)),
     _S @ np.diag([1.0, 2.0, 4.0]) @ np.linalg.inv(_S))

# user-defined derivatives, checkpointing, callbacks
def _softplus_fun(x):
    return lax.log1p(lax.exp(x))


_softplus = olympus.custom_jvp(_softplus_fun)
_softplus.defjvp(lambda p, t: (_softplus(p[0]), lax.mul(t[0], lax.logistic(p[0]))))


def _sq_fun(x, y):
    return lax.mul(lax.sin(x), y)


_sin_mul = olympus.custom_vjp(_sq_fun)
_sin_mul.defvjp(lambda x, y: (_sin_mul(x, y), (lax.cos(x), lax.sin(x), y)),
                lambda res, g: (lax.mul(lax.mul(g, res[0]), res[2]), lax.mul(g, res[1])))

case("custom_jvp", lambda x: lax.mul(_softplus(x), x), X)
case("custom_vjp", lambda x, y: lax.mul(_sin_mul(x, y), x), X, Y, mode="vjp")
case("checkpoint", lambda x, y: olympus.checkpoint(lambda a, b: lax.mul(lax.sin(a),
                                                                        lax.exp(b)))(x, y),
     X, Y)
case("debug_callback", lambda x: (olympus.debug.callback(lambda v: None, x),
                                  lax.mul(x, x))[1], X)
case("inspect_sharding", lambda x: (olympus.debug.inspect_array_sharding(
    lax.sin(x), callback=lambda s: None), lax.mul(x, x))[1], X)

CASE_IDS = [c.name for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


# --- the check ----------------------------------------------------------------------------------


def _random_like(aval, seed):
    r = _rng(seed)
    if dtypes.is_complex(aval.dtype):
        return (r.normal(size=aval.shape) + 1j * r.normal(size=aval.shape)).astype(aval.dtype)
    return r.normal(size=aval.shape).astype(aval.dtype)


def _inexact(aval):
    return dtypes.is_inexact(aval.dtype)


def _pair(a, b):
    """Re(sum(a * b)) in float64."""
    return float(np.real(np.sum(np.asarray(a, np.complex128) * np.asarray(b, np.complex128))))


def _prepare(c: Case):
    """The case's jittable check function, its inputs, and what the comparison needs."""
    args = [np.asarray(a) for a in c.args]
    in_avals = [olympus.make_olympuspr(lambda x: x)(a).out_avals[0] for a in args]
    diff = [_inexact(a) for a in in_avals]
    _, out_shape = olympus.make_olympuspr(c.fun, return_shape=True)(*args)
    out_leaves, out_tree = tree_util.tree_flatten(out_shape)
    out_diff = [dtypes.is_inexact(o.dtype) for o in out_leaves]
    tangents = [_random_like(a, 10 + i) for i, (a, d) in enumerate(zip(in_avals, diff)) if d]
    cts = [_random_like(o, 50 + i) for i, (o, d) in enumerate(zip(out_leaves, out_diff)) if d]
    meta = {"tangents": tangents, "cts": cts}

    def full_tangents(ts):
        it = iter(ts)
        return [next(it) if d else np.zeros(a.shape, dtypes.float0)
                for a, d in zip(in_avals, diff)]

    def full_cts(cs):
        it = iter(cs)
        return tree_util.tree_unflatten(out_tree, [
            next(it) if d else np.zeros(o.shape, dtypes.float0)
            for o, d in zip(out_leaves, out_diff)])

    def diff_leaves(tree):
        return [x for x, d in zip(tree_util.tree_leaves(tree), out_diff) if d]

    def check(xs, ts, cs):
        full_t = full_tangents(ts)
        out = {}
        if c.mode == "jvp":
            _, ty = olympus.jvp(c.fun, tuple(xs), tuple(full_t))
            # Integer/boolean outputs must get float0 tangents (known at trace time).
            meta["int_tangent_dtypes"] = [np.asarray(t).dtype for t, d in
                                          zip(tree_util.tree_leaves(ty), out_diff) if not d]
            out["jvp"] = diff_leaves(ty)
        it = iter(ts)
        xp, xm = [], []
        for x, d in zip(xs, diff):
            if d:
                t = next(it)
                xp.append(x + c.eps * t)
                xm.append(x - c.eps * t)
            else:
                xp.append(x)
                xm.append(x)
        if c.ref is None:
            out["fd"] = [(a - b) / (2 * c.eps) for a, b in zip(diff_leaves(c.fun(*xp)),
                                                              diff_leaves(c.fun(*xm)))]
        if c.transpose and c.mode == "jvp":
            _, f_jvp = olympus.linearize(c.fun, *xs)
            out["lin"] = diff_leaves(f_jvp(*full_t))
        if c.transpose:
            _, f_vjp = olympus.vjp(c.fun, *xs)
            ct_in = f_vjp(full_cts(cs))
            out["vjp"] = [g for g, d in zip(ct_in, diff) if d]
        return out

    return check, (args, tangents, cts), meta


GROUP_SIZE = 16  # cases per compiled check (fewer, larger compiles are faster)
#: XLA CPU compiles these small float64 programs ~4x faster without the fusion emitters and
#: LLVM optimization; the numerics are the same (IEEE float64 either way).
COMPILE_OPTIONS = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 0}


@functools.cache
def _group_results(g: int):
    group = CASES[g * GROUP_SIZE:(g + 1) * GROUP_SIZE]
    prepared = {}
    for c in group:
        try:
            prepared[c.name] = _prepare(c)
        except Exception as e:  # reported by that case's test
            prepared[c.name] = e
    ok = [n for n, v in prepared.items() if not isinstance(v, Exception)]

    def run(names):
        fn = olympus.jit(lambda inputs: [prepared[n][0](*inp) for n, inp in zip(names, inputs)])
        inputs = [prepared[n][1] for n in names]
        outs = fn.lower(inputs).compile(COMPILE_OPTIONS)(inputs)
        return {n: (o, prepared[n][2]) for n, o in zip(names, outs)}

    try:
        results = run(ok)
    except Exception:  # find the culprit(s): one compile per case
        results = {}
        for n in ok:
            try:
                results.update(run([n]))
            except Exception as e:
                results[n] = e
    results.update({n: v for n, v in prepared.items() if isinstance(v, Exception)})
    return results


def _case_result(c: Case):
    r = _group_results(CASE_IDS.index(c.name) // GROUP_SIZE)[c.name]
    if isinstance(r, Exception):
        raise r
    return r


@pytest.mark.parametrize("c", CASES, ids=CASE_IDS)
def test_jvp_and_transpose(c):
    res, meta = _case_result(c)
    tangents, cts = meta["tangents"], meta["cts"]
    if c.mode == "vjp":
        lhs = sum(_pair(ct, d) for ct, d in zip(cts, res["fd"], strict=True))
        rhs = sum(_pair(g, t) for g, t in zip(res["vjp"], tangents, strict=True))
        np.testing.assert_allclose(lhs, rhs, rtol=c.rtol, atol=c.atol,
                                   err_msg=f"{c.name}: <ct, FD> != <J^T ct, t>")
        return
    assert all(dt == dtypes.float0 for dt in meta["int_tangent_dtypes"]), c.name
    want_t = res["fd"] if c.ref is None else c.ref([np.asarray(a) for a in c.args], tangents)
    for got, want in zip(res["jvp"], want_t, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=c.rtol, atol=c.atol,
                                   err_msg=f"{c.name}: JVP vs finite differences")
    if not c.transpose:
        return
    for got, want in zip(res["lin"], res["jvp"], strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=c.dot_rtol,
                                   atol=c.dot_rtol, err_msg=f"{c.name}: linearize vs jvp")
    lhs = sum(_pair(ct, jt) for ct, jt in zip(cts, res["lin"], strict=True))
    rhs = sum(_pair(g, t) for g, t in zip(res["vjp"], tangents, strict=True))
    np.testing.assert_allclose(lhs, rhs, rtol=c.dot_rtol, atol=c.dot_rtol,
                               err_msg=f"{c.name}: <ct, J t> != <J^T ct, t>")


# --- specific values -------------------------------------------------------------------------------


def _fast(fn, *args):
    """Run `fn` compiled once (with the test compile options)."""
    return olympus.jit(fn).lower(*args).compile(COMPILE_OPTIONS)(*args)


def _grad_sum(f):
    return olympus.grad(lambda x: lax.reduce_sum(f(x), tuple(range(np.ndim(x)))))


def test_ties_and_safe_derivatives():
    def values(s0, s1, s2, v5, v3, v3b, v3c):
        return {
            # max/min: ties split the gradient evenly.
            "max_tie": olympus.grad(lambda x, y: lax.max(x, y), argnums=(0, 1))(s1, s1),
            "min_tie": olympus.grad(lambda x, y: lax.min(x, y), argnums=(0, 1))(s2, s2),
            "reduce_max": olympus.grad(lambda x: lax.reduce_max(x, (0,)))(v5),
            "reduce_min": olympus.grad(lambda x: lax.reduce_min(x, (0,)))(v3),
            # pow at x == 0: d/dy is 0 (not nan); d/dx x**0 is 0 for an integer exponent
            # and nan for a float one (y * x**(y-1) = 0 * inf, as JAX 0.10.2 gives).
            "pow0": olympus.grad(lambda x, y: lax.pow(x, y), argnums=(0, 1))(s0, s2),
            "pow_y0": olympus.grad(lambda x: lax.pow(x, lax.mul(x, 0.0)))(s0),
            "integer_pow0": olympus.grad(lambda x: lax.integer_pow(x, 0))(s0),
            # products with zeros: exact, not nan.
            "prod_one_zero": olympus.grad(lambda x: lax.reduce_prod(x, (0,)))(v3b),
            "prod_two_zeros": olympus.grad(lambda x: lax.reduce_prod(x, (0,)))(v3c),
            "cumprod": _grad_sum(lambda x: bind(P.cumprod_p, x, axis=0, reverse=False))(v3b),
            "abs_complex0": olympus.grad(lambda x: lax.abs(lax.convert_element_type(
                x, np.complex128)))(s0),
        }

    r = _fast(values, 0.0, 1.0, 2.0, np.array([1.0, 3.0, 3.0, 2.0, 3.0]),
              np.array([1.0, 3.0, 1.0]), np.array([2.0, 0.0, 3.0]), np.array([2.0, 0.0, 0.0]))
    r = {k: np.asarray(v) if not isinstance(v, tuple) else [float(x) for x in v]
         for k, v in r.items()}
    assert r["max_tie"] == [0.5, 0.5] and r["min_tie"] == [0.5, 0.5]
    np.testing.assert_allclose(r["reduce_max"], [0, 1 / 3, 1 / 3, 0, 1 / 3])
    np.testing.assert_allclose(r["reduce_min"], [0.5, 0, 0.5])
    assert r["pow0"] == [0.0, 0.0]
    assert np.isnan(r["pow_y0"]) and r["integer_pow0"] == 0.0
    np.testing.assert_allclose(r["prod_one_zero"], [0.0, 6.0, 0.0])
    np.testing.assert_allclose(r["prod_two_zeros"], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(r["cumprod"], [1.0, 3.0 * 2 + 2.0, 0.0])
    assert r["abs_complex0"] == 0.0


def test_abs_derivative_at_zero_is_one():
    """Issue 17: d|x|/dx is 1 at x == 0 and -1 at nan (JAX 0.10.2's rule: the tangent where
    x >= 0, else its negation; recorded from reference JAX in its own process)."""
    import olympus.numpy as jnp

    g = olympus.grad(jnp.abs)
    assert float(g(0.0)) == 1.0 and float(g(-0.0)) == 1.0
    assert float(g(-2.0)) == -1.0 and float(g(3.0)) == 1.0 and float(g(np.nan)) == -1.0
    np.testing.assert_array_equal(olympus.vmap(g)(np.array([-1.0, 0.0, 1.0], np.float32)),
                                  [-1.0, 1.0, 1.0])
    _, t = olympus.jvp(jnp.abs, (np.array([0.0, -1.0], np.float32),),
                       (np.array([2.0, 2.0], np.float32),))
    np.testing.assert_array_equal(t, [2.0, -2.0])


def test_cumlogsumexp_stable():
    g = _fast(_grad_sum(lambda x: bind(P.cumlogsumexp_p, x, axis=0, reverse=False)),
              np.array([1000.0, -1000.0, 1001.0]))
    e = 1 / (1 + np.exp(-1.0))
    np.testing.assert_allclose(np.asarray(g), [3 - e, 0.0, e], rtol=1e-12)


def test_argmax_and_integer_outputs_have_float0_tangents():
    x = distinct(2, 3)
    _, t = olympus.jvp(lambda x: lax.argmax(x, 1, np.int32), (x,), (np.ones_like(x),))
    assert t.dtype == dtypes.float0 and t.shape == (2,)
    _, t = olympus.jvp(lambda x: lax.convert_element_type(x, np.int32), (x,),
                       (np.ones_like(x),))
    assert t.dtype == dtypes.float0


def test_integer_index_operands_get_no_tangent():
    x = f64(3, 4)
    f = lambda x, i: lax.dynamic_slice(x, (i, np.int32(0)), (2, 2))  # noqa: E731
    _, t = olympus.jvp(f, (x, np.int32(1)), (np.ones_like(x), np.zeros((), dtypes.float0)))
    np.testing.assert_allclose(np.asarray(t), np.ones((2, 2)))
    gx, gi = olympus.vjp(f, x, np.int32(1))[1](np.ones((2, 2)))
    assert gi.dtype == dtypes.float0
    want = np.zeros((3, 4))
    want[1:3, 0:2] = 1
    np.testing.assert_allclose(np.asarray(gx), want)


def test_digamma_derivative_is_trigamma():
    # psi1(1) = pi^2 / 6, psi1(0.5) = pi^2 / 2, psi1(-0.5) = pi^2/2 + 4, psi1(30).
    g = _fast(olympus.vmap(olympus.grad(lambda x: lax.digamma(x))),
              np.array([1.0, 0.5, -0.5, 30.0]))
    np.testing.assert_allclose(np.asarray(g), [np.pi ** 2 / 6, np.pi ** 2 / 2,
                                               np.pi ** 2 / 2 + 4, 0.03389506035773994],
                               rtol=1e-7)


def test_sort_and_cummax_route_tangents():
    def tangents(x, t, x5, t5):
        sort_t = olympus.jvp(lambda x: bind(P.sort_p, x, dimension=0, is_stable=True,
                                            num_keys=1)[0], (x,), (t,))
        cmax = olympus.jvp(lambda x: bind(P.cummax_p, x, axis=0, reverse=False), (x5,), (t5,))
        cmin = olympus.jvp(lambda x: bind(P.cummin_p, x, axis=0, reverse=True), (x5,), (t5,))
        return sort_t, cmax[1], cmin[1]

    (y, ts), cmax, cmin = _fast(tangents, np.array([3.0, 1.0, 2.0]),
                                np.array([10.0, 20.0, 30.0]),
                                np.array([1.0, 3.0, 2.0, 5.0, 4.0]),
                                np.array([1.0, 10.0, 100.0, 1000.0, 10000.0]))
    np.testing.assert_allclose(np.asarray(y), [1, 2, 3])
    np.testing.assert_allclose(np.asarray(ts), [20, 30, 10])
    # Each output's tangent comes from the element attaining the running extremum.
    np.testing.assert_allclose(np.asarray(cmax), [1, 10, 10, 1000, 1000])
    np.testing.assert_allclose(np.asarray(cmin), [1, 100, 100, 10000, 10000])


# --- coverage ----------------------------------------------------------------------------------

#: Primitives whose derivative is zero everywhere it exists (or which have no float inputs):
#: each still has a JVP rule, returning symbolic zero tangents (float0 for int/bool results).
NON_DIFFERENTIABLE = {
    # piecewise constant
    "sign": "piecewise constant", "floor": "piecewise constant", "ceil": "piecewise constant",
    "round": "piecewise constant", "nextafter": "piecewise constant (steps of one ulp)",
    "stop_gradient": "its derivative is zero by definition",
    # boolean results
    "is_finite": "bool result", "eq": "bool result", "ne": "bool result", "lt": "bool result",
    "le": "bool result", "gt": "bool result", "ge": "bool result",
    "eq_to": "bool result", "le_to": "bool result", "lt_to": "bool result",
    # integer / boolean operands and results
    "and": "int/bool", "or": "int/bool", "xor": "int/bool", "not": "int/bool",
    "population_count": "int", "clz": "int", "shift_left": "int",
    "shift_right_arithmetic": "int", "shift_right_logical": "int",
    "reduce_and": "int/bool", "reduce_or": "int/bool", "reduce_xor": "int/bool",
    "argmax": "integer index result", "argmin": "integer index result",
    "iota": "no operands", "rng_bit_generator": "uint32 key and bits",
    "threefry2x32": "uint32 operands", "mulhi": "int",
    "bitcast_convert_type": "reinterprets bits: not a smooth function of the value",
    "axis_index": "no operands, integer result",
    "platform_index": "no operands, integer result",
    # opaque host functions: their JVP rules raise JAX's ValueError (test_callbacks.py);
    # custom_jvp / custom_vjp make them differentiable
    "pure_callback": "opaque host function", "io_callback": "opaque host function",
    "ffi_call": "opaque foreign function (its JVP raises JAX's error: test_ffi.py)",
    "buffer_callback": "opaque host function (its JVP raises JAX's error: "
                       "test_buffer_callback.py)",
    "check": "no results; its JVP checks the primal values (test_checkify.py)",
}

#: Collectives only exist inside a named vmap, whose batching rules replace them before an
#: outer transformation sees them: their rules are checked by test_collective_derivatives
#: (autodiff inside the vmap) instead of a case.
CHECKED_ELSEWHERE = {"dim_as_value",  # no operands (test_shape_poly.py)
                     # tokens carry no tangent: grad through functions making them
                     # (test_lax_tokens.py)
                     "create_token", "after_all",
                     # typed PRNG keys: float0 tangents, grad through key programs
                     # (test_random_key_types.py)
                     "random_seed", "random_wrap", "random_unwrap", "random_split",
                     "random_fold_in", "random_bits", "random_clone",
                     # the key-reuse markers: grad through them (test_key_reuse.py)
                     "consume", "assert_consumed_value",
                     # the implicit derivative, against random_gamma_grad and JAX's
                     # recorded gradients (test_random_gamma_primitive.py) and SciPy
                     # (test_random_gamma_grad.py)
                     "random_gamma",
                     # JAX's JVP (the tangent at the indices found) and grad against
                     # JAX's values (test_lax_approx_top_k.py)
                     "approx_top_k",
                     # XLA's CPU backend cannot run it: grad through a shard_map of
                     # it traces to JAX's transpose
                     # (multidevice/check_ragged_and_one_sided_8dev.py)
                     "ragged_all_to_all",
                     # its JVP raises JAX's ValueError (test_lax_composite.py)
                     "composite",
                     # no results: grad through it (test_lax_tokens.py)
                     "dce_sink",
                     # gradients against finite differences and JAX's recorded value
                     # (test_lax_linalg.py)
                     "tridiagonal_solve",
                     "psum", "pmax", "pmin", "all_gather", "axis_index",
                     # need several devices: their gradients are compared with dense
                     # one-device functions in tests/multidevice/check_collectives_4dev.py
                     # (ppermute, psum_scatter, all_to_all, and shard_map with the pvary /
                     # psum_invariant its varying-axes pass inserts) and
                     # check_sharding_8dev.py (sharding_constraint)
                     "ppermute", "psum_scatter", "all_to_all", "shard_map", "pvary",
                     "psum_invariant", "sharding_constraint",
                     # refs: grad of the array-refs guide's examples (internal refs, plumbing
                     # refs, JAX's error for a differentiated value in a plain ref), against
                     # the analytic derivatives (test_refs.py)
                     "new_ref", "get", "swap", "addupdate", "freeze",
                     # the sparse family: gradients through each format's buffers against
                     # the dense computation and finite differences (test_sparse_bcoo.py,
                     # test_sparse_formats.py)
                     *(p.name for p in P.SPARSE_PRIMITIVES),
                     # linear_call: its transpose is the user's (deliberately not the true
                     # one in the tests), checked with JVP and grad against JAX's recorded
                     # values (test_custom_derivatives_symbolic.py)
                     "linear_call",
                     # grad through with_layout_constraint (test_memory_layouts.py); JVP of
                     # remat_opt against its analytic derivative
                     # (test_custom_derivatives_symbolic.py)
                     "layout_constraint", "remat_opt"}

#: Primitives that must have a transpose rule (linear in some operands).
LINEAR = {
    "add", "sub", "neg", "mul", "div", "convert_element_type", "broadcast_in_dim", "reshape",
    "transpose", "squeeze", "expand_dims", "concatenate", "pad", "rev", "slice",
    "dynamic_slice", "dynamic_update_slice", "gather", "scatter_add", "scatter_sub", "scatter",
    "select_n", "reduce_sum", "cumsum", "dot_general", "copy", "real", "imag", "complex",
    "conj", "reduce_precision", "closed_call", "xla_metadata_call", "cond", "scan", "checkpoint",
    "tile", "split", "stack", "unstack", "optimization_barrier", "custom_linear_solve", "stage",
    "select_and_gather_add", "select_and_scatter_add", "shard_alike", "xla_metadata_value",
    # custom_lin: the linear stand-in of a custom_vjp function's tangents (its transpose
    # runs the user's bwd); it has no forward evaluation or JVP, as in JAX.
    "custom_lin",
}


def _prims_of(closed_or_jaxpr, acc):
    j = closed_or_jaxpr.olympuspr if isinstance(closed_or_jaxpr, ClosedOlympuspr) \
        else closed_or_jaxpr
    for e in j.eqns:
        acc.add(e.primitive.name)
        for v in e.params.values():
            for sub in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(sub, ClosedOlympuspr):
                    _prims_of(sub, acc)
    return acc


def _case_prims(c: Case):
    """(primitives the case applies, primitives in its linearized olympuspr)."""
    args = [np.asarray(a) for a in c.args]
    prims = _prims_of(olympus.make_olympuspr(c.fun)(*args), set())
    lin_prims: set = set()
    if c.transpose:
        def f(*xs):
            leaves, _ = tree_util.tree_flatten(c.fun(*xs))
            return leaves

        def probe(*xs):
            _, lin = ad.linearize_flat(f, list(xs))
            _prims_of(lin.olympuspr, lin_prims)
            return 0.0

        olympus.make_olympuspr(probe)(*args)
    return prims, lin_prims


@functools.cache
def _coverage():
    applied, linear = set(), set()
    for c in CASES:
        a, lp = _case_prims(c)
        applied |= a
        linear |= lp
    return applied, linear


#: Deliberately without a JVP rule (as in JAX): `Exported.call` differentiates through its
#: custom_vjp and the exported VJP (test_export.py), never the primitive itself.
#: Primitives JAX 0.10.2 defines no derivative for either (grad raises JAX's
#: "Differentiation rule for '...' not implemented"); lu_pivots_to_permutation maps integers
#: to integers, so only zero tangents ever reach it.
NO_JVP_RULE = {"call_exported", "hessenberg", "householder_product", "lu_pivots_to_permutation",
               "ormqr", "rng_uniform", "schur", "symmetric_product", "tridiagonal",
               # as in JAX 0.10.2 (olympus.scipy.special.zeta has a custom_jvp)
               "igamma_grad_a", "zeta", "cholesky_update", "select_and_scatter",
               # JAX's error under grad (test_lax_scaled_dot.py,
               # multidevice/check_ragged_and_one_sided_8dev.py)
               "scaled_dot", "psend", "precv",
               # JAX's error (test_custom_partitioning.py)
               "custom_partitioning"}


def test_every_primitive_has_a_jvp_rule():
    missing = sorted(n for n, prim in primitives_by_name.items()
                     if prim not in ad.jvp_rules and n not in NO_JVP_RULE)
    assert not missing, f"primitives without a JVP rule: {missing}"


def test_every_differentiable_primitive_is_checked():
    applied, linear = _coverage()
    applied = applied | linear
    unchecked = sorted(n for n in primitives_by_name if n not in applied
                       and n not in NON_DIFFERENTIABLE and n not in CHECKED_ELSEWHERE
                       and n not in NO_JVP_RULE)
    assert not unchecked, f"primitives no case exercises: {unchecked}"


def test_linear_primitives_have_checked_transpose_rules():
    missing = sorted(n for n in LINEAR if primitives_by_name[n] not in ad.transpose_rules)
    assert not missing, f"linear primitives without a transpose rule: {missing}"
    _, linear = _coverage()
    unchecked = sorted(LINEAR - linear)
    assert not unchecked, f"transpose rules no dot-product test exercises: {unchecked}"


def _zero_rule_operands():
    k = np.array([1, 2, 3, 4], np.uint32)
    u = np.uint32(7)
    x = np.array([0.5, -1.5])
    i = np.array([1, 6], np.int32)
    b = np.array([True, False])
    return {
        "sign": ((x,), {}), "floor": ((x,), {}), "ceil": ((x,), {}),
        "round": ((x,), {"rounding_method": 0}), "nextafter": ((x, x), {}),
        "stop_gradient": ((x,), {}), "is_finite": ((x,), {}),
        **{n: ((x, x), {}) for n in ("eq", "ne", "lt", "le", "gt", "ge",
                                     "eq_to", "le_to", "lt_to")},
        "and": ((b, b), {}), "or": ((i, i), {}), "xor": ((i, i), {}), "not": ((b,), {}),
        "population_count": ((i,), {}), "clz": ((i,), {}), "shift_left": ((i, i), {}),
        "shift_right_arithmetic": ((i, i), {}), "shift_right_logical": ((i, i), {}),
        **{n: ((b,), {"axes": (0,)}) for n in ("reduce_and", "reduce_or", "reduce_xor")},
        "argmax": ((x,), {"axes": (0,), "index_dtype": np.dtype(np.int32)}),
        "argmin": ((x,), {"axes": (0,), "index_dtype": np.dtype(np.int32)}),
        "iota": ((), {"dtype": np.dtype(np.int32), "shape": (3,), "dimension": 0,
                      "sharding": None}),
        "rng_bit_generator": ((k,), {"shape": (2,), "dtype": np.dtype(np.uint32),
                                     "algorithm": RandomAlgorithm.RNG_DEFAULT}),
        "threefry2x32": ((u, u, k, k), {}), "mulhi": ((k, k), {}),
        "bitcast_convert_type": ((x,), {"new_dtype": np.dtype(np.int64)}),
        "axis_index": None,  # needs a named axis: checked in test_collective_derivatives
        "platform_index": ((), {"platforms": (("cpu",), None)}),
        # no zero-tangent rule: their JVPs raise JAX's errors, or (check) have no results;
        # checked in test_callbacks.py / test_checkify.py
        "pure_callback": None, "io_callback": None, "check": None, "ffi_call": None,
        "buffer_callback": None,
    }


def test_non_differentiable_primitives_have_zero_rules():
    operands = _zero_rule_operands()
    assert set(operands) == set(NON_DIFFERENTIABLE)
    for name in NON_DIFFERENTIABLE:
        prim = primitives_by_name[name]
        if operands[name] is None:
            continue
        args, params = operands[name]

        def probe(*xs, prim=prim, params=params, name=name):
            ts = [ad.Zero(ad.tangent_aval(a.aval)) for a in xs]
            out, t_out = ad.jvp_rules[prim](list(xs), ts, **params)
            outs = out if prim.multiple_results else [out]
            touts = t_out if prim.multiple_results else [t_out]
            for o, t in zip(outs, touts):
                assert isinstance(t, ad.Zero), name
                oa = o.aval
                assert t.aval.shape == oa.shape, name
                want = oa.dtype if dtypes.is_inexact(oa.dtype) else dtypes.float0
                assert t.aval.dtype == want, name
            return outs

        olympus.make_olympuspr(probe)(*args)


# --- collectives: autodiff inside a named vmap ----------------------------------------------------


def _collective_check(f, x, seed=0):
    r = _rng(seed)
    t, ct = r.normal(size=x.shape), None

    def vm(g):
        return olympus.vmap(g, axis_name="i")

    def check(x, t):
        _, jt = vm(lambda a, b: olympus.jvp(f, (a,), (b,)))(x, t)
        fd = (vm(f)(x + EPS * t) - vm(f)(x - EPS * t)) / (2 * EPS)
        lin = vm(lambda a, b: olympus.linearize(f, a)[1](b))(x, t)
        return jt, fd, lin

    jt, fd, lin = _fast(check, x, t)
    np.testing.assert_allclose(np.asarray(jt), np.asarray(fd), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(lin), np.asarray(jt), rtol=1e-9, atol=1e-9)
    ct = r.normal(size=np.shape(jt))
    g = _fast(vm(lambda a, c: olympus.vjp(f, a)[1](c)[0]), x, ct)
    np.testing.assert_allclose(_pair(ct, lin), _pair(g, t), rtol=1e-9, atol=1e-9)


def test_collective_derivatives():
    x = np.array([0.3, -1.2, 0.8, 1.7])
    _collective_check(lambda v: lax.psum(lax.mul(lax.sin(v), v), "i"), x)
    _collective_check(lambda v: lax.mul(lax.pmax(lax.mul(v, v), "i"), v), x)
    _collective_check(lambda v: lax.pmin(lax.exp(v), "i"), x)
    _collective_check(lambda v: lax.all_gather(lax.mul(v, v), "i"), x)
    _collective_check(lambda v: lax.mul(v, lax.convert_element_type(lax.axis_index("i"),
                                                                    np.float64)), x)


def test_dot_general_transpose_keeps_preferred_element_type_as_jax_prints():
    """Recorded from reference JAX 0.10.2: both cotangent products of a matmul carry the
    primal's preferred_element_type."""
    x, w = np.ones((4, 4), np.float32), np.ones((4, 8), np.float32)
    text = str(olympus.make_olympuspr(
        olympus.grad(lambda x, w: (x @ w).sum(), argnums=(0, 1)))(x, w))
    assert text == """\
{ lambda ; a:f32[4,4] b:f32[4,8]. let
    c:f32[4,8] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[4,8] = broadcast_in_dim 1.0:f32[]
    e:f32[8,4] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] d a
    f:f32[4,8] = transpose[permutation=(1, 0)] e
    g:f32[4,4] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] d b
  in (g, f) }"""
