"""dot_general: dimension numbers, precision config, preferred element type."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, assert_close, bf16, run

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.prims.linalg import Precision, canonicalize_precision
from olympus_lower import lower_olympuspr
from olympus_lower.rules.linalg import precision_config

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bf16, np.dtype(np.int32),
          np.dtype(np.int8), np.dtype(np.uint32), np.dtype(np.bool_)]
rng = np.random.default_rng(2)


def _data(shape, dt):
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dtypes.is_float(dt):
        return rng.uniform(-1, 1, shape).astype(dt)
    return rng.integers(0 if dtypes.is_unsigned_int(dt) else -3, 4, shape).astype(dt)


def _ref(lhs, rhs, dt):
    if dt == np.bool_:
        return lhs.astype(np.int64), rhs.astype(np.int64)
    if dtypes.is_float(dt):
        return lhs.astype(np.float64), rhs.astype(np.float64)
    return lhs.astype(np.int64), rhs.astype(np.int64)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
def test_dot_general(dt):
    a = _data((3, 4), dt)
    bb = _data((4, 5), dt)
    ba = _data((2, 3, 4), dt)
    bbb = _data((2, 5, 4), dt)
    v = _data((4,), dt)
    b = Builder()
    va, vb, vba, vbb, vv = (b.arg(x.shape, dt) for x in (a, bb, ba, bbb, v))
    outs = [
        b.eqn(P.dot_general_p, va, vb, dimension_numbers=(((1,), (0,)), ((), ()))),
        b.eqn(P.dot_general_p, vba, vbb, dimension_numbers=(((2,), (2,)), ((0,), (0,)))),
        b.eqn(P.dot_general_p, vv, vv, dimension_numbers=(((0,), (0,)), ((), ()))),
        b.eqn(P.dot_general_p, va, vv, dimension_numbers=(((), ()), ((), ()))),  # outer
        b.eqn(P.dot_general_p, vb, va, dimension_numbers=(((0,), (1,)), ((), ())),
              precision=(Precision.HIGHEST, Precision.HIGHEST)),
    ]
    lowered, (mm, bmm, vdot, outer, mmt) = run(b.build(outs), a, bb, ba, bbb, v)
    text = lowered.as_text()
    assert "stablehlo.dot_general" in text
    assert "batching_dims = [0] x [0], contracting_dims = [2] x [2]" in text
    A, B = _ref(a, bb, dt)
    BA, BB = _ref(ba, bbb, dt)
    V, _ = _ref(v, v, dt)
    wants = [A @ B, np.einsum("bik,bjk->bij", BA, BB), V @ V, np.multiply.outer(A, V),
             B.T @ A.T]
    for name, got, want in zip(["mm", "bmm", "vdot", "outer", "mmt"],
                               [mm, bmm, vdot, outer, mmt], wants, strict=True):
        assert got.dtype == dt, name
        if dt == np.bool_:
            want = want != 0
        elif not dtypes.is_float(dt):
            want = want.astype(dt)  # wraps like XLA
        tol = dict(rtol=3e-2, atol=3e-2) if dt in (bf16, np.float16) else dict(rtol=1e-5,
                                                                             atol=1e-5)
        assert_close(got, want, dt, err_msg=f"{name} {dt}", **tol)


def test_precision_config_forms():
    """The wrappers canonicalize every accepted form to None or a pair of `Precision`
    values; lowering turns a pair into StableHLO's precision config."""
    b = Builder()
    x = b.arg((2, 2), np.float32)
    dn = (((1,), (0,)), ((), ()))
    forms = (None, "default", "high", "highest", ("highest", "default"),
             (Precision.HIGH, Precision.DEFAULT), Precision.HIGH)
    outs = [b.eqn(P.dot_general_p, x, x, dimension_numbers=dn,
                  precision=canonicalize_precision(p)) for p in forms]
    lowered, results = run(b.build(outs), np.eye(2, dtype=np.float32))
    text = lowered.as_text()
    assert "precision = [DEFAULT, DEFAULT]" in text
    assert text.count("precision = [HIGH, HIGH]") == 2
    assert "precision = [HIGHEST, HIGHEST]" in text
    assert "precision = [HIGHEST, DEFAULT]" in text
    assert "precision = [HIGH, DEFAULT]" in text
    assert text.count("precision =") == 6  # None -> no precision_config
    for r in results:
        np.testing.assert_array_equal(r, np.eye(2))
    from olympus_lower import get_context
    with get_context():
        assert precision_config(None) is None



