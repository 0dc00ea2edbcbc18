"""`olympus.nn.initializers`: parameter initializers with JAX's calling convention.

An initializer is a function ``init(key, shape, dtype=default) -> Array``. `zeros` and
`ones` are initializers themselves; the others are factories returning one (e.g.
``glorot_uniform()(key, (3, 4))``). The default dtype is the default float dtype. The
same key gives the same values as ``jax.nn.initializers`` for real dtypes; the
variance-scaling family also accepts complex dtypes (circularly symmetric values with the
requested variance of the modulus), and `orthogonal` / `delta_orthogonal` build on
`olympus.random.orthogonal`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

import olympus.numpy as jnp
from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
    "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
    "normal", "ones", "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal",
    "xavier_uniform", "zeros",
]


class Initializer(Protocol):
    """The type of an initializer: ``init(key, shape, dtype=...) -> Array``."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None) -> Any: ...


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
        v = lax.convert_element_type(prom.to_operand(value), dt)
        return prom.broadcast_to(v, _shape(shape))

    return init


def _random():
    from .. import random

    return random


def uniform(scale=1e-2, dtype=None):
    """Uniform values in [0, scale)."""

    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return jnp.multiply(_random().uniform(key, shape, dt), np.asarray(scale, dt))

    return init


def normal(stddev=1e-2, dtype=None):
    """Normal values with mean 0 and standard deviation `stddev`."""

    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return jnp.multiply(_random().normal(key, shape, dt), np.asarray(stddev, dt))

    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """stddev * (standard normal truncated to (lower, upper))."""

    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return jnp.multiply(_random().truncated_normal(key, lower, upper, shape, dt),
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
        if not dtypes.is_inexact(dt):
            raise TypeError(f"variance_scaling: `dtype` must be a float or complex dtype, "
                            f"got {dt}")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        if dtypes.is_complex(dt):
            return _complex_variance_scaling(key, shape, dt, scale / denominator,
                                             distribution)
        variance = np.asarray(scale / denominator, dtype=dt)
        random = _random()
        if distribution == "truncated_normal":
            stddev = jnp.true_divide(lax.sqrt(variance), np.asarray(.87962566103423978, dt))
            return jnp.multiply(random.truncated_normal(key, -2, 2, shape, dt), stddev)
        if distribution == "normal":
            return jnp.multiply(random.normal(key, shape, dt), lax.sqrt(variance))
        return jnp.multiply(random.uniform(key, shape, dt, -1),
                            lax.sqrt(jnp.multiply(3, variance)))

    return init


def _complex_variance_scaling(key, shape, dtype, variance, distribution):
    """Circularly symmetric complex values z with E|z|^2 = `variance`: complex normal;
    complex normal with |z| truncated at 2 standard deviations; or uniform on a disk."""
    import olympus.numpy as jnp

    random = _random()
    real = np.zeros((), dtype).real.dtype
    if distribution == "normal":
        return random.normal(key, shape, dtype) * np.asarray(math.sqrt(variance), real)
    k_radius, k_angle = random.split(key)
    u = random.uniform(k_radius, shape, real)
    theta = random.uniform(k_angle, shape, real, 0.0, 2 * np.pi)
    if distribution == "uniform":
        # Uniform on the disk of radius R: |z| = R sqrt(u), E|z|^2 = R^2 / 2.
        modulus = jnp.sqrt(u) * np.asarray(math.sqrt(2 * variance), real)
    else:
        # |z|^2 of a unit complex normal is Exponential(1); truncate it at 4 (|z| <= 2) by
        # inverting its CDF, then rescale by the truncated mean of |z|^2.
        cut = -math.expm1(-4.0)
        mean_sq = (1 - 5 * math.exp(-4.0)) / cut
        modulus = jnp.sqrt(-jnp.log1p(-u * np.asarray(cut, real)))
        modulus = modulus * np.asarray(math.sqrt(variance / mean_sq), real)
    return (modulus * jnp.exp(1j * theta.astype(dtype))).astype(dtype)


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


def _axis(axis, ndim, what):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{what}: `column_axis` must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: `column_axis` {axis} is out of range for a shape of "
                         f"rank {ndim}")
    return axis % ndim


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Orthogonal matrices (scaled by `scale`): the axes other than `column_axis` are
    flattened into rows; if there are at least as many rows as columns the columns are
    orthonormal, otherwise the rows are. Needs a shape of rank >= 2."""

    def init(key, shape, dtype=dtype):
        import olympus.numpy as jnp

        shape = _shape(shape)
        dt = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"orthogonal initializer requires a shape of rank >= 2, got "
                             f"shape {shape}")
        axis = _axis(column_axis, len(shape), "orthogonal initializer")
        n_cols = shape[axis]
        other = shape[:axis] + shape[axis + 1:]
        n_rows = math.prod(other)
        q = _random().orthogonal(key, n_rows, (), dt, m=n_cols)
        q = jnp.moveaxis(jnp.reshape(q, other + (n_cols,)), -1, axis)
        return q * np.asarray(scale, dt)

    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Delta-orthogonal convolution kernels (Xiao et al. 2018): zero except at the centre of
    the spatial window, where the (in, out) matrix is `orthogonal(scale, column_axis)`.
    The shape must be (spatial..., in, out) with 1 to 3 spatial axes and in <= out."""

    def init(key, shape, dtype=dtype):
        import olympus.numpy as jnp

        shape = _shape(shape)
        dt = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"delta_orthogonal initializer requires a 3D, 4D or 5D shape, "
                             f"got shape {shape}")
        if shape[-2] > shape[-1]:
            raise ValueError(f"delta_orthogonal initializer requires fan_in <= fan_out "
                             f"(shape[-2] <= shape[-1]), got shape {shape}")
        mat = orthogonal(scale, column_axis, dt)(key, shape[-2:])
        spatial = shape[:-2]
        centre = np.zeros(spatial, dtype=bool)
        centre[tuple((k - 1) // 2 for k in spatial)] = True
        mask = np.asarray(centre, dt).reshape(spatial + (1, 1))
        return jnp.asarray(mask) * jnp.reshape(mat, (1,) * len(spatial) + shape[-2:])

    return init
