"""Shape rules of every primitive: a happy path with the exact output aval, and an error path.

`test_every_primitive_is_covered` fails when a primitive is registered without cases here.
Avals are written as strings: ``A("f32[2,3]")``; a trailing ``*`` marks a weak type.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from olympus_ir import (
    ClosedOlympuspr,
    MemorySpace,
    Olympuspr,
    ShapedArray,
    Var,
    abstract_eval,
    dtypes,
    shape_poly,
)
from olympus_ir import primitives as P
from olympus_ir.core import primitives_by_name, shape_rules
from olympus_ir.prims.convolution import ConvDimensionNumbers as CDN
from olympus_ir.prims.indexing import GatherDimensionNumbers as GDN
from olympus_ir.prims.indexing import GatherScatterMode
from olympus_ir.prims.indexing import ScatterDimensionNumbers as SDN
from olympus_ir.prims.linalg import Precision, canonicalize_precision
from olympus_ir.prims.linalg_lapack import FftType
from olympus_ir.prims.random import RandomAlgorithm
from olympus_ir.prims.refs import AbstractRef, Indexer
from olympus_ir.prims.transfers import ArrayCopySemantics as ACS

f32, i32, u32 = np.dtype("float32"), np.dtype("int32"), np.dtype("uint32")


class _exported:  # noqa: N801  (stands in for an olympus.export.Exported)
    fun_name = "g"

    def __init__(self, ins: str, outs: str):
        self.in_avals, self.out_avals = tuple(As(ins)), tuple(As(outs))

    def _arg_descriptor(self, i, dim):
        return f"args[{i}]" + ("" if dim is None else f".shape[{dim}]")


class _tree_of:  # noqa: N801  (stands in for a pytree definition of `num_leaves` leaves)
    def __init__(self, num_leaves: int):
        self.num_leaves = num_leaves


def test_check_is_refused_unless_functionalized():
    from olympus_ir.prims.checks import FUNCTIONALIZATION_ERROR, functionalizing

    with pytest.raises(ValueError, match="Cannot abstractly evaluate a checkify.check"):
        abstract_eval(P.check_p, A("f32[2]"), err_tree=_tree_of(1), debug=False)
    assert FUNCTIONALIZATION_ERROR.startswith("Cannot abstractly evaluate")
    functionalizing.depth += 1
    try:
        assert abstract_eval(P.check_p, A("f32[2]"), err_tree=_tree_of(1), debug=False) == []
    finally:
        functionalizing.depth -= 1


class _Fry:  # noqa: N801  (stands in for olympus.random's threefry2x32 implementation)
    name, tag, key_shape = "threefry2x32", "fry", (2,)


FRY = _Fry()


def A(s: str) -> ShapedArray:
    if s.startswith("Ref{"):  # a ref's type, ``Ref{f32[3]}``
        return AbstractRef(A(s[4:-1]))
    if s.startswith("key<fry>["):  # a typed PRNG key array, ``key<fry>[3]``
        return ShapedArray(A("u32" + s[8:]).shape, dtypes.KeyDType(FRY))
    m = re.fullmatch(r"(\w+)\[([\d,]*)\](\*?)", s)
    assert m, s
    shape = tuple(int(d) for d in m[2].split(",") if d)
    return ShapedArray(shape, dtypes.from_short_name(m[1]), weak_type=bool(m[3]))


def As(s: str) -> list[ShapedArray]:
    return [A(x) for x in s.split()]


class _Spec(tuple):
    """A PartitionSpec stand-in (the IR reads ``axes_of`` and ``len``)."""

    def __new__(cls, *entries):
        return super().__new__(cls, entries)

    def axes_of(self, dim):
        e = self[dim] if dim < len(self) else None
        return () if e is None else (e,) if isinstance(e, str) else tuple(e)

    def __repr__(self):
        return "P(" + ", ".join(map(repr, self)) + ("," if len(self) == 1 else "") + ")"


class _Layout:
    """A memory layout as the IR sees one (``major_to_minor``)."""

    def __init__(self, major_to_minor):
        self.major_to_minor = major_to_minor


#: custom_partitioning's parameters besides its body (opaque to its shape rule).
_CUSTOM_PARTITIONING = dict(partition=print, propagate_user_sharding=None,
                            infer_sharding_from_operands=None, decode_shardings=True,
                            sharding_rule=None, in_tree=None, out_tree=None, static_args=())


class _Sharding:
    def __init__(self, spec):
        self.spec = spec

    def __repr__(self):
        return f"Sharding({self.spec})"


class _Mesh:
    shape = {"x": 4}
    axis_names = ("x",)


_MESH = _Mesh()


_JIT_DEFAULTS = dict(in_shardings=(), out_shardings=(), in_layouts=(), out_layouts=(),
                     donated_invars=(), ctx_mesh=None, name="f", keep_unused=False,
                     inline=False, compiler_options_kvs=())


def fn(ins: str, outs: str) -> ClosedOlympuspr:
    """A body with the given input and output types (shape rules only read its types)."""
    invars = [Var(a) for a in As(ins)]
    outvars = [Var(a) for a in As(outs)]
    return ClosedOlympuspr(Olympuspr([], invars, outvars, []), [])


def same(a: ShapedArray, b: ShapedArray) -> bool:
    return (type(a), a.shape, a.dtype, a.weak_type) == (type(b), b.shape, b.dtype,
                                                        b.weak_type)


def np_array(aval: ShapedArray) -> np.ndarray:
    return np.ones(aval.shape, aval.dtype)


# --- elementwise ------------------------------------------------------------------------
# name -> (operand dtype, numpy reference or None, a rejected dtype or None, params)
_UN, _BIN = 1, 2
ELEMENTWISE = {
    "neg": (_UN, "f32", np.negative, "bool", {}),
    "sign": (_UN, "i32", np.sign, "bool", {}),
    "floor": (_UN, "f32", np.floor, "i32", {}),
    "ceil": (_UN, "f32", np.ceil, "i32", {}),
    "round": (_UN, "f32", np.round, "i32", {"rounding_method": 0}),
    "is_finite": (_UN, "f32", np.isfinite, "i32", {}),
    "exp": (_UN, "f32", np.exp, "i32", {}),
    "exp2": (_UN, "f32", np.exp2, "i32", {}),
    "log": (_UN, "f32", np.log, "i32", {}),
    "log1p": (_UN, "f32", np.log1p, "i32", {}),
    "expm1": (_UN, "f32", np.expm1, "i32", {}),
    "tanh": (_UN, "c64", np.tanh, "i32", {}),
    "logistic": (_UN, "f32", lambda x: 1 / (1 + np.exp(-x)), "i32", {}),
    "sin": (_UN, "f32", np.sin, "bool", {}),
    "cos": (_UN, "f32", np.cos, "bool", {}),
    "tan": (_UN, "f32", np.tan, "i32", {}),
    "asin": (_UN, "f32", np.arcsin, "i32", {}),
    "acos": (_UN, "f32", np.arccos, "i32", {}),
    "atan": (_UN, "f32", np.arctan, "i32", {}),
    "sinh": (_UN, "f32", np.sinh, "i32", {}),
    "cosh": (_UN, "f32", np.cosh, "i32", {}),
    "asinh": (_UN, "f32", np.arcsinh, "i32", {}),
    "acosh": (_UN, "f32", np.arccosh, "i32", {}),
    "atanh": (_UN, "f32", np.arctanh, "i32", {}),
    "sqrt": (_UN, "f16", np.sqrt, "i32", {}),
    "rsqrt": (_UN, "f32", lambda x: 1 / np.sqrt(x), "i32", {}),
    "cbrt": (_UN, "f32", np.cbrt, "c64", {}),
    "square": (_UN, "i32", np.square, "bool", {}),
    "erf": (_UN, "f32", None, "c64", {}),
    "erfc": (_UN, "f32", None, "c64", {}),
    "erf_inv": (_UN, "bf16", None, "i32", {}),
    "lgamma": (_UN, "f32", None, "c64", {}),
    "digamma": (_UN, "f32", None, "i32", {}),
    "abs": (_UN, "c64", np.abs, "bool", {}),
    "real": (_UN, "c64", np.real, "f32", {}),
    "imag": (_UN, "c64", np.imag, "f32", {}),
    "conj": (_UN, "c64", np.conj, "i32", {}),
    "not": (_UN, "i32", np.invert, "f32", {}),
    "population_count": (_UN, "u8", None, "f32", {}),
    "clz": (_UN, "i32", None, "bool", {}),
    "integer_pow": (_UN, "f32", lambda x: x**3, "bool", {"y": 3}),
    "copy": (_UN, "f32", np.copy, None, {}),
    "stop_gradient": (_UN, "i32", None, None, {}),
    "reduce_precision": (_UN, "f32", None, "i32", {"exponent_bits": 5, "mantissa_bits": 10}),
    "add": (_BIN, "f32", np.add, "bool", {}),
    "add_any": (_BIN, "f32", np.add, "bool", {}),
    "sub": (_BIN, "i32", np.subtract, "bool", {}),
    "mul": (_BIN, "c64", np.multiply, "bool", {}),
    "div": (_BIN, "f32", np.divide, "bool", {}),
    "rem": (_BIN, "i32", np.remainder, "bool", {}),
    "pow": (_BIN, "f32", np.power, "i32", {}),
    "max": (_BIN, "f32", np.maximum, None, {}),
    "min": (_BIN, "u8", np.minimum, None, {}),
    "atan2": (_BIN, "f32", np.arctan2, "i32", {}),
    "nextafter": (_BIN, "f32", np.nextafter, "i32", {}),
    "and": (_BIN, "bool", np.bitwise_and, "f32", {}),
    "or": (_BIN, "i32", np.bitwise_or, "f32", {}),
    "xor": (_BIN, "u8", np.bitwise_xor, "f32", {}),
    "shift_left": (_BIN, "i32", np.left_shift, "f32", {}),
    "shift_right_arithmetic": (_BIN, "i32", np.right_shift, "f32", {}),
    "shift_right_logical": (_BIN, "u32", np.right_shift, "bool", {}),
    "complex": (_BIN, "f32", lambda x, y: x + np.complex64(1j) * y, "i32", {}),
    "eq": (_BIN, "c64", np.equal, None, {}),
    "ne": (_BIN, "f32", np.not_equal, None, {}),
    "lt": (_BIN, "f32", np.less, "c64", {}),
    "le": (_BIN, "i32", np.less_equal, "c64", {}),
    "gt": (_BIN, "bool", np.greater, "c64", {}),
    "ge": (_BIN, "u8", np.greater_equal, "c64", {}),
    # the total-order comparisons
    "eq_to": (_BIN, "c64", np.equal, None, {}),
    "le_to": (_BIN, "f32", np.less_equal, "c64", {}),
    "lt_to": (_BIN, "i32", np.less, "c64", {}),
    "stage": (_UN, "f32", np.copy, None, {}),
    # the special functions (floating operands)
    "igamma": (_BIN, "f32", None, "i32", {}),
    "igammac": (_BIN, "f64", None, "i32", {}),
    "igamma_grad_a": (_BIN, "f32", None, "c64", {}),
    "polygamma": (_BIN, "f32", None, "i32", {}),
    "zeta": (_BIN, "f32", None, "bool", {}),
    "bessel_i0e": (_UN, "f32", None, "i32", {}),
    "bessel_i1e": (_UN, "f64", None, "c64", {}),
}
# numpy disagrees with the lax result dtype here (it has no bfloat16 / no f32 conj).
_SPECIAL_OUT = {"erf_inv": "bf16", "population_count": "u8", "clz": "i32"}


def _elementwise_operands(name, dt, shape="2,3", weak=""):
    arity = ELEMENTWISE[name][0]
    return [A(f"{dt}[{shape}]{weak}")] * arity


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_dtype_and_shape_match_numpy(name):
    _, dt, ref, _, params = ELEMENTWISE[name]
    avals = _elementwise_operands(name, dt)
    out = abstract_eval(primitives_by_name[name], *avals, **params)
    if ref is None:
        expected = A(f"{_SPECIAL_OUT.get(name, dt)}[2,3]")
    else:
        with np.errstate(all="ignore"):
            r = np.asarray(ref(*map(np_array, avals)))
        expected = ShapedArray(r.shape, r.dtype)
    assert same(out, expected), (out, expected)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_weak_type_and_scalar_broadcast(name):
    arity, dt, _, _, params = ELEMENTWISE[name]
    p = primitives_by_name[name]
    strong = abstract_eval(p, *_elementwise_operands(name, dt), **params)
    weak = abstract_eval(p, *_elementwise_operands(name, dt, weak="*"), **params)
    # Weak in, weak out, also where the dtype changes (comparisons, abs of complex, ...):
    # JAX 0.10.2's rule (lax.lt of weak values is a weak bool).
    assert weak.weak_type and not strong.weak_type
    assert (weak.shape, weak.dtype) == (strong.shape, strong.dtype)
    if arity == _BIN:
        mixed = abstract_eval(p, A(f"{dt}[2,3]*"), A(f"{dt}[]"), **params)
        assert same(mixed, strong)
        with pytest.raises(TypeError, match=r"incompatible shapes.*\(2, 3\), \(3, 2\)"):
            abstract_eval(p, A(f"{dt}[2,3]"), A(f"{dt}[3,2]"), **params)


@pytest.mark.parametrize("name", sorted(n for n in ELEMENTWISE if ELEMENTWISE[n][0] == _BIN))
def test_binary_elementwise_broadcasts_size_one_dims(name):
    """JAX 0.10.2's broadcasting_shape_rule: a dimension of size 1 broadcasts, ranks must
    agree (rank-0 operands aside), shapes are checked before dtypes; the messages were
    recorded from reference JAX."""
    _, dt, _, _, params = ELEMENTWISE[name]
    p = primitives_by_name[name]
    strong = abstract_eval(p, A(f"{dt}[2,3]"), A(f"{dt}[2,3]"), **params)
    for x, y, shape in (("1,3", "2,1", (2, 3)), ("2,3", "1,3", (2, 3)), ("1,0", "2,1", (2, 0)),
                        ("1,1", "1,1", (1, 1))):
        out = abstract_eval(p, A(f"{dt}[{x}]"), A(f"{dt}[{y}]"), **params)
        assert (out.shape, out.dtype, out.weak_type) == (shape, strong.dtype, False)
    with pytest.raises(TypeError) as e:
        abstract_eval(p, A(f"{dt}[2,3]"), A(f"{dt}[3]"), **params)
    assert str(e.value) == f"{name}: arrays must have the same number of dimensions, got {{1, 2}}"
    with pytest.raises(TypeError) as e:
        abstract_eval(p, A(f"{dt}[1,3]"), A(f"{dt}[2,0]"), **params)
    assert str(e.value) == f"{name} got incompatible shapes for broadcasting: (1, 3), (2, 0)."
    # The shapes are checked first: JAX names them even when the dtypes differ too.
    with pytest.raises(TypeError, match=r"incompatible shapes.*\(2, 3\), \(1, 4\)"):
        abstract_eval(p, A(f"{dt}[2,3]"), A("i8[1,4]" if dt != "i8" else "f32[1,4]"), **params)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_rejects_bad_dtypes(name):
    _, dt, _, bad, params = ELEMENTWISE[name]
    p = primitives_by_name[name]
    if bad is not None:
        bad_aval = A(f"{bad}[2]")
        with pytest.raises(TypeError, match=f"{name} does not accept dtype {bad_aval.dtype.name}"):
            abstract_eval(p, *[bad_aval] * ELEMENTWISE[name][0], **params)
    if ELEMENTWISE[name][0] != _BIN:
        return
    # Operands of one kind but different dtypes (pow's exponent may be any integer type).
    other = {"f32": "f64", "i32": "i64", "u32": "u64", "c64": "c128", "bool": None}.get(dt)
    if other is None:
        return
    match = ("two inexact dtypes must match" if name == "pow" else
             f"same dtypes.*{A(dt + '[]').dtype.name}, {A(other + '[]').dtype.name}")
    with pytest.raises(TypeError, match=match):
        abstract_eval(p, A(f"{dt}[2]"), A(f"{other}[2]"), **params)


def test_conj_of_real_is_complex():
    assert same(abstract_eval(P.conj_p, A("f32[3]")), A("c64[3]"))
    assert same(abstract_eval(P.conj_p, A("f64[3]")), A("c128[3]"))


# --- everything else: (name, operand avals, params, expected aval or list) ----------------

def _gdn(offset, collapsed, start_map, obatch=(), ibatch=()):
    return GDN(offset, collapsed, start_map, obatch, ibatch)


def _gather(dn, sizes, mode=GatherScatterMode.FILL_OR_DROP, fill_value=None):
    return dict(dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=False,
                unique_indices=False, mode=mode, fill_value=fill_value)


def _scatter(dn, mode=GatherScatterMode.FILL_OR_DROP):
    return dict(dimension_numbers=dn, indices_are_sorted=True, unique_indices=False, mode=mode)


ROWS = _gdn((1,), (0,), (0,))  # x[idx] for x of rank 2
SROWS = SDN((1,), (0,), (0,))  # x.at[idx].op(updates) for x of rank 2
SCATTER_NAMES = ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
                 "scatter_sub")
CUMULATIVE_NAMES = ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")
REDUCE_NAMES = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min")
LOGICAL_REDUCE_NAMES = ("reduce_and", "reduce_or", "reduce_xor")
SCAN = dict(length=10, reverse=False, num_consts=1, num_carry=1,
            linear=(False,) * 4, unroll=1)
SCAN_BODY = fn("f32[] f32[3] f32[3] i32[]", "f32[3] f32[2]")
REDUCE_WINDOW_NAMES = ("reduce_window_sum", "reduce_window_max", "reduce_window_min")
NCHW = CDN((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
NCH = CDN((0, 1, 2), (0, 1, 2), (0, 1, 2))
NHWC = CDN((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))  # lhs NHWC, rhs HWIO, out NHWC


def _conv(padding=((0, 0), (0, 0)), strides=(1, 1), lhs_dilation=(1, 1),
          rhs_dilation=(1, 1), dn=NCHW, fg=1, bg=1, **kw):
    return dict(window_strides=strides, padding=padding, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, dimension_numbers=dn, feature_group_count=fg,
                batch_group_count=bg, precision=None, **kw)


def _window(dims, strides, padding, base_dilation=None, window_dilation=None):
    return dict(window_dimensions=dims, window_strides=strides, padding=padding,
                base_dilation=base_dilation, window_dilation=window_dilation)


WHILE = dict(cond_olympuspr=fn("i32[] i32[] f32[3]", "bool[]"),
             body_olympuspr=fn("i32[] f32[3]", "i32[] f32[3]"),
             cond_nconsts=1, body_nconsts=0)

def _ffi(results):
    return dict(result_avals=tuple(A(r) for r in results), vmap_method=None, target_name="t",
                has_side_effect=False, input_layouts=((1, 0), ()),
                output_layouts=tuple((0,) for _ in results), input_output_aliases=(),
                custom_call_api_version=4, legacy_backend_config=None, attributes=())


class _Leaves:
    """A tree stand-in for buffer_callback's in_tree/out_tree (only its leaf count)."""

    def __init__(self, n):
        self.num_leaves = n


