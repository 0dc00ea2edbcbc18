"""`olympus.nn.initializers`: parameter initializers with JAX's calling convention.

An initializer is a function ``init(key, shape, dtype=default) -> Array``. `zeros` and
`ones` are initializers themselves; the others are factories returning one (e.g.
``glorot_uniform()(key, (3, 4))``). Real dtypes only for the random ones (default float
dtype if `dtype` is None). The same key gives the same values as ``jax.nn.initializers``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from olympus_ir import dtypes
from olympus_trace import array_ops as ops
from olympus_trace import lax_ops as lax

__all__ = [
    "constant", "glorot_normal", "glorot_uniform", "he_normal",
    "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
    "normal", "ones", "truncated_normal", "uniform", "variance_scaling", "xavier_normal",
    "xavier_uniform", "zeros",
]


def _dtype(dtype):
    return dtypes.canonicalize_dtype(float if dtype is None else dtype)


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    return tuple(operator.index(d) for d in shape)


def _full(shape, value, dtype):
    return lax.broadcast_in_dim(np.asarray(value, dtype), _shape(shape), ())


def zeros(key, shape, dtype=None):
    """An array of zeros (`key` is ignored)."""
    return _full(shape, 0, _dtype(dtype))


def ones(key, shape, dtype=None):
    """An array of ones (`key` is ignored)."""
    return _full(shape, 1, _dtype(dtype))


def constant(value, dtype=None):
    """An initializer returning arrays full of `value`."""

    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        v = lax.convert_element_type(ops._to_array_operand(value), dt)
        return ops.broadcast_to(v, _shape(shape))

    return init


def _random():
    from .. import random

    return random


def uniform(scale=1e-2, dtype=None):
    """Uniform values in [0, scale)."""

    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return ops.multiply(_random().uniform(key, shape, dt), np.asarray(scale, dt))

    return init


def normal(stddev=1e-2, dtype=None):
    """Normal values with mean 0 and standard deviation `stddev`."""

    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return ops.multiply(_random().normal(key, shape, dt), np.asarray(stddev, dt))

    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """stddev * (standard normal truncated to (lower, upper))."""

    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return ops.multiply(_random().truncated_normal(key, lower, upper, shape, dt),
                            np.asarray(stddev, dt))

    return init


def _compute_fans(shape: Sequence[int], in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the input and output sizes times the receptive-field size (the
    product of the axes that are neither input, output nor batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly.")

    def size(axes):
        if isinstance(axes, int):
            return shape[axes]
        return math.prod(shape[i] for i in axes)

    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Values with variance ``scale / n``, n being fan_in, fan_out, their mean ("fan_avg")
    or geometric mean ("fan_geo_avg"), from a "truncated_normal" (truncated at 2 standard
    deviations, then rescaled), "normal" or "uniform" distribution."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key, shape, dtype=dtype):
        shape = _shape(shape)
        dt = _dtype(dtype)
        if not dtypes.is_float(dt):
            raise NotImplementedError(
                f"variance_scaling supports real floating dtypes only, got {dt}")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = np.asarray(scale / denominator, dtype=dt)
        random = _random()
        if distribution == "truncated_normal":
            stddev = ops.true_divide(lax.sqrt(variance), np.asarray(.87962566103423978, dt))
            return ops.multiply(random.truncated_normal(key, -2, 2, shape, dt), stddev)
        if distribution == "normal":
            return ops.multiply(random.normal(key, shape, dt), lax.sqrt(variance))
        return ops.multiply(random.uniform(key, shape, dt, -1),
                            lax.sqrt(ops.multiply(3, variance)))

    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """variance_scaling(1.0, "fan_avg", "uniform") (Xavier uniform)."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """variance_scaling(1.0, "fan_avg", "truncated_normal") (Xavier normal)."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """variance_scaling(1.0, "fan_in", "uniform")."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """variance_scaling(1.0, "fan_in", "truncated_normal")."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """variance_scaling(2.0, "fan_in", "uniform") (Kaiming uniform)."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """variance_scaling(2.0, "fan_in", "truncated_normal") (Kaiming normal)."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal
