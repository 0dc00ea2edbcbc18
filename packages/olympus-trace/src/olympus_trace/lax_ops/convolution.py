"""Wrappers of `conv_general_dilated` (`olympus_ir.prims.convolution`): XLA's general
convolution as JAX's lax exposes it (`conv_general_dilated`, `conv`,
`conv_with_general_padding`, `conv_transpose`), with the dimension-number and padding
helpers (`conv_dimension_numbers`, `padtype_to_pads`)."""

from __future__ import annotations

import builtins

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.prims.convolution import ConvDimensionNumbers
from olympus_ir.prims.linalg import canonicalize_precision

from ..core import bind, get_aval
from .linalg import default_precision
from .shape_ops import rev, transpose

__all__ = ["ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations",
           "padtype_to_pads",
           "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose"]


#: What a ``dimension_numbers=`` of a convolution may be.
ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


def _shape(x):
    return get_aval(x).shape


def _check_spec_lengths(specs, lhs_shape, rhs_shape) -> None:
    """Each string spec names every dimension of the operands (JAX's first check)."""
    for i, spec in enumerate(specs):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")


def _check_spec_letters(specs) -> None:
    """JAX's checks of the letters of three string specs, in its order and words: the two
    non-spatial letters exactly once, no duplicates, one set of spatial letters."""
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        if not specs[i].count(a) == specs[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {specs[i]}.")
        if len(specs[i]) != len(set(specs[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {specs[i]}.")
    spatial = [set(spec) - set(pair) for spec, pair in zip(specs, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(specs)}.")


def _spec_from_string(spec: str, pair: tuple[str, str], rhs: str) -> tuple[int, ...]:
    """'NHWC' -> (batch, feature, spatial...) positions, the spatial dimensions in the order
    the kernel spec `rhs` lists them ('HWIO' -> (O, I, H, W))."""
    spatial = [spec.index(c) for c in rhs if c not in "OI"]
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """A `ConvDimensionNumbers` from None (NC..., OI..., NC...), a ConvDimensionNumbers, or
    three strings like ``('NHWC', 'HWIO', 'NHWC')``."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    _check_spec_lengths(dimension_numbers, lhs_shape, rhs_shape)
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def conv_general_permutations(dimension_numbers) -> tuple[tuple[int, ...], ...]:
    """The (batch, feature, spatial...) positions of three string specs such as
    ``('NHWC', 'HWIO', 'NHWC')``; spatial dimensions in the kernel spec's order."""
    lhs, rhs, out = specs = tuple(dimension_numbers)
    _check_spec_letters(specs)
    return (_spec_from_string(lhs, ("N", "C"), rhs), _spec_from_string(rhs, ("O", "I"), rhs),
            _spec_from_string(out, ("N", "C"), rhs))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (low, high) pairs for 'VALID', 'SAME' or 'SAME_LOWER' padding."""
    if not isinstance(padding, str):
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    kind = padding.upper()
    if kind == "VALID":
        return ((0, 0),) * len(in_shape)
    if kind in ("SAME", "SAME_LOWER"):
        out = []
        for n, k, s in zip(in_shape, window_shape, window_strides, strict=False):
            out_n = -(-n // s)
            total = builtins.max((out_n - 1) * s + k - n, 0)
            small, big = total // 2, total - total // 2
            out.append((small, big) if kind == "SAME" else (big, small))
        return tuple(out)
    raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
                       f"got {padding}.")


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """XLA's general convolution (JAX's `lax.conv_general_dilated`)."""
    ls, rs = _shape(lhs), _shape(rhs)
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    nsp = len(ls) - 2
    lhs_dilation = (1,) * nsp if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    window_strides = tuple(int(s) for s in window_strides)
    if isinstance(padding, str):
        lhs_sp = [ls[d] for d in dn.lhs_spec[2:]]
        k = [(rs[d] - 1) * r + 1 for d, r in zip(dn.rhs_spec[2:], rhs_dilation, strict=False)]
        padding = padtype_to_pads(lhs_sp, k, window_strides, padding)
    else:
        padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    return bind(P.conv_general_dilated_p, lhs, rhs, window_strides=window_strides,
                padding=padding, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                dimension_numbers=dn, feature_group_count=int(feature_group_count),
                batch_group_count=int(batch_group_count),
                precision=canonicalize_precision(default_precision(precision)),
                preferred_element_type=pet)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution in NCHW / OIHW layout, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """A convolution with explicit `(low, high)` padding pairs and lhs/rhs dilation, in the
    NCHW/OIHW layout (`conv_general_dilated` with default dimension numbers)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """A transposed ("deconvolution") convolution: the lhs is dilated by `strides`.

    `padding` is 'SAME', 'VALID' or explicit pairs (applied to the dilated input, as in
    JAX). With `transpose_kernel`, the kernel is flipped spatially and its I/O swapped
    (the gradient of a forward convolution)."""
    ls, rs = _shape(lhs), _shape(rhs)
    nd = len(ls)
    if dimension_numbers is None:
        dimension_numbers = {3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                             5: ("NHWDC", "HWDIO", "NHWDC")}.get(nd)
        if dimension_numbers is None:
            raise ValueError("conv_transpose: give dimension_numbers for this rank.")
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    k_sdims = dn.rhs_spec[2:]
    k_shape = [rs[d] for d in k_sdims]
    rhs_dilation = (1,) * (nd - 2) if rhs_dilation is None else tuple(rhs_dilation)
    eff_k = [(k - 1) * r + 1 for k, r in zip(k_shape, rhs_dilation, strict=False)]
    # 'SAME'/'VALID' name the forward convolution's padding; any other string goes on to
    # conv_general_dilated as it is (and fails there, unless it is 'SAME_LOWER'), as in JAX.
    if isinstance(padding, str) and padding.upper() in ("SAME", "VALID"):
        pads = []
        for k, s in zip(eff_k, strides, strict=False):
            if padding.upper() == "SAME":
                pad_len = k + s - 2
                lo = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
            else:
                pad_len = k + s - 2 + builtins.max(k - s, 0)
                lo = k - 1
            pads.append((lo, pad_len - lo))
        padding = tuple(pads)
    if transpose_kernel:
        rhs = rev(rhs, k_sdims)
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), padding, lhs_dilation=strides,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