def _buffer_cb(results, n_in, **kw):
    return dict(dict(callback=print, result_avals=tuple(A(r) for r in results),
                     in_tree=_Leaves(n_in), out_tree=_Leaves(len(results)), vmap_method=None,
                     has_side_effect=False, input_output_aliases=(),
                     command_buffer_compatible=False), **kw)


#: ``ref[i, :]`` of a (3, 4) ref.
_IDX_ROW = Indexer((("int",), ("slice", 0, 4, 1)), (3, 4))

HAPPY = [
    ("convert_element_type", "f32[2]", dict(new_dtype=i32, weak_type=False), "i32[2]"),
    ("convert_element_type", "i32[2]", dict(new_dtype=f32, weak_type=True), "f32[2]*"),
    ("bitcast_convert_type", "f32[3]", dict(new_dtype=i32), "i32[3]"),
    ("bitcast_convert_type", "f32[3]", dict(new_dtype=np.dtype("uint8")), "u8[3,4]"),
    ("bitcast_convert_type", "u16[3,2]", dict(new_dtype=f32), "f32[3]"),
    ("select_n", "bool[2,3] f32[2,3] f32[2,3]", {}, "f32[2,3]"),
    ("select_n", "i32[] f32[2]* f32[2]* f32[2]*", {}, "f32[2]*"),
    ("clamp", "f32[] f32[2,3] f32[]", {}, "f32[2,3]"),
    ("clamp", "f32[]* f32[2,3]* f32[]*", {}, "f32[2,3]*"),
    ("clamp", "f32[] f32[2,3]* f32[]*", {}, "f32[2,3]"),
    ("broadcast_in_dim", "f32[3]*", dict(shape=(2, 3), broadcast_dimensions=(1,)), "f32[2,3]*"),
    ("broadcast_in_dim", "f32[1,3]", dict(shape=(4, 2, 3), broadcast_dimensions=(1, 2)),
     "f32[4,2,3]"),
    ("reshape", "f32[2,3]", dict(new_sizes=(3, 2), dimensions=None), "f32[3,2]"),
    ("reshape", "i32[2,3]*", dict(new_sizes=(6,), dimensions=(1, 0)), "i32[6]*"),
    ("transpose", "f32[2,3,4]", dict(permutation=(2, 0, 1)), "f32[4,2,3]"),
    ("squeeze", "f32[1,3,1]", dict(dimensions=(0, 2)), "f32[3]"),
    ("squeeze", "f32[1,3,1]*", dict(dimensions=np.array([0, 2])), "f32[3]*"),
    ("expand_dims", "f32[3]*", dict(dimensions=(0, 2)), "f32[1,3,1]*"),
    ("concatenate", "f32[2,3] f32[4,3] f32[1,3]", dict(dimension=0), "f32[7,3]"),
    ("concatenate", "f32[2,3]* f32[2,1]*", dict(dimension=1), "f32[2,4]*"),
    ("pad", "f32[2,3] f32[]", dict(padding_config=((1, 2, 0), (0, 1, 0))), "f32[5,4]"),
    ("pad", "f32[2,3] f32[]", dict(padding_config=((0, 0, 1), (1, -1, 2))), "f32[3,7]"),
    ("rev", "f32[2,3]", dict(dimensions=(1,)), "f32[2,3]"),
    ("slice", "f32[5,6]", dict(start_indices=(1, 0), limit_indices=(4, 6), strides=(2, 3)),
     "f32[2,2]"),
    ("slice", "f32[5,6]", dict(start_indices=(2, 2), limit_indices=(2, 5)), "f32[0,3]"),
    ("iota", "", dict(dtype=i32, shape=(2, 3), dimension=1), "i32[2,3]"),
    ("dim_as_value", "", dict(dim=shape_poly.symbolic_shape("b")[0]), "i32[]*"),
    *[(n, "f32[2,3,4]", dict(axes=(0, 2)), "f32[3]") for n in REDUCE_NAMES],
    *[(n, "bool[2,3]*", dict(axes=(1,)), "bool[2]*") for n in LOGICAL_REDUCE_NAMES],
    ("argmax", "f32[2,3]", dict(axes=(1,), index_dtype=i32), "i32[2]"),
    ("argmin", "f32[2,3]*", dict(axes=(0,), index_dtype=i32), "i32[3]"),
    ("ragged_all_to_all", "f32[3]* f32[4]* i32[2] i32[2] i32[2] i32[2]",
     dict(axis_name=("x",), axis_index_groups=None), "f32[4]"),
    ("scaled_dot", "f32[4,8] f32[8,3] f32[4,2] f32[2,3]",
     dict(dimension_numbers=(((1,), (0,)), ((), ())), preferred_element_type=dtypes.bfloat16),
     "bf16[4,3]"),
    ("scaled_dot", "f32[2,3,4] f32[2,4,5] f32[2,3,2] f32[2,2,5]",
     dict(dimension_numbers=(((2,), (1,)), ((0,), (0,))), preferred_element_type=np.float32),
     "f32[2,3,5]"),
    ("dot_general", "f32[2,3] f32[3,4]", dict(dimension_numbers=(((1,), (0,)), ((), ()))),
     "f32[2,4]"),
    ("dot_general", "i8[2,3] i8[3]",
     dict(dimension_numbers=(((1,), (0,)), ((), ())), preferred_element_type=i32), "i32[2]"),
    # mixed operand dtypes: the higher-precision one (JAX 0.10.2's rule, as in XLA)
    *[("dot_general", f"{a}[2,3] {b}[3]", dict(dimension_numbers=(((1,), (0,)), ((), ()))),
       f"{out}[2]") for a, b, out in (("i32", "f32", "f32"), ("f16", "f32", "f32"),
                                       ("i8", "i32", "i32"), ("bool", "i32", "i32"),
                                       ("u8", "i8", "i8"), ("bf16", "f16", "bf16"))],
    # indexing
    ("dynamic_slice", "f32[5,6] i32[] i32[]", dict(slice_sizes=(2, 3)), "f32[2,3]"),
    ("dynamic_slice", "f32[5,6]* i32[] i32[]", dict(slice_sizes=(5, 0)), "f32[5,0]*"),
    ("dynamic_update_slice", "f32[5,6] f32[2,3] i32[] i32[]", {}, "f32[5,6]"),
    ("dynamic_update_slice", "f32[5]* f32[2]* i32[]*", {}, "f32[5]*"),
    ("dynamic_update_slice", "f32[5]* f32[2]* i32[]", {}, "f32[5]"),
    ("gather", "f32[5,6] i32[7,1]", _gather(ROWS, (1, 6)), "f32[7,6]"),
    # offset_dims places the window dim: here between the two batch dims
    ("gather", "f32[5,6]* i32[4,2,1]", _gather(ROWS, (1, 6), "clip"), "f32[4,6,2]*"),
    ("gather", "f32[3,5,6] i32[3,7,1]",
     _gather(_gdn((2,), (1,), (1,), (0,), (0,)), (1, 1, 6)), "f32[3,7,6]"),
    *[(n, "f32[5,6] i32[7,1] f32[7,6]", _scatter(SROWS), "f32[5,6]") for n in SCATTER_NAMES],
    ("scatter_add", "f32[5,6]* i32[2,1] f32[2,4]*", _scatter(SROWS, None), "f32[5,6]*"),
    ("scatter", "f32[3,5,6] i32[3,7,1] f32[3,7,6]",
     _scatter(SDN((2,), (1,), (1,), (0,), (0,)), "drop"), "f32[3,5,6]"),
    # cumulative
    *[(n, "f32[2,3]", dict(axis=1, reverse=False), "f32[2,3]") for n in CUMULATIVE_NAMES],
    ("cumsum", "i32[4]*", dict(axis=0, reverse=True), "i32[4]*"),
    # sorting
    ("sort", "f32[5] i32[5]*", dict(dimension=0, is_stable=True, num_keys=1),
     ["f32[5]", "i32[5]*"]),
    ("sort", "f32[2,3]", dict(dimension=1, is_stable=False, num_keys=1), ["f32[2,3]"]),
    ("approx_top_k", "f32[2,8]", dict(k=3, reduction_dimension=-1, recall_target=0.95,
                                      is_max_k=True, reduction_input_size_override=-1,
                                      aggregate_to_topk=True), ["f32[2,3]", "i32[2,3]"]),
    # XLA's size without aggregation: two lane tiles of 300 halved once, rounded up
    ("approx_top_k", "f16[300,2]", dict(k=5, reduction_dimension=0, recall_target=0.9,
                                        is_max_k=False, reduction_input_size_override=-1,
                                        aggregate_to_topk=False), ["f16[256,2]", "i32[256,2]"]),
    # random
    ("rng_bit_generator", "u32[4]",
     dict(shape=(2, 3), dtype=np.dtype("uint8"), algorithm=RandomAlgorithm.RNG_DEFAULT),
     ["u32[4]", "u8[2,3]"]),
    ("rng_bit_generator", "u32[4]",
     dict(shape=(), dtype=u32, algorithm=RandomAlgorithm.RNG_PHILOX), ["u32[4]", "u32[]"]),
    ("threefry2x32", "u32[] u32[] u32[3] u32[3]", {}, ["u32[3]", "u32[3]"]),
    ("threefry2x32", "u32[2,3] u32[] u32[2,3] u32[2,3]", {}, ["u32[2,3]", "u32[2,3]"]),
    ("random_seed", "i32[3]", dict(impl=FRY), "key<fry>[3]"),
    ("random_wrap", "u32[3,2]", dict(impl=FRY), "key<fry>[3]"),
    ("random_unwrap", "key<fry>[3]", {}, "u32[3,2]"),
    ("random_split", "key<fry>[3]", dict(shape=(2, 4)), "key<fry>[3,2,4]"),
    ("random_fold_in", "key<fry>[3] u32[]", {}, "key<fry>[3]"),
    ("random_fold_in", "key<fry>[] u32[3]", {}, "key<fry>[3]"),
    ("random_bits", "key<fry>[3]", dict(bit_width=8, shape=(2,)), "u8[3,2]"),
    ("random_bits", "key<fry>[]", dict(bit_width=64, shape=()), "u64[]"),
    ("random_clone", "key<fry>[2]", {}, "key<fry>[2]"),
    ("consume", "key<fry>[2]", {}, "key<fry>[2]"),
    ("assert_consumed_value", "key<fry>[]", dict(value=True), "key<fry>[]"),
    ("random_gamma", "key<fry>[] f32[2,3]", dict(log_space=False), "f32[2,3]"),
    ("random_gamma", "key<fry>[2] f64[2,3]", dict(log_space=True), "f64[2,3]"),
    # ffi
    ("ffi_call", "f32[2,3] i32[]", _ffi(("f32[2,3]", "u8[4]")), ["f32[2,3]", "u8[4]"]),
    ("buffer_callback", "f32[2,3]", _buffer_cb(("f32[2,3]", "i32[]"), 1,
                                               input_output_aliases=((0, 0),)),
     ["f32[2,3]", "i32[]"]),
    # refs
    ("new_ref", "f32[3]*", dict(kind=None, memory_space=None), "Ref{f32[3]*}"),
    ("freeze", "Ref{f32[3]}", {}, "f32[3]"),
    ("get", "Ref{f32[3,4]} i32[]", dict(indexer=_IDX_ROW), "f32[4]"),
    ("get", "Ref{f32[3,4]} i32[2]", dict(indexer=_IDX_ROW), "f32[2,4]"),
    ("swap", "Ref{f32[3,4]} f32[4] i32[]", dict(indexer=_IDX_ROW), "f32[4]"),
    ("addupdate", "Ref{f32[3,4]} f32[4] i32[]", dict(indexer=_IDX_ROW), []),
    # control flow
    ("cond", "i32[] f32[3]", dict(branches=(fn("f32[3]", "f32[3]"), fn("f32[3]", "f32[3]"))),
     ["f32[3]"]),
    ("cond", "i32[] f32[3]* i32[]",  # operand weak types need not match the branches'
     dict(branches=(fn("f32[3] i32[]", "i32[] f32[]*"),) * 3), ["i32[]", "f32[]*"]),
    ("while", "i32[] i32[] f32[3]", WHILE, ["i32[]", "f32[3]"]),
    ("scan", "f32[] f32[3] f32[10,3] i32[10]", dict(olympuspr=SCAN_BODY, **SCAN),
     ["f32[3]", "f32[10,2]"]),
    ("scan", "",
     dict(olympuspr=fn("", "i32[2]"), length=4, reverse=True, num_consts=0, num_carry=0,
          linear=(), unroll=True), ["i32[4,2]"]),
    ("closed_call", "f32[2]* i32[]", dict(call_olympuspr=fn("f32[2] i32[]", "i32[] f32[2]")),
     ["i32[]", "f32[2]"]),
    ("xla_metadata_call", "f32[2]* i32[]",
     dict(olympuspr=fn("f32[2] i32[]", "i32[] f32[2]"), scheduling_group="g"),
     ["i32[]", "f32[2]"]),
    ("call_exported", "f32[2] i32[]", dict(exported=_exported("f32[2] i32[]", "i32[] f32[2]*")),
     ["i32[]", "f32[2]*"]),

    ("jit", "f32[2]* i32[]", dict(P.jit_params(_JIT_DEFAULTS, fn("f32[2] i32[]", "i32[] f32[2]"))),
     ["i32[]", "f32[2]"]),
    ("debug_callback", "f32[2] i32[]", dict(callback=print, effect=P.debug_effect), []),
    ("check", "f32[2]", dict(err_tree=_tree_of(1), debug=True), []),
    ("pure_callback", "f32[2] i32[]", dict(callback=print, result_avals=(A("i32[3]"),),
                                            vmap_method="expand_dims"), ["i32[3]"]),
    ("io_callback", "f32[2]", dict(callback=print, result_avals=(A("f32[]"), A("i32[2]")),
                                   ordered=True), ["f32[]", "i32[2]"]),
    # collectives
    *[(n, "f32[2,3]*", dict(axis_name="i"), "f32[2,3]*") for n in ("psum", "pmax", "pmin")],
    ("all_gather", "f32[2,3]", dict(axis_name="i", axis_size=4, axis=1, tiled=False),
     "f32[2,4,3]"),
    ("all_gather", "i32[2,3]", dict(axis_name=("i", 0), axis_size=4, axis=0, tiled=True),
     "i32[8,3]"),
    ("axis_index", "", dict(axis_name="i"), "i32[]"),
    ("platform_index", "", dict(platforms=(("cpu",), ("cuda", "rocm"), None)), "i32[]"),
    ("ppermute", "f32[2,3]", dict(axis_name="i", perm=((0, 1), (1, 0))), "f32[2,3]"),
    ("psum_scatter", "f32[8,3]", dict(axis_name="i", axis_size=4, scatter_dimension=0,
                                      tiled=True), "f32[2,3]"),
    ("psum_scatter", "f32[2,4]", dict(axis_name="i", axis_size=4, scatter_dimension=1),
     "f32[2]"),
    ("all_to_all", "f32[8,3]", dict(axis_name="i", axis_size=4, split_axis=0, concat_axis=1,
                                    tiled=True), "f32[2,12]"),
    ("all_to_all", "f32[4,3]", dict(axis_name="i", axis_size=4, split_axis=0, concat_axis=1),
     "f32[3,4]"),
    ("pvary", "f32[2]*", dict(axes=("i",)), "f32[2]*"),
    ("psum_invariant", "f32[2]", dict(axes=("i", "j")), "f32[2]"),
    # sharding
    ("sharding_constraint", "f32[4,2]", dict(sharding=_Sharding(_Spec("x"))), "f32[4,2]"),
    ("inspect_sharding", "f32[4,2]", dict(callback=print), []),
    ("layout_constraint", "f32[4,2]", dict(layout=_Layout((1, 0))), "f32[4,2]"),
    ("custom_partitioning", "f32[4] i32[]",
     dict(call=fn("f32[4] i32[]", "i32[] f32[4]"), **_CUSTOM_PARTITIONING),
     ["i32[]", "f32[4]"]),
    ("shard_map", "f32[8,3] i32[]",
     dict(olympuspr=fn("f32[2,3] i32[]", "f32[2,3] f32[3]"), mesh=_MESH,
          in_specs=(_Spec("x"), _Spec()), out_specs=(_Spec(None, "x"), _Spec()),
          manual_axes=("x",), check_vma=True), ["f32[2,12]", "f32[3]"]),
    # transfers
    ("device_put", "f32[4] i32[]",
     dict(devices=(MemorySpace.Host, None), srcs=(None, None),
          copy_semantics=(ACS.ALWAYS_COPY, ACS.REUSE_INPUT)), ["f32[4]", "i32[]"]),
    # custom derivatives and checkpoint
    ("custom_jvp_call", "f32[2]* i32[]",
     dict(call_olympuspr=fn("f32[2] i32[]", "i32[] f32[2]"), jvp=print, num_consts=0),
     ["i32[]", "f32[2]"]),
    ("custom_vjp_call", "f32[2]", dict(call_olympuspr=fn("f32[2]", "f32[] f32[2]"), fwd=print,
                                       bwd=print, num_consts=0), ["f32[]", "f32[2]"]),
    ("custom_lin", "f32[] f32[2]", dict(num_res=1, bwd=print, out_avals=(A("f32[2]"),)),
     ["f32[2]"]),
    ("checkpoint", "f32[2] f32[]", dict(call_olympuspr=fn("f32[2] f32[]", "f32[2]"),
                                        prevent_cse=True), ["f32[2]"]),
    ("name", "bf16[2,3]", dict(name="layer0"), "bf16[2,3]"),
    ("linear_call", "f32[] f32[3]",
     dict(callee=fn("f32[] f32[3]", "f32[3] f32[]"), transpose_thunk=print,
          num_callee_consts=0, num_res=1), ["f32[3]", "f32[]"]),
    ("remat_opt", "f32[2]", dict(num_consts=0, num_res=1, fwd_jaxpr=fn("f32[2]", "f32[] f32[2]"),
                                 fun_jaxpr_thunk=print), ["f32[]", "f32[2]"]),
    # convolution: spatial (9 + 1 + 1 - 3) // 2 + 1 = 5 and 10 - (1 + 2 * (2 - 1)) + 1 = 8
    ("conv_general_dilated", "f32[2,3,9,10] f32[4,3,3,2]",
     _conv(padding=((1, 1), (0, 0)), strides=(2, 1), rhs_dilation=(1, 2)), "f32[2,4,5,8]"),
    ("conv_general_dilated", "f32[1,5,5,4] f32[3,3,2,6]", _conv(dn=NHWC, fg=2),
     "f32[1,3,3,6]"),
    ("conv_general_dilated", "i8[2,3,4] i8[5,3,2]",  # 1-D, lhs dilation, preferred dtype
     dict(_conv(padding=((0, 0),), strides=(1,), lhs_dilation=(2,), rhs_dilation=(1,),
                dn=NCH),
          preferred_element_type=i32), "i32[2,5,6]"),
    ("conv_general_dilated", "f32[4,2,5]* f32[6,2,3]*",
     _conv(padding=((1, 1),), strides=(1,), lhs_dilation=(1,), rhs_dilation=(1,), bg=2,
           dn=NCH),
     "f32[2,6,5]*"),
    # windowed reductions: (4 + 0 + 1 - 2) // 2 + 1 = 2 and (6 + 1 + 1 - 3) + 1 = 6
    *[(n, "f32[4,6]", _window((2, 3), (2, 1), ((0, 1), (1, 1))), "f32[2,6]")
      for n in REDUCE_WINDOW_NAMES],
    ("reduce_window_sum", "i32[5]*", _window((2,), (1,), ((0, 0),), (2,), (2,)), "i32[7]*"),
    ("reduce_window_max", "bool[3,3]", _window((3, 3), (1, 1), ((0, 0), (0, 0))),
     "bool[1,1]"),
    # linear algebra, fft, top_k
    ("cholesky", "f32[3,4,4]", {}, "f32[3,4,4]"),
    ("triangular_solve", "f32[2,3,3] f32[2,3,5]", dict(left_side=True, lower=True),
     "f32[2,3,5]"),
    ("triangular_solve", "c64[3,3] c64[5,3]", dict(left_side=False, transpose_a=True),
     "c64[5,3]"),
    ("lu", "f32[2,5,3]", {}, ["f32[2,5,3]", "i32[2,3]", "i32[2,5]"]),
    ("lu", "c64[3,4]", {}, ["c64[3,4]", "i32[3]", "i32[3]"]),
    ("qr", "f32[5,3]", dict(full_matrices=True), ["f32[5,5]", "f32[5,3]"]),
    ("qr", "c64[2,5,3]", dict(full_matrices=False), ["c64[2,5,3]", "c64[2,3,3]"]),
    ("qr", "f32[3,5]", dict(full_matrices=False), ["f32[3,3]", "f32[3,5]"]),
    ("eigh", "f32[4,4]", dict(lower=True, sort_eigenvalues=True), ["f32[4,4]", "f32[4]"]),
    ("eigh", "c64[2,3,3]", dict(lower=False), ["c64[2,3,3]", "f32[2,3]"]),
    ("svd", "f32[4,6]", dict(full_matrices=True, compute_uv=True),
     ["f32[4]", "f32[4,4]", "f32[6,6]"]),
    ("svd", "c64[2,6,4]", dict(full_matrices=False, compute_uv=True),
     ["f32[2,4]", "c64[2,6,4]", "c64[2,4,4]"]),
    ("svd", "f32[4,6]", dict(full_matrices=True, compute_uv=False), ["f32[4]"]),
    ("eig", "f32[2,4,4]", {}, ["c64[2,4]", "c64[2,4,4]", "c64[2,4,4]"]),
    ("fft", "c64[2,8]", dict(fft_type=FftType.FFT, fft_lengths=(8,)), "c64[2,8]"),
    ("fft", "c64[3,4,8]", dict(fft_type=FftType.IFFT, fft_lengths=(4, 8)), "c64[3,4,8]"),
    ("fft", "f32[3,8]", dict(fft_type=FftType.RFFT, fft_lengths=(8,)), "c64[3,5]"),
    ("fft", "c64[3,4,5]", dict(fft_type=FftType.IRFFT, fft_lengths=(4, 8)), "f32[3,4,8]"),
    ("top_k", "f32[3,7]", dict(k=2), ["f32[3,2]", "i32[3,2]"]),
    ("top_k", "i32[5]*", dict(k=np.int64(5)), ["i32[5]", "i32[5]"]),  # weak type dropped
    # the condensed forms and smaller linalg primitives (shapes as JAX 0.10.2 gives them)
    ("hessenberg", "f32[2,4,4]", {}, ["f32[2,4,4]", "f32[2,3]"]),
    ("tridiagonal", "c64[4,4]", dict(lower=True), ["c64[4,4]", "f32[4]", "f32[3]", "c64[3]"]),
    ("schur", "f32[3,3]", dict(compute_schur_vectors=True), ["f32[3,3]", "f32[3,3]"]),
    ("schur", "f32[3,3]", dict(compute_schur_vectors=False), ["f32[3,3]"]),
    ("ormqr", "f32[5,3] f32[3] f32[5,2]", dict(left=True, transpose=False), "f32[5,2]"),
    ("ormqr", "f32[5,3] f32[3] f32[2,5]", dict(left=False, transpose=True), "f32[2,5]"),
    ("householder_product", "f32[2,5,3] f32[2,2]", {}, "f32[2,5,3]"),
    ("lu_pivots_to_permutation", "i32[2,3]", dict(permutation_size=5), "i32[2,5]"),
    ("symmetric_product", "f32[3,2] f32[3,3]", dict(alpha=1.0, beta=0.0), "f32[3,3]"),
    ("tridiagonal_solve", "f32[4] f32[4] f32[4] f32[4,2]", {}, "f32[4,2]"),
    ("rng_uniform", "f32[]* f32[]*", dict(shape=(2, 3)), "f32[2,3]*"),
    ("rng_uniform", "i32[] i32[]*", dict(shape=(2,)), "i32[2]"),
    # JAX's structural primitives
    ("tile", "f32[2,3]*", dict(reps=(2, 1)), "f32[4,3]*"),
    ("split", "f32[2,5]", dict(sizes=(1, 0, 4), axis=1), ["f32[2,1]", "f32[2,0]", "f32[2,4]"]),
    ("stack", "f32[2]* f32[2]", dict(axis=1), "f32[2,2]"),
    ("unstack", "i32[3,2]", dict(axis=0), ["i32[2]", "i32[2]", "i32[2]"]),
    ("mulhi", "u32[3] u32[]", {}, "u32[3]"),
    ("optimization_barrier", "f32[2]* i32[]", {}, ["f32[2]*", "i32[]"]),
    ("custom_linear_solve", "f32[2,2] f32[2]", dict(
        const_lengths=P.LinearSolveTuple(1, 0, 0, 0),
        jaxprs=P.LinearSolveTuple(fn("f32[2,2] f32[2]", "f32[2]"), None,
                                  fn("f32[2]", "f32[2] i32[]"), None)), ["f32[2]", "i32[]"]),
]


