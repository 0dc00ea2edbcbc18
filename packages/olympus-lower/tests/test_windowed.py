"""reduce_window_sum/max/min: lowered (and verified), executed on the CPU and compared
against a numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import assert_close, run_one

from olympus_ir import primitives as P

rng = np.random.default_rng(7)
F32 = np.dtype(np.float32)


def _rand(shape, dt=F32):
    return rng.standard_normal(shape).astype(dt)


# --- windowed reductions --------------------------------------------------------------------

_RW = {"reduce_window_sum": (np.sum, 0.0), "reduce_window_max": (np.max, -np.inf),
       "reduce_window_min": (np.min, np.inf)}


def _reduce_window_ref(x, op, init, window, strides, padding, base_dil, win_dil):
    x = x.astype(np.float64)
    xd = np.full(tuple((d - 1) * b + 1 for d, b in zip(x.shape, base_dil, strict=True)), init)
    xd[tuple(slice(None, None, b) for b in base_dil)] = x
    xp = np.pad(xd, padding, constant_values=init)
    span = tuple((w - 1) * d + 1 for w, d in zip(window, win_dil, strict=True))
    v = np.lib.stride_tricks.sliding_window_view(xp, span)
    nd = x.ndim
    v = v[tuple(slice(None, None, s) for s in strides)
          + tuple(slice(None, None, d) for d in win_dil)]
    return op(v, axis=tuple(range(nd, 2 * nd)))


@pytest.mark.parametrize("name", sorted(_RW))
@pytest.mark.parametrize("shape,window,strides,padding,base_dil,win_dil", [
    ((4, 6), (2, 3), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((5, 7), (3, 2), (2, 3), ((1, 1), (0, 2)), (1, 1), (1, 1)),
    ((4, 5), (2, 2), (1, 2), ((1, 0), (1, 1)), (2, 1), (1, 2)),
])
def test_reduce_window(name, shape, window, strides, padding, base_dil, win_dil):
    x = _rand(shape)
    prim = P.primitive_by_name(name)
    text, (out,) = run_one(prim, x, window_dimensions=window, window_strides=strides,
                        padding=padding, base_dilation=base_dil, window_dilation=win_dil)
    assert '"stablehlo.reduce_window"' in text
    op, init = _RW[name]
    ref = _reduce_window_ref(x, op, init, window, strides, padding, base_dil, win_dil)
    assert out.shape == ref.shape
    assert_close(out, ref, rtol=1e-5, atol=1e-5)
