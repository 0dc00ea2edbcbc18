"""Elementwise primitives: every accepted dtype, one module per dtype (batched), values
compared with NumPy; the conversions (convert_element_type, bitcast_convert_type), select_n
and clamp."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lower_util import (
    Builder,
    assert_close,
    bf16,
    digamma_ref,
    erf_inv_ref,
    lit,
    run,
    run_one,
)

from olympus_ir import abstract_eval, dtypes
from olympus_ir import primitives as P
from olympus_lower import lower_olympuspr

FLOATS = [np.dtype(np.float32), np.dtype(np.float16), bf16]
INTS = [np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint32)]
BOOL = np.dtype(np.bool_)
SHAPE = (2, 5)
rng = np.random.default_rng(0)


def _vals(lo, hi, dt):
    return rng.uniform(lo, hi, SHAPE).astype(dt)


def float_inputs(dt):
    """Named inputs covering each function's domain."""
    return {
        "x": _vals(-0.9, 0.9, dt),  # |x| < 1: asin, acos, atanh, erf_inv
        "p": _vals(0.2, 3.0, dt),  # x > 0: log, sqrt, lgamma, digamma, pow base
        "g": _vals(1.1, 4.0, dt),  # x >= 1: acosh
        "y": _vals(-2.0, 2.0, dt),
    }


def _round_afz(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _erf(x):
    return np.vectorize(math.erf)(np.asarray(x, np.float64))


def _erfc(x):
    return np.vectorize(math.erfc)(np.asarray(x, np.float64))


def _lgamma(x):
    return np.vectorize(math.lgamma)(np.asarray(x, np.float64))


# name -> (input names, params, numpy reference on float64 inputs)
FLOAT_UNARY = {
    "neg": ("y", {}, np.negative),
    "sign": ("y", {}, np.sign),
    "floor": ("y", {}, np.floor),
    "ceil": ("y", {}, np.ceil),
    "is_finite": ("y", {}, np.isfinite),
    "exp": ("y", {}, np.exp),
    "exp2": ("y", {}, np.exp2),
    "log": ("p", {}, np.log),
    "log1p": ("p", {}, np.log1p),
    "expm1": ("y", {}, np.expm1),
    "tanh": ("y", {}, np.tanh),
    "logistic": ("y", {}, lambda v: 1 / (1 + np.exp(-v))),
    "sin": ("y", {}, np.sin),
    "cos": ("y", {}, np.cos),
    "tan": ("x", {}, np.tan),
    "asin": ("x", {}, np.arcsin),
    "acos": ("x", {}, np.arccos),
    "atan": ("y", {}, np.arctan),
    "sinh": ("y", {}, np.sinh),
    "cosh": ("y", {}, np.cosh),
    "asinh": ("y", {}, np.arcsinh),
    "acosh": ("g", {}, np.arccosh),
    "atanh": ("x", {}, np.arctanh),
    "sqrt": ("p", {}, np.sqrt),
    "rsqrt": ("p", {}, lambda v: 1 / np.sqrt(v)),
    "cbrt": ("y", {}, np.cbrt),
    "square": ("y", {}, np.square),
    "erf": ("y", {}, _erf),
    "erfc": ("y", {}, _erfc),
    "erf_inv": ("x", {}, erf_inv_ref),
    "lgamma": ("p", {}, _lgamma),
    "digamma": ("p", {}, digamma_ref),
    "abs": ("y", {}, np.abs),
    "copy": ("y", {}, lambda v: v),
    "stop_gradient": ("y", {}, lambda v: v),
    "integer_pow": ("y", {"y": 3}, lambda v: v ** 3),
}
FLOAT_BINARY = {
    "add": ("y", "x", np.add),
    "sub": ("y", "x", np.subtract),
    "mul": ("y", "x", np.multiply),
    "div": ("y", "p", np.divide),
    "rem": ("y", "p", np.fmod),
    "pow": ("p", "y", np.power),
    "max": ("y", "x", np.maximum),
    "min": ("y", "x", np.minimum),
    "atan2": ("y", "x", np.arctan2),
}
COMPARES = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}


