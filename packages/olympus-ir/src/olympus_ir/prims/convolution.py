"""``conv_general_dilated(lhs, rhs; window_strides, padding, lhs_dilation, rhs_dilation,
dimension_numbers, feature_group_count, batch_group_count, precision,
preferred_element_type)``: XLA's general convolution, with JAX's parameters.

`dimension_numbers` is a `ConvDimensionNumbers` of three tuples: ``lhs_spec`` (batch dim,
feature dim, spatial dims...), ``rhs_spec`` (output-feature dim, input-feature dim, spatial
dims...) and ``out_spec`` (batch dim, feature dim, spatial dims...). `padding` is one
``(low, high)`` pair per spatial dimension.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import dtypes
from ..avals import ShapedArray
from ..core import def_shape_rule, new_primitive
from ..pretty import def_pp_params

__all__ = ["conv_general_dilated_p", "ConvDimensionNumbers", "conv_output_shape",
           "dilate_dim"]


class ConvDimensionNumbers(NamedTuple):
    """Positions of the batch/feature/spatial dimensions of lhs, rhs and output."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


conv_general_dilated_p = new_primitive("conv_general_dilated")


def dilate_dim(d: int, dilation: int) -> int:
    return 0 if d == 0 else 1 + dilation * (d - 1)


def conv_output_shape(lhs_shape, rhs_shape, window_strides, padding, lhs_dilation,
                      rhs_dilation, dimension_numbers, batch_group_count=1):
    """The output shape of a convolution, in the out_spec layout."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    n = lhs_shape[lhs_spec[0]] // batch_group_count
    o = rhs_shape[rhs_spec[0]]
    spatial = []
    for i in range(len(lhs_spec) - 2):
        x = dilate_dim(lhs_shape[lhs_spec[i + 2]], lhs_dilation[i])
        lo, hi = padding[i]
        x = x + lo + hi
        k = dilate_dim(rhs_shape[rhs_spec[i + 2]], rhs_dilation[i])
        s = window_strides[i]
        spatial.append((x - k) // s + 1 if x >= k else 0)
    trans = (n, o) + tuple(spatial)
    out = [0] * len(trans)
    for pos, d in zip(out_spec, trans, strict=False):
        out[pos] = d
    return tuple(out)


def _check_spec(name, spec, ndim):
    if sorted(int(d) for d in spec) != list(range(ndim)):
        raise TypeError(f"conv_general_dilated {name} {tuple(spec)} must be a permutation of "
                        f"range({ndim}).")


@def_shape_rule(conv_general_dilated_p)
def conv_general_dilated_shape_rule(lhs, rhs, *, window_strides, padding, lhs_dilation,
                                    rhs_dilation, dimension_numbers, feature_group_count=1,
                                    batch_group_count=1, precision=None,
                                    preferred_element_type=None):
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise TypeError("conv_general_dilated lhs and rhs must have the same rank (at least "
                        f"2), got shapes {lhs.shape} and {rhs.shape}.")
    nsp = lhs.ndim - 2
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    for nm, spec in (("lhs_spec", lhs_spec), ("rhs_spec", rhs_spec), ("out_spec", out_spec)):
        _check_spec(nm, spec, lhs.ndim)
    for nm, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                  ("rhs_dilation", rhs_dilation)):
        if len(v) != nsp:
            raise TypeError(f"conv_general_dilated {nm} must have {nsp} entries (one per "
                            f"spatial dimension), got {tuple(v)}.")
        if any(int(s) < 1 for s in v):
            raise TypeError(f"conv_general_dilated {nm} must be positive, got {tuple(v)}.")
    if len(padding) != nsp or any(len(p) != 2 for p in padding):
        raise TypeError(f"conv_general_dilated padding must be {nsp} (low, high) pairs, got "
                        f"{padding}.")
    fg, bg = int(feature_group_count), int(batch_group_count)
    if fg < 1 or bg < 1:
        raise TypeError("conv_general_dilated feature_group_count and batch_group_count must "
                        f"be positive, got {fg} and {bg}.")
    if fg > 1 and bg > 1:
        raise TypeError("conv_general_dilated: at most one of feature_group_count and "
                        "batch_group_count may be > 1.")
    c = lhs.shape[lhs_spec[1]]
    i = rhs.shape[rhs_spec[1]]
    o = rhs.shape[rhs_spec[0]]
    if c != i * fg:  # JAX 0.10.2 raises ValueError here
        raise ValueError(
            "conv_general_dilated lhs feature dimension size divided by feature_group_count "
            f"must equal the rhs input feature dimension size, but {c} // {fg} != {i}.")
    if o % fg:
        raise TypeError("conv_general_dilated rhs output feature dimension size must be a "
                        f"multiple of feature_group_count, got {o} and {fg}.")
    if lhs.shape[lhs_spec[0]] % bg:
        raise TypeError("conv_general_dilated lhs batch dimension size must be a multiple of "
                        f"batch_group_count, got {lhs.shape[lhs_spec[0]]} and {bg}.")
    if o % bg:
        raise TypeError("conv_general_dilated rhs output feature dimension size must be a "
                        f"multiple of batch_group_count, got {o} and {bg}.")
    if preferred_element_type is None and lhs.dtype != rhs.dtype:
        raise TypeError("conv_general_dilated requires operands of the same dtype, got "
                        f"{lhs.dtype.name} and {rhs.dtype.name}.")
    if dtypes.is_bool(lhs.dtype):
        raise TypeError("conv_general_dilated does not accept boolean operands.")
    shape = conv_output_shape(lhs.shape, rhs.shape, window_strides, padding, lhs_dilation,
                              rhs_dilation, dimension_numbers, bg)
    dt = lhs.dtype if preferred_element_type is None else dtypes.dtype(preferred_element_type)
    return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)


@def_pp_params(conv_general_dilated_p)
def _conv_general_dilated_printed(eqn):
    """JAX's convolution has an `out_sharding` param (None unless sharded); Olympus's does
    not hold one but shows it, so the text reads as JAX's."""
    params = dict(eqn.params)
    params.setdefault("out_sharding", None)
    return params
