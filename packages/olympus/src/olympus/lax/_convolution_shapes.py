"""Shape arithmetic of convolutions and windowed reductions, as ``jax.lax`` exposes it:
the permutations of string dimension specs and the output shapes, computed in Python
without tracing anything."""

from __future__ import annotations

import numpy as np

from olympus_trace.lax_ops import conv_general_permutations, padtype_to_pads

__all__ = ["conv_general_permutations", "conv_shape_tuple", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "reduce_window_shape_tuple"]


def _out_dim(padded: int, window: int, stride: int) -> int:
    return 0 if padded < window else (padded - window) // stride + 1


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution with operands in canonical (N, C, spatial...) and
    (O, I, spatial...) order; `pads` explicit pairs or a padding name."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = np.add(lhs_shape[2:], np.sum(np.array(pads).reshape(-1, 2), axis=1))
    if np.any(padded < 0):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    space = tuple(_out_dim(int(p), int(k), int(s))
                  for p, k, s in zip(padded, rhs_shape[2:], strides))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (int(batch), int(rhs_shape[0])) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The output shape of `conv_general_dilated` (no dilation) for string specs."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(tuple(np.take(lhs_shape, lhs_perm)),
                           tuple(np.take(rhs_shape, rhs_perm)), window_strides, padding)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def _transpose_padding(k: int, s: int, padding) -> tuple[int, int]:
    """The (before, after) padding of one dimension of a transposed convolution."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of `conv_transpose` for string specs."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = np.take(lhs_shape, lhs_perm)
    rhs_t = np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_transpose_padding(int(k), int(s), padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    totals = [int(np.sum(p)) for p in padding]
    space = [(i - 1) * s - k + 2 + p
             for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, totals)]
    out = (int(lhs_t[0]), int(rhs_t[0])) + tuple(int(d) for d in space)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def _dilate(shape, dilation):
    if not np.all(np.greater(dilation, 0)):
        raise TypeError(f"All dilations must be positive, got {dilation}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of a windowed reduction with explicit (low, high) `padding`."""
    if base_dilation is not None:
        operand_shape = _dilate(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = _dilate(window_dimensions, window_dilation)
    padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
    return tuple(_out_dim(p, w, s) for p, w, s in zip(padded, window_dimensions,
                                                       window_strides))