def _loose(name, dt):
    """Extra tolerance for functions XLA approximates (in f32 and below)."""
    if dt == bf16:
        return dict(rtol=3e-2, atol=3e-2)
    if dt == np.float16:
        return dict(rtol=5e-3, atol=5e-3)
    if name in ("lgamma", "digamma", "erf_inv", "tan", "pow", "acosh", "exp2", "cbrt"):
        return dict(rtol=1e-4, atol=1e-5)
    return {}


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
def test_float_elementwise(dt):
    inputs = float_inputs(dt)
    b = Builder()
    vs = {k: b.arg(SHAPE, dt) for k in inputs}
    outs, checks = [], []
    for name, (arg, params, ref) in FLOAT_UNARY.items():
        outs.append(b.eqn(P.primitive_by_name(name), vs[arg], **params))
        checks.append((name, ref, (arg,)))
    for name, (a1, a2, ref) in FLOAT_BINARY.items():
        outs.append(b.eqn(P.primitive_by_name(name), vs[a1], vs[a2]))
        checks.append((name, ref, (a1, a2)))
    for name, ref in COMPARES.items():
        outs.append(b.eqn(P.primitive_by_name(name), vs["y"], vs["x"]))
        checks.append((name, ref, ("y", "x")))
    lowered, results = run(b.build(outs), *inputs.values())
    text = lowered.as_text()
    short = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}[dt.name]
    for op in ("stablehlo.sine", "chlo.erf_inv", "chlo.lgamma", "chlo.digamma",
               "stablehlo.atan2", "stablehlo.remainder", "stablehlo.logistic",
               "stablehlo.cbrt", "stablehlo.rsqrt", "chlo.asin", "chlo.acosh"):
        assert op in text, op
    assert f"tensor<2x5x{short}>" in text
    assert f"stablehlo.compare LT, %arg3, %arg0, FLOAT : (tensor<2x5x{short}>" in text
    for (name, ref, args), got in zip(checks, results, strict=True):
        want = ref(*[inputs[a].astype(np.float64) for a in args])
        out_dt = BOOL if got.dtype == np.bool_ else dt
        assert_close(got, want, out_dt, err_msg=f"{name} {dt}", **_loose(name, dt))


def test_float64_elementwise(x64):
    dt = np.dtype(np.float64)
    inputs = float_inputs(dt)
    b = Builder()
    vs = {k: b.arg(SHAPE, dt) for k in inputs}
    outs, checks = [], []
    for name in ("exp", "log", "sin", "tanh", "sqrt", "asin", "erf", "lgamma", "digamma",
                 "erf_inv", "cbrt", "logistic"):
        arg, params, ref = FLOAT_UNARY[name]
        outs.append(b.eqn(P.primitive_by_name(name), vs[arg], **params))
        checks.append((name, ref, (arg,)))
    for name, (a1, a2, ref) in FLOAT_BINARY.items():
        outs.append(b.eqn(P.primitive_by_name(name), vs[a1], vs[a2]))
        checks.append((name, ref, (a1, a2)))
    lowered, results = run(b.build(outs), *inputs.values(), x64=True)
    assert "tensor<2x5xf64>" in lowered.as_text()
    for (name, ref, args), got in zip(checks, results, strict=True):
        assert got.dtype == np.float64
        want = ref(*[inputs[a] for a in args])
        tol = dict(rtol=1e-9, atol=1e-10) if name in ("lgamma", "digamma", "erf_inv") else {}
        assert_close(got, want, dt, err_msg=name, **tol)


def _popcount(x):
    u = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return np.vectorize(lambda v: bin(int(v)).count("1"))(u).astype(x.dtype)


def _clz(x):
    bits = 8 * x.dtype.itemsize
    u = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return np.vectorize(lambda v: bits - int(v).bit_length())(u).astype(x.dtype)


def _tdiv(x, y):
    """C-style (truncating) integer division, exact for int64 too."""
    def one(a, b):
        a, b = int(a), int(b)
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q

    out = [one(a, b) for a, b in zip(x.ravel(), y.ravel(), strict=True)]
    return np.array([np.array(v).astype(x.dtype) for v in out]).reshape(x.shape)


def _as(x, kind):
    return x.view(np.dtype(f"{kind}{x.dtype.itemsize}"))


def _sra(x, s):
    return (_as(x, "i") >> s.astype(_as(x, "i").dtype)).view(x.dtype)


def _srl(x, s):
    return (_as(x, "u") >> s.astype(_as(x, "u").dtype)).view(x.dtype)


INT_UNARY = {
    "neg": np.negative, "sign": np.sign, "abs": np.abs, "not": np.invert,
    "population_count": _popcount, "clz": _clz, "square": np.square, "copy": lambda v: v,
}
INT_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _tdiv, "rem": np.fmod,
    "max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}


def int_inputs(dt):
    info = np.iinfo(dt)
    lo, hi = max(info.min, -100), min(info.max, 100)
    x = rng.integers(lo, hi, SHAPE, endpoint=True).astype(dt)
    y = rng.integers(1, min(hi, 9), SHAPE, endpoint=True).astype(dt)
    if dtypes.is_signed_int(dt):
        y = y * np.where(rng.random(SHAPE) < 0.5, -1, 1).astype(dt)
    x.flat[0], x.flat[1] = info.max, info.min  # extremes for compares / bit ops
    s = rng.integers(0, 8 * dt.itemsize, SHAPE).astype(dt)  # shift amounts in range
    return x, y, s


@pytest.mark.parametrize("dt", INTS + [np.dtype(np.int64), np.dtype(np.uint8)],
                         ids=lambda d: d.name)
def test_int_elementwise(dt, request):
    if dt.itemsize == 8:
        request.getfixturevalue("x64")
    x, y, s = int_inputs(dt)
    b = Builder()
    vx, vy, vs_ = b.arg(SHAPE, dt), b.arg(SHAPE, dt), b.arg(SHAPE, dt)
    outs, checks = [], []
    for name, ref in INT_UNARY.items():
        if name in ("neg", "sign", "abs") and not dtypes.is_signed_int(dt):
            continue
        outs.append(b.eqn(P.primitive_by_name(name), vx))
        checks.append((name, lambda r=ref: r(x)))
    if not dtypes.is_signed_int(dt):
        outs.append(b.eqn(P.sign_p, vx))
        checks.append(("sign", lambda: (x != 0).astype(dt)))
        # (abs refuses unsigned types, as JAX's does: nothing to lower)
    outs.append(b.eqn(P.integer_pow_p, vy, y=3))
    checks.append(("integer_pow", lambda: (y.astype(np.int64) ** 3).astype(dt)))
    for name, ref in INT_BINARY.items():
        outs.append(b.eqn(P.primitive_by_name(name), vx, vy))
        checks.append((name, lambda r=ref: r(x, y)))
    for name, ref in COMPARES.items():
        outs.append(b.eqn(P.primitive_by_name(name), vx, vy))
        checks.append((name, lambda r=ref: r(x, y)))
    outs.append(b.eqn(P.shift_left_p, vx, vs_))
    checks.append(("shift_left", lambda: (_as(x, "u") << _as(s, "u")).view(dt)))
    outs.append(b.eqn(P.shift_right_arithmetic_p, vx, vs_))
    checks.append(("shift_right_arithmetic", lambda: _sra(x, s)))
    outs.append(b.eqn(P.shift_right_logical_p, vx, vs_))
    checks.append(("shift_right_logical", lambda: _srl(x, s)))
    with np.errstate(over="ignore"):
        lowered, results = run(b.build(outs), x, y, s, x64=dt.itemsize == 8)
        text = lowered.as_text()
        ct = "SIGNED" if dtypes.is_signed_int(dt) else "UNSIGNED"
        assert f"{ct} : (tensor<2x5x" in text
        short = ("ui" if dtypes.is_unsigned_int(dt) else "i") + str(8 * dt.itemsize)
        assert f"tensor<2x5x{short}>" in text
        for (name, ref), got in zip(checks, results, strict=True):
            want = ref()
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {dt}")


def test_unsigned_compare_uses_unsigned_order():
    dt = np.dtype(np.uint32)
    x = np.array([0, 1, 2**31, 2**32 - 1], dt)
    y = np.array([2**32 - 1, 2**31, 1, 0], dt)
    b = Builder()
    vx, vy = b.arg((4,), dt), b.arg((4,), dt)
    _, (lt, gt) = run(b.build([b.eqn(P.lt_p, vx, vy), b.eqn(P.gt_p, vx, vy)]), x, y)
    np.testing.assert_array_equal(lt, x < y)
    np.testing.assert_array_equal(gt, x > y)


def test_shifts_out_of_range_follow_xla():
    """Shifting by >= the bit width gives 0 (left, logical) or the sign fill."""
    dt = np.dtype(np.int32)
    x = np.array([5, -5, 7, -7], dt)
    s = np.array([32, 40, 32, 33], dt)
    b = Builder()
    vx, vs_ = b.arg((4,), dt), b.arg((4,), dt)
    outs = [b.eqn(p, vx, vs_) for p in (P.shift_left_p, P.shift_right_logical_p,
                                         P.shift_right_arithmetic_p)]
    _, (sl, srl, sra) = run(b.build(outs), x, s)
    np.testing.assert_array_equal(sl, [0, 0, 0, 0])
    np.testing.assert_array_equal(srl, [0, 0, 0, 0])
    np.testing.assert_array_equal(sra, [0, -1, 0, -1])


