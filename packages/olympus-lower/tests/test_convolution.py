"""conv_general_dilated: lowered (and verified), executed on the CPU and compared against a
numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import assert_close, run_one

from olympus_ir import primitives as P
from olympus_ir.prims.convolution import ConvDimensionNumbers as CDN

rng = np.random.default_rng(7)
F32 = np.dtype(np.float32)


def _rand(shape, dt=F32):
    return rng.standard_normal(shape).astype(dt)


# --- convolution ----------------------------------------------------------------------------

def _conv_ref(x, w, strides, padding, lhs_dil, rhs_dil, fg):
    """NCHW x OIHW -> NCHW by explicit loops over output positions (float64)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    xd = np.zeros((n, c, (h - 1) * lhs_dil[0] + 1, (wd - 1) * lhs_dil[1] + 1))
    xd[:, :, ::lhs_dil[0], ::lhs_dil[1]] = x
    xp = np.pad(xd, ((0, 0), (0, 0)) + tuple((max(lo, 0), max(hi, 0)) for lo, hi in padding))
    crop = tuple(slice(max(-lo, 0), xp.shape[2 + k] - max(-hi, 0))
                 for k, (lo, hi) in enumerate(padding))
    xp = xp[(slice(None), slice(None)) + crop]
    kd = np.zeros((o, i, (kh - 1) * rhs_dil[0] + 1, (kw - 1) * rhs_dil[1] + 1))
    kd[:, :, ::rhs_dil[0], ::rhs_dil[1]] = w
    KH, KW = kd.shape[2:]
    oh = (xp.shape[2] - KH) // strides[0] + 1
    ow = (xp.shape[3] - KW) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    kg = kd.reshape(fg, o // fg, i, KH, KW)
    for a in range(oh):
        for b in range(ow):
            patch = xp[:, :, a * strides[0]:a * strides[0] + KH,
                       b * strides[1]:b * strides[1] + KW]
            patch = patch.reshape(n, fg, i, KH, KW)
            out[:, :, a, b] = np.einsum("ngikl,goikl->ngo", patch, kg).reshape(n, o)
    return out


NCHW = CDN((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))


@pytest.mark.parametrize("xs,ws,strides,padding,lhs_dil,rhs_dil,fg", [
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1),
    ((1, 2, 7, 7), (3, 2, 3, 3), (2, 1), ((1, 1), (2, 0)), (1, 1), (1, 2), 1),
    ((1, 4, 5, 6), (6, 2, 2, 3), (1, 2), ((1, -1), (0, 1)), (2, 1), (1, 1), 2),
])
def test_conv_general_dilated_nchw(xs, ws, strides, padding, lhs_dil, rhs_dil, fg):
    x, w = _rand(xs), _rand(ws)
    text, (out,) = run_one(P.conv_general_dilated_p, x, w, window_strides=strides,
                        padding=padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
                        dimension_numbers=NCHW, feature_group_count=fg, batch_group_count=1,
                        precision=None, preferred_element_type=None)
    assert "stablehlo.convolution" in text
    assert_close(out, _conv_ref(x, w, strides, padding, lhs_dil, rhs_dil, fg),
                 rtol=1e-5, atol=1e-5)


def test_conv_general_dilated_nhwc():
    x, w = _rand((2, 6, 5, 3)), _rand((3, 2, 3, 4))  # NHWC, HWIO
    dn = CDN((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    _, (out,) = run_one(P.conv_general_dilated_p, x, w, window_strides=(1, 1),
                     padding=((1, 1), (0, 0)), lhs_dilation=(1, 1), rhs_dilation=(1, 1),
                     dimension_numbers=dn)
    ref = _conv_ref(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1),
                    ((1, 1), (0, 0)), (1, 1), (1, 1), 1)
    assert_close(out, ref.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