def test_preferred_element_type():
    a = rng.integers(-100, 100, (3, 4)).astype(np.int8)
    bb = rng.integers(-100, 100, (4, 2)).astype(np.int8)
    f = rng.uniform(-1, 1, (3, 4)).astype(bf16)
    g = rng.uniform(-1, 1, (4, 2)).astype(bf16)
    b = Builder()
    va, vb, vf, vg = (b.arg(x.shape, x.dtype) for x in (a, bb, f, g))
    dn = (((1,), (0,)), ((), ()))
    outs = [
        b.eqn(P.dot_general_p, va, vb, dimension_numbers=dn,
              preferred_element_type=np.dtype(np.int32)),
        b.eqn(P.dot_general_p, vf, vg, dimension_numbers=dn,
              preferred_element_type=np.dtype(np.float32)),
        b.eqn(P.dot_general_p, va, vb, dimension_numbers=dn,
              preferred_element_type=np.dtype(np.float32)),
        b.eqn(P.dot_general_p, va, vg, dimension_numbers=dn,
              preferred_element_type=np.dtype(np.float32)),
    ]
    lowered, (i32, f32, if32, mixed) = run(b.build(outs), a, bb, f, g)
    text = lowered.as_text()
    assert "(tensor<3x4xi8>, tensor<4x2xi8>) -> tensor<3x2xi32>" in text
    assert "(tensor<3x4xbf16>, tensor<4x2xbf16>) -> tensor<3x2xf32>" in text
    assert i32.dtype == np.int32 and f32.dtype == np.float32
    np.testing.assert_array_equal(i32, a.astype(np.int32) @ bb.astype(np.int32))
    assert_close(f32, f.astype(np.float64) @ g.astype(np.float64), np.float32, rtol=1e-5,
                 atol=1e-5)
    np.testing.assert_array_equal(if32, (a.astype(np.int32) @ bb.astype(np.int32)))
    assert_close(mixed, a.astype(np.float64) @ g.astype(np.float64), np.float32, rtol=1e-5,
                 atol=1e-4)


def test_mixed_operand_dtypes_without_preferred_type():
    """Issue 17: operands of different dtypes give the higher-precision dtype (JAX 0.10.2's
    dot_general rule: int32 x float32 is float32, uint8 x int8 is int8, bfloat16 x float16
    is bfloat16), each operand converted to it before the dot."""
    a = rng.integers(-3, 4, (3, 4)).astype(np.int32)
    f = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
    u = rng.integers(0, 4, (3, 4)).astype(np.uint8)
    s = rng.integers(-3, 4, (4, 2)).astype(np.int8)
    h = rng.uniform(-1, 1, (3, 4)).astype(bf16)
    g = rng.uniform(-1, 1, (4, 2)).astype(np.float16)
    b = Builder()
    va, vf, vu, vs, vh, vg = (b.arg(x.shape, x.dtype) for x in (a, f, u, s, h, g))
    dn = (((1,), (0,)), ((), ()))
    outs = [b.eqn(P.dot_general_p, x, y, dimension_numbers=dn)
            for x, y in ((va, vf), (vu, vs), (vh, vg))]
    _, (af, us, hg) = run(b.build(outs), a, f, u, s, h, g)
    assert (af.dtype, us.dtype, hg.dtype) == (np.float32, np.int8, bf16)
    assert_close(af, a.astype(np.float64) @ f.astype(np.float64), np.float32, rtol=1e-5,
                 atol=1e-5)
    np.testing.assert_array_equal(us, (u.astype(np.int8) @ s).astype(np.int8))
    assert_close(hg, h.astype(np.float64) @ g.astype(bf16).astype(np.float64), bf16,
                 rtol=2e-2, atol=2e-2)


def test_dot_general_complex_and_f64(x64):
    c = (rng.uniform(-1, 1, (2, 3)) + 1j * rng.uniform(-1, 1, (2, 3))).astype(np.complex64)
    d = rng.uniform(-1, 1, (3, 3))
    b = Builder()
    vc, vd = b.arg(c.shape, np.complex64), b.arg(d.shape, np.float64)
    dn = (((1,), (0,)), ((), ()))
    outs = [b.eqn(P.dot_general_p, vc, vc, dimension_numbers=(((1,), (1,)), ((), ()))),
            b.eqn(P.dot_general_p, vd, vd, dimension_numbers=dn)]
    lowered, (cc, dd) = run(b.build(outs), c, d, x64=True)
    assert "tensor<3x3xf64>" in lowered.as_text()
    assert_close(cc, c @ c.T, np.complex64, rtol=1e-5, atol=1e-5)
    assert_close(dd, d @ d, np.float64)


def test_dot_general_lowering_only_text():
    b = Builder()
    x = b.arg((2, 3), np.float32)
    y = b.arg((3, 4), np.float32)
    out = b.eqn(P.dot_general_p, x, y, dimension_numbers=(((1,), (0,)), ((), ())))
    text = lower_olympuspr(b.build([out]), name="mm").as_text()
    assert ("stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
            "(tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>") in text
