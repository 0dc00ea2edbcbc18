"""Every batching rule, checked against a Python loop over the batch.

Each case applies one primitive (by `bind`, so exactly that primitive is exercised) under
``olympus.vmap`` with some `in_axes`/`out_axes` and compares with calling the unbatched
function on each batch member and stacking the results. Cases record which primitives they
exercise; `test_every_primitive_has_a_checked_rule` fails when a primitive has no rule or no
case. The olympusprs of common batched programs are checked for gratuitous transposes.
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.core import primitives_by_name
from olympus_ir.prims.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from olympus_ir.prims.random import RandomAlgorithm
from olympus_trace import tree_util
from olympus_trace.batching import batching_rules
from olympus_trace.core import bind

RNG = np.random.default_rng(0)


# --- the check ------------------------------------------------------------------------------


def _take(a, i, ax):
    return a if ax is None else np.take(np.asarray(a), i, axis=ax)


# XLA's cheaper optimization level: compiling dominates this file's run time, and the
# batched program and the per-member one are compiled alike.
_FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def _compiled(f, args):
    return olympus.jit(f).lower(*args).compile(_FAST_COMPILE)


def check_vmap(f, args, in_axes=0, out_axes=0, *, jit=True, rtol=2e-6, atol=1e-6):
    """``vmap(f, in_axes, out_axes)(*args)`` equals looping `f` over the batch."""
    ia = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    sizes = {np.shape(a)[ax] for a, ax in zip(args, ia, strict=True) if ax is not None}
    assert len(sizes) == 1, sizes
    (n,) = sizes
    vf = olympus.vmap(f, in_axes=in_axes, out_axes=out_axes)
    got = _compiled(vf, args)(*args) if jit else vf(*args)
    members = [[_take(a, i, ax) for a, ax in zip(args, ia, strict=True)] for i in range(n)]
    fj = _compiled(f, members[0])
    per = [fj(*m) for m in members]
    got_leaves = tree_util.tree_leaves(got)
    per_leaves = [tree_util.tree_leaves(p) for p in per]
    oa = tree_util.tree_leaves(out_axes, is_leaf=lambda a: a is None)
    oa = oa if isinstance(out_axes, (tuple, list)) else oa * len(got_leaves)
    assert len(oa) == len(got_leaves)
    for j, (g, ax) in enumerate(zip(got_leaves, oa, strict=True)):
        g = np.asarray(g)
        if ax is None:
            want = np.asarray(per_leaves[0][j])
            for p in per_leaves[1:]:
                np.testing.assert_array_equal(np.asarray(p[j]), want)
        else:
            want = np.stack([np.asarray(p[j]) for p in per_leaves], axis=ax)
        assert g.shape == want.shape, (j, g.shape, want.shape)
        assert g.dtype == want.dtype, (j, g.dtype, want.dtype)
        if dtypes.is_inexact(g.dtype):
            np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, err_msg=f"output {j}")
        else:
            np.testing.assert_array_equal(g, want, err_msg=f"output {j}")
    return got


def prim(name):
    p = primitives_by_name[name]
    return lambda *args, **params: bind(p, *args, **params)


# --- cases: (ids, primitives exercised, f, args, in_axes, out_axes) ------------------------

CASES: list = []


def case(prims, f, args, in_axes=0, out_axes=0, id=None, **kw):
    prims = (prims,) if isinstance(prims, str) else tuple(prims)
    CASES.append(pytest.param(prims, f, args, in_axes, out_axes, kw,
                              id=id or f"{'+'.join(prims)}-{len(CASES)}"))


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def randint(*shape, lo=-5, hi=6, dtype=np.int32):
    return RNG.integers(lo, hi, shape).astype(dtype)


def uniform(lo, hi, *shape):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


# elementwise unary: name -> (operand generator, params)
_F = lambda *s: randn(*s)  # noqa: E731
UNARY = {
    "neg": (_F, {}), "sign": (_F, {}), "floor": (_F, {}), "ceil": (_F, {}),
    "round": (_F, {"rounding_method": 1}), "exp": (_F, {}), "exp2": (_F, {}),
    "log": (lambda *s: uniform(0.1, 3, *s), {}), "log1p": (lambda *s: uniform(-0.5, 3, *s), {}),
    "expm1": (_F, {}), "tanh": (_F, {}), "logistic": (_F, {}), "sin": (_F, {}), "cos": (_F, {}),
    "tan": (lambda *s: uniform(-1, 1, *s), {}), "asin": (lambda *s: uniform(-0.9, 0.9, *s), {}),
    "acos": (lambda *s: uniform(-0.9, 0.9, *s), {}), "atan": (_F, {}), "sinh": (_F, {}),
    "cosh": (_F, {}), "asinh": (_F, {}), "acosh": (lambda *s: uniform(1.1, 4, *s), {}),
    "atanh": (lambda *s: uniform(-0.9, 0.9, *s), {}), "sqrt": (lambda *s: uniform(0, 4, *s), {}),
    "rsqrt": (lambda *s: uniform(0.1, 4, *s), {}), "cbrt": (_F, {}), "square": (_F, {}),
    "erf": (_F, {}), "erfc": (_F, {}), "erf_inv": (lambda *s: uniform(-0.9, 0.9, *s), {}),
    "lgamma": (lambda *s: uniform(0.1, 4, *s), {}), "digamma": (lambda *s: uniform(0.1, 4, *s), {}),
    "abs": (_F, {}), "copy": (_F, {}), "stop_gradient": (_F, {}),
    "real": (lambda *s: (randn(*s) + 1j * randn(*s)).astype(np.complex64), {}),
    "imag": (lambda *s: (randn(*s) + 1j * randn(*s)).astype(np.complex64), {}),
    "conj": (lambda *s: (randn(*s) + 1j * randn(*s)).astype(np.complex64), {}),
    "not": (lambda *s: randint(*s), {}), "population_count": (lambda *s: randint(*s), {}),
    "clz": (lambda *s: randint(*s, lo=0, hi=1000), {}),
    "integer_pow": (_F, {"y": 3}), "reduce_precision": (_F, {"exponent_bits": 5,
                                                             "mantissa_bits": 10}),
    "is_finite": (lambda *s: np.where(randn(*s) > 0.5, np.inf, randn(*s)).astype(np.float32),
                  {}),
}
assert set(UNARY) == {p.name for p in P.UNARY}
# One rule serves every elementwise primitive: each is checked once, several per case (one
# compiled program), the configurations (batch axis, out axis, rank) alternating.


def _unary_group(names, shape, in_axes, out_axes, tag):
    fs = [(lambda nm: lambda x: prim(nm)(x, **UNARY[nm][1]))(n) for n in names]
    args = [UNARY[n][0](*shape) for n in names]
    case(tuple(names), lambda *xs: tuple(f(x) for f, x in zip(fs, xs, strict=True)), args, in_axes,
         out_axes, id=f"unary-{tag}")


_names = list(UNARY)
for _k in range(0, len(_names), 8):
    if _k // 8 % 2:
        _unary_group(_names[_k:_k + 8], (4,), 0, 0, f"scalar-members-{_k}")
    else:
        _unary_group(_names[_k:_k + 8], (2, 5, 3), 1, -1, f"axis1-out-1-{_k}")
# several dtypes through one rule
for _dt in (np.int8, np.int32, np.uint16, np.float16, dtypes.bfloat16):
    case("neg", lambda x: prim("neg")(x), [randint(3, 4, lo=0, hi=9).astype(_dt)], -1, 0,
         id=f"neg-{np.dtype(_dt).name}")

_POS = lambda *s: uniform(0.5, 3, *s)  # noqa: E731
_SHIFT = lambda *s: randint(*s, lo=0, hi=31)  # noqa: E731
BINARY = {
    "add": (_F, _F), "add_any": (_F, _F), "sub": (_F, _F), "mul": (_F, _F), "div": (_F, _POS),
    "rem": (_F, _POS),
    "pow": (_POS, _F), "max": (_F, _F), "min": (_F, _F), "atan2": (_F, _F),
    "nextafter": (_F, _F), "and": (randint, randint), "or": (randint, randint),
    "xor": (randint, randint), "mulhi": (randint, randint), "shift_left": (randint, _SHIFT),
    "shift_right_arithmetic": (randint, _SHIFT), "shift_right_logical": (randint, _SHIFT),
    "complex": (_F, _F), "eq": (randint, randint), "ne": (randint, randint),
    "lt": (_F, _F), "le": (randint, randint), "gt": (_F, _F), "ge": (_F, _F),
    "eq_to": (_F, _F), "le_to": (_F, _F), "lt_to": (randint, randint),
}
assert set(BINARY) == {p.name for p in (*P.BINARY, *P.COMPARISONS)}
_BINARY_CONFIGS = [  # (lhs shape, rhs shape, in_axes, out_axes)
    ((4, 3), (4, 3), 0, 0), ((3, 4), (3,), (1, None), 0), ((), (2, 3, 4), (None, -1), 1),
    ((4,), (2, 4), (0, 1), 0)]
_names = list(BINARY)
for _c, (_s1, _s2, _ia, _oa) in enumerate(_BINARY_CONFIGS):
    _group = _names[_c::len(_BINARY_CONFIGS)]
    _fs = [(lambda nm: lambda x, y: prim(nm)(x, y))(n) for n in _group]
    _args = [g(*sh) for n in _group for g, sh in zip(BINARY[n], (_s1, _s2), strict=True)]
    _ia_all = _ia if not isinstance(_ia, tuple) else _ia * len(_group)
    case(tuple(_group), (lambda fs: lambda *a: tuple(f(a[2 * i], a[2 * i + 1])
                                                     for i, f in enumerate(fs)))(_fs),
         _args, _ia_all, _oa, id=f"binary-config{_c}")
# the special functions (elementwise, lowered through their decompositions): one program
case(("igamma", "igammac", "igamma_grad_a", "polygamma", "zeta", "regularized_incomplete_beta",
      "bessel_i0e", "bessel_i1e"),
     lambda a, x, u: (prim("igamma")(a, x), prim("igammac")(a, x), prim("igamma_grad_a")(a, x),
                      prim("polygamma")(np.float32(2.0), x), prim("zeta")(a + 1, x),
                      prim("regularized_incomplete_beta")(a, x, u), prim("bessel_i0e")(x),
                      prim("bessel_i1e")(u)),
     [_POS(4, 3), _POS(3, 4), uniform(0.1, 0.9, 3)], (0, 1, None), 1, id="special")
# integer division and remainder (truncation), bool logic
case("div", lambda x, y: prim("div")(x, y), [randint(4, 3), randint(3, lo=1, hi=4)], (0, None))
case("name", lambda x: prim("name")(x, name="n"), [randn(3, 4)], 1, 0)
case("stage", lambda x: prim("stage")(x), [randn(3, 4)], 1, 0)
case("rem", lambda x, y: prim("rem")(x, y), [randint(4, 3), randint(3, 4, lo=1, hi=4)], (0, 1))
case("and", lambda x, y: prim("and")(x, y), [randn(4, 3) > 0, randn(3, 4) > 0], (0, 1))

# --- conversions, select, clamp -------------------------------------------------------------
case("convert_element_type",
     lambda x: prim("convert_element_type")(x, new_dtype=np.dtype(np.int32), weak_type=False),
     [randn(3, 4) * 10], 1)
case("convert_element_type",
     lambda x: prim("convert_element_type")(x, new_dtype=np.dtype(np.float32), weak_type=False),
     [randn(4) > 0], 0)
case("bitcast_convert_type",
     lambda x: prim("bitcast_convert_type")(x, new_dtype=np.dtype(np.int32)), [randn(3, 4)], 1)
case("bitcast_convert_type",  # adds a trailing dimension
     lambda x: prim("bitcast_convert_type")(x, new_dtype=np.dtype(np.uint16)), [randn(3, 4)],
     -1, 1)
case("bitcast_convert_type",  # consumes the trailing dimension, where the batch dim sits
     lambda x: prim("bitcast_convert_type")(x, new_dtype=np.dtype(np.float32)),
     [randint(3, 2, 4, lo=0, hi=60000, dtype=np.uint16)], -1)
_sel = prim("select_n")
case("select_n", lambda p, a, b: _sel(p, a, b), [randn(4, 3) > 0, randn(3), randn(3)],
     (0, None, None))
case("select_n", lambda p, a, b: _sel(p, a, b), [randn(4) > 0, randn(3), randn(3, 4)],
     (0, None, 1), id="select_n-batched-scalar-pred")
case("select_n", lambda p, a, b: _sel(p, a, b), [np.bool_(True), randn(3, 4), randn(3)],
     (None, 1, None))
case("select_n", lambda p, a, b, c: _sel(p, a, b, c),
     [randint(4, 2, lo=0, hi=3), randn(2, 4), randn(2), randn(4, 2)], (0, 1, None, 0))
case("select_n", lambda p, a, b: _sel(p, a, b), [randn(4) > 0, np.float32(1), np.float32(2)],
     (0, None, None), id="select_n-scalar-cases")
_clamp = prim("clamp")
case("clamp", lambda lo, x, hi: _clamp(lo, x, hi), [randn(4), randn(3), np.float32(1)],
     (0, None, None))
case("clamp", lambda lo, x, hi: _clamp(lo, x, hi), [randn(3) - 1, randn(3, 4), randn(4) + 1],
     (None, 1, 0))
case("clamp", lambda lo, x, hi: _clamp(lo, x, hi), [np.float32(-1), randn(4), np.float32(0.5)],
     (None, 0, None))
case("iota", lambda x: x + prim("iota")(dtype=np.dtype(np.float32), shape=(3,), dimension=0,
                                          sharding=None), [randn(4, 3)])

# --- shape ops -----------------------------------------------------------------------------
_bid = prim("broadcast_in_dim")
case("broadcast_in_dim",
     lambda x: _bid(x, shape=(2, 3, 4), broadcast_dimensions=(1,), sharding=None), [randn(5, 3)])
case("broadcast_in_dim",
     lambda x: _bid(x, shape=(3, 5), broadcast_dimensions=(0, 1), sharding=None),
     [randn(3, 4, 1)], 1, -1)
case("broadcast_in_dim",
     lambda x: _bid(x, shape=(2, 3), broadcast_dimensions=(), sharding=None), [randn(4)], 0, 1)
_rs = prim("reshape")
for _shape, _new, _ax in (((4, 2, 6), (3, 4), 0), ((2, 4, 6), (2, 2, 3), 1),
                          ((2, 4, 6), (12,), 1), ((2, 3, 4), (6,), 2)):
    case("reshape", (lambda new: lambda x: _rs(x, new_sizes=new, dimensions=None,
                                               sharding=None))(_new),
         [randn(*_shape)], _ax, 0)
case("reshape", lambda x: _rs(x, new_sizes=(3, 2), dimensions=(1, 0), sharding=None),
     [randn(2, 4, 3)], 1, 1)
case("transpose", lambda x: prim("transpose")(x, permutation=(1, 0, 2)), [randn(2, 3, 5, 4)], 2)
case("transpose", lambda x: prim("transpose")(x, permutation=(1, 0)), [randn(4, 2, 3)], 0, -1)
case("squeeze", lambda x: prim("squeeze")(x, dimensions=(0, 2)), [randn(1, 4, 3, 1)], 1)
case("squeeze", lambda x: prim("squeeze")(x, dimensions=(1,)), [randn(3, 1, 4)], -1)
case("expand_dims", lambda x: prim("expand_dims")(x, dimensions=(0, 3)), [randn(2, 4, 3)], 1)
case("expand_dims", lambda x: prim("expand_dims")(x, dimensions=(1,)), [randn(2, 4)], 1)
_cat = prim("concatenate")
case("concatenate", lambda x, y: _cat(x, y, dimension=0), [randn(2, 4, 3), randn(1, 3)],
     (1, None))
case("concatenate", lambda x, y, z: _cat(x, y, z, dimension=1),
     [randn(4, 2, 3), randn(2, 2, 4), randn(2, 1)], (0, 2, None), 1)
_pad = prim("pad")
case("pad", lambda x, v: _pad(x, v, padding_config=((1, 2, 1), (0, -1, 0))),
     [randn(3, 4, 2), np.float32(7)], (1, None))
case("pad", lambda x, v: _pad(x, v, padding_config=((1, 0, 2), (-1, 2, 0))),
     [randn(3, 4, 3), randn(4)], (1, 0), -1, id="pad-batched-value")
case("pad", lambda x, v: _pad(x, v, padding_config=((2, 1, 0),)),
     [randn(3), randn(4)], (None, 0), id="pad-only-value-batched")
case("rev", lambda x: prim("rev")(x, dimensions=(0, 1)), [randn(2, 4, 3)], 1)
_sl = prim("slice")
case("slice", lambda x: _sl(x, start_indices=(1, 0), limit_indices=(5, 3), strides=(2, 1)),
     [randn(6, 4, 3)], 1)
case("slice", lambda x: _sl(x, start_indices=(1,), limit_indices=(3,), strides=None),
     [randn(4, 5)], 0, 1)

# --- reductions, arg reductions, cumulative, sort -----------------------------------------
for _p in P.REDUCTIONS:
    _gen = (lambda *s: randn(*s) > 0) if _p.name in ("reduce_and", "reduce_or", "reduce_xor") \
        else _F
    _f = (lambda p: lambda x: bind(p, x, axes=(0,), out_sharding=None))(_p)
    case(_p.name, _f, [_gen(3, 4, 2)], 1, id=f"{_p.name}-axis0-in1")
    _f = (lambda p: lambda x: bind(p, x, axes=(0, 2), out_sharding=None))(_p)
    case(_p.name, _f, [_gen(2, 3, 4, 5)], 2, -1, id=f"{_p.name}-axes02-in2")
case("reduce_xor", lambda x: prim("reduce_xor")(x, axes=(1,), out_sharding=None),
     [randint(4, 3, 2)], -1, id="reduce_xor-int")
case("reduce_max", lambda x: prim("reduce_max")(x, axes=(0,), out_sharding=None),
     [randint(3, 4)], 1, id="reduce_max-int")
# the general reduce and reduce_window (traced computations), one operand pair batched
case("reduce", lambda x, y: lax.reduce((x, y), (0.0, 1.0),
                                       lambda a, b: (a[0] + 2 * b[0], a[1] * b[1]), (0,)),
     [randn(3, 4), randn(4, 3)], (1, 0), id="reduce-general")
case("reduce_window", lambda x: lax.reduce_window(x, 1.0, lambda a, b: a + b * b, (2, 2),
                                                  (1, 1), "SAME"),
     [randn(3, 4, 5)], 2, id="reduce_window-general")
case("select_and_gather_add", lambda t, x: prim("select_and_gather_add")(
    t, x, select_prim=P.ge_p, window_dimensions=(2, 2), window_strides=(1, 1),
    padding=((0, 1), (0, 0)), base_dilation=(1, 1), window_dilation=(1, 1)),
    [randn(3, 4, 5), randn(4, 5, 3)], (0, 2), id="select_and_gather_add")
case("select_and_scatter_add", lambda s, x: prim("select_and_scatter_add")(
    s, x, select_prim=P.le_p, window_dimensions=(2, 2), window_strides=(1, 1),
    padding=((0, 0), (0, 0))), [randn(2, 3, 3), randn(3, 3, 4)], (2, 0),
    id="select_and_scatter_add")
for _name in ("argmax", "argmin"):
    for _axis in (0, 1):
        _f = (lambda n, a: lambda x: prim(n)(x, axes=(a,), index_dtype=np.dtype(np.int32)))(
            _name, _axis)
        case(_name, _f, [randn(3, 4, 5)], 1, id=f"{_name}-axis{_axis}")
    case(_name, lambda x, n=_name: prim(n)(x, axes=(0,), index_dtype=np.dtype(np.int32)),
         [randint(3, 4, lo=0, hi=3)], -1, id=f"{_name}-int-ties")
for _p in P.CUMULATIVES:
    for _axis, _rev in ((0, False), (1, True)):
        _f = (lambda p, a, r: lambda x: bind(p, x, axis=a, reverse=r))(_p, _axis, _rev)
        case(_p.name, _f, [uniform(0.5, 1.5, 3, 4, 5)], 1, id=f"{_p.name}-{_axis}-{_rev}")
_sort = prim("sort")
case("sort", lambda x: _sort(x, dimension=0, is_stable=True, num_keys=1), [randn(5, 4)], 1)
case("sort", lambda x, y: _sort(x, y, dimension=1, is_stable=True, num_keys=1),
     [randint(4, 3, 6, lo=0, hi=3), np.arange(18, dtype=np.float32).reshape(3, 6)], (0, None))
case("sort", lambda x, y: _sort(x, y, dimension=0, is_stable=True, num_keys=2),
     [randint(6, lo=0, hi=2), randint(6, 4, lo=0, hi=3)], (None, -1))

# --- dot_general ---------------------------------------------------------------------------
_dot = prim("dot_general")


def _dg(dn, pet=None):
    return lambda a, b: _dot(a, b, dimension_numbers=dn, precision=None,
                             preferred_element_type=pet, out_sharding=None)


_MM = (((1,), (0,)), ((), ()))
case("dot_general", _dg(_MM), [randn(4, 2, 3), randn(4, 3, 5)], 0)
case("dot_general", _dg(_MM), [randn(2, 4, 3), randn(3, 5)], (1, None))
case("dot_general", _dg(_MM), [randn(2, 3), randn(3, 5, 4)], (None, 2), 1)
case("dot_general", _dg(_MM), [randn(2, 4, 3), randn(3, 4, 5)], (1, 1), -1)
case("dot_general", _dg((((0,), (0,)), ((), ()))), [randn(3, 4), randn(4, 3)], (1, 0))
case("dot_general", _dg((((2,), (1,)), ((0,), (0,)))), [randn(2, 4, 3, 5), randn(2, 5, 6)],
     (1, None))
case("dot_general", _dg((((2,), (1,)), ((0,), (0,)))), [randn(2, 3, 5), randn(2, 4, 5, 6)],
     (None, 1), 2)
case("dot_general", _dg((((1,), (0,)), ((0,), (1,)))), [randn(4, 2, 3), randn(3, 2, 4)],
     (0, 2))
case("dot_general", _dg(_MM, np.dtype(np.int32)),
     [randint(4, 2, 3, dtype=np.int8), randint(3, 2, dtype=np.int8)], (0, None))

# --- random bits ---------------------------------------------------------------------------
_keys = RNG.integers(0, 2**32, (4, 4), dtype=np.uint64).astype(np.uint32)
_rbg = prim("rng_bit_generator")
_tf = prim("threefry2x32")
_u32 = lambda *s: RNG.integers(0, 2**32, s, dtype=np.uint64).astype(np.uint32)  # noqa: E731
case("threefry2x32", lambda a, b, c, d: _tf(a, b, c, d),
     [_u32(4), _u32(), _u32(3), _u32(3)], (0, None, None, None))
case("threefry2x32", lambda a, b, c, d: _tf(a, b, c, d),
     [_u32(), _u32(3, 4), _u32(3, 4), _u32(3)], (None, 1, 1, None))
case("threefry2x32", lambda a, b, c, d: _tf(a, b, c, d),
     [_u32(4), _u32(4), _u32(), _u32(4)], (0, 0, None, 0))

# --- indexing ------------------------------------------------------------------------------
_ds = prim("dynamic_slice")
_i32 = np.int32
case("dynamic_slice", lambda x, i, j: _ds(x, i, j, slice_sizes=(2, 2)),
     [randn(5, 4, 3), _i32(1), _i32(2)], (1, None, None))
case("dynamic_slice", lambda x, i, j: _ds(x, i, j, slice_sizes=(2, 2)),
     [randn(5, 3), np.array([0, 4, -1, 2], _i32), _i32(0)], (None, 0, None),
     id="dynamic_slice-batched-index-clamped")
case("dynamic_slice", lambda x, i, j: _ds(x, i, j, slice_sizes=(3, 1)),
     [randn(5, 4, 3), np.array([1, 3, 0, 2], _i32), np.array([2, 0, 1, 7], _i32)],
     (1, 0, 0), -1)
case("dynamic_slice", lambda x, i: _ds(x, i, slice_sizes=(2,)),
     [randn(4, 5), np.array([0, 1, 2, 3], np.uint8)], (0, 0))
_dus = prim("dynamic_update_slice")
case("dynamic_update_slice", lambda x, u, i, j: _dus(x, u, i, j),
     [randn(5, 4, 3), randn(2, 2), _i32(1), _i32(2)], (1, None, None, None))
case("dynamic_update_slice", lambda x, u, i, j: _dus(x, u, i, j),
     [randn(5, 3), randn(2, 4, 2), _i32(1), _i32(0)], (None, 1, None, None))
case("dynamic_update_slice", lambda x, u, i, j: _dus(x, u, i, j),
     [randn(5, 3), randn(2, 2), np.array([0, 4, -2, 3], _i32), _i32(1)], (None, None, 0, None),
     id="dynamic_update_slice-batched-index-clamped")
case("dynamic_update_slice", lambda x, u, i, j: _dus(x, u, i, j),
     [randn(5, 4, 3), randn(4, 2, 1), np.array([0, 4, 1, 3], _i32), np.array([2, 0, 1, 9], _i32)],
     (1, 0, 0, 0), 2)

_gather = prim("gather")
_ROWS = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))


def _g(dn, sizes, mode=GatherScatterMode.CLIP, fill=None):
    return lambda x, i: _gather(x, i, dimension_numbers=dn, slice_sizes=sizes,
                                indices_are_sorted=False, unique_indices=False, mode=mode,
                                fill_value=fill)


_idx = RNG.integers(0, 5, (4, 2, 1)).astype(np.int32)
case("gather", _g(_ROWS, (1, 3)), [randn(5, 4, 3), _idx[0]], (1, None))
case("gather", _g(_ROWS, (1, 3)), [randn(5, 3), _idx], (None, 0), 1)
case("gather", _g(_ROWS, (1, 3)), [randn(5, 3, 4), _idx], (2, 0))
case("gather", _g(_ROWS, (1, 3)), [randn(4, 5, 3), np.moveaxis(_idx, 0, -1).copy()], (0, -1),
     id="gather-index-batch-dim-last")
case("gather", _g(_ROWS, (1, 2), GatherScatterMode.FILL_OR_DROP, 0.5),
     [randn(5, 3, 4), RNG.integers(-2, 7, (4, 3, 1)).astype(np.int32)], (2, 0),
     id="gather-fill-or-drop")
case("gather", _g(GatherDimensionNumbers((0,), (1,), (1,)), (2, 1)),  # columns, offset first
     [randn(3, 4, 5), RNG.integers(0, 5, (4, 6, 1)).astype(np.int32)], (1, 0), 2)
_BATCHED_G = GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
case("gather", _g(_BATCHED_G, (1, 1, 3)),
     [randn(2, 5, 4, 3), RNG.integers(0, 5, (2, 4, 6, 1)).astype(np.int32)], (2, 1),
     id="gather-with-batching-dims")
case("gather", _g(_BATCHED_G, (1, 1, 3)),
     [randn(2, 5, 3), RNG.integers(0, 5, (4, 2, 6, 1)).astype(np.int32)], (None, 0),
     id="gather-with-batching-dims-indices-batched")

_ROWS_S = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                  scatter_dims_to_operand_dims=(0,))
_uidx = np.stack([RNG.permutation(5)[:2] for _ in range(4)])[..., None].astype(np.int32)
for _p in P.SCATTERS:
    _f = (lambda p: lambda x, i, u: bind(p, x, i, u, dimension_numbers=_ROWS_S,
                                         indices_are_sorted=False, unique_indices=False,
                                         mode=GatherScatterMode.FILL_OR_DROP))(_p)
    case(_p.name, _f, [randn(5, 4, 3), _uidx[0], randn(2, 3)], (1, None, None),
         id=f"{_p.name}-operand")
    case(_p.name, _f, [randn(5, 3), _uidx, randn(2, 3)], (None, 0, None), id=f"{_p.name}-indices")
    case(_p.name, _f, [randn(5, 3), _uidx[0], randn(2, 3, 4)], (None, None, 2), 1,
         id=f"{_p.name}-updates")
    case(_p.name, _f, [randn(5, 3, 4), np.moveaxis(_uidx, 0, -1).copy(), randn(4, 2, 3)],
         (2, -1, 0), id=f"{_p.name}-all")
case("scatter_add", lambda x, i, u: prim("scatter_add")(
    x, i, u, dimension_numbers=_ROWS_S, indices_are_sorted=False, unique_indices=False,
    mode=GatherScatterMode.CLIP),
    [randn(5, 3), RNG.integers(-3, 8, (4, 3, 1)).astype(np.int32), randn(3, 4, 3)],
    (None, 0, 1), id="scatter_add-clip-duplicates")
case("scatter_sub", lambda x, i, u: prim("scatter_sub")(
    x, i, u, dimension_numbers=_ROWS_S, indices_are_sorted=False, unique_indices=False,
    mode=GatherScatterMode.CLIP),
    [randn(5, 3), RNG.integers(-3, 8, (4, 3, 1)).astype(np.int32), randn(3, 4, 3)],
    (None, 0, 1), id="scatter_sub-clip-duplicates")
_BATCHED_S = ScatterDimensionNumbers(update_window_dims=(2,), inserted_window_dims=(1,),
                                     scatter_dims_to_operand_dims=(1,),
                                     operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
case("scatter_add", lambda x, i, u: prim("scatter_add")(
    x, i, u, dimension_numbers=_BATCHED_S, indices_are_sorted=False, unique_indices=False,
    mode=GatherScatterMode.FILL_OR_DROP),
    [randn(2, 5, 3), RNG.integers(0, 5, (2, 4, 6, 1)).astype(np.int32), randn(2, 6, 3, 4)],
    (None, 1, 3), id="scatter_add-with-batching-dims")

# --- decompositions, solves, fft, top_k ---------------------------------------------------


def _spd(*batch, n=3):
    a = randn(*batch, n, n)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


case("cholesky", lambda x: prim("cholesky")(x), [np.moveaxis(_spd(4), 0, 1).copy()], 1)
case("cholesky", lambda x: prim("cholesky")(x), [np.moveaxis(_spd(2, 4), 1, 3).copy()], 3,
     id="cholesky-batch-among-matrix-dims")
case("lu", lambda x: prim("lu")(x), [randn(4, 3, 3)], 0)
case("qr", lambda x: prim("qr")(x, full_matrices=False), [randn(3, 4, 2)], 1)
case("eigh", lambda x: prim("eigh")(x, lower=True, sort_eigenvalues=True), [_spd(4)], 0,
     rtol=1e-4, atol=1e-4)
case("svd", lambda x: prim("svd")(x, full_matrices=False, compute_uv=False), [randn(2, 3, 4)],
     -1)
case("eig", lambda x: prim("eig")(x, compute_left_eigenvectors=False,
                                  compute_right_eigenvectors=True), [randn(3, 4, 3)], 1,
     rtol=1e-4, atol=1e-4)
_ts = prim("triangular_solve")
_tri = np.tril(randn(3, 3)) + 3 * np.eye(3, dtype=np.float32)
for _left in (True, False):
    _f = (lambda left: lambda a, b: _ts(a, b, left_side=left, lower=True, transpose_a=False,
                                        conjugate_a=False, unit_diagonal=False))(_left)
    for _bd in (0, 1, 2):
        case("triangular_solve", _f, [_tri, np.moveaxis(randn(4, 3, 3), 0, _bd).copy()],
             (None, _bd), id=f"triangular_solve-fold-left{_left}-b{_bd}")
    case("triangular_solve", _f, [np.stack([_tri, _tri.T.T * 2, _tri, _tri]), randn(3, 3)],
         (0, None), id=f"triangular_solve-batched-a-left{_left}")
case("fft", lambda x: prim("fft")(x, fft_type=P.FftType.FFT, fft_lengths=(4,)),
     [(randn(3, 4, 2) + 1j * randn(3, 4, 2)).astype(np.complex64)], -1, 0, rtol=1e-5, atol=1e-5)
case("fft", lambda x: prim("fft")(x, fft_type=P.FftType.RFFT, fft_lengths=(3, 4)),
     [randn(2, 3, 4)], 0, 0, rtol=1e-5, atol=1e-5)
case("top_k", lambda x: prim("top_k")(x, k=2), [randn(3, 5, 4)], -1)
case("top_k", lambda x: prim("top_k")(x, k=3), [randn(4, 5)], 0)

# --- windowed reductions, convolution ------------------------------------------------------
for _p in P.REDUCE_WINDOWS:
    _f = (lambda p: lambda x: bind(p, x, window_dimensions=(2, 2), window_strides=(1, 2),
                                   padding=((1, 0), (0, 1)), base_dilation=(1, 1),
                                   window_dilation=(1, 1)))(_p)
    case(_p.name, _f, [randn(5, 4, 6)], 1)
_conv = prim("conv_general_dilated")
_NCH = P.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
_NHC = P.ConvDimensionNumbers((0, 2, 1), (2, 1, 0), (0, 2, 1))


def _cv(dn=_NCH, fg=1, bg=1):
    return lambda l, r: _conv(l, r, window_strides=(1,), padding=((1, 0),), lhs_dilation=(1,),
                              rhs_dilation=(1,), dimension_numbers=dn, feature_group_count=fg,
                              batch_group_count=bg, precision=None,
                              preferred_element_type=None)


for _fg, _bg, _lsh, _rsh in ((1, 1, (2, 4, 6), (3, 4, 2)), (2, 1, (2, 4, 6), (4, 2, 2)),
                             (1, 2, (4, 2, 6), (4, 2, 2))):
    _f = _cv(_NCH, _fg, _bg)
    _id = f"fg{_fg}-bg{_bg}"
    case("conv_general_dilated", _f, [randn(*_lsh[:1], 3, *_lsh[1:]), randn(*_rsh)],
         (1, None), id=f"conv-lhs-{_id}", rtol=1e-5, atol=1e-5)
    case("conv_general_dilated", _f, [randn(*_lsh), randn(*_rsh, 3)], (None, 3),
         id=f"conv-rhs-{_id}", rtol=1e-5, atol=1e-5)
    case("conv_general_dilated", _f, [randn(3, *_lsh), randn(*_rsh[:2], 3, _rsh[2])], (0, 2),
         id=f"conv-both-{_id}", rtol=1e-5, atol=1e-5)
case("conv_general_dilated", _cv(_NHC), [randn(2, 6, 4, 3), randn(2, 4, 5, 3)], (3, 3), -1,
     id="conv-nhc-both", rtol=1e-5, atol=1e-5)

# --- control flow --------------------------------------------------------------------------
case("cond", lambda i, x: lax.switch(i, [lambda v: v * 2, lambda v: v - 1, jnp.sin], x),
     [np.array([0, 2, 1, 7, -3], np.int32), randn(5, 3)], (0, 0), id="cond-batched-index")
case("cond", lambda p, x, y: lax.cond(p, lambda a, b: (a + b, b), lambda a, b: (a, a * 2), x, y),
     [np.array([True, False, True, False]), randn(3, 4), randn(3)], (0, 1, None), (0, 1),
     id="cond-batched-pred-two-outputs")
case("cond", lambda p, x, y: lax.cond(p, lambda a, b: (a + b, b), lambda a, b: (a, b * 2), x, y),
     [np.bool_(True), randn(3, 4), randn(3)], (None, 1, None), (0, None),
     id="cond-unbatched-pred")
case("cond", lambda p, x, y: lax.cond(p, lambda a, b: a, lambda a, b: b, x, y),
     [np.bool_(False), randn(2, 4), randn(2)], (None, 1, None), -1,
     id="cond-one-branch-batched")
case("cond", lambda i, x: lax.switch(i, [lambda v: v.sum(), lambda v: v.max(), lambda v: v[0]],
                                     x),
     [np.int32(1), randn(4, 3)], (None, 0), id="cond-unbatched-index-three-branches")


def _count_down(x, n):
    return lax.while_loop(lambda c: c[1] > 0, lambda c: (c[0] * 1.5 + 1, c[1] - 1), (x, n))


case("while", _count_down, [randn(4, 3), np.array([0, 3, 1, 5], np.int32)], (0, 0),
     id="while-batched-predicate")
case("while", _count_down, [randn(3, 4), np.int32(3)], (1, None), (1, None),
     id="while-unbatched-predicate")
case("while", lambda x, y: lax.while_loop(lambda c: c[2] < 4,
                                          lambda c: (c[1], c[0] + y, c[2] + 1),
                                          (np.float32(0), np.float32(1), 0))[:2],
     [np.float32(0), randn(4)], (None, 0), id="while-carry-becomes-batched")
case("while", lambda lim, x: lax.while_loop(lambda c: c[0] < lim,
                                            lambda c: (c[0] + c[1].sum(), c[1] * 0.5),
                                            (np.float32(0), x)),
     [uniform(1, 10, 4), uniform(1, 2, 3)], (0, None), id="while-batched-cond-const")


def _cumulative_scan(c, xs, w):
    def step(carry, x):
        carry = carry * w + x
        return carry, (carry, x.sum())
    return lax.scan(step, c, xs)


case("scan", _cumulative_scan, [randn(3), randn(5, 4, 3), np.float32(0.5)], (None, 1, None),
     id="scan-batched-xs")
case("scan", _cumulative_scan, [randn(4, 3), randn(5, 3), randn(4)], (0, None, 0),
     id="scan-batched-carry-and-const")
case("scan", _cumulative_scan, [randn(3), randn(4, 5, 3), np.float32(1.0)], (None, 0, None),
     (0, (2, 0)), id="scan-xs-batched-on-scanned-axis")
case("scan", lambda c, xs: lax.scan(lambda a, x: (a + x, a), c, xs, reverse=True),
     [np.float32(0), randn(6, 4)], (None, 1), id="scan-reverse")


def _closed_call(x, y):
    closed = olympus.make_olympuspr(lambda a, b: (a * b + 1.0, a.sum()))(
        np.zeros(np.shape(x), np.float32), np.zeros(np.shape(y), np.float32))
    return tuple(prim("closed_call")(x, y, call_olympuspr=closed))


case("closed_call", _closed_call, [randn(3, 4), randn(3)], (1, None), (0, 0))
case("closed_call", _closed_call, [randn(3), randn(4, 3)], (None, 0), (1, 0))


def _metadata_call(x, y):
    closed = olympus.make_olympuspr(lambda a, b: (a * b + 1.0, a.sum()))(
        np.zeros(np.shape(x), np.float32), np.zeros(np.shape(y), np.float32))
    return tuple(prim("xla_metadata_call")(x, y, olympuspr=closed, scheduling_group="g"))


case("xla_metadata_call", _metadata_call, [randn(3, 4), randn(3)], (1, None), (0, 0))

# --- collectives ---------------------------------------------------------------------------
_AX = "i"


def _vmap_named(f, in_axes=0, out_axes=0):
    return olympus.vmap(f, in_axes=in_axes, out_axes=out_axes, axis_name=_AX)


@pytest.mark.parametrize("prims,f,args,in_axes,out_axes,kw", CASES)
def test_rule_matches_loop(prims, f, args, in_axes, out_axes, kw):
    for p in prims:
        assert primitives_by_name[p] in batching_rules
    check_vmap(f, args, in_axes, out_axes, **kw)


@pytest.mark.parametrize("algorithm,dtype,in_axis", [
    (RandomAlgorithm.RNG_THREE_FRY, np.uint32, 0), (RandomAlgorithm.RNG_DEFAULT, np.uint8, 1)])
def test_rng_bit_generator_draws_the_batch_from_the_first_key(algorithm, dtype, in_axis):
    """JAX's rule (not a loop): the first member's key draws the bits of the whole batch,
    and only that member's key advances."""
    keys = _keys if in_axis == 0 else _keys.T.copy()
    f = olympus.vmap(lambda k: tuple(_rbg(k, shape=(2, 3), dtype=np.dtype(dtype),
                                          algorithm=algorithm)), in_axes=in_axis)
    new_keys, bits = f(keys)
    first = np.moveaxis(keys, in_axis, 0)
    want_key, want_bits = _rbg(first[0], shape=(4, 2, 3), dtype=np.dtype(dtype),
                               algorithm=algorithm)
    np.testing.assert_array_equal(bits, want_bits)
    np.testing.assert_array_equal(new_keys[0], want_key)
    np.testing.assert_array_equal(new_keys[1:], first[1:])


# --- collectives: values computed by hand -------------------------------------------------


@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_psum_pmax_pmin_pmean_reduce_over_the_batch(in_axis):
    x = randn(3, 4)

    def f(v):
        return (lax.psum(v, _AX), lax.pmax(v, _AX), lax.pmin(v, _AX), lax.pmean(v, _AX),
                v - lax.pmean(v, _AX))

    outs = olympus.jit(_vmap_named(f, in_axis))(x)
    ax = in_axis % 2
    for got, want in zip(outs, [x.sum(ax), x.max(ax), x.min(ax), x.mean(ax)], strict=False):
        np.testing.assert_allclose(np.asarray(got), np.stack([want] * x.shape[ax]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(outs[4]), np.moveaxis(x - x.mean(ax, keepdims=True),
                                                                 ax, 0), rtol=1e-5, atol=1e-6)


def test_all_gather_and_axis_index():
    x = randn(4, 3)

    def f(v):
        return (lax.all_gather(v, _AX), lax.all_gather(v, _AX, axis=1),
                lax.all_gather(v, _AX, tiled=True), lax.axis_index(_AX))

    g0, g1, gt, idx = _vmap_named(f)(x)
    np.testing.assert_array_equal(np.asarray(g0), np.stack([x] * 4))
    np.testing.assert_array_equal(np.asarray(g1), np.stack([x.T] * 4))
    np.testing.assert_array_equal(np.asarray(gt), np.stack([x.reshape(-1)] * 4))
    np.testing.assert_array_equal(np.asarray(idx), np.arange(4, dtype=np.int32))
    assert idx.dtype == np.int32


def test_collectives_of_unbatched_values_and_other_axes():
    x = randn(3)
    # an unbatched value: psum multiplies by the axis size, all_gather repeats it
    out = _vmap_named(lambda v, w: (lax.psum(w, _AX), lax.all_gather(w, _AX)),
                      in_axes=(0, None))(x, np.float32(2))
    np.testing.assert_allclose(np.asarray(out[0]), np.full(3, 6.0, np.float32))
    np.testing.assert_allclose(np.asarray(out[1]), np.full((3, 3), 2.0, np.float32))
    # nested vmaps: collectives over the outer axis pass through the inner one
    y = randn(2, 3)
    f = olympus.vmap(olympus.vmap(lambda v: (lax.psum(v, "outer"), lax.axis_index("outer"),
                                             lax.all_gather(v, "outer"), lax.psum(v, "inner")),
                                  axis_name="inner"), axis_name="outer")
    s_outer, idx, gath, s_inner = f(y)
    np.testing.assert_allclose(np.asarray(s_outer), np.broadcast_to(y.sum(0), (2, 3)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(idx), np.array([[0] * 3, [1] * 3], np.int32))
    np.testing.assert_array_equal(np.asarray(gath), np.broadcast_to(y.T[None, :, :], (2, 3, 2)))
    np.testing.assert_allclose(np.asarray(s_inner), np.broadcast_to(y.sum(1)[:, None], (2, 3)),
                               rtol=1e-6)
    # a tuple of names reduces over both
    both = olympus.vmap(olympus.vmap(lambda v: (lax.psum(v, ("outer", "inner")),
                                                lax.axis_index(("outer", "inner"))),
                                     axis_name="inner"), axis_name="outer")(y)
    np.testing.assert_allclose(np.asarray(both[0]), np.full((2, 3), y.sum()), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(both[1]), np.arange(6).reshape(2, 3))


def test_collectives_inside_unbatched_control_flow():
    # Nothing the cond/scan sees is batched, but their bodies use the vmapped axis.
    def f(x, p):
        a = lax.cond(p, lambda: lax.axis_index(_AX) * 2, lambda: lax.axis_index(_AX))
        _, ys = lax.scan(lambda c, _: (c, lax.psum(c, _AX)), np.float32(1), None, length=2)
        return x + a, ys

    xs, ys = _vmap_named(f, in_axes=(0, None))(np.zeros(3, np.int32), np.bool_(True))
    np.testing.assert_array_equal(np.asarray(xs), [0, 2, 4])
    np.testing.assert_allclose(np.asarray(ys), np.full((3, 2), 3.0))


def test_collective_outside_vmap_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(np.float32(1), "i")
    with pytest.raises(NameError, match="unbound axis name: j"):
        olympus.vmap(lambda v: lax.axis_index("j"), axis_name="i")(np.zeros(2))
    with pytest.raises(NameError, match="unbound axis name: i"):
        olympus.jit(lambda v: lax.all_gather(v, "i"))(np.zeros(2))


def test_debug_callback_runs_once_per_member_in_order():
    from olympus import debug

    seen = []
    x, y = randn(3, 2), randn(2)

    def f(a, b):
        debug.callback(lambda u, v: seen.append((np.asarray(u), np.asarray(v))), a, b)
        return a * 2

    out = olympus.jit(olympus.vmap(f, in_axes=(1, None)))(x, y)
    np.testing.assert_allclose(np.asarray(out), 2 * x.T)
    assert len(seen) == 2
    for i, (u, v) in enumerate(seen):
        np.testing.assert_array_equal(u, x[:, i])
        np.testing.assert_array_equal(v, y)


# --- coverage --------------------------------------------------------------------------------


def _ir_primitives() -> set[str]:
    """Every primitive of olympus-ir (all of `olympus_ir.primitives`, the collectives and
    the custom-derivative primitives included)."""
    from olympus_ir.core import Primitive

    ir = {v.name for k, v in vars(P).items() if k.endswith("_p") and isinstance(v, Primitive)}
    assert ir <= set(primitives_by_name) and len(ir) > 100
    return ir


def test_every_primitive_has_a_checked_rule():
    prims = _ir_primitives()
    # call_exported: none, as in JAX (vmap of Exported.call raises JAX's error, test_export.py)
    # COO and CSR matrices: none, as in JAX (test_sparse_formats.py checks the error)
    # rng_uniform: none, as in JAX (XLA's stateful generator; test_lax_exports.py checks)
    # linear_call: none, as in JAX (its rule raises JAX's error; checked in
    # test_custom_derivatives_symbolic.py)
    # composite: none, as in JAX (test_lax_composite.py checks the error)
    # select_and_scatter: none, as in JAX (test_lax_conv_window.py)
    # custom_partitioning: none, as in JAX (test_custom_partitioning.py checks the error)
    unbatchable = {"call_exported", "rng_uniform", "linear_call", "composite",
                   "cholesky_update", "select_and_scatter", "psend", "precv",
                   "custom_partitioning"} | {
        f"{fmt}_{op}" for fmt in ("coo", "csr")
        for op in ("todense", "fromdense", "matvec", "matmat")}
    missing = sorted(n for n in prims - unbatchable
                     if primitives_by_name[n] not in batching_rules)
    assert not missing, f"primitives without a batching rule: {missing}"
    covered = {p for c in CASES for p in c.values[0]}
    covered |= {"psum", "pmax", "pmin", "all_gather", "axis_index",  # checked by hand above
                "debug_callback",
                # tokens are never batched: vmap of functions making them
                # (test_lax_tokens.py)
                "create_token", "after_all",
                # no operands: vmap of platform_dependent (test_control_flow.py)
                "platform_index",
                # no results: vmap through it (test_lax_tokens.py)
                "dce_sink",
                # every vmap_method against JAX's recorded call pattern (test_callbacks.py)
                "pure_callback", "io_callback",
                # checkify of vmap reduces to the first failing member (test_checkify.py)
                "check",
                # vmap of custom_jvp/custom_vjp/checkpoint functions, with their derivatives
                # (test_autodiff_api.py: test_custom_derivatives_under_vmap and others)
                "custom_jvp_call", "custom_vjp_call", "custom_lin", "checkpoint",
                # vmap of a nested jit against NumPy (test_nested_jit.py)
                "jit",
                # need several devices: vmap of shard_map with ppermute, psum_scatter,
                # all_to_all and psum (and the pvary/psum_invariant its varying-axes pass
                # inserts) against a loop over the batch, and shard_map of vmap
                # (tests/multidevice/check_collectives_4dev.py); vmap over
                # with_sharding_constraint (check_sharding_8dev.py)
                "shard_map", "ppermute", "psum_scatter", "all_to_all", "pvary",
                "psum_invariant", "sharding_constraint",
                # vmap of shard_alike and set_xla_metadata against JAX's recorded
                # olympusprs and values (test_shard_alike.py, test_xla_metadata.py)
                "shard_alike", "xla_metadata_value",
                # vmap of inspect_array_sharding reports the batched value's sharding
                # (check_inspect_sharding_4dev.py, against JAX's recorded repr)
                "inspect_sharding",
                # no operands: vmap of a function using a symbolic size as a value, run
                # against NumPy (test_shape_poly.py: test_vmap_of_a_dimension_value)
                "dim_as_value",
                # the LAPACK primitives: vmap against a loop over the batch
                # (test_lax_linalg.py: test_tridiagonal_solve_against_numpy,
                # test_condensed_forms_under_vmap_and_jit and
                # test_composed_lapack_primitives_under_vmap)
                "hessenberg", "householder_product", "lu_pivots_to_permutation", "ormqr",
                "schur", "symmetric_product", "tridiagonal", "tridiagonal_solve",
                # no batching rule, as in JAX: JAX's error (test_export.py)
                "call_exported",
                # vmap of device_put to host memory against the values
                # (test_memory_spaces.py)
                "device_put",
                # JAX's rule, which is not a loop (test above)
                "rng_bit_generator",
                # every vmap_method against numpy with a C kernel (test_ffi.py)
                "ffi_call",
                # every vmap_method against numpy (test_buffer_callback.py)
                "buffer_callback",
                # vmap over ref arguments against numpy, and the closed-over-ref error
                # (test_refs.py)
                "new_ref", "get", "swap", "addupdate", "freeze",
                # typed PRNG keys: vmap of key programs against per-key calls
                # (test_random_key_types.py)
                "random_seed", "random_wrap", "random_unwrap", "random_split",
                "random_fold_in", "random_bits", "random_clone",
                # the key-reuse markers: vmap against the unbatched keys (test_key_reuse.py)
                "consume", "assert_consumed_value",
                # against per-key calls and JAX's recorded values
                # (test_random_gamma_primitive.py)
                "random_gamma",
                # along each axis against a loop (test_lax_approx_top_k.py)
                "approx_top_k",
                # against a loop, scales batched alone (test_lax_scaled_dot.py)
                "scaled_dot",
                # XLA's CPU backend cannot run it: vmap over another axis traces to
                # one merged call, over its own raises JAX's error
                # (multidevice/check_ragged_and_one_sided_8dev.py)
                "ragged_all_to_all",
                # JAX's structural primitives and custom_linear_solve, each against a loop
                # (test_lax_structural.py: test_structural_vmap_against_loop;
                # test_control_flow.py: test_custom_linear_solve_vmap_jit_pytrees_and_errors)
                "tile", "split", "stack", "unstack", "optimization_barrier",
                "custom_linear_solve",
                # the sparse family, each against a loop or NumPy (test_sparse_formats.py:
                # test_batching_rules_against_a_loop; test_sparse_bcoo.py: test_vmap_*)
                *(p.name for p in P.SPARSE_PRIMITIVES),
                # vmap of with_layout_constraint: JAX's rule for the layout and the values
                # (test_memory_layouts.py); vmap of remat_opt against NumPy
                # (test_custom_derivatives_symbolic.py)
                "layout_constraint", "remat_opt"}
    unchecked = sorted(prims - covered - unbatchable)
    assert not unchecked, f"batching rules without a loop check: {unchecked}"


# --- eager (op-by-op) batching agrees too ----------------------------------------------------


EAGER_CASES = [
    ("matmul", lambda x: jnp.tanh(x) @ x.T, [randn(3, 2, 4)], 0, 0),
    ("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i,), (2,)),
     [randn(4, 5), np.array([0, 1, 4, 2], np.int32)], 0, -1),
    ("while", lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x),
     [uniform(0.5, 6, 4)], 0, 0),
]


@pytest.mark.parametrize("name,f,args,in_axes,out_axes", EAGER_CASES,
                         ids=[c[0] for c in EAGER_CASES])
def test_eager_vmap(name, f, args, in_axes, out_axes):
    check_vmap(f, args, in_axes, out_axes, jit=False)


# --- no gratuitous transposes ---------------------------------------------------------------


def _prims(f, *args):
    return [e.primitive.name for e in olympus.make_olympuspr(f)(*args).olympuspr.eqns]


def _mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x.sum()


NO_TRANSPOSE = [
    ("sum-in1", olympus.vmap(lambda x: x.sum(0), in_axes=1), [randn(3, 4, 5)]),
    ("sum-all", olympus.vmap(lambda x: x.sum(), in_axes=2), [randn(3, 4, 5)]),
    ("matmul-lhs", olympus.vmap(jnp.matmul, in_axes=(1, None), out_axes=1),
     [randn(2, 4, 3), randn(3, 5)]),
    ("matmul-rhs", olympus.vmap(jnp.matmul, in_axes=(None, 2), out_axes=-1),
     [randn(2, 3), randn(3, 5, 4)]),
    ("matmul-both", olympus.vmap(jnp.matmul, in_axes=(1, 2)), [randn(2, 4, 3), randn(3, 5, 4)]),
    ("reshape-prefix", olympus.vmap(lambda x: x.reshape(2, 2, 3), in_axes=1, out_axes=1),
     [randn(2, 4, 6)]),
    ("cumsum", olympus.vmap(lambda x: prim("cumsum")(x, axis=0, reverse=False), in_axes=1,
                            out_axes=1),
     [randn(3, 4)]),
    ("argmax", olympus.vmap(lambda x: jnp.argmax(x, axis=0), in_axes=1), [randn(3, 4)]),
    ("concat", olympus.vmap(lambda x, y: jnp.concatenate([x, y]), in_axes=(1, 1), out_axes=1),
     [randn(2, 4), randn(3, 4)]),
    ("slice-pad-rev", olympus.vmap(lambda x: lax.rev(lax.pad(x[1:], 0.0, ((1, 1, 0),)), (0,)),
                                   in_axes=1, out_axes=1), [randn(3, 4)]),
    ("dynamic-slice", olympus.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)),
                                   in_axes=(1, 0), out_axes=1),
     [randn(5, 4), np.arange(4, dtype=np.int32)]),
    ("gather", olympus.vmap(_g(_ROWS, (1, 3)), in_axes=(2, 0)), [randn(5, 3, 4), _idx]),
    ("mlp-per-example", olympus.vmap(_mlp, in_axes=(None, 1)),
     [[(randn(3, 8), randn(8)), (randn(8, 8), randn(8))], randn(3, 6)]),
]


