"""Batching rule for ``conv_general_dilated``: the batch is folded into a dimension the
convolution already maps over independently: the lhs batch dimension (lhs batched), the rhs
output features (rhs batched), or feature groups (both batched); the output dimension is
then split."""

from __future__ import annotations

from olympus_ir import primitives as P

from .. import lax_ops
from ..batching import batching_rules
from ..core import bind, get_aval


def _merge_into(x, src, dst):
    """Merge dimension `src` of `x` into dimension `dst` (numbered without `src`), `src`
    as the major part."""
    shape = list(get_aval(x).shape)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    x = lax_ops.transpose(x, perm)
    size = shape.pop(src)
    shape[dst] *= size
    return lax_ops.reshape(x, shape)


def _split(x, d, major):
    """Split dimension `d` of `x` into ``(major, rest)``."""
    shape = list(get_aval(x).shape)
    shape[d:d + 1] = [major, shape[d] // major]
    return lax_ops.reshape(x, shape)


def _conv_rule(axis_data, vals, dims, *, dimension_numbers, feature_group_count=1,
               batch_group_count=1, **params):
    (lhs, rhs), (lb, rb) = vals, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    size = axis_data.size
    fg, bg = int(feature_group_count), int(batch_group_count)

    def conv(l, r, fg, bg):
        return bind(P.conv_general_dilated_p, l, r, dimension_numbers=dimension_numbers,
                    feature_group_count=fg, batch_group_count=bg, **params)

    if lb is not None and rb is not None:
        if bg > 1:
            new_lhs, bg = _merge_into(lhs, lb, lhs_spec[0]), bg * size
        else:
            new_lhs, fg = _merge_into(lhs, lb, lhs_spec[1]), fg * size
        out = conv(new_lhs, _merge_into(rhs, rb, rhs_spec[0]), fg, bg)
        return _split(out, out_spec[1], size), out_spec[1]
    if lb is not None:
        if bg == 1:
            out = conv(_merge_into(lhs, lb, lhs_spec[0]), rhs, fg, bg)
            return _split(out, out_spec[0], size), out_spec[0]
        # The lhs batch dimension holds `bg` groups (major): keep them outermost.
        n0 = lhs_spec[0] + (1 if lb <= lhs_spec[0] else 0)
        x = _split(lhs, n0, bg)  # (..., bg, n/bg, ...) with the batch dim still at lb'
        b_pos = lb + (1 if lhs_spec[0] < lb else 0)
        x = _merge_into(x, b_pos, lhs_spec[0] + 1)  # batch into n/bg
        x = _merge_into(x, lhs_spec[0], lhs_spec[0])  # groups back in, outermost
        out = conv(x, rhs, fg, bg)
        return _split(out, out_spec[0], size), out_spec[0]
    if fg == 1 and bg == 1:
        out = conv(lhs, _merge_into(rhs, rb, rhs_spec[0]), fg, bg)
        return _split(out, out_spec[1], size), out_spec[1]
    # Groups are the major part of the rhs output features: factor them out, fold the
    # batch into the rest, put the groups back; undo the same way on the output.
    groups = fg if fg > 1 else bg
    o0 = rhs_spec[0] + (1 if rb <= rhs_spec[0] else 0)
    r = _split(rhs, o0, groups)
    b_pos = rb + (1 if rhs_spec[0] < rb else 0)
    r = _merge_into(r, b_pos, rhs_spec[0] + 1)
    r = _merge_into(r, rhs_spec[0], rhs_spec[0])
    out = conv(lhs, r, fg, bg)
    out = _split(out, out_spec[1], groups)  # (groups, B * o/groups)
    out = _split(out, out_spec[1] + 1, size)  # (groups, B, o/groups)
    out = _merge_into(out, out_spec[1], out_spec[1] + 1)  # (B, groups * o/groups)
    return out, out_spec[1]


batching_rules[P.conv_general_dilated_p] = _conv_rule
