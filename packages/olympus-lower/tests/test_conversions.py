"""convert_element_type, bitcast_convert_type, select_n, clamp."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, assert_close, bf16, lit, run

from olympus_ir import dtypes
from olympus_ir import primitives as P

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bf16, np.dtype(np.int32),
          np.dtype(np.int8), np.dtype(np.uint32), np.dtype(np.bool_)]
ids = [d.name for d in DTYPES]


def _sample(dt):
    vals = np.array([0, 1, 2, 3, 0, 5, 7, 1], np.float64)
    if dt == np.bool_:
        return vals.astype(bool)
    if dtypes.is_float(dt):
        return (vals * np.array([1, -1] * 4) * 1.25).astype(dt)
    if dtypes.is_signed_int(dt):
        return (vals * np.array([1, -1] * 4)).astype(dt)
    return vals.astype(dt)


@pytest.mark.parametrize("src", DTYPES, ids=ids)
def test_convert_element_type_to_every_dtype(src):
    x = _sample(src)
    b = Builder()
    v = b.arg(x.shape, src)
    targets = [d for d in DTYPES if not (dtypes.is_unsigned_int(d) and dtypes.is_float(src))]
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
    assert "stablehlo.convert" not in lowered.as_text()
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


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
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


@pytest.mark.parametrize("dt", [d for d in DTYPES if d != np.bool_], ids=ids[:-1])
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