def test_bool_elementwise():
    x = np.array([[True, False, True, False, True], [False, False, True, True, True]])
    y = np.array([[True, True, False, False, True], [False, True, False, True, False]])
    b = Builder()
    vx, vy = b.arg(SHAPE, BOOL), b.arg(SHAPE, BOOL)
    outs, refs = [], []
    for name, ref in {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
                      "max": np.maximum, "min": np.minimum, **COMPARES}.items():
        outs.append(b.eqn(P.primitive_by_name(name), vx, vy))
        refs.append((name, ref(x, y)))
    outs.append(b.eqn(P.not_p, vx))
    refs.append(("not", ~x))
    outs.append(b.eqn(P.copy_p, vx))
    refs.append(("copy", x))
    lowered, results = run(b.build(outs), x, y)
    assert "UNSIGNED : (tensor<2x5xi1>" in lowered.as_text()
    for (name, want), got in zip(refs, results, strict=True):
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_complex_elementwise():
    dt = np.dtype(np.complex64)
    x = (rng.uniform(-1, 1, SHAPE) + 1j * rng.uniform(-1, 1, SHAPE)).astype(dt)
    y = (rng.uniform(0.5, 1, SHAPE) + 1j * rng.uniform(-1, 1, SHAPE)).astype(dt)
    re = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    b = Builder()
    vx, vy, vr = b.arg(SHAPE, dt), b.arg(SHAPE, dt), b.arg(SHAPE, np.float32)
    table = {
        "neg": (np.negative, vx), "exp": (np.exp, vx), "log": (np.log, vy),
        "sqrt": (np.sqrt, vy), "sin": (np.sin, vx), "tanh": (np.tanh, vx),
        "abs": (np.abs, vx), "real": (np.real, vx), "imag": (np.imag, vx),
        "conj": (np.conj, vx), "square": (np.square, vx),
        "sign": (lambda v: v / np.abs(v), vx), "rsqrt": (lambda v: 1 / np.sqrt(v), vy),
        "cos": (np.cos, vx), "tan": (np.tan, vx), "asin": (np.arcsin, vx),
        "acos": (np.arccos, vx), "atan": (np.arctan, vx), "sinh": (np.sinh, vx),
        "cosh": (np.cosh, vx), "asinh": (np.arcsinh, vx), "acosh": (np.arccosh, vy),
        "atanh": (np.arctanh, vx), "logistic": (lambda v: 1 / (1 + np.exp(-v)), vx),
        "expm1": (np.expm1, vx), "log1p": (np.log1p, vy), "exp2": (np.exp2, vx),
    }
    outs, refs = [], []
    for name, (ref, v) in table.items():
        outs.append(b.eqn(P.primitive_by_name(name), v))
        refs.append((name, ref((x if v is vx else y).astype(np.complex128))))
    for name, ref in {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                      "div": np.divide, "pow": np.power, "eq": np.equal,
                      "ne": np.not_equal}.items():
        outs.append(b.eqn(P.primitive_by_name(name), vx, vy))
        refs.append((name, ref(x, y)))
    outs.append(b.eqn(P.integer_pow_p, vx, y=-2))
    refs.append(("integer_pow", x ** -2))
    outs.append(b.eqn(P.complex_p, vr, vr))
    refs.append(("complex", re + 1j * re))
    outs.append(b.eqn(P.conj_p, vr))
    refs.append(("conj(real)", re.astype(dt)))
    lowered, results = run(b.build(outs), x, y, re)
    text = lowered.as_text()
    assert "tensor<2x5xcomplex<f32>>" in text and "stablehlo.complex" in text
    for (name, want), got in zip(refs, results, strict=True):
        assert_close(got, want, got.dtype, err_msg=name, rtol=1e-5, atol=1e-5)


def test_round_methods_and_special_values():
    dt = np.dtype(np.float32)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, np.inf, -np.inf, np.nan], dt)
    b = Builder()
    v = b.arg(x.shape, dt)
    outs = [b.eqn(P.round_p, v, rounding_method=0), b.eqn(P.round_p, v, rounding_method=1),
            b.eqn(P.is_finite_p, v), b.eqn(P.max_p, v, lit(0.0, dt)),
            b.eqn(P.min_p, v, lit(0.0, dt))]
    lowered, (afz, even, fin, mx, mn) = run(b.build(outs), x)
    text = lowered.as_text()
    assert "stablehlo.round_nearest_afz" in text and "stablehlo.round_nearest_even" in text
    np.testing.assert_array_equal(afz, _round_afz(x))
    np.testing.assert_array_equal(even, np.round(x))
    np.testing.assert_array_equal(fin, np.isfinite(x))
    np.testing.assert_array_equal(mx, np.maximum(x, 0))  # NaN propagates
    np.testing.assert_array_equal(mn, np.minimum(x, 0))


