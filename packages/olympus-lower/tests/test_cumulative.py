"""cumsum, cumprod, cummax, cummin, cumlogsumexp (forward and reverse)."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, assert_close, bf16, run

from olympus_ir import abstract_eval, dtypes
from olympus_ir import primitives as P

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bf16, np.dtype(np.int32),
          np.dtype(np.int8), np.dtype(np.uint32)]
rng = np.random.default_rng(3)


def _logcumsumexp(x, axis):
    return np.log(np.cumsum(np.exp(x), axis=axis))


REFS = {
    "cumsum": np.cumsum, "cumprod": np.cumprod,
    "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate,
    "cumlogsumexp": _logcumsumexp,
}


def _ref(name, x, axis, reverse):
    xx = x.astype(np.float64) if dtypes.is_float(x.dtype) else x
    if reverse:
        xx = np.flip(xx, axis)
    out = REFS[name](xx, axis=axis)
    if reverse:
        out = np.flip(out, axis)
    return out if dtypes.is_float(x.dtype) else out.astype(x.dtype)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
def test_cumulative(dt):
    if dtypes.is_float(dt):
        x = rng.uniform(-1, 1, (3, 5)).astype(dt)
    elif dtypes.is_signed_int(dt):
        x = rng.integers(-3, 4, (3, 5)).astype(dt)
    else:
        x = rng.integers(0, 4, (3, 5)).astype(dt)
    b = Builder()
    v = b.arg(x.shape, dt)
    outs, checks = [], []
    for name in REFS:
        prim = P.primitive_by_name(name)
        try:
            abstract_eval(prim, v.aval, axis=0, reverse=False)
        except TypeError:
            continue
        for axis in (0, 1):
            for reverse in (False, True):
                outs.append(b.eqn(prim, v, axis=axis, reverse=reverse))
                checks.append((name, axis, reverse))
    lowered, results = run(b.build(outs), x)
    text = lowered.as_text()
    assert '"stablehlo.reduce_window"' in text
    assert "padding = dense<[[0, 0], [4, 0]]> : tensor<2x2xi64>" in text
    assert "padding = dense<[[0, 0], [0, 4]]> : tensor<2x2xi64>" in text
    assert "window_dimensions = array<i64: 1, 5>" in text
    for (name, axis, reverse), got in zip(checks, results, strict=True):
        want = _ref(name, x, axis, reverse)
        tol = dict(rtol=3e-2, atol=3e-2) if dt in (bf16, np.float16) else {}
        assert_close(got, want, dt, err_msg=f"{name} axis={axis} rev={reverse} {dt}", **tol)


def test_cumulative_edge_cases():
    x = np.array([-np.inf, -np.inf, 0.0, np.nan, 1.0], np.float32)
    one = np.array([[3.0]], np.float32)
    b = Builder()
    v, w = b.arg(x.shape, np.float32), b.arg(one.shape, np.float32)
    outs = [b.eqn(P.cumlogsumexp_p, v, axis=0, reverse=False),
            b.eqn(P.cummax_p, v, axis=0, reverse=False),
            b.eqn(P.cumsum_p, w, axis=1, reverse=True)]
    _, (lse, mx, s) = run(b.build(outs), x, one)
    np.testing.assert_array_equal(lse[:2], [-np.inf, -np.inf])
    assert lse[2] == 0.0 and np.isnan(lse[3]) and np.isnan(lse[4])
    np.testing.assert_array_equal(mx, [-np.inf, -np.inf, 0, np.nan, np.nan])
    np.testing.assert_array_equal(s, one)


def test_cumsum_64bit(x64):
    x = np.arange(6, dtype=np.int64) * 2**40
    b = Builder()
    v = b.arg(x.shape, np.int64)
    _, (s,) = run(b.build([b.eqn(P.cumsum_p, v, axis=0, reverse=False)]), x, x64=True)
    np.testing.assert_array_equal(s, np.cumsum(x))