@pytest.mark.parametrize("name,f,args", NO_TRANSPOSE, ids=[c[0] for c in NO_TRANSPOSE])
def test_no_gratuitous_transpose(name, f, args):
    assert "transpose" not in _prims(f, *args), olympus.make_olympuspr(f)(*args)


def test_elementwise_and_broadcast_batching_is_jaxs():
    """Elementwise primitives and broadcast_in_dim batch as JAX's rules do (the batch
    dimension moves to the front, transposes included), so vmapped olympusprs print as
    JAX's jaxprs: texts recorded from reference JAX 0.10.2."""
    text = str(olympus.make_olympuspr(olympus.vmap(lambda x, y: x * y + 1.0, in_axes=(1, None),
                                                   out_axes=1))(randn(3, 4), randn(3)))
    assert text == """{ lambda ; a:f32[3,4] b:f32[3]. let
    c:f32[4,3] = transpose[permutation=(1, 0)] a
    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
    e:f32[4,3] = mul c d
    f:f32[4,3] = add e 1.0:f32[]
    g:f32[3,4] = transpose[permutation=(1, 0)] f
  in (g,) }"""
    text = str(olympus.make_olympuspr(olympus.vmap(lambda s, x: s * x, in_axes=(0, 1),
                                                   out_axes=1))(randn(4), randn(3, 4)))
    assert text == """{ lambda ; a:f32[4] b:f32[3,4]. let
    c:f32[4,3] = transpose[permutation=(1, 0)] b
    d:f32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    e:f32[4,3] = mul d c
    f:f32[3,4] = transpose[permutation=(1, 0)] e
  in (f,) }"""
    text = str(olympus.make_olympuspr(olympus.vmap(lambda x: jnp.broadcast_to(x, (2, 3)),
                                                   in_axes=1, out_axes=2))(randn(3, 4)))
    assert text == """{ lambda ; a:f32[3,4]. let
    b:f32[4,3] = transpose[permutation=(1, 0)] a
    c:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] b
    d:f32[2,3,4] = transpose[permutation=(1, 2, 0)] c
  in (d,) }"""


def test_batched_dot_is_one_dot_general():
    prims = _prims(olympus.vmap(jnp.matmul), randn(4, 2, 3), randn(4, 3, 5))
    assert prims.count("dot_general") == 1 and "transpose" not in prims