def test_nextafter_and_reduce_precision():
    x = np.array([1.0, -1.0, 0.0, 3.5], np.float32)
    t = np.array([2.0, -2.0, -1.0, 0.0], np.float32)
    w = np.array([1.0001, 3.14159265, -2.7182817, 1e-3], np.float32)
    b = Builder()
    vx, vt, vw = b.arg((4,), np.float32), b.arg((4,), np.float32), b.arg((4,), np.float32)
    outs = [b.eqn(P.nextafter_p, vx, vt),
            b.eqn(P.reduce_precision_p, vw, exponent_bits=5, mantissa_bits=10),
            b.eqn(P.reduce_precision_p, vw, exponent_bits=8, mantissa_bits=7)]
    lowered, (na, rp16, rpb16) = run(b.build(outs), x, t, w)
    text = lowered.as_text()
    assert "chlo.next_after" in text and "stablehlo.reduce_precision" in text
    np.testing.assert_array_equal(na, np.nextafter(x, t))
    np.testing.assert_array_equal(rp16, w.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(rpb16, w.astype(bf16).astype(np.float32))


def test_integer_pow_by_squaring():
    dt = np.dtype(np.float32)
    x = np.array([1.5, -2.0, 0.5, 3.0], dt)
    b = Builder()
    v = b.arg((4,), dt)
    ys = [0, 1, 2, 5, 8, 13, -1, -3]
    lowered, outs = run(b.build([b.eqn(P.integer_pow_p, v, y=y) for y in ys]), x)
    text = lowered.as_text()
    # x**13 by squaring: 3 squarings + 2 multiplies into the accumulator.
    assert text.count("stablehlo.multiply") == 0 + 0 + 1 + 3 + 3 + 5 + 0 + 2
    for y, got in zip(ys, outs, strict=True):
        assert_close(got, x.astype(np.float64) ** y, dt, err_msg=f"y={y}", rtol=1e-5)


def test_scalar_operands_are_broadcast():
    dt = np.dtype(np.float32)
    x = np.arange(6, dtype=dt).reshape(2, 3)
    b = Builder()
    v = b.arg((2, 3), dt)
    s = b.arg((), dt)
    outs = [b.eqn(P.sub_p, v, s), b.eqn(P.sub_p, s, v), b.eqn(P.mul_p, lit(2.0, dt), v),
            b.eqn(P.lt_p, v, s), b.eqn(P.atan2_p, s, v)]
    lowered, (a, c, d, e, f) = run(b.build(outs), x, np.float32(2.0))
    text = lowered.as_text()
    assert "stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x3xf32>" \
        in text
    np.testing.assert_array_equal(a, x - 2)
    np.testing.assert_array_equal(c, 2 - x)
    np.testing.assert_array_equal(d, 2 * x)
    np.testing.assert_array_equal(e, x < 2)
    assert_close(f, np.arctan2(2.0, x), dt)


def test_unary_dtype_acceptance_matches_lowering():
    """Every elementwise primitive lowers for every dtype its shape rule accepts."""
    names = [p.name for p in P.UNARY + P.BINARY + P.COMPARISONS]
    all_dts = FLOATS + INTS + [BOOL, np.dtype(np.complex64), np.dtype(np.int16),
                               np.dtype(np.uint8)]
    for dt in all_dts:
        b = Builder()
        v = b.arg((3,), dt)
        outs = []
        for name in names:
            prim = P.primitive_by_name(name)
            params = {"y": 2} if name == "integer_pow" else {}
            if name == "reduce_precision":
                params = {"exponent_bits": 5, "mantissa_bits": 10}
            if name == "round":
                params = {"rounding_method": 0}
            nargs = 1 if prim in P.UNARY else 2
            try:
                abstract_eval(prim, *[v.aval] * nargs, **params)
            except TypeError:
                continue
            outs.append(b.eqn(prim, *[v] * nargs, **params))
        lower_olympuspr(b.build(outs), name=f"all_{dt.name}")


# --- conversions, select_n, clamp ----------------------------------------------------------

CONVERSION_DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bf16, np.dtype(np.int32),
          np.dtype(np.int8), np.dtype(np.uint32), np.dtype(np.bool_)]
CONVERSION_IDS = [d.name for d in CONVERSION_DTYPES]


def _sample(dt):
    vals = np.array([0, 1, 2, 3, 0, 5, 7, 1], np.float64)
    if dt == np.bool_:
        return vals.astype(bool)
    if dtypes.is_float(dt):
        return (vals * np.array([1, -1] * 4) * 1.25).astype(dt)
    if dtypes.is_signed_int(dt):
        return (vals * np.array([1, -1] * 4)).astype(dt)
    return vals.astype(dt)


