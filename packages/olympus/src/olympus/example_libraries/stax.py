"""Stax: neural-network layers as pairs of pure functions, as JAX's example library.

A layer is ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape) -> (output_shape,
params)`` and ``apply_fun(params, inputs, **kwargs) -> outputs``. Combinators (`serial`,
`parallel`, `FanOut` ...) build layers out of layers. Output shapes of convolutions and
pools are found by abstract evaluation of the layer itself, so they always agree with what
`apply_fun` computes.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

import olympus.numpy as jnp
from olympus import lax, random
from olympus.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from olympus.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "elu", "gelu",
    "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones",
    "parallel", "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax",
    "softplus", "standardize", "zeros",
]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

# The default initializers (JAX's defaults), made once.
_GLOROT_NORMAL = glorot_normal()
_NORMAL = normal()
_NORMAL_1E6 = normal(1e-6)


def _out_shape(fn, *shapes) -> tuple:
    """The shape `fn` returns for float32 inputs of `shapes` (abstract evaluation)."""
    from olympus import ShapeDtypeStruct, eval_shape

    return tuple(eval_shape(fn, *(ShapeDtypeStruct(tuple(s), np.float32)
                                  for s in shapes)).shape)


def Dense(out_dim, W_init=_GLOROT_NORMAL, b_init=_NORMAL):  # noqa: N802, N803
    """A fully connected layer: ``inputs @ W + b``."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))  # noqa: N806
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan, filter_shape):
    it = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(it) for c in rhs_spec]


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                padding="VALID", W_init=None, b_init=_NORMAL_1E6):  # noqa: N803
    """A convolution with the given ``(lhs, rhs, out)`` layout strings."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def conv(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers)

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan, filter_shape)
        output_shape = _out_shape(conv, input_shape, kernel_shape)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return conv(inputs, W) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                         padding="VALID", W_init=None, b_init=_NORMAL_1E6):  # noqa: N803
    """A transposed convolution with the given ``(lhs, rhs, out)`` layout strings."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def conv(x, w):
        return lax.conv_transpose(x, w, strides, padding, dimension_numbers=dimension_numbers)

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan, filter_shape)
        output_shape = _out_shape(conv, input_shape, kernel_shape)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return conv(inputs, W) + b
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,  # noqa: N802
              beta_init=zeros, gamma_init=ones):
    """Normalizes over `axis` (batch statistics), then scales by gamma and shifts by
    beta (each optional)."""
    axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer applying `fun` to its inputs (no parameters)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _full_window(window_shape, strides, spec):
    """Window and strides with 1 on the batch and channel axes."""
    if spec is None:
        non_spatial = (0, len(window_shape) + 1)
    else:
        non_spatial = (spec.index("N"), spec.index("C"))
    window_shape, strides = tuple(window_shape), tuple(strides)
    for i in sorted(non_spatial):
        window_shape = window_shape[:i] + (1,) + window_shape[i:]
        strides = strides[:i] + (1,) + strides[i:]
    return window_shape, strides, non_spatial


def _pooling_layer(reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        spatial_window = tuple(window_shape)
        spatial_strides = tuple(strides or (1,) * len(window_shape))
        dims, strd, non_spatial = _full_window(spatial_window, spatial_strides, spec)

        def pool(x):
            out = lax.reduce_window(x, init_val, reducer, dims, strd, padding)
            if not average:
                return out
            # Divide by the number of in-bounds elements of each window.
            spatial_shape = tuple(d for i, d in enumerate(x.shape) if i not in non_spatial)
            counts = lax.reduce_window(jnp.ones(spatial_shape, x.dtype), 0.0, lax.add,
                                       spatial_window, spatial_strides, padding)
            for i in sorted(non_spatial):
                counts = jnp.expand_dims(counts, i)
            return out / counts

        def init_fun(rng, input_shape):
            return _out_shape(pool, input_shape), ()

        def apply_fun(params, inputs, **kwargs):
            return pool(inputs)
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
MaxPool.__doc__ = ("A max-pooling layer: `MaxPool(window_shape, strides=None, padding='VALID',\n"
                   "spec=None)` returns `(init_fun, apply_fun)`.")
SumPool = _pooling_layer(lax.add, 0.0)
SumPool.__doc__ = ("A sum-pooling layer: `SumPool(window_shape, strides=None, padding='VALID',\n"
                   "spec=None)` returns `(init_fun, apply_fun)`.")
AvgPool = _pooling_layer(lax.add, 0.0, average=True)
AvgPool.__doc__ = ("An average-pooling layer (padding excluded from the count): `AvgPool(\n"
                   "window_shape, strides=None, padding='VALID', spec=None)`.")


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num):  # noqa: N802
    """A layer copying its input to `num` outputs."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return functools.reduce(operator.add, inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):  # noqa: N802
    """A layer concatenating its inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):  # noqa: N802
    """Keeps each element with probability `rate` (scaled by ``1/rate``) in train mode;
    the identity otherwise. `apply_fun` needs an ``rng`` keyword argument."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
                "`olympus.random.key`).")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


def serial(*layers):
    """The layers applied one after the other (each gets its own rng split)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers applied side by side: input i goes to layer i."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return tuple(zip(*[init(r, shape) for init, r, shape
                           in zip(init_funs, rngs, input_shape)]))

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by ``make_layer(input_shape)`` for each input shape."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