def _ids(cases):
    return [f"{c[0]}-{i}" for i, c in enumerate(cases)]


#: The sparse family (`olympus_ir.prims.sparse`): BCOO/BCSR/COO/CSR buffers.
_SP34 = P.SparseInfo((3, 4))
_SPB = P.SparseInfo((2, 3, 4))
_DN1 = (((1,), (0,)), ((), ()))
class _LeafTree:
    """A treedef stand-in for a plain array (`todense` reads ``num_leaves``/``unflatten``)."""

    num_leaves = 1

    def unflatten(self, leaves):
        return list(leaves)[0]


class BCOO:
    """What `todense_format` reads of a BCOO pytree node."""

    def __init__(self, data, indices, shape):
        self.data, self.indices, self.shape = data, indices, shape
        self.indices_sorted = self.unique_indices = False


class _BCOOTree:
    num_leaves = 2

    def __init__(self, shape):
        self.shape = shape

    def unflatten(self, leaves):
        return BCOO(*leaves, self.shape)


HAPPY += [
    ("todense", "f32[3]", dict(tree=_LeafTree()), "f32[3]"),
    ("todense", "f32[5] i32[5,2]", dict(tree=_BCOOTree((3, 4))), "f32[3,4]"),
    ("bcoo_todense", "f32[5] i32[5,2]", dict(spinfo=_SP34), "f32[3,4]"),
    ("bcoo_todense", "f32[1,5] i32[2,5,2]", dict(spinfo=_SPB), "f32[2,3,4]"),
    ("bcoo_fromdense", "f32[2,3,4]", dict(nse=5, n_batch=1, n_dense=1, index_dtype=i32),
     ["f32[2,5,4]", "i32[2,5,1]"]),
    ("bcoo_extract", "i32[5,2] f32[3,4]", dict(assume_unique=True), "f32[5]"),
    ("bcoo_transpose", "f32[5] i32[5,2]", dict(permutation=(1, 0), spinfo=_SP34),
     ["f32[5]", "i32[5,2]"]),
    ("bcoo_sort_indices", "f32[1,5] i32[2,5,2]", dict(spinfo=_SPB), ["f32[2,5]", "i32[2,5,2]"]),
    ("bcoo_sum_duplicates", "f32[5] i32[5,2]", dict(spinfo=_SP34, nse=3),
     ["f32[3]", "i32[3,2]"]),
    ("bcoo_dot_general", "f32[5] i32[5,2] f32[4,6]", dict(
        dimension_numbers=_DN1, lhs_spinfo=_SP34, preferred_element_type=None), "f32[3,6]"),
    ("bcoo_dot_general_sampled", "f32[3,2] f32[2,4] i32[5,2]", dict(dimension_numbers=_DN1),
     "f32[5]"),
    ("bcoo_spdot_general", "f32[5] i32[5,2] f32[6] i32[6,2]", dict(
        lhs_spinfo=_SP34, rhs_spinfo=P.SparseInfo((4, 3)), dimension_numbers=_DN1,
        preferred_element_type=None), ["f32[9]", "i32[9,2]"]),
    ("bcsr_todense", "f32[5] i32[5] i32[4]", dict(spinfo=_SP34), "f32[3,4]"),
    ("bcsr_fromdense", "f32[3,4]", dict(nse=5, n_batch=0, n_dense=0, index_dtype=i32),
     ["f32[5]", "i32[5]", "i32[4]"]),
    ("bcsr_extract", "i32[5] i32[4] f32[3,4]", {}, "f32[5]"),
    ("bcsr_dot_general", "f32[5] i32[5] i32[4] f32[4]", dict(
        dimension_numbers=_DN1, lhs_spinfo=_SP34, preferred_element_type=None), "f32[3]"),
    ("coo_todense", "f32[5] i32[5] i32[5]", dict(spinfo=P.COOInfo((3, 4))), "f32[3,4]"),
    ("coo_fromdense", "f32[3,4]", dict(nse=5, index_dtype=i32), ["f32[5]", "i32[5]", "i32[5]"]),
    ("coo_matvec", "f32[5] i32[5] i32[5] f32[3]", dict(spinfo=P.COOInfo((3, 4)),
                                                      transpose=True), "f32[4]"),
    ("coo_matmat", "f32[5] i32[5] i32[5] f32[4,2]", dict(spinfo=P.COOInfo((3, 4)),
                                                        transpose=False), "f32[3,2]"),
    ("csr_todense", "f32[5] i32[5] i32[4]", dict(shape=(3, 4)), "f32[3,4]"),
    ("csr_fromdense", "f32[3,4]", dict(nse=5, index_dtype=i32), ["f32[5]", "i32[5]", "i32[4]"]),
    ("csr_matvec", "f32[5] i32[5] i32[4] f32[4]", dict(shape=(3, 4), transpose=False), "f32[3]"),
    ("csr_matmat", "f32[5] i32[5] i32[4] f32[3,2]", dict(shape=(3, 4), transpose=True),
     "f32[4,2]"),
]


