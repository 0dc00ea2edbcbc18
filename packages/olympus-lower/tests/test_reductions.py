"""reduce_* and argmax/argmin."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, assert_close, bf16, run

from olympus_ir import abstract_eval, dtypes
from olympus_ir import primitives as P

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bf16, np.dtype(np.int32),
          np.dtype(np.int8), np.dtype(np.uint32), np.dtype(np.bool_)]
rng = np.random.default_rng(1)


def _data(shape, dt):
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dtypes.is_float(dt):
        return rng.uniform(-2, 2, shape).astype(dt)
    if dtypes.is_signed_int(dt):
        return rng.integers(-3, 4, shape).astype(dt)
    return rng.integers(0, 4, shape).astype(dt)


NP = {
    "reduce_sum": np.sum, "reduce_prod": np.prod, "reduce_max": np.max,
    "reduce_min": np.min, "reduce_and": np.bitwise_and.reduce,
    "reduce_or": np.bitwise_or.reduce, "reduce_xor": np.bitwise_xor.reduce,
}


def _ref(name, x, axes):
    f = NP[name]
    if name in ("reduce_and", "reduce_or", "reduce_xor"):
        out = x
        for a in sorted(axes, reverse=True):
            out = f(out, axis=a)
        return out
    if name in ("reduce_sum", "reduce_prod") and dtypes.is_float(x.dtype):
        return f(x.astype(np.float64), axis=axes)
    return f(x, axis=axes).astype(x.dtype)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
def test_reductions(dt):
    x = _data((3, 4, 2), dt)
    e = np.zeros((0, 3), dt)
    b = Builder()
    vx, ve = b.arg(x.shape, dt), b.arg(e.shape, dt)
    outs, checks = [], []
    for name in NP:
        prim = P.primitive_by_name(name)
        try:
            abstract_eval(prim, vx.aval, axes=(0,))
        except TypeError:
            continue
        for axes in [(0,), (1, 2), (0, 1, 2), ()]:
            outs.append(b.eqn(prim, vx, axes=axes))
            checks.append((name, axes, _ref(name, x, axes)))
        # Reducing an empty axis gives the init value.
        outs.append(b.eqn(prim, ve, axes=(0,)))
        checks.append((name, "empty", _empty_ref(name, dt)))
    for name, f in (("argmax", np.argmax), ("argmin", np.argmin)):
        prim = P.primitive_by_name(name)
        for axis in (0, 2):
            outs.append(b.eqn(prim, vx, axes=(axis,), index_dtype=np.dtype(np.int32)))
            checks.append((name, (axis,), f(x, axis=axis)))
    lowered, results = run(b.build(outs), x, e)
    text = lowered.as_text()
    assert "stablehlo.reduce(" in text
    for (name, axes, want), got in zip(checks, results, strict=True):
        msg = f"{name} {axes} {dt}"
        if name.startswith("arg"):
            assert got.dtype == np.int32
            np.testing.assert_array_equal(got, want, err_msg=msg)
        else:
            assert got.dtype == dt, msg
            tol = dict(rtol=5e-2, atol=5e-2) if dt in (bf16, np.float16) else {}
            assert_close(got, np.asarray(want), dt, err_msg=msg, **tol)


def _empty_ref(name, dt):
    dt = np.dtype(dt)
    if name == "reduce_sum" or name in ("reduce_or", "reduce_xor"):
        return np.zeros(3, dt)
    if name == "reduce_prod":
        return np.ones(3, dt)
    if name == "reduce_and":
        return np.full(3, True if dt == np.bool_ else np.array(-1).astype(dt), dt)
    if name == "reduce_max":
        if dt == np.bool_:
            return np.zeros(3, bool)
        return np.full(3, -np.inf if dtypes.is_float(dt) else np.iinfo(dt).min, dt)
    if name == "reduce_min":
        if dt == np.bool_:
            return np.ones(3, bool)
        return np.full(3, np.inf if dtypes.is_float(dt) else np.iinfo(dt).max, dt)
    raise AssertionError(name)


def test_reduce_text_form():
    b = Builder()
    x = b.arg((3, 4), np.float32)
    lowered, (s,) = run(b.build([b.eqn(P.reduce_sum_p, x, axes=(1,))]),
                        np.ones((3, 4), np.float32))
    text = lowered.as_text()
    assert "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>" in text
    assert ("stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1]"
            " : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>") in text
    np.testing.assert_array_equal(s, [4, 4, 4])


def test_reduce_max_min_nan_and_inf():
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf], [np.inf, 2, 1]],
                 np.float32)
    b = Builder()
    v = b.arg(x.shape, np.float32)
    outs = [b.eqn(P.reduce_max_p, v, axes=(1,)), b.eqn(P.reduce_min_p, v, axes=(1,))]
    _, (mx, mn) = run(b.build(outs), x)
    np.testing.assert_array_equal(mx, [np.nan, -np.inf, np.inf])
    np.testing.assert_array_equal(mn, [np.nan, -np.inf, 1])


def test_argmax_argmin_nan_ties_and_index_dtypes():
    x = np.array([
        [1.0, 3.0, 3.0, 2.0],        # tie: first max
        [np.nan, 1.0, np.nan, 5.0],  # NaN wins, first NaN
        [1.0, 2.0, np.nan, 9.0],     # NaN wins over larger numbers
        [-np.inf, -np.inf, -np.inf, -np.inf],
        [np.inf, 0.0, np.inf, -np.inf],
    ], np.float32)
    b = Builder()
    v = b.arg(x.shape, np.float32)
    outs = [b.eqn(P.argmax_p, v, axes=(1,), index_dtype=np.dtype(np.int32)),
            b.eqn(P.argmin_p, v, axes=(1,), index_dtype=np.dtype(np.int32)),
            b.eqn(P.argmax_p, v, axes=(0,), index_dtype=np.dtype(np.uint8)),
            b.eqn(P.argmin_p, v, axes=(0,), index_dtype=np.dtype(np.int8))]
    lowered, (amax, amin, amax0, amin0) = run(b.build(outs), x)
    text = lowered.as_text()
    assert "stablehlo.iota dim = 1 : tensor<5x4xi32>" in text
    np.testing.assert_array_equal(amax, np.argmax(x, axis=1))  # numpy: NaN wins, first
    np.testing.assert_array_equal(amin, np.argmin(x, axis=1))
    np.testing.assert_array_equal(amax0, np.argmax(x, axis=0))
    assert amax0.dtype == np.uint8 and amin0.dtype == np.int8
    np.testing.assert_array_equal(amin0, np.argmin(x, axis=0))


def test_argmax_many_equal_picks_first():
    x = np.zeros(1000, np.float32)
    x[[17, 400, 999]] = 1.0
    y = np.full(1000, np.nan, np.float32)
    b = Builder()
    v, w = b.arg((1000,), np.float32), b.arg((1000,), np.float32)
    outs = [b.eqn(P.argmax_p, v, axes=(0,), index_dtype=np.dtype(np.int32)),
            b.eqn(P.argmin_p, v, axes=(0,), index_dtype=np.dtype(np.int32)),
            b.eqn(P.argmax_p, w, axes=(0,), index_dtype=np.dtype(np.int32))]
    _, (a, c, d) = run(b.build(outs), x, y)
    assert a == 17 and c == 0 and d == 0


def test_reductions_64bit(x64):
    x = np.arange(12, dtype=np.int64).reshape(3, 4) * (2**40)
    f = np.linspace(0, 1, 12).reshape(3, 4)
    b = Builder()
    v, w = b.arg(x.shape, np.int64), b.arg(f.shape, np.float64)
    outs = [b.eqn(P.reduce_sum_p, v, axes=(0,)), b.eqn(P.reduce_max_p, w, axes=(1,)),
            b.eqn(P.argmax_p, w, axes=(1,), index_dtype=np.dtype(np.int64))]
    lowered, (s, m, a) = run(b.build(outs), x, f, x64=True)
    assert "tensor<4xi64>" in lowered.as_text()
    np.testing.assert_array_equal(s, x.sum(0))
    np.testing.assert_array_equal(m, f.max(1))
    np.testing.assert_array_equal(a, [3, 3, 3])