@pytest.mark.parametrize("src", CONVERSION_DTYPES, ids=CONVERSION_IDS)
def test_convert_element_type_to_every_dtype(src):
    x = _sample(src)
    b = Builder()
    v = b.arg(x.shape, src)
    targets = [d for d in CONVERSION_DTYPES if not (dtypes.is_unsigned_int(d) and dtypes.is_float(src))]
    outs = [b.eqn(P.convert_element_type_p, v, new_dtype=d, weak_type=False)
            for d in targets]
    lowered, results = run(b.build(outs), x)
    text = lowered.as_text()
    if src != np.bool_:
        # to bool is `x != 0`, never a convert
        assert "stablehlo.compare NE" in text
    for d, got in zip(targets, results, strict=True):
        assert got.dtype == d
        if d == np.bool_:
            want = x != 0
        elif src == np.bool_:
            want = x.astype(d)
        elif dtypes.is_integer(d) and dtypes.is_float(src):
            want = np.trunc(x.astype(np.float64)).astype(d)
        else:
            want = x.astype(np.float64).astype(d) if src == bf16 else x.astype(d)
        assert_close(got, want, d, err_msg=f"{src}->{d}")


def test_convert_same_dtype_is_identity_and_weak_type_flip():
    b = Builder()
    v = b.arg((3,), np.float32, weak=True)
    out = b.eqn(P.convert_element_type_p, v, new_dtype=np.dtype(np.float32), weak_type=False)
    lowered, (got,) = run(b.build([out]), np.array([1, 2, 3], np.float32))
    # JAX 0.10.2 lowers it to a same-type `stablehlo.convert` (XLA removes it).
    assert "stablehlo.convert %arg0 : tensor<3xf32>" in lowered.as_text()
    np.testing.assert_array_equal(got, [1, 2, 3])


def test_convert_complex_and_float_to_bool_nan():
    c = np.array([1 + 2j, 0 + 3j, 0j, -2 + 0j], np.complex64)
    f = np.array([np.nan, 0.0, -0.0, np.inf], np.float32)
    b = Builder()
    vc, vf = b.arg((4,), np.complex64), b.arg((4,), np.float32)
    outs = [b.eqn(P.convert_element_type_p, vc, new_dtype=np.dtype(np.float32)),
            b.eqn(P.convert_element_type_p, vc, new_dtype=np.dtype(np.bool_)),
            b.eqn(P.convert_element_type_p, vf, new_dtype=np.dtype(np.bool_)),
            b.eqn(P.convert_element_type_p, vf, new_dtype=np.dtype(np.complex64))]
    lowered, (re, cb, fb, fc) = run(b.build(outs), c, f)
    assert "stablehlo.real" in lowered.as_text()
    np.testing.assert_array_equal(re, c.real)
    np.testing.assert_array_equal(cb, c.real != 0)  # JAX: complex -> real part first
    np.testing.assert_array_equal(fb, [True, False, False, True])
    np.testing.assert_array_equal(fc, f.astype(np.complex64))


def test_convert_x64(x64):
    x = np.array([1.5, -2.5, 1e10], np.float64)
    b = Builder()
    v = b.arg((3,), np.float64)
    outs = [b.eqn(P.convert_element_type_p, v, new_dtype=np.dtype(np.int64)),
            b.eqn(P.convert_element_type_p, v, new_dtype=np.dtype(np.float32))]
    lowered, (i, f) = run(b.build(outs), x, x64=True)
    assert "tensor<3xi64>" in lowered.as_text()
    np.testing.assert_array_equal(i, [1, -2, 10**10])
    np.testing.assert_array_equal(f, x.astype(np.float32))


def test_bitcast_convert_type():
    x = np.array([1.0, -2.0, np.inf, 0.5], np.float32)
    b = Builder()
    v = b.arg((4,), np.float32)
    outs = [b.eqn(P.bitcast_convert_type_p, v, new_dtype=np.dtype(np.uint32)),
            b.eqn(P.bitcast_convert_type_p, v, new_dtype=np.dtype(np.int32)),
            b.eqn(P.bitcast_convert_type_p, v, new_dtype=np.dtype(np.uint16)),
            b.eqn(P.bitcast_convert_type_p, v, new_dtype=np.dtype(np.int8)),
            b.eqn(P.bitcast_convert_type_p, v, new_dtype=np.dtype(np.float32))]
    h = np.array([[1, 2], [3, 4]], np.uint16)
    vh = b.arg((2, 2), np.uint16)
    outs.append(b.eqn(P.bitcast_convert_type_p, vh, new_dtype=np.dtype(np.float32)))
    outs.append(b.eqn(P.bitcast_convert_type_p, vh, new_dtype=bf16))
    lowered, (u, i, u16, i8, same, f32, b16) = run(b.build(outs), x, h)
    text = lowered.as_text()
    assert "stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4x2xui16>" in text
    np.testing.assert_array_equal(u, x.view(np.uint32))
    np.testing.assert_array_equal(i, x.view(np.int32))
    np.testing.assert_array_equal(u16, x.view(np.uint16).reshape(4, 2))
    np.testing.assert_array_equal(i8, x.view(np.int8).reshape(4, 4))
    np.testing.assert_array_equal(same, x)
    np.testing.assert_array_equal(f32, h.reshape(-1).view(np.float32))
    np.testing.assert_array_equal(b16.view(np.uint16), h)