_SELECT = dict(select_prim=P.ge_p, window_dimensions=(2, 2), window_strides=(1, 1),
               padding=((0, 0), (0, 1)))
_SCALAR2 = fn("f32[] f32[]", "f32[]")
HAPPY += [
    ("regularized_incomplete_beta", "f32[3] f32[3] f32[3]", {}, "f32[3]"),
    ("regularized_incomplete_beta", "f32[] f32[3]* f32[]", {}, "f32[3]"),
    ("reduce", "f32[3,4] i32[3,4]* f32[] i32[]*",
     dict(computation=None, jaxpr=fn("f32[] i32[] f32[] i32[]", "f32[] i32[]"),
          dimensions=(1,)), ["f32[3]", "i32[3]*"]),
    ("reduce_window", "f32[4,6] f32[]", dict(jaxpr=_SCALAR2.olympuspr, consts=(),
                                             **_window((2, 3), (2, 1), ((0, 1), (1, 1)),
                                                       (1, 1), (1, 1))), ["f32[2,6]"]),
    ("select_and_gather_add", "f32[3,4] f32[3,4]", dict(_SELECT, base_dilation=(1, 1),
                                                        window_dilation=(1, 1)), "f32[2,4]"),
    ("select_and_scatter_add", "f32[2,4] f32[3,4]", _SELECT, "f32[3,4]"),
    ("select_and_scatter", "f32[3,4] f32[2,4] f32[]",
     dict(select_jaxpr=fn("f32[] f32[]", "bool[]").olympuspr, select_consts=(),
          scatter_jaxpr=_SCALAR2.olympuspr, scatter_consts=(), window_dimensions=(2, 2),
          window_strides=(1, 1), padding=((0, 0), (0, 1))), "f32[3,4]"),
    ("cholesky_update", "f32[3,3] f32[3]", {}, "f32[3,3]"),
    ("composite", "f32[3] i32[]", dict(name="my.op", attributes=(), version=0,
                                       jaxpr=fn("f32[3] i32[]", "f32[3] f32[]")),
     ["f32[3]", "f32[]"]),
    ("dce_sink", "f32[3]", dict(prevent_mlir_dce=False), []),
    ("xla_metadata_value", "f32[3]*", dict(xla_metadata_kvs=(("a", 1),)), "f32[3]*"),
    ("xla_metadata_value", "i8[2,0]", dict(xla_metadata_kvs=()), "i8[2,0]"),
    ("shard_alike", "f32[2,3] i32[2,3]", {}, ["f32[2,3]", "i32[2,3]"]),
]


@pytest.mark.parametrize("name,ins,params,expected", HAPPY, ids=_ids(HAPPY))
def test_happy_path(name, ins, params, expected):
    p = primitives_by_name[name]
    out = abstract_eval(p, *As(ins) if ins else (), **params)
    if p.multiple_results:
        assert isinstance(out, list)
        assert len(out) == len(expected)
        for o, e in zip(out, expected, strict=True):
            assert same(o, A(e)), (o, e)
    else:
        assert isinstance(out, (ShapedArray, AbstractRef))
        assert same(out, A(expected)), (out, expected)


