"""JVP and transpose rules for conv_general_dilated (bilinear in lhs and rhs).

The transposes are convolutions again (the standard ones):

* w.r.t. lhs: convolve the cotangent with the spatially reversed kernel whose in/out
  feature dimensions are swapped, with the window strides becoming lhs dilation and the
  padding chosen so the result has the lhs's shape; feature groups move into the kernel's
  output-feature dimension (batch groups likewise, then back out of the result's features).
* w.r.t. rhs: convolve lhs with the cotangent, treating batch as the contracted feature
  dimension; window strides become rhs dilation; feature groups become batch groups and
  vice versa.
"""

from __future__ import annotations

import numpy as np

from olympus_ir import primitives as P
from olympus_ir.prims.convolution import ConvDimensionNumbers, dilate_dim

from .. import lax_ops as lax
from ..ad import Zero, add_tangents, is_undefined_primal, jvp_rules, tangent_aval, transpose_rules
from ..core import bind, get_aval
from ._util import aval_of


def conv(lhs, rhs, **params):
    return bind(P.conv_general_dilated_p, lhs, rhs, **params)


def _conv_jvp(primals, tangents, **params):
    x, y = primals
    tx, ty = tangents
    out = conv(x, y, **params)
    t = Zero(tangent_aval(get_aval(out)))
    if not isinstance(tx, Zero):
        t = add_tangents(t, conv(tx, y, **params))
    if not isinstance(ty, Zero):
        t = add_tangents(t, conv(x, ty, **params))
    return out, t


def reshape_axis_out_of(src, size1, x):
    """Split axis `src` of `x` into (size1, rest)."""
    shape = list(get_aval(x).shape)
    size2 = shape[src] // size1
    shape[src:src + 1] = [size1, size2]
    return lax.reshape(x, tuple(shape))


def reshape_axis_into(src, dst, x):
    """Merge axis `src` into axis `dst` (an index into the shape without `src`): `src`
    becomes the major part of the merged axis."""
    shape = get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [shape[i] for i in range(len(shape)) if i != src]
    new_shape[dst] *= shape[src]
    return lax.reshape(lax.transpose(x, perm), tuple(new_shape))


def _spec_transpose(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _lhs_vjp_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                     lhs_dilation, rhs_dilation):
    lhs_d = [dilate_dim(d, s) for d, s in zip(in_shape, lhs_dilation, strict=False)]
    rhs_d = [dilate_dim(d, s) for d, s in zip(window_dimensions, rhs_dilation, strict=False)]
    out_d = [dilate_dim(d, s) for d, s in zip(out_shape, window_strides, strict=False)]
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding, strict=False)]
    after = [x + k - 1 - o - b for x, k, o, b in zip(lhs_d, rhs_d, out_d, before, strict=False)]
    return tuple(zip(before, after, strict=False))


def _rhs_vjp_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                     lhs_dilation, rhs_dilation):
    lhs_d = [dilate_dim(d, s) for d, s in zip(in_shape, lhs_dilation, strict=False)]
    rhs_d = [dilate_dim(d, s) for d, s in zip(window_dimensions, rhs_dilation, strict=False)]
    out_d = [dilate_dim(d, s) for d, s in zip(out_shape, window_strides, strict=False)]
    lo = [p[0] for p in padding]
    hi = [(o - x) + (k - lo_ - 1) for o, x, k, lo_ in zip(out_d, lhs_d, rhs_d, lo, strict=False)]
    return tuple(zip(lo, hi, strict=False))


def _transpose_lhs(g, lhs_aval, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_sdims, rhs_sdims, out_sdims = lhs_spec[2:], rhs_spec[2:], out_spec[2:]
    t_rhs_spec = _spec_transpose(rhs_spec)
    fg = feature_group_count
    if feature_group_count > 1:
        rhs = reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    elif batch_group_count > 1:
        rhs = reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        fg = batch_group_count
    trans_dn = ConvDimensionNumbers(tuple(out_spec), tuple(t_rhs_spec), tuple(lhs_spec))
    rhs_shape = get_aval(rhs).shape
    g_shape = get_aval(g).shape
    pad = _lhs_vjp_padding([lhs_aval.shape[d] for d in lhs_sdims],
                           [rhs_shape[d] for d in rhs_sdims], window_strides,
                           [g_shape[d] for d in out_sdims], padding, lhs_dilation,
                           rhs_dilation)
    revd = lax.rev(rhs, tuple(rhs_sdims))
    out = conv(g, revd, window_strides=tuple(lhs_dilation), padding=pad,
               lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
               dimension_numbers=trans_dn, feature_group_count=fg, batch_group_count=1,
               precision=precision, preferred_element_type=preferred_element_type)
    if batch_group_count > 1:
        out = reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _transpose_rhs(g, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_sdims, rhs_sdims, out_sdims = lhs_spec[2:], rhs_spec[2:], out_spec[2:]
    lhs_t, rhs_t, out_t = map(_spec_transpose, dimension_numbers)
    fg, bg = feature_group_count, batch_group_count
    if bg > 1:
        fg, bg = bg, 1
    elif fg > 1:
        fg, bg = 1, fg
    trans_dn = ConvDimensionNumbers(tuple(lhs_t), tuple(out_t), tuple(rhs_t))
    lhs_shape = get_aval(lhs).shape
    g_shape = get_aval(g).shape
    pad = _rhs_vjp_padding([lhs_shape[d] for d in lhs_sdims],
                           [rhs_aval.shape[d] for d in rhs_sdims], window_strides,
                           [g_shape[d] for d in out_sdims], padding, lhs_dilation,
                           rhs_dilation)
    return conv(lhs, g, window_strides=tuple(rhs_dilation), padding=pad,
                lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
                dimension_numbers=trans_dn, feature_group_count=fg, batch_group_count=bg,
                precision=precision, preferred_element_type=preferred_element_type)


def _fix_dtype(x, aval):
    if get_aval(x).dtype != aval.dtype:
        x = lax.convert_element_type(x, aval.dtype)
    return x


def _conv_transpose(ct, lhs, rhs, **params):
    la, ra = aval_of(lhs), aval_of(rhs)
    if isinstance(ct, Zero):
        return [Zero(la) if is_undefined_primal(lhs) else None,
                Zero(ra) if is_undefined_primal(rhs) else None]
    params = dict(params)
    params.setdefault("feature_group_count", 1)
    params.setdefault("batch_group_count", 1)
    params.setdefault("precision", None)
    params.setdefault("preferred_element_type", None)
    ct_dt = get_aval(ct).dtype
    params_t = dict(params, preferred_element_type=None)
    out_l = out_r = None
    if is_undefined_primal(lhs):
        if np.prod(la.shape) == 0 or np.prod(get_aval(ct).shape) == 0:
            out_l = Zero(la)
        else:
            r = lax.convert_element_type(rhs, ct_dt) if get_aval(rhs).dtype != ct_dt else rhs
            out_l = _fix_dtype(_transpose_lhs(ct, la, r, **params_t), la)
    if is_undefined_primal(rhs):
        if np.prod(ra.shape) == 0 or np.prod(get_aval(ct).shape) == 0:
            out_r = Zero(ra)
        else:
            x = lax.convert_element_type(lhs, ct_dt) if get_aval(lhs).dtype != ct_dt else lhs
            out_r = _fix_dtype(_transpose_rhs(ct, x, ra, **params_t), ra)
    return [out_l, out_r]


jvp_rules[P.conv_general_dilated_p] = _conv_jvp
transpose_rules[P.conv_general_dilated_p] = _conv_transpose