@pytest.mark.parametrize("dt", CONVERSION_DTYPES, ids=CONVERSION_IDS)
def test_select_n(dt):
    cases = [_sample(dt) if i % 2 else _sample(dt)[::-1].copy() for i in range(5)]
    which_b = np.array([True, False] * 4)
    which_i = np.array([0, 1, 2, 3, 4, 4, 2, 0], np.int32)
    b = Builder()
    vs = [b.arg((8,), dt) for _ in cases]
    wb, wi, ws = b.arg((8,), np.bool_), b.arg((8,), np.int32), b.arg((), np.int32)
    outs = [b.eqn(P.select_n_p, wb, vs[0], vs[1]),
            b.eqn(P.select_n_p, wi, *vs),
            b.eqn(P.select_n_p, ws, *vs[:3]),
            b.eqn(P.select_n_p, wb, vs[2]),
            b.eqn(P.select_n_p, lit(True, np.bool_), vs[0], vs[1])]
    lowered, (r_b, r_i, r_s, r_1, r_lit) = run(b.build(outs), *cases, which_b, which_i,
                                                np.int32(2))
    text = lowered.as_text()
    assert "stablehlo.select" in text
    assert "stablehlo.compare LT" in text and "SIGNED" in text
    np.testing.assert_array_equal(_v(r_b, dt), _v(np.where(which_b, cases[1], cases[0]), dt))
    np.testing.assert_array_equal(_v(r_i, dt), _v(np.choose(which_i, cases), dt))
    np.testing.assert_array_equal(_v(r_s, dt), _v(cases[2], dt))
    np.testing.assert_array_equal(_v(r_1, dt), _v(cases[2], dt))
    np.testing.assert_array_equal(_v(r_lit, dt), _v(cases[1], dt))


def _v(x, dt):
    return np.asarray(x).view(np.uint16) if dt == bf16 else np.asarray(x)


@pytest.mark.parametrize("dt", [d for d in CONVERSION_DTYPES if d != np.bool_], ids=CONVERSION_IDS[:-1])
def test_clamp(dt):
    x = _sample(dt)
    lo_v, hi_v = (np.array(1, dt), np.array(5, dt))
    b = Builder()
    v = b.arg(x.shape, dt)
    lo, hi = b.arg((), dt), b.arg(x.shape, dt)
    outs = [b.eqn(P.clamp_p, lo, v, hi), b.eqn(P.clamp_p, lit(0, dt), v, lit(2, dt))]
    his = np.full(x.shape, hi_v, dt)
    lowered, (c1, c2) = run(b.build(outs), x, lo_v, his)
    assert "stablehlo.clamp %arg1, %arg0, %arg2 : (tensor<" in lowered.as_text()
    assert_close(c1, np.clip(x.astype(np.float64), 1, 5), dt)
    assert_close(c2, np.clip(x.astype(np.float64), 0, 2), dt)


def test_mulhi_signed_unsigned_and_64_bit():
    a = np.array([-5, 2 ** 31 - 1, -2 ** 31, 7], np.int32)
    b = np.array([7, 2 ** 31 - 1, 3, -1], np.int32)
    text, (got,) = run_one(P.mulhi_p, a, b)
    assert "chlo.mulhi" in text or "stablehlo.multiply" in text
    np.testing.assert_array_equal(got, [(int(x) * int(y)) >> 32 for x, y in zip(a, b)])
    u = np.array([2 ** 32 - 1, 12345, 0], np.uint32)
    _, (got,) = run_one(P.mulhi_p, u, u)
    np.testing.assert_array_equal(got, [(int(x) * int(x)) >> 32 for x in u])
    w = np.array([2 ** 63 - 1, -3, 12345678901234], np.int64)
    b = Builder()
    vw, vr = b.arg((3,), np.int64), b.arg((3,), np.int64)
    _, (got,) = run(b.build([b.eqn(P.mulhi_p, vw, vr)]), w, w[::-1].copy(), x64=True)
    np.testing.assert_array_equal(got, [(int(x) * int(y)) >> 64
                                        for x, y in zip(w, w[::-1])])


def test_add_any_is_an_add():
    """JAX's sum of tangents lowers to stablehlo.add and adds exactly as `add` does."""
    dt = np.dtype(np.float32)
    x = np.array([1.5, -2.0, 0.25], dt)
    y = np.array([0.5, 4.0, -0.25], dt)
    b = Builder()
    u, v = b.arg((3,), dt), b.arg((3,), dt)
    lowered, (out,) = run(b.build([b.eqn(P.add_any_p, u, v)]), x, y)
    assert "stablehlo.add" in lowered.as_text()
    np.testing.assert_array_equal(out, x + y)