ERRORS = [
    ("convert_element_type", "f32[2]", dict(new_dtype=np.dtype("U3"), weak_type=False),
     "unsupported new_dtype <U3"),
    ("bitcast_convert_type", "u8[3,2]", dict(new_dtype=f32), "trailing dimension of size 4"),
    # select_n and clamp: JAX's words (recorded from reference JAX 0.10.2).
    ("select_n", "bool[] f32[2] f32[2] f32[2]", {}, "boolean `which` cannot have > 2 cases"),
    ("select_n", "bool[] f32[2] i32[2]", {}, "same dtypes, got float32, int32"),
    ("select_n", "bool[3] f32[2] f32[2]", {}, r"got `which` shape \(3,\) but case shape \(2,\)"),
    ("select_n", "f32[2] f32[2] f32[2]", {}, "`which` must be boolean or integer type, got float32"),
    ("select_n", "bool[2] f32[1] f32[2]", {}, r"cases must have the same shapes, got \[\(1,\), \(2,\)\]"),
    ("clamp", "i32[] f32[2,3] f32[]", {}, "lax.clamp requires arguments to have the same "
     "dtypes, got int32, float32, float32"),
    ("clamp", "f32[] f32[2,3] f32[3]", {}, r"max.shape == \(\), got max.shape=\(3,\), "
     r"operand.shape=\(2, 3\)"),
    ("clamp", "f32[1,3] f32[2,3] f32[]", {}, r"min.shape == operand.shape"),
    ("broadcast_in_dim", "f32[3]", dict(shape=(3, 2), broadcast_dimensions=(1,)),
     r"operand of shape \(3,\), target broadcast shape \(3, 2\)"),
    ("broadcast_in_dim", "f32[3]", dict(shape=(3,), broadcast_dimensions=(np.int64(1),)),
     r"broadcast_dimensions must be in range \[0, 1\).*got \(1,\)"),
    ("reshape", "f32[2,3]", dict(new_sizes=(4, 2), dimensions=None),
     r"new_sizes \(4, 2\) \(size 8\) for shape \(2, 3\)"),
    ("transpose", "f32[2,3,4]", dict(permutation=(0, 0, 1)), r"permutation \(0, 0, 1\)"),
    ("squeeze", "f32[1,3]", dict(dimensions=(1,)), r"shape=\(1, 3\) and dimensions=\(1,\)"),
    ("expand_dims", "f32[3]", dict(dimensions=(5,)), r"got \(5,\)"),
    ("concatenate", "f32[2,3] i32[2,3]", dict(dimension=0), "same dtypes, got float32, int32"),
    ("concatenate", "f32[2,3] f32[2,4]", dict(dimension=0), r"\(2, 3\), \(2, 4\)"),
    ("pad", "f32[2,3] f32[1]", dict(padding_config=((0, 0, 0),) * 2),
     r"padding_value must be a scalar, got shape \(1,\)"),
    ("pad", "f32[2] f32[]", dict(padding_config=((0, 0, -1),)), "interior padding"),
    ("rev", "f32[2,3]", dict(dimensions=(2,)), r"got \(2,\)"),
    ("slice", "f32[5,6]", dict(start_indices=(0, 0), limit_indices=(6, 6)),
     r"limit_indices \(6, 6\) for operand shape \(5, 6\)"),
    ("iota", "", dict(dtype=i32, shape=(2, 3), dimension=2), "dimension=2"),
    ("dim_as_value", "", dict(dim=2.5), "dim_as_value dim must be a dimension"),
    ("iota", "", dict(dtype=np.dtype(bool), shape=(2,), dimension=0), "dtype bool"),
    *[(n, "f32[2,3]", dict(axes=(2,)), r"axes=\(2,\)") for n in REDUCE_NAMES],
    *[(n, "f32[2,3]", dict(axes=(0,)), "does not accept dtype float32")
      for n in LOGICAL_REDUCE_NAMES],
    ("reduce_sum", "bool[2]", dict(axes=(0,)), "does not accept dtype bool"),
    ("argmax", "f32[2,3]", dict(axes=(0, 1), index_dtype=i32), r"axes=\(0, 1\)"),
    ("argmin", "f32[2,3]", dict(axes=(0,), index_dtype=f32), "index_dtype.*float32"),
    ("dot_general", "f32[2,3] f32[4,5]", dict(dimension_numbers=(((1,), (0,)), ((), ()))),
     r"contracting dimensions to have the same shape, got \(3,\) and \(4,\)"),
    ("dot_general", "i8[2,3] i32[3]",
     dict(dimension_numbers=(((1,), (0,)), ((), ())), preferred_element_type=np.dtype("int8")),
     "`preferred_element_type` must not be narrower"),
    # indexing
    ("dynamic_slice", "f32[5,6] i32[] i32[]", dict(slice_sizes=(6, 3)),
     r"slice_sizes \(6, 3\) for operand shape \(5, 6\)"),
    ("dynamic_slice", "f32[5,6] i32[] i32[]", dict(slice_sizes=(2,)), r"slice_sizes \(2,\)"),
    ("dynamic_slice", "f32[5,6] i32[] f32[]", dict(slice_sizes=(1, 1)), "int32, float32"),
    ("dynamic_slice", "f32[5,6] i32[]", dict(slice_sizes=(1, 1)), r"got 1 indices.*\(5, 6\)"),
    ("dynamic_slice", "f32[5] i32[1]", dict(slice_sizes=(1,)), r"must be scalars.*\(1,\)"),
    ("dynamic_update_slice", "f32[5,6] f32[2,7] i32[] i32[]", {},
     r"update shape \(2, 7\) for operand shape \(5, 6\)"),
    ("dynamic_update_slice", "f32[5] i32[2] i32[]", {}, "same dtype, got float32 and int32"),
    ("dynamic_update_slice", "f32[5] f32[2,1] i32[]", {}, r"same rank.*\(2, 1\)"),
    ("gather", "f32[5,6] i32[7,2]", _gather(ROWS, (1, 6)),
     r"1 elements in start_index_map.*indices shape \(7, 2\)"),
    ("gather", "f32[5,6] i32[7,1]", _gather(ROWS, (2, 6)),
     r"slice_sizes\[0\] = 2 .*collapsed_slice_dims \(0,\)"),
    ("gather", "f32[5,6] i32[7,1]", _gather(ROWS, (1, 7)),
     r"slice_sizes\[1\] = 7 is out of range for operand shape \(5, 6\)"),
    ("gather", "f32[5,6] f32[7,1]", _gather(ROWS, (1, 6)), "integer type, got float32"),
    ("gather", "f32[5,6] i32[7,1]", _gather(_gdn((2,), (0,), (0,)), (1, 6)),
     r"offset_dims.*\[0, 2\).*got \(2,\)"),
    ("gather", "f32[5,6] i32[7,1]", _gather(_gdn((1,), (), (0,)), (1, 6)),
     r"offset_dims \(1,\), collapsed_slice_dims \(\)"),
    ("gather", "f32[5,6] i32[7,1]", _gather(_gdn((1,), (0,), (2,)), (1, 6)),
     r"start_index_map.*\[0, 2\).*got \(2,\)"),
    ("gather", "f32[5,6] i32[7,1]", _gather(ROWS, (1, 6), mode="wrap"), "invalid mode 'wrap'"),
    ("gather", "f32[5,6] i32[7,1]", _gather(((1,), (0,), (0,)), (1, 6)),
     "must be a GatherDimensionNumbers"),
    ("gather", "f32[3,5,6] i32[4,7,1]",
     _gather(_gdn((2,), (1,), (1,), (0,), (0,)), (1, 1, 6)),
     r"same sizes, got \(3,\).*and \(4,\)"),
    *[(n, "f32[5,6] i32[7,1] f32[8,6]", _scatter(SROWS),
       r"updates dimension 0 has size 8, indices has 7") for n in SCATTER_NAMES],
    ("scatter_add", "f32[5,6] i32[7,1] f32[7,7]", _scatter(SROWS),
     r"updates dimension 1 has size 7, operand bound is 6"),
    ("scatter_mul", "f32[5,6] i32[7,1] i32[7,6]", _scatter(SROWS),
     "same dtype, got float32 and int32"),
    ("scatter_min", "f32[5,6] i32[7,1] f32[7,6]", _scatter(SDN((1,), (), (0,))),
     r"window of size 1 .*operand of shape \(5, 6\)"),
    ("scatter_max", "f32[5,6] i32[7,1] f32[7,1,6]", _scatter(SROWS),
     r"updates must have rank 2.*\(7, 1, 6\)"),
    ("scatter", "f32[5,6] i32[7,1] f32[7,6]", _scatter(SDN((1,), (0,), (0, 1))),
     r"2 elements in scatter_dims_to_operand_dims.*\(7, 1\)"),
    ("scatter", "f32[5,6] i32[7,1] f32[7,6]", _scatter(SROWS, "wrap"), "invalid mode 'wrap'"),
    # cumulative
    *[(n, "f32[2,3]", dict(axis=2, reverse=False), r"axis 2 .*shape \(2, 3\)")
      for n in CUMULATIVE_NAMES],
    ("cumsum", "bool[3]", dict(axis=0, reverse=False), "cumsum does not accept dtype bool"),
    ("cumlogsumexp", "i32[3]", dict(axis=0, reverse=False), "does not accept dtype int32"),
    # sorting
    ("sort", "f32[5] i32[4]", dict(dimension=0, is_stable=True, num_keys=1),
     r"equal shapes, got \(5,\), \(4,\)"),
    ("sort", "f32[5] i32[5]", dict(dimension=0, is_stable=True, num_keys=3),
     r"num_keys=3 .*\(2\)"),
    ("sort", "f32[5]", dict(dimension=1, is_stable=True, num_keys=1), r"dimension 1 .*\(5,\)"),
    # random
    ("rng_bit_generator", "u32[2]",
     dict(shape=(2,), dtype=u32, algorithm=RandomAlgorithm.RNG_DEFAULT),
     r"key must be u32\[4\], got u32\[2\]"),
    ("rng_bit_generator", "u32[4]",
     dict(shape=(2,), dtype=f32, algorithm=RandomAlgorithm.RNG_DEFAULT),
     "unsigned integer type, got float32"),
    ("rng_bit_generator", "u32[4]", dict(shape=(2,), dtype=u32, algorithm="philox"),
     "RandomAlgorithm, got 'philox'"),
    ("threefry2x32", "u32[] u32[] i32[3] u32[3]", {}, r"uint32 arguments.*i32\[3\]"),
    ("threefry2x32", "u32[] u32[] u32[3] u32[4]", {}, r"same shape, got \(3,\) and \(4,\)"),
    ("threefry2x32", "u32[] u32[2] u32[3] u32[3]", {}, r"key k2 .*got \(2,\)"),
    ("random_seed", "f32[]", dict(impl=FRY), r"integer seeds, got f32\[\]"),
    ("random_wrap", "u32[3]", dict(impl=FRY), r"trailing shape \(2,\), got u32\[3\]"),
    ("random_wrap", "i32[2]", dict(impl=FRY), r"dtype uint32 .*got i32\[2\]"),
    ("random_unwrap", "u32[2]", {}, r"random_unwrap accepts PRNG key arrays, got u32\[2\]"),
    ("random_split", "u32[2]", dict(shape=(2,)), "random_split accepts PRNG key arrays"),
    ("random_fold_in", "key<fry>[] i32[]", {}, r"uint32 messages, got i32\[\]"),
    ("random_fold_in", "key<fry>[2] u32[3]", {}, r"shape \(2,\) and messages of shape \(3,\)"),
    ("random_bits", "key<fry>[]", dict(bit_width=12, shape=()), "8, 16, 32 or 64, got 12"),
    ("random_clone", "f32[]", {}, "random_clone accepts PRNG key arrays"),
    ("consume", "u32[2]", {}, r"consume accepts PRNG key arrays, got u32\[2\]"),
    ("assert_consumed_value", "f32[]", dict(value=False), "assert_consumed_value accepts PRNG"),
    ("random_gamma", "u32[2] f32[3]", dict(log_space=False), "random_gamma accepts PRNG key"),
    ("random_gamma", "key<fry>[] i32[3]", dict(log_space=False), "floating-point shape"),
    ("random_gamma", "key<fry>[2] f32[3]", dict(log_space=False), "must be a prefix"),
    # control flow
    ("cond", "i32[] f32[]", dict(branches=(fn("f32[]", "f32[]"), fn("f32[]", "i32[]"))),
     re.escape("branch 0 output (f32[],) and branch 1 output (i32[],) must have identical")),
    ("cond", "f32[] f32[]", dict(branches=(fn("f32[]", "f32[]"),)),
     r"index must be an int32 scalar, got f32\[\]"),
    ("cond", "i32[] f32[2]", dict(branches=(fn("f32[]", "f32[]"),)),
     re.escape("branch 0 takes input types (f32[],), but was called with operands of type "
               "(f32[2],)")),
    ("cond", "i32[]", dict(branches=()), "at least one branch"),
    ("while", "i32[] i32[] f32[3]", {**WHILE, "cond_olympuspr": fn("i32[] i32[] f32[3]", "i32[]")},
     re.escape("single bool scalar, got (i32[],)")),
    ("while", "i32[] i32[] f32[3]",
     {**WHILE, "body_olympuspr": fn("i32[] f32[3]", "i32[] f32[4]")},
     re.escape("output (i32[], f32[4]) must have the same types as its carry input "
               "(i32[], f32[3])")),
    ("while", "i32[] i32[] f32[2]", WHILE, re.escape("cond consts and carry have types "
                                                     "(i32[], i32[], f32[2])")),
    ("scan", "f32[] f32[3] f32[9,3] i32[10]", dict(olympuspr=SCAN_BODY, **SCAN),
     r"xs\[0\] of type f32\[9,3\] .*length=10"),
    ("scan", "f32[] f32[3] f32[10,3] f32[10]", dict(olympuspr=SCAN_BODY, **SCAN),
     re.escape("have types (f32[], f32[3], f32[3], f32[])")),
    ("scan", "f32[] f32[2] f32[10,3] i32[10]",
     dict(olympuspr=fn("f32[] f32[2] f32[3] i32[]", "f32[3] f32[2]"), **SCAN),
     re.escape("carry output (f32[3],) must have the same types as the carry input (f32[2],)")),
    ("closed_call", "f32[3]", dict(call_olympuspr=fn("f32[2]", "f32[2]")),
     re.escape("takes input types (f32[2],), but was called with arguments of type (f32[3],)")),
    ("xla_metadata_call", "f32[3]", dict(olympuspr=fn("f32[2]", "f32[2]")),
     re.escape("xla_metadata_call call_olympuspr takes input types (f32[2],), but was called "
               "with arguments of type (f32[3],)")),
    ("call_exported", "f32[2]", dict(exported=_exported("f32[2] f32[2]", "f32[2]")),
     "call_exported of 'g' takes 2 arguments, got 1"),

    ("jit", "f32[3]", dict(P.jit_params(_JIT_DEFAULTS, fn("f32[2]", "f32[2]"))),
     re.escape("jit call_olympuspr takes input types (f32[2],), but was called with arguments "
               "of type (f32[3],)")),
    ("jit", "f32[2]", dict(P.jit_params(_JIT_DEFAULTS, fn("f32[2]", "f32[2]")),
                           donated_invars=(False, False)),
     re.escape("jit donated_invars must have one entry per input (1), got 2.")),
    ("debug_callback", "f32[2]", dict(callback=None, effect=P.debug_effect), "must be callable"),
    ("inspect_sharding", "f32[2]", dict(callback=None), "must be callable"),
    ("check", "f32[2]", dict(err_tree=_tree_of(2), debug=True),
     "check takes 2 operands for its error, got 1."),
    ("pure_callback", "f32[2]", dict(callback=print, result_avals=(A("f32[]"),),
                                     vmap_method="nope"), "vmap_method must be None or one of"),
    ("pure_callback", "f32[2]", dict(callback=print, result_avals=[A("f32[]")]),
     "result_avals must be a tuple of ShapedArray"),
    ("io_callback", "f32[2]", dict(callback=3, result_avals=(), ordered=False),
     "io_callback callback must be callable"),
    # collectives
    *[(n, "f32[2]", dict(axis_name=["i"]), r"axis_name must be a hashable axis name, got "
       r"\['i'\]") for n in ("psum", "pmax", "pmin")],
    ("all_gather", "f32[2,3]", dict(axis_name="i", axis_size=4, axis=2, tiled=True),
     r"all_gather axis 2 is out of range for a tiled gather of an operand of shape \(2, 3\)"),
    ("all_gather", "f32[2,3]", dict(axis_name="i", axis_size=4, axis=3),
     r"all_gather axis 3 is out of range for an operand of shape \(2, 3\)"),
    ("axis_index", "", dict(axis_name={}), "axis_index axis_name must be a hashable"),
    ("platform_index", "", dict(platforms=("cpu",)),
     "platform_index platforms must be a tuple of tuples of platform names or None"),
    ("ppermute", "f32[2]", dict(axis_name="i", perm=((0, 1), (1, 1))),
     "ppermute sources and destinations must be unique"),
    ("psum_scatter", "f32[6]", dict(axis_name="i", axis_size=4, tiled=True),
     r"must be divisible by the axis size \(4\) when tiled"),
    ("all_to_all", "f32[3,2]", dict(axis_name="i", axis_size=4, split_axis=0, concat_axis=1),
     r"the split axis \(3\) must equal the axis size \(4\) when not tiled"),
    ("pvary", "f32[2]", dict(axes="i"), "pvary axes must be a tuple of axis names"),
    ("psum_invariant", "f32[2]", dict(axes=["i"]), "psum_invariant axes must be a tuple"),
    ("shard_alike", "f32[2] f32[3]", {}, r"shard_alike operands must have one shape, got "
     r"f32\[2\] and f32\[3\]"),
    ("sharding_constraint", "f32[4]", dict(sharding=_Sharding(_Spec("x", "y"))),
     "is only valid for values of rank at least 2"),
    ("custom_partitioning", "f32[3]", dict(call=fn("f32[2]", "f32[2]"), **_CUSTOM_PARTITIONING),
     re.escape("custom_partitioning call_olympuspr takes input types (f32[2],), but was "
               "called with arguments of type (f32[3],)")),
    ("remat_opt", "f32[3]", dict(num_consts=0, num_res=0, fwd_jaxpr=fn("f32[2]", "f32[2]"),
                                 fun_jaxpr_thunk=print),
     re.escape("remat_opt call_olympuspr takes input types (f32[2],)")),
    ("shard_map", "f32[6,3]", dict(olympuspr=fn("f32[2,3]", "f32[2,3]"), mesh=_MESH,
                                   in_specs=(_Spec("x"),), out_specs=(_Spec("x"),),
                                   manual_axes=("x",), check_vma=True),
     r"split 4 ways by P\('x',\), which does not divide it evenly"),
    # custom derivatives and checkpoint
    ("custom_jvp_call", "f32[3]",
     dict(call_olympuspr=fn("f32[2]", "f32[2]"), jvp=print, num_consts=0),
     re.escape("custom_jvp_call call_olympuspr takes input types (f32[2],), but was called "
               "with arguments of type (f32[3],)")),
    ("custom_vjp_call", "f32[2] f32[2]",
     dict(call_olympuspr=fn("f32[2]", "f32[2]"), fwd=print, bwd=print, num_consts=0),
     re.escape("custom_vjp_call call_olympuspr takes input types (f32[2],)")),
    ("custom_lin", "f32[2]", dict(num_res=2, bwd=print, out_avals=(A("f32[2]"),)),
     r"num_res must be an integer in \[0, 1\] .*got 2"),
    ("custom_lin", "f32[2]", dict(num_res=0, bwd=print, out_avals=("f32[2]",)),
     "out_avals must be ShapedArrays"),
    ("name", "f32[2]", dict(name=3), re.escape("name requires a string name, got 3")),
    ("linear_call", "f32[] f32[3]",
     dict(callee=fn("f32[] f32[2]", "f32[2]"), transpose_thunk=print, num_callee_consts=0,
          num_res=1),
     re.escape("linear_call call_olympuspr takes input types (f32[], f32[2]), but was "
               "called with arguments of type (f32[], f32[3])")),
    ("linear_call", "f32[]", dict(callee=fn("f32[]", "f32[]"), transpose_thunk=print,
                                  num_callee_consts=0, num_res=2),
     r"fewer than its 0 consts and 2 residuals"),
    ("linear_call", "f32[]", dict(callee=fn("f32[]", "f32[]"), transpose_thunk=print,
                                  num_callee_consts=-1, num_res=0),
     r"num_callee_consts must be a non-negative integer, got -1"),
    ("linear_call", "f32[]", dict(callee=fn("f32[]", "f32[]"), transpose_thunk=None,
                                  num_callee_consts=0, num_res=0),
     r"transpose_thunk must be callable"),
    ("checkpoint", "i32[2]", dict(call_olympuspr=fn("f32[2]", "f32[2]"), prevent_cse=True),
     re.escape("checkpoint call_olympuspr takes input types (f32[2],), but was called with "
               "arguments of type (i32[2],)")),
    # convolution
    ("conv_general_dilated", "f32[2,3,9,10] i32[4,3,3,3]", _conv(),
     "same dtype, got float32 and int32"),
    ("conv_general_dilated", "f32[2,3,9] f32[4,3,3,3]", _conv(),
     r"same rank .*got shapes \(2, 3, 9\) and \(4, 3, 3, 3\)"),
    ("conv_general_dilated", "f32[2,3,9,10] f32[4,3,3,3]", _conv(strides=(1,)),
     r"window_strides must have 2 entries .*got \(1,\)"),
    ("conv_general_dilated", "f32[2,3,9,10] f32[4,3,3,3]",
     _conv(dn=CDN((0, 1, 2, 2), (0, 1, 2, 3), (0, 1, 2, 3))),
     r"lhs_spec \(0, 1, 2, 2\) must be a permutation of range\(4\)"),
    # windowed reductions
    ("reduce_window_sum", "bool[4]", _window((2,), (1,), ((0, 0),)),
     "reduce_window_sum does not accept dtype bool"),
    *[(n, "f32[4,6]", _window((2,), (1, 1), ((0, 0), (0, 0))),
       r"window_dimensions must have one entry per operand dimension \(2\), got \(2,\)")
      for n in REDUCE_WINDOW_NAMES],
    ("reduce_window_min", "f32[4]", _window((2,), (0,), ((0, 0),)),
     r"window_strides must be positive, got \(0,\)"),
    # linear algebra, fft, top_k
    ("cholesky", "i32[3,3]", {}, "requires a float32, float64, complex64 or complex128 "
                                 "operand, got int32"),
    ("triangular_solve", "f32[3,3] c64[3,3]", dict(left_side=True),
     "same dtype, got float32 and complex64"),
    ("triangular_solve", "f32[3,3] f32[4,5]", dict(left_side=True),
     r"shared dimension .*\(3, 3\) and b has shape \(4, 5\) with left_side=True"),
    ("triangular_solve", "f32[2,3,3] f32[3,3,5]", dict(left_side=True),
     "same batch dimensions"),
    ("lu", "i32[3,3]", {}, "lu requires a float32.*got int32"),
    ("qr", "bool[3,3]", {}, "qr requires a float32.*got bool"),
    ("eigh", "f16[3,3]", {}, "eigh requires a float32.*got float16"),
    ("ffi_call", "f32[2]", dict(_ffi(("f32[2]",)), target_name=3),
     "ffi_call target_name must be a string"),
    ("buffer_callback", "f32[2]", _buffer_cb(("f32[2]",), 2),
     "buffer_callback has 1 operands and 1 results, but its trees hold 2 and 1 leaves"),
    ("buffer_callback", "f32[2]", _buffer_cb(("f32[2]",), 1, callback=3),
     "buffer_callback callback must be callable"),
    ("buffer_callback", "f32[2]", _buffer_cb(("f32[2]",), 1, input_output_aliases=((1, 0),)),
     "buffer_callback alias 1:0 is out of range"),
    ("new_ref", "Ref{f32[3]}", dict(kind=None, memory_space=None),
     "new_ref cannot hold a ref"),
    ("freeze", "f32[3]", {}, "freeze requires a ref operand, got f32"),
    ("get", "f32[3,4] i32[]", dict(indexer=_IDX_ROW), "get requires a ref operand"),
    ("swap", "Ref{f32[3,4]} f32[4] f32[]", dict(indexer=_IDX_ROW),
     "swap index operands must be integers"),
    ("addupdate", "Ref{f32[3,4]} f32[2]", dict(indexer=_IDX_ROW),
     "addupdate takes 1 index operands, got 0"),
    ("svd", "i32[3,4]", {}, "svd requires a float32.*got int32"),
    ("eig", "i32[3,3]", {}, "eig requires a float32.*got int32"),
    ("fft", "c64[8]", dict(fft_type=FftType.RFFT, fft_lengths=(8,)),
     "RFFT requires a float32 or float64 operand, got complex64"),
    ("fft", "f32[8]", dict(fft_type=FftType.FFT, fft_lengths=(8,)),
     "FFT requires a complex64 or complex128 operand, got float32"),
    ("top_k", "f32[5]", dict(k=2.0), "top_k k must be an int, got 2.0"),
    ("ormqr", "f32[5,3] f64[3] f32[5,2]", {}, "ormqr requires a, taus and c of one dtype"),
    ("tridiagonal_solve", "f32[4] f32[3] f32[4] f32[4,2]", {},
     "all diagonal arguments have the same shape"),
    ("tridiagonal_solve", "f32[4] f32[4] f32[4] f32[3,2]", {},
     "leading ndim-1 dimensions of b equal the dimensions of the diagonal arguments"),
    ("symmetric_product", "i32[3,2] i32[3,3]", {}, "two floating matrices of one dtype"),
    ("schur", "i32[3,3]", {}, "schur requires a float32.*got int32"),
    # JAX 0.10.2's words (recorded): abs is the elementwise op refusing 2/4-bit integers
    ("abs", "i4[3]", {}, "abs does not accept dtype int4. Support for narrow-width integers"),
    ("abs", "u2[3]", {}, "abs does not accept dtype uint2"),
    ("top_k", "f32[5]", dict(k=True), "top_k k must be an int, got True"),
    ("device_put", "f32[4]", dict(devices=(None, None), srcs=(None,),
                                  copy_semantics=(ACS.ALWAYS_COPY,)),
     "device_put got 1 operands, 2 devices, 1 srcs"),
    ("tile", "f32[2,3]", dict(reps=(2,)),
     re.escape("reps length must be equal to the ndim of x, got len(reps)=1 and x.ndim=2.")),
    ("stack", "f32[2] i32[2]", dict(axis=0),
     "lax.stack requires arguments to have the same dtypes, got float32, int32."),
    ("mulhi", "f32[2] f32[2]", {}, "mulhi does not accept dtype float32"),
    ("custom_linear_solve", "f32[3]", dict(
        const_lengths=P.LinearSolveTuple(0, 0, 0, 0),
        jaxprs=P.LinearSolveTuple(None, None, fn("f32[2]", "f32[2]"), None)),
     re.escape("solve returns (f32[2],), but b has type (f32[3],).")),
]

