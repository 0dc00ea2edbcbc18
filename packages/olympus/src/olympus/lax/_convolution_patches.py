"""`conv_general_dilated_patches` (the receptive fields of a convolution, flattened into
the feature dimension) and `conv_general_dilated_local` (a convolution with a separate
kernel per output position): compositions of `conv_general_dilated` and `dot_general`,
as in JAX."""

from __future__ import annotations

import math

import numpy as np

from olympus_ir.prims.linalg import canonicalize_precision
from olympus_trace import lax_ops as lax
from olympus_trace.core import get_aval

__all__ = ["conv_general_dilated_patches", "conv_general_dilated_local"]


def _moveaxis(x, src, dst):
    """`x` with dimensions `src` moved to positions `dst` (the others keep their order)."""
    nd = get_aval(x).ndim
    src = [s % nd for s in src]
    dst = [d % nd for d in dst]
    rest = [i for i in range(nd) if i not in src]
    perm = [None] * nd
    for s, d in sorted(zip(src, dst), key=lambda t: t[1]):
        perm[d] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return lax.transpose(x, perm)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches `conv_general_dilated` with a kernel of spatial shape `filter_shape`
    would see, flattened into the output's feature dimension (input channel slowest,
    then the spatial dimensions in the kernel spec's order)."""
    a = get_aval(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = lax.conv_dimension_numbers(a.shape, (1, 1) + filter_shape, dimension_numbers)
    size = math.prod(filter_shape)
    channels = a.shape[dn.lhs_spec[1]]
    # One output feature per (channel, window position): an identity over window
    # positions, repeated per channel, with feature groups keeping channels apart.
    eye = np.eye(size, dtype=a.dtype)
    kernel = np.broadcast_to(eye, (channels, size, size)).reshape(
        (channels * size, 1) + filter_shape)
    kernel = np.moveaxis(kernel, (0, 1), (dn.rhs_spec[0], dn.rhs_spec[1]))
    return lax.conv_general_dilated(
        lhs, np.ascontiguousarray(kernel), window_strides, padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dn,
        feature_group_count=channels,
        precision=None if precision is None else (precision, lax.Precision.DEFAULT),
        preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None,
                               dimension_numbers=None, precision=None):
    """An unshared convolution: `rhs` holds one kernel per output spatial position (its
    spatial dimensions index the output; its ``I`` dimension the flattened patch)."""
    p = canonicalize_precision(precision)
    if p is None:
        lhs_precision = None
    elif isinstance(p, tuple) and len(p) == 2:
        lhs_precision = p[0]
    else:
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
        precision=lhs_precision)
    _, rhs_spec, out_spec = lax.conv_dimension_numbers(
        get_aval(lhs).shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    lhs_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    out = lax.dot_general(patches, rhs, (([out_spec[1]], [rhs_spec[1]]), (lhs_b, rhs_b)),
                          precision=precision)
    return _moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))