# --- The narrow dtypes ------------------------------------------------------------------

#: The narrow dtypes XLA's CPU client computes with (float6 it has no type for; int1 is
#: its bool and uint1 does not verify, as in JAX).
COMPUTED_NARROW = [d for d in dtypes.NARROW_DTYPES
                   if d not in dtypes.FLOAT6_DTYPES and d not in (dtypes.int1, dtypes.uint1)]


def _narrow_sample(dt):
    if dtypes.is_integer(dt):
        info = dtypes.iinfo(dt)
        return np.array([info.min, 0, 1, info.max], dt)
    if dt == dtypes.float8_e8m0fnu:  # powers of two only
        return np.array([0.25, 1.0, 2.0, 8.0], dt)
    return np.array([-1.5, 0.0, 0.5, 3.0], dt)


@pytest.mark.parametrize("dt", COMPUTED_NARROW, ids=lambda d: d.name)
def test_narrow_dtype_arithmetic_lowers_and_runs(dt):
    """``(x + x) * x`` computed in the narrow dtype (XLA's CPU backend rounds each op's
    result back to it), read out through a convert to a wide type. Reference: ml_dtypes'
    round-to-nearest-even of the exact (float32/int64) result of each op; integers wrap."""
    x = _narrow_sample(dt)
    wide = np.dtype(np.int32 if dtypes.is_integer(dt) else np.float32)
    b = Builder()
    v = b.arg(x.shape, dt)
    s = b.eqn(P.add_p, v, v)
    m = b.eqn(P.mul_p, s, v)
    out = b.eqn(P.convert_element_type_p, m, new_dtype=wide, weak_type=False)
    lowered, (got,) = run(b.build([out]), x)
    t = f"tensor<4x{dtypes.NARROW_MLIR_NAMES[dt]}>"
    assert f"stablehlo.add %arg0, %arg0 : {t}" in lowered.as_text()
    if dtypes.is_integer(dt):
        bits, lo = dtypes.iinfo(dt).bits, int(dtypes.iinfo(dt).min)

        def wrap(v):
            return (v - lo) % (1 << bits) + lo

        xi = x.astype(np.int64)
        want = wrap(wrap(xi + xi) * xi)
    else:
        xf = x.astype(np.float32)
        want = ((xf + xf).astype(dt).astype(np.float32) * xf).astype(dt).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", dtypes.NARROW_DTYPES, ids=lambda d: d.name)
def test_narrow_dtype_constants_and_conversions_lower(dt):
    """Every narrow dtype lowers (converts both ways), with the element type
    JAX 0.10.2 lowers it to; uint1 fails StableHLO's verifier, as in JAX."""
    b = Builder()
    v = b.arg((2,), np.float32)
    n = b.eqn(P.convert_element_type_p, v, new_dtype=dt, weak_type=False)
    back = b.eqn(P.convert_element_type_p, n, new_dtype=np.dtype(np.float32), weak_type=False)
    closed = b.build([n, back])
    if dt == dtypes.uint1:
        from olympus_lower import LoweringError

        with pytest.raises(LoweringError, match="failed to verify"):
            lower_olympuspr(closed, name="f")
        return
    text = lower_olympuspr(closed, name="f").as_text()
    t = dtypes.NARROW_MLIR_NAMES[dt]
    assert f"stablehlo.convert %arg0 : (tensor<2xf32>) -> tensor<2x{t}>" in text
    assert f"-> (tensor<2x{t}>" in text


@pytest.mark.parametrize("dt", [dtypes.int2, dtypes.uint2, dtypes.int4], ids=lambda d: d.name)
def test_narrow_int_concatenate_runs(dt):
    """XLA's CPU backend aborts the process on an unfused concatenate of 2-bit integers
    (reference JAX 0.10.2 does, eagerly); Olympus concatenates them as 8-bit integers."""
    x = np.array([[1, 0, 1]], dt)
    b = Builder()
    v, w = b.arg(x.shape, dt), b.arg(x.shape, dt)
    cat = b.eqn(P.concatenate_p, v, w, dimension=0)
    out = b.eqn(P.convert_element_type_p, cat, new_dtype=np.dtype(np.int32), weak_type=False)
    lowered, (got,) = run(b.build([out]), x, x)
    np.testing.assert_array_equal(got, [[1, 0, 1], [1, 0, 1]])
    if dt != dtypes.int4:
        assert "tensor<2x3xi8>" in lowered.as_text() or "tensor<2x3xui8>" in lowered.as_text()