#: JAX raises ValueError for these (the split/stack family's argument errors).
VALUE_ERRORS = [
    ("layout_constraint", "f32[4,2]", dict(layout=_Layout((1, 0, 2))),
     re.escape("Length of major_to_minor and the rank of the value should match. Got "
               "major_to_minor=(1, 0, 2) and shape=(4, 2)")),
    ("split", "f32[2,3]", dict(sizes=(1, 1), axis=1),
     re.escape("Sum of sizes 2 must be equal to dimension 1 of the operand shape [2, 3]")),
    ("split", "f32[2,3]", dict(sizes=(-1, 4), axis=1),
     re.escape("Sizes passed to split must be nonnegative, got [-1, 4]")),
    ("stack", "f32[2,3] f32[3]", dict(axis=0),
     re.escape("Cannot stack arrays with different numbers of dimensions: got (2, 3), (3,).")),
    ("stack", "f32[2] f32[3]", dict(axis=0),
     re.escape("All input arrays must have the same shape. Got (2,), (3,).")),
    ("unstack", "f32[]", dict(axis=0), "unstack requires arrays with rank > 0"),
    ("hessenberg", "f32[3,4]", {}, re.escape("must have shape [..., n, n], got shape (3, 4)")),
    ("tridiagonal", "f32[3,4]", {}, "The input to tridiagonal must be a square matrix"),
    ("schur", "f32[3,4]", {}, "The input to schur must be a square matrix"),
    ("ormqr", "f32[5,3] f32[3] f32[4,2]", dict(left=True),
     "ormqr with left=True expects c to have the same number of rows"),
    ("householder_product", "f32[2,3] f32[2]", {},
     "must have at least as many rows as columns"),
    ("lu_pivots_to_permutation", "i32[3]", dict(permutation_size=2),
     "Output permutation size 2 has to exceed the trailing dimension of the pivots"),
    ("symmetric_product", "f32[3,2] f32[2,2]", {}, "symmetric_update expects a rectangular"),
    ("rng_uniform", "f32[] i32[]", dict(shape=(2,)),
     "Arguments to rng_uniform must have identical dtypes, got float32 and int32."),
    ("rng_uniform", "f32[2] f32[]", dict(shape=(2,)),
     re.escape("Arguments to rng_uniform must be scalars; got shapes (2,) and ().")),
]

VALUE_ERRORS += [

    ("todense", "f32[4] i32[5,2]", dict(tree=_BCOOTree((3, 4))), "Invalid data.shape"),
    ("bcoo_todense", "f32[4] i32[5,2]", dict(spinfo=_SP34), "Invalid data.shape"),
    ("bcoo_fromdense", "f32[3,4]", dict(nse=None, n_batch=0, n_dense=0, index_dtype=i32),
     "nse must be specified"),
    ("bcoo_extract", "i32[5,3] f32[3,4]", dict(assume_unique=True), "Invalid indices.shape"),
    ("bcoo_sort_indices", "f32[1,5] i32[3,5,2]", dict(spinfo=_SPB),
     "indices batch dimensions not compatible"),
    ("bcoo_sum_duplicates", "f32[5] i32[5,2]", dict(spinfo=_SP34, nse=None),
     "nse must be specified"),
    ("bcoo_dot_general", "f32[5] i32[5,2,1] f32[4,6]", dict(
        dimension_numbers=_DN1, lhs_spinfo=_SP34, preferred_element_type=None),
     "indices batch dimensions"),
    ("bcoo_dot_general_sampled", "f32[3,2] f32[2,4] i32[5,3]", dict(dimension_numbers=_DN1),
     "Invalid indices.shape"),
    ("bcoo_spdot_general", "f32[5] i32[5,2] f32[5] i32[6,2]", dict(
        lhs_spinfo=_SP34, rhs_spinfo=P.SparseInfo((4, 3)), dimension_numbers=_DN1,
        preferred_element_type=None), "Invalid data.shape"),
    ("bcsr_todense", "f32[5] i32[5] i32[3]", dict(spinfo=_SP34), "indptr shape must match"),
    ("bcsr_fromdense", "f32[3]", dict(nse=5, n_batch=0, n_dense=0, index_dtype=i32),
     "must have 2 sparse dimensions"),
    ("bcsr_extract", "i32[5] i32[3] f32[3,4]", {}, "indptr shape must match"),
    ("bcsr_dot_general", "f32[4] i32[5] i32[4] f32[4]", dict(
        dimension_numbers=_DN1, lhs_spinfo=_SP34, preferred_element_type=None),
     "Invalid data.shape"),
    ("coo_todense", "f32[5] i32[4] i32[5]", dict(spinfo=P.COOInfo((3, 4))),
     "buffer shapes must match"),
    ("coo_fromdense", "f32[3]", dict(nse=5, index_dtype=i32), "expected a matrix"),
    ("coo_matvec", "f32[5] i32[5] i32[5] f32[3]", dict(spinfo=P.COOInfo((3, 4)),
                                                      transpose=False), "shape mismatch"),
    ("coo_matmat", "f32[5] i32[5] i32[5] f32[4]", dict(spinfo=P.COOInfo((3, 4)),
                                                      transpose=False), "2-dimensional"),
    ("csr_todense", "f32[5] i32[5] i32[3]", dict(shape=(3, 4)), "indptr of shape"),
    ("csr_fromdense", "f32[3]", dict(nse=5, index_dtype=i32), "expected a matrix"),
    ("csr_matvec", "f32[5] i32[5] i32[4] f32[3]", dict(shape=(3, 4), transpose=False),
     "shape mismatch"),
    ("csr_matmat", "f32[5] i32[5] i32[4] f32[3]", dict(shape=(3, 4), transpose=False),
     "2-dimensional"),
]

ERRORS += [
    ("bcoo_transpose", "f32[5] i32[5,2]", dict(permutation=(0, 0), spinfo=_SP34),
     "isn't a permutation"),
]

ERRORS += [
    ("regularized_incomplete_beta", "i32[3] i32[3] i32[3]", {},
     "regularized_incomplete_beta does not accept dtype int32 at position 0"),
    ("reduce", "f32[3,4] i32[]", dict(computation=None, jaxpr=_SCALAR2, dimensions=(1,)),
     "reduce operand dtypes should match corresponding initial value dtypes"),
    ("reduce_window", "f32[4,6] f32[2]", dict(jaxpr=_SCALAR2.olympuspr, consts=(),
                                              **_window((2, 3), (2, 1), ((0, 1), (1, 1)),
                                                        (1, 1), (1, 1))),
     r"reduce_window expected init_values to be scalars but init_values have shapes \[\(2,\)\]"),
    ("select_and_gather_add", "f32[3,4] f32[4,3]", dict(_SELECT, base_dilation=(1, 1),
                                                        window_dilation=(1, 1)),
     "tangents and operand shapes must match"),
    ("select_and_scatter_add", "f32[2,4] f32[3,4]", dict(_SELECT, window_strides=(1,)),
     "select_and_scatter_add got inconsistent window_strides and window_dimensions"),
    ("select_and_scatter", "f32[3,4] f32[2,4] f32[]",
     dict(select_jaxpr=None, select_consts=(), scatter_jaxpr=None, scatter_consts=(),
          window_dimensions=(2,), window_strides=(1, 1), padding=((0, 0), (0, 1))),
     "select_and_scatter got inconsistent window_strides"),
    ("cholesky_update", "f32[3,3] f64[3]", {}, "cholesky_update requires arguments of one"),
]
VALUE_ERRORS += [
    ("ragged_all_to_all", "f32[3] f32[4] f32[2] i32[2] i32[2] i32[2]",
     dict(axis_name=("x",), axis_index_groups=None),
     "ragged_all_to_all input_offsets must be integer type."),
    ("ragged_all_to_all", "f32[3] f32[4] i32[2] i32[2] i32[2] i32[1,2]",
     dict(axis_name=("x",), axis_index_groups=None),
     re.escape("ragged_all_to_all recv_sizes must be rank 1 with positive dimension size, "
               "but got shape (1, 2)")),
    ("approx_top_k", "i32[8]", dict(k=3, reduction_dimension=0, recall_target=0.95,
                                    is_max_k=True, reduction_input_size_override=-1,
                                    aggregate_to_topk=True), "operand must be a floating type"),
    ("approx_top_k", "f32[8]", dict(k=9, reduction_dimension=0, recall_target=0.95,
                                    is_max_k=True, reduction_input_size_override=-1,
                                    aggregate_to_topk=True),
     "k must be smaller than the size of reduction_dim 8, got 9"),
    ("reduce", "f32[3,4] f32[2]", dict(computation=None, jaxpr=_SCALAR2, dimensions=(1,)),
     re.escape("reduce found non-scalar initial value: [(2,)]")),
    ("cholesky_update", "f32[3,3] f32[2]", {}, "requires a square matrix and a vector"),
]

ERRORS += [
    ("psend", "f32[3]", dict(axis_name="x", perm=((0, 1),)), "must be a tuple of axis names"),
    ("precv", "f32[3]", dict(out_shape=A("f32[3]"), axis_name=("x",), perm=((0, 1),)),
     "precv requires a token operand"),
    ("scaled_dot", "f32[4,8] f32[8,3] f32[4,8] f32[2,3]",
     dict(dimension_numbers=(((1,), (0,)), ((), ())), preferred_element_type=np.float32),
     r"The ratio of LHS contracting dim 1 to its scale's dim size \(1\) must be at least 2"),
    ("scaled_dot", "f32[4,8] f32[8] f32[4,2] f32[2]",
     dict(dimension_numbers=(((1,), (0,)), ((), ())), preferred_element_type=np.float32),
     "All input tensors must have the same rank"),
]

#: Primitives no operands can make fail, with the reason.
NO_ERROR_CASE = {"optimization_barrier": "the identity on any operands",
                 "composite": "its result types are its olympuspr's",
                 "dce_sink": "no results, any operand",
                 "xla_metadata_value": "the identity on any operand",
                 "create_token": "ignores its operands"}
#: Primitives whose types are not arrays, checked by their own tests below.
TOKEN_PRIMITIVES = {"create_token", "after_all", "psend", "precv"}


@pytest.mark.parametrize("name,ins,params,match", ERRORS, ids=_ids(ERRORS))
def test_error_path(name, ins, params, match):
    with pytest.raises(TypeError, match=match):
        abstract_eval(primitives_by_name[name], *As(ins) if ins else (), **params)


@pytest.mark.parametrize("name,ins,params,match", VALUE_ERRORS, ids=_ids(VALUE_ERRORS))
def test_value_error_path(name, ins, params, match):
    with pytest.raises(ValueError, match=match):
        abstract_eval(primitives_by_name[name], *As(ins) if ins else (), **params)


def test_every_primitive_is_covered():
    assert set(primitives_by_name.values()) <= set(shape_rules), "primitive without shape rule"
    happy = set(ELEMENTWISE) | {c[0] for c in HAPPY} | TOKEN_PRIMITIVES
    errors = ({n for n, v in ELEMENTWISE.items()} | {c[0] for c in ERRORS + VALUE_ERRORS}
              | set(NO_ERROR_CASE) | TOKEN_PRIMITIVES)
    assert not set(primitives_by_name) - happy, "primitives without a happy-path case"
    assert not set(primitives_by_name) - errors, "primitives without an error case"
    assert not (happy | errors) - set(primitives_by_name), "cases for unknown primitives"


def test_one_sided_collectives_send_and_receive_tokens():
    """psend gives a token; precv takes one and gives its `out_shape`."""
    from olympus_ir.avals import abstract_token

    tok = abstract_eval(primitives_by_name["psend"], A("f32[3]"), axis_name=("x",),
                        perm=((0, 1),))
    assert tok == abstract_token
    out = abstract_eval(primitives_by_name["precv"], tok, out_shape=A("f32[2,3]"),
                        axis_name=("x",), perm=((0, 1),))
    assert out == A("f32[2,3]")


def test_token_shape_rules():
    """create_token ignores its operands; after_all takes tokens only (JAX's message); both
    give the token type, printed ``Tok`` as JAX prints it."""
    from olympus_ir.avals import AbstractToken, abstract_token

    assert abstract_eval(P.create_token_p) is abstract_token
    assert abstract_eval(P.create_token_p, A("f32[3]")) is abstract_token
    assert abstract_eval(P.after_all_p, abstract_token, abstract_token) is abstract_token
    assert abstract_eval(P.after_all_p) is abstract_token
    with pytest.raises(TypeError, match="^Arguments to after_all must be tokens$"):
        abstract_eval(P.after_all_p, abstract_token, A("f32[]"))
    assert abstract_token.str_short() == "Tok" and repr(abstract_token) == "AbstractToken()"
    assert AbstractToken() == abstract_token and hash(AbstractToken()) == hash(abstract_token)


#: Primitives whose Python name is not ``<name>_p`` (JAX's names for them).
PYTHON_NAMES = {"custom_linear_solve": "linear_solve_p"}


def test_primitive_python_names():
    for name, p in primitives_by_name.items():
        assert getattr(P, PYTHON_NAMES.get(name, f"{name}_p")) is p
    assert P.while_p.name == "while" and P.while_p.multiple_results


# --- comparisons against numpy --------------------------------------------------------------

@pytest.mark.parametrize("lhs,rhs,dn,spec", [
    ((2, 3), (3, 4), (((1,), (0,)), ((), ())), "ij,jk->ik"),
    ((5, 2, 3), (5, 3, 4), (((2,), (1,)), ((0,), (0,))), "bij,bjk->bik"),
    ((2, 5, 3), (4, 3, 5), (((2,), (1,)), ((1,), (2,))), "ibj,kjb->bik"),
    ((2,), (3,), (((), ()), ((), ())), "i,j->ij"),
    ((2, 3, 4), (4, 3), (((1, 2), (1, 0)), ((), ())), "ijk,kj->i"),
])
def test_dot_general_matches_einsum(lhs, rhs, dn, spec):
    out = abstract_eval(P.dot_general_p, ShapedArray(lhs, f32), ShapedArray(rhs, f32),
                        dimension_numbers=dn)
    assert out.shape == np.einsum(spec, np.ones(lhs), np.ones(rhs)).shape


@pytest.mark.parametrize("shape,start,limit,strides", [
    ((5, 6), (1, 0), (4, 6), (2, 3)),
    ((7,), (0,), (7,), (3,)),
    ((4, 4), (2, 1), (2, 4), None),
])
def test_slice_matches_numpy(shape, start, limit, strides):
    out = abstract_eval(P.slice_p, ShapedArray(shape, f32), start_indices=start,
                        limit_indices=limit, strides=strides)
    st = strides or (1,) * len(shape)
    idx = tuple(slice(a, b, s) for a, b, s in zip(start, limit, st, strict=True))
    assert out.shape == np.ones(shape)[idx].shape


@pytest.mark.parametrize("shape,config", [
    ((2, 3), ((1, 2), (0, 1))),
    ((4,), ((0, 0),)),
    ((1, 2, 3), ((3, 0), (0, 0), (2, 2))),
])
def test_pad_matches_numpy(shape, config):
    out = abstract_eval(P.pad_p, ShapedArray(shape, f32), ShapedArray((), f32),
                        padding_config=tuple((lo, hi, 0) for lo, hi in config))
    assert out.shape == np.pad(np.ones(shape), config).shape


@pytest.mark.parametrize("shape,perm", [((2, 3, 4), (2, 0, 1)), ((5,), (0,)), ((), ())])
def test_transpose_and_reshape_match_numpy(shape, perm):
    x = np.ones(shape)
    out = abstract_eval(P.transpose_p, ShapedArray(shape, f32), permutation=perm)
    assert out.shape == np.transpose(x, perm).shape
    out = abstract_eval(P.reshape_p, ShapedArray(shape, f32), new_sizes=(x.size,))
    assert out.shape == x.reshape(-1).shape


def test_gather_matches_numpy_fancy_indexing():
    x, idx = np.ones((5, 6)), np.zeros((4, 2), int)
    op = ShapedArray(x.shape, f32)
    # x[idx]: gather whole rows
    dn = _gdn((2,), (0,), (0,))
    out = abstract_eval(P.gather_p, op, ShapedArray((4, 2, 1), i32), **_gather(dn, (1, 6)))
    assert out.shape == x[idx].shape
    # x[:, idx]: gather columns, the batch dims land where the collapsed dim was
    dn = _gdn((0,), (1,), (1,))
    out = abstract_eval(P.gather_p, op, ShapedArray((4, 2, 1), i32), **_gather(dn, (5, 1)))
    assert out.shape == (5, 4, 2) == x[:, idx].shape
    # x[i, j]: point gather with a stacked index vector
    dn = _gdn((), (0, 1), (0, 1))
    out = abstract_eval(P.gather_p, op, ShapedArray((4, 2, 2), i32), **_gather(dn, (1, 1)))
    assert out.shape == x[idx, idx].shape
    # a window that is not collapsed: x[i:i+2] for each i
    dn = _gdn((1, 2), (), (0,))
    out = abstract_eval(P.gather_p, op, ShapedArray((7, 1), i32), **_gather(dn, (2, 6)))
    assert out.shape == (7, 2, 6)


@pytest.mark.parametrize("shape,mode", [((5, 3), "complete"), ((5, 3), "reduced"),
                                        ((3, 5), "complete"), ((2, 3, 5), "reduced")])
def test_qr_matches_numpy(shape, mode):
    q, r = abstract_eval(P.qr_p, ShapedArray(shape, f32), full_matrices=mode == "complete")
    nq, nr = np.linalg.qr(np.ones(shape, np.float32), mode=mode)
    assert (q.shape, r.shape) == (nq.shape, nr.shape)


@pytest.mark.parametrize("shape,full", [((4, 6), True), ((6, 4), False), ((2, 3, 5), True),
                                        ((2, 5, 3), False)])
def test_svd_matches_numpy(shape, full):
    x = np.ones(shape, np.complex64)
    s, u, vt = abstract_eval(P.svd_p, ShapedArray(shape, x.dtype), full_matrices=full)
    nu, ns, nvt = np.linalg.svd(x, full_matrices=full)
    assert (s.shape, u.shape, vt.shape) == (ns.shape, nu.shape, nvt.shape)
    assert (s.dtype, u.dtype, vt.dtype) == (ns.dtype, nu.dtype, nvt.dtype)
    (s_only,) = abstract_eval(P.svd_p, ShapedArray(shape, x.dtype), compute_uv=False)
    assert s_only.shape == np.linalg.svd(x, compute_uv=False).shape


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_eigh_lu_cholesky_match_numpy(shape):
    x = np.eye(shape[-1], dtype=np.complex64) * np.ones(shape, np.complex64)
    v, w = abstract_eval(P.eigh_p, ShapedArray(shape, x.dtype))
    nw, nv = np.linalg.eigh(x)
    assert (v.shape, v.dtype, w.shape, w.dtype) == (nv.shape, nv.dtype, nw.shape, nw.dtype)
    assert abstract_eval(P.cholesky_p, ShapedArray(shape, x.dtype)).shape == \
        np.linalg.cholesky(x).shape
    b = np.ones(shape[:-1] + (2,), np.complex64)
    out = abstract_eval(P.triangular_solve_p, ShapedArray(shape, x.dtype),
                        ShapedArray(b.shape, b.dtype), left_side=True, lower=True)
    assert out.shape == np.linalg.solve(x, b).shape


@pytest.mark.parametrize("shape,kind,lengths,ref", [
    ((2, 8), FftType.FFT, (8,), lambda x: np.fft.fft(x)),
    ((3, 4, 8), FftType.IFFT, (4, 8), lambda x: np.fft.ifft2(x)),
    ((3, 8), FftType.RFFT, (8,), lambda x: np.fft.rfft(x)),
    ((2, 4, 6, 8), FftType.RFFT, (4, 6, 8), lambda x: np.fft.rfftn(x, axes=(1, 2, 3))),
    ((3, 4, 5), FftType.IRFFT, (4, 8), lambda x: np.fft.irfft2(x, s=(4, 8))),
    ((3, 5), FftType.IRFFT, (9,), lambda x: np.fft.irfft(x, n=9)),
])
def test_fft_matches_numpy(shape, kind, lengths, ref):
    dt = np.dtype(np.float32) if kind == FftType.RFFT else np.dtype(np.complex64)
    out = abstract_eval(P.fft_p, ShapedArray(shape, dt), fft_type=kind, fft_lengths=lengths)
    r = ref(np.ones(shape, dt))
    assert out.shape == r.shape
    # numpy computes in double precision; olympus keeps the operand's precision
    assert dtypes.is_complex(out.dtype) == np.iscomplexobj(r)


@pytest.mark.parametrize("shape,window,strides,padding", [
    ((4, 6), (2, 3), (2, 1), ((0, 1), (1, 1))),
    ((7,), (3,), (2,), ((0, 0),)),
    ((5, 5, 2), (5, 1, 2), (1, 2, 1), ((2, 2), (0, 0), (0, 0))),
])
def test_reduce_window_matches_numpy(shape, window, strides, padding):
    out = abstract_eval(P.reduce_window_sum_p, ShapedArray(shape, f32),
                        **_window(window, strides, padding))
    v = np.lib.stride_tricks.sliding_window_view(np.pad(np.ones(shape), padding), window)
    v = v[tuple(slice(None, None, s) for s in strides)]
    assert out.shape == v.shape[:len(shape)]


def test_top_k_matches_numpy_sort():
    x = np.ones((3, 7), np.float32)
    vals, idx = abstract_eval(P.top_k_p, ShapedArray(x.shape, f32), k=2)
    assert vals.shape == idx.shape == np.sort(x, axis=-1)[..., ::-1][..., :2].shape


def test_gather_scatter_mode_from_any():
    M = GatherScatterMode
    assert M.from_any(None) is M.FILL_OR_DROP
    assert M.from_any("fill") is M.from_any("drop") is M.FILL_OR_DROP
    assert M.from_any("clip") is M.CLIP
    assert M.from_any("promise_in_bounds") is M.PROMISE_IN_BOUNDS
    assert M.from_any(M.CLIP) is M.CLIP
    assert str(M.CLIP) == "GatherScatterMode.CLIP"
    with pytest.raises(ValueError, match="wrap"):
        M.from_any("wrap")


def test_enum_and_dimension_numbers_printing():
    assert str(RandomAlgorithm.RNG_THREE_FRY) == "RandomAlgorithm.RNG_THREE_FRY"
    assert int(RandomAlgorithm.RNG_PHILOX) == 2
    assert GDN((1,), (0,), (0,)).operand_batching_dims == ()
    assert SDN((1,), (0,), (0,)).scatter_indices_batching_dims == ()


# --- eig: complex outputs (eigenvalues, then the left and right eigenvectors when asked
# for), batch dimensions kept, clear errors for bad operands ---------------------------------

_EIG_COMPLEX = {np.float32: np.complex64, np.float64: np.complex128,
            np.complex64: np.complex64, np.complex128: np.complex128}


@pytest.mark.parametrize("dt", list(_EIG_COMPLEX), ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (4, 4), (2, 3, 3), (2, 0, 5, 5)])
def test_eig_outputs_match_numpy_shapes_and_are_complex(dt, shape):
    x = ShapedArray(shape, np.dtype(dt))
    w, vl, vr = abstract_eval(P.eig_p, x, compute_left_eigenvectors=True,
                              compute_right_eigenvectors=True)
    want = np.dtype(_EIG_COMPLEX[dt])
    assert (w.shape, w.dtype) == (shape[:-1], want)
    assert (vl.shape, vl.dtype) == (shape, want)
    assert (vr.shape, vr.dtype) == (shape, want)
    # numpy agrees on the shapes (its dtype is real when every eigenvalue is real)
    if 0 not in shape:
        nw, nv = np.linalg.eig(np.ones(shape, dt))
        assert (w.shape, vr.shape) == (nw.shape, nv.shape)


@pytest.mark.parametrize("left,right,n_out", [(True, True, 3), (True, False, 2),
                                              (False, True, 2), (False, False, 1)])
def test_eig_optional_eigenvectors(left, right, n_out):
    outs = abstract_eval(P.eig_p, ShapedArray((3, 5, 5), np.dtype(np.float64)),
                         compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    assert len(outs) == n_out
    assert outs[0].shape == (3, 5)
    assert all(o.shape == (3, 5, 5) and o.dtype == np.complex128 for o in outs[1:])


def test_eig_defaults_compute_both():
    outs = abstract_eval(P.eig_p, ShapedArray((2, 2), np.dtype(np.float32)))
    assert [o.shape for o in outs] == [(2,), (2, 2), (2, 2)]


@pytest.mark.parametrize("shape,match", [
    ((2, 3), r"eig requires square matrices, got shape \(2, 3\)"),
    ((4, 3, 2), r"eig requires square matrices, got shape \(4, 3, 2\)"),
    ((3,), r"eig requires an operand of rank >= 2 .*got shape \(3,\)"),
])
def test_eig_non_square_or_vector_operand_is_a_value_error(shape, match):
    with pytest.raises(ValueError, match=match):
        abstract_eval(P.eig_p, ShapedArray(shape, np.dtype(np.float32)))


@pytest.mark.parametrize("dt", [np.int32, np.float16, np.bool_])
def test_eig_unsupported_dtype_names_it(dt):
    with pytest.raises(TypeError, match=f"eig requires a float32, float64, complex64 or "
                                        f"complex128 operand, got {np.dtype(dt).name}"):
        abstract_eval(P.eig_p, ShapedArray((3, 3), np.dtype(dt)))


def test_eig_non_bool_flag_is_rejected():
    with pytest.raises(TypeError, match="compute_right_eigenvectors must be a bool, got 'yes'"):
        abstract_eval(P.eig_p, ShapedArray((3, 3), np.dtype(np.float32)),
                      compute_right_eigenvectors="yes")


def test_eig_is_a_lapack_primitive_with_multiple_results():
    from olympus_ir.prims.linalg_lapack import LINALG_LAPACK

    assert P.eig_p in LINALG_LAPACK
    assert P.eig_p.multiple_results and P.eig_p.name == "eig"


# --- dot_general's precision parameter ------------------------------------------------------


_PRECISION_ERROR_HEAD = "Precision argument must be one of:\n- None,\n- a string in ["


@pytest.mark.parametrize("given,want", [
    (None, None),
    (Precision.HIGHEST, (Precision.HIGHEST, Precision.HIGHEST)),
    ("highest", (Precision.HIGHEST, Precision.HIGHEST)),
    ("float32", (Precision.HIGHEST, Precision.HIGHEST)),
    ("tensorfloat32", (Precision.HIGH, Precision.HIGH)),
    ("bfloat16_3x", (Precision.HIGH, Precision.HIGH)),
    ("fastest", (Precision.DEFAULT, Precision.DEFAULT)),
    (("highest", "high"), (Precision.HIGHEST, Precision.HIGH)),
    ((Precision.HIGH, Precision.DEFAULT), (Precision.HIGH, Precision.DEFAULT)),
])
def test_canonicalize_precision(given, want):
    """The forms and results reference JAX 0.10.2 gives for dot_general's param."""
    assert canonicalize_precision(given) == want


@pytest.mark.parametrize("bad", ["foo", 3, (1, 2, 3), (Precision.HIGH, "bfloat16")])
def test_canonicalize_precision_rejects(bad):
    """JAX 0.10.2 raises ValueError with this message, ending ``but got <value>.``, for
    each of these (recorded from reference JAX, mixed tuple included)."""
    with pytest.raises(ValueError) as e:
        canonicalize_precision(bad)
    msg = str(e.value)
    assert msg.startswith(_PRECISION_ERROR_HEAD) and msg.endswith(f"but got {bad}.")
    assert ("'highest', 'float32', 'high', 'bfloat16_3x', 'tensorfloat32', 'default', "
            "'bfloat16', 'fastest', None]") in msg


def test_precision_enum_forms():
    assert [p.name for p in Precision] == ["DEFAULT", "HIGH", "HIGHEST"]
    assert repr(Precision.HIGHEST) == "Precision.HIGHEST" and str(Precision.HIGH) == "HIGH"
    assert Precision("bfloat16_3x") is Precision.HIGH and Precision(2) is Precision.HIGHEST
    with pytest.raises(ValueError):
        Precision("ultra")


def test_call_exported_mismatch_messages_are_jax():
    """ValueErrors worded as JAX 0.10.2's (recorded with jax.export)."""
    exp = _exported("f32[2,3] f32[2,3]", "f32[2,3]")
    p = P.call_exported_p
    with pytest.raises(ValueError, match=re.escape(
            "Shape mismatch for args[0].shape[1] (expected same constant): expected (2, 3) "
            "and called with (2, 4)")):
        abstract_eval(p, A("f32[2,4]"), A("f32[2,3]"), exported=exp)
    with pytest.raises(ValueError, match=re.escape(
            "Rank mismatch for args[1]: expected (2, 3) and called with (2,)")):
        abstract_eval(p, A("f32[2,3]"), A("f32[2]"), exported=exp)
    with pytest.raises(ValueError, match=re.escape(
            "Dtype mismatch for args[0]: expected float32 and called with int32")):
        abstract_eval(p, A("i32[2,3]"), A("f32[2,3]"), exported=exp)
    # float0 (an exported VJP's cotangent of an integer) travels as bool
    f0 = _exported("f32[2]", "f32[2]")
    f0.in_avals = (ShapedArray((2,), dtypes.float0),)
    f0.out_avals = (ShapedArray((), dtypes.float0),)
    [out] = abstract_eval(p, A("bool[2]"), exported=f0)
    assert same(out, A("bool[]"))

def test_device_put_moves_values_between_memory_spaces():
    x = ShapedArray((4,), np.float32)
    host = abstract_eval(P.device_put_p, x, devices=(MemorySpace.Host,), srcs=(None,),
                         copy_semantics=(ACS.ALWAYS_COPY,))[0]
    assert host.memory_space is MemorySpace.Host and host.str_short() == "f32<host>[4]"
    assert host != x and host == x.update(memory_space=MemorySpace.Host)
    assert repr(host) == "ShapedArray(float32<host>[4])"

    class _PinnedSharding:  # a sharding-like target: only its memory kind matters
        memory_kind = "pinned_host"

    assert abstract_eval(P.device_put_p, x, devices=(_PinnedSharding(),), srcs=(None,),
                         copy_semantics=(ACS.REUSE_INPUT,))[0] == host
    back = abstract_eval(P.device_put_p, host, devices=(MemorySpace.Device,), srcs=(None,),
                         copy_semantics=(ACS.ALWAYS_COPY,))[0]
    assert back == x and repr(ACS.ALWAYS_COPY) == "ArrayCopySemantics.ALWAYS_COPY"
    # A device (or None) keeps the memory space.
    assert abstract_eval(P.device_put_p, host, devices=(None,), srcs=(None,),
                         copy_semantics=(ACS.REUSE_INPUT,))[0] == host


def test_conv_feature_mismatch_is_jax_0_10_2s_value_error():
    with pytest.raises(ValueError, match=r"feature dimension size divided by "
                                         r"feature_group_count .* but 3 // 1 != 2"):
        abstract_eval(primitives_by_name["conv_general_dilated"],
                      *As("f32[2,3,9,10] f32[4,2,3,3]"), **_conv())
