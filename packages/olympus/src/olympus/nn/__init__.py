"""`olympus.nn`: activation functions, softmax/logsumexp, one_hot, standardize, and
`olympus.nn.initializers`.

Values are those of ``jax.nn`` (same formulas, so the same XLA arithmetic). JAX gives a few
functions custom derivatives (relu, relu6: zero gradient at the kinks; softmax: the
shift-invariant gradient); Olympus has no ``custom_jvp``, so these are written with
`where` and `stop_gradient` so that ordinary differentiation yields the same gradients.
"""

from __future__ import annotations

import math
import operator

import numpy as np

import olympus.numpy as jnp
from olympus.numpy._indexing import getitem as _getitem
from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

from .._src.custom_derivatives import custom_jvp
from .._src.eager import function as _eager_function
from .._src.library_jit import jitted as _jitted
from ..scipy.special import logsumexp
from . import initializers
from ._attention import dot_product_attention
from ._scaled import get_scaled_dot_general_config, scaled_dot_general, scaled_matmul

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "identity", "initializers", "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp",
    "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax",
    "softplus", "sparse_plus", "squareplus", "standardize", "swish", "tanh",
    "dot_product_attention", "log1mexp", "logmeanexp", "sparse_sigmoid",
    "get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul",
]


def _arr(x):
    return prom.to_operand(x)


def _inexact(x):
    (x,) = prom.promote_dtypes_inexact(x)
    return x


def _c(x, v):
    return np.asarray(v, prom.aval_of(x).dtype)


def _weak_c(x, v):
    """`v` as a constant of x's dtype and weak type (what a Python scalar gives in JAX's
    definitions), so a weakly typed input keeps a weakly typed result."""
    a = prom.aval_of(x)
    return lax.convert_element_type(v, a.dtype, a.weak_type)


def _zero_keep_nan(x):
    """0 where x is a number and x itself where it is NaN (so NaN propagates, like max)."""
    return jnp.where(jnp.equal(x, x), _weak_c(x, 0), x)


def identity(x):
    """The identity activation: returns `x` unchanged."""
    return _arr(x)


def _zeros_like(g):
    """Zeros of `g`'s type (a constant scalar for a scalar, as JAX's ``lax.full_like``)."""
    a = prom.aval_of(g)
    zero = np.zeros((), a.dtype)
    return zero if a.shape == () else lax.broadcast_in_dim(zero, a.shape, ())


@custom_jvp
@_jitted()
def relu(x):
    """max(x, 0), with gradient 0 at x == 0: as JAX, a custom_jvp around a jitted max."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(jnp.greater(x, 0), g, _zeros_like(g)))


@custom_jvp
@_jitted()
def relu6(x):
    """min(max(x, 0), 6), with gradient 0 at 0 and 6 (as JAX)."""
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select(
    jnp.bitwise_and(jnp.greater(x, 0), jnp.less(x, 6)), g, _zeros_like(g)))


@_eager_function()
def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return lax.logistic(_inexact(x))


@_jitted()
def softplus(x):
    """log(1 + exp(x)), as `jnp.logaddexp(x, 0)` (as JAX: its custom derivative keeps the
    gradient finite everywhere)."""
    return jnp.logaddexp(x, 0)


@_jitted()
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x)."""
    x = _inexact(x)
    return lax.neg(softplus(lax.neg(x)))


@_jitted()
def silu(x):
    """x * sigmoid(x)."""
    x = _inexact(x)
    return jnp.multiply(x, lax.logistic(x))


swish = silu


@_eager_function(static_argnames=("approximate",))
def gelu(x, approximate: bool = True):
    """Gaussian error linear unit: x * Phi(x) (tanh approximation if `approximate`)."""
    x = _inexact(x)
    if approximate:
        k = _c(x, np.sqrt(2 / np.pi))
        inner = jnp.multiply(k, jnp.add(x, jnp.multiply(_c(x, 0.044715), lax.integer_pow(x, 3))))
        cdf = jnp.multiply(_c(x, 0.5), jnp.add(_c(x, 1.0), lax.tanh(inner)))
        return jnp.multiply(x, cdf)
    sqrt_half = _c(x, np.sqrt(0.5))
    return jnp.multiply(jnp.multiply(_c(x, 0.5), x),
                        lax.erfc(jnp.multiply(lax.neg(x), sqrt_half)))


@_jitted()
def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = _inexact(x)
    # The inner where keeps expm1's argument finite, so gradients are in both branches.
    return jnp.where(jnp.greater(x, 0), x,
                     jnp.multiply(alpha, lax.expm1(jnp.where(jnp.greater(x, 0), 0.0, x))))


@_jitted()
def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _inexact(x)
    return jnp.add(jnp.maximum(x, _c(x, 0)),
                   jnp.multiply(alpha, lax.expm1(jnp.true_divide(jnp.minimum(x, _c(x, 0)),
                                                                 alpha))))


@_jitted()
def selu(x):
    """Scaled ELU (lambda * elu(x, alpha) with the self-normalizing constants)."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return jnp.multiply(scale, elu(x, alpha))


@_jitted()
def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x otherwise."""
    x = _arr(x)
    return jnp.where(jnp.greater_equal(x, _c(x, 0)), x, jnp.multiply(negative_slope, x))


@_jitted()
def hard_tanh(x):
    """x clipped to [-1, 1]."""
    x = _arr(x)
    return jnp.where(jnp.greater(x, 1), 1, jnp.where(jnp.less(x, -1), -1, x))


@_jitted()
def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    x = _inexact(x)
    return jnp.true_divide(relu6(jnp.add(x, _c(x, 3.0))), _c(x, 6.0))


@_jitted()
def hard_silu(x):
    """x * hard_sigmoid(x)."""
    x = _inexact(x)
    return jnp.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def tanh(x):
    """The hyperbolic-tangent activation (`olympus.numpy.tanh`)."""
    return lax.tanh(_inexact(x))


@_jitted()
def soft_sign(x):
    """x / (|x| + 1)."""
    x = _inexact(x)
    return jnp.true_divide(x, jnp.add(lax.abs(x), _c(x, 1)))


@_jitted()
def mish(x):
    """x * tanh(softplus(x))."""
    x = _inexact(x)
    return jnp.multiply(x, lax.tanh(softplus(x)))


@_jitted()
def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2."""
    x = _inexact(x)
    return jnp.true_divide(jnp.add(x, lax.sqrt(jnp.add(jnp.multiply(x, x), b))), _c(x, 2))


@_jitted()
def sparse_plus(x):
    """0 for x <= -1, (x + 1)^2 / 4 for -1 < x < 1, x for x >= 1."""
    x = _inexact(x)
    return jnp.where(jnp.less_equal(x, _c(x, -1)), _c(x, 0),
                     jnp.where(jnp.greater_equal(x, _c(x, 1)), x,
                               jnp.true_divide(lax.integer_pow(jnp.add(x, _c(x, 1)), 2),
                                               _c(x, 4))))


@_jitted(static_argnames=("axis",))
def glu(x, axis=-1):
    """Gated linear unit: the first half of `x` along `axis` times sigmoid of the second."""
    x = _arr(x)
    shape = prom.aval_of(x).shape
    axis = prom.canonicalize_axis(axis, len(shape))
    n = shape[axis]
    if n % 2:
        raise ValueError(f"glu: axis size must be divisible by 2, got {n}")
    idx1 = (slice(None),) * axis + (slice(0, n // 2),)
    idx2 = (slice(None),) * axis + (slice(n // 2, n),)
    return jnp.multiply(_getitem(x, idx1), sigmoid(_getitem(x, idx2)))


# --- softmax --------------------------------------------------------------------------------


def _axis_tuple(axis, nd):
    return prom.axes_tuple(axis, nd)


def _masked_max(x, axes, where):
    if where is not None:
        x = jnp.where(where, x, _c(x, -np.inf))
    if not axes:
        return x
    return jnp.max(x, axis=axes, keepdims=True, initial=-np.inf)


@_eager_function(static_argnames=("axis",))
def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along `axis` (an int, a tuple, or None for all axes); entries
    masked out by `where` are 0. Shifted by the (stop-gradient) maximum for stability."""
    x = _inexact(x)
    axes = _axis_tuple(axis, prom.aval_of(x).ndim)
    x_max = lax.stop_gradient(_masked_max(x, axes, where))
    x_safe = x if where is None else jnp.where(where, x, _c(x, -np.inf))
    unnormalized = lax.exp(jnp.subtract(x_safe, x_max))
    total = jnp.sum(unnormalized, axis=axes, keepdims=True) if axes else unnormalized
    result = jnp.true_divide(unnormalized, total)
    if where is not None:
        result = jnp.where(where, result, _c(result, 0))
    return result


@_eager_function(static_argnames=("axis",))
@_jitted(static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along `axis`; masked-out entries are -inf."""
    x = _inexact(x)
    axes = _axis_tuple(axis, prom.aval_of(x).ndim)
    x_max = lax.stop_gradient(_masked_max(x, axes, where))
    x_safe = x if where is None else jnp.where(where, x, _c(x, -np.inf))
    shifted = jnp.subtract(x_safe, x_max)
    e = lax.exp(shifted)
    if where is not None:
        e = jnp.where(where, e, _c(e, 0))
    total = jnp.sum(e, axis=axes, keepdims=True) if axes else e
    result = jnp.subtract(shifted, lax.log(total))
    if where is not None:
        result = jnp.where(where, result, _c(result, -np.inf))
    return result


# --- one_hot, standardize ----------------------------------------------------------------------


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encoding of the integers `x` with `num_classes` classes, the class
    dimension inserted at `axis`. Out-of-range values encode as all zeros."""
    x = _arr(x)
    from olympus_trace.core import Tracer

    if isinstance(num_classes, Tracer):  # JAX's error: the class count must be static
        from olympus_trace.errors import ConcretizationTypeError

        raise ConcretizationTypeError(
            num_classes, "The error arose in olympus.nn.one_hot argument `num_classes`.\n")
    num_classes = operator.index(num_classes)  # a float: Python's TypeError, as in JAX
    dt = dtypes.canonicalize_dtype(float if dtype is None else dtype)
    return _one_hot(x, num_classes, dtype=dt, axis=axis)


@_jitted(static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes, *, dtype, axis):
    dt = dtype
    aval = prom.aval_of(x)
    out_axis = prom.canonicalize_axis(axis, aval.ndim + 1)
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * aval.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(aval.dtype, rhs_shape, out_axis)
    return jnp.astype(jnp.equal(lhs, rhs), dt)


def _masked_mean(x, axes, where):
    if where is None:
        return jnp.mean(x, axis=axes, keepdims=True)
    w = jnp.astype(where, prom.aval_of(x).dtype)
    w = prom.broadcast_to(w, prom.aval_of(x).shape)
    return jnp.true_divide(jnp.sum(jnp.multiply(x, w), axis=axes, keepdims=True),
                           jnp.sum(w, axis=axes, keepdims=True))


@_jitted(static_argnames=("axis", "algorithm"))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon) along `axis`; mean and variance default to the
    (masked) statistics of `x`. ``algorithm="fast"`` uses E[x^2] - E[x]^2 clipped at 0 (as
    JAX); ``"stable"`` the two-pass E[(x - E[x])^2]."""
    x = _inexact(x)
    axes = _axis_tuple(axis, prom.aval_of(x).ndim)
    if mean is None:
        mean = _masked_mean(x, axes, where)
    if variance is None:
        if algorithm == "stable":
            d = jnp.subtract(x, mean)
            variance = _masked_mean(jnp.multiply(d, d), axes, where)
        elif algorithm == "fast":
            variance = jnp.subtract(_masked_mean(jnp.multiply(x, x), axes, where),
                                    jnp.multiply(mean, mean))
            variance = jnp.maximum(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.multiply(jnp.subtract(x, mean), lax.rsqrt(jnp.add(variance, epsilon)))


# --- sparse_sigmoid, log1mexp, logmeanexp -------------------------------------------------------


def _asarray_inexact(x):
    """`x` as an array, converted to the default float type unless inexact (the
    conversion of sparse_sigmoid, log1mexp and logmeanexp)."""
    x = jnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        x = x.astype(dtypes.default_float())
    return x


def sparse_sigmoid(x):
    """0 for x <= -1, (x + 1) / 2 for -1 < x < 1, 1 for x >= 1 (the derivative of
    `sparse_plus`)."""
    x = _asarray_inexact(x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate for small and large x (log(-expm1(-x)) below
    log 2, log1p(-exp(-x)) above)."""
    x = _asarray_inexact(x)
    small = x < math.log(2)
    # Feed each branch only inputs it is accurate (and finite) for, so gradients stay finite.
    xs = jnp.where(small, x, 1.0)
    xl = jnp.where(small, 1.0, x)
    return jnp.where(small, jnp.log(-jnp.expm1(-xs)), jnp.log1p(-jnp.exp(-xl)))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) along `axis` (all axes if None), computed stably; `where` masks
    out elements (the mean is over the selected ones)."""
    x = _asarray_inexact(x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    if where is None:
        axes = range(x.ndim) if axis is None else (
            (axis,) if isinstance(axis, int) else tuple(axis))
        count = math.prod(x.shape[a] for a in axes)
        return lse - jnp.asarray(math.log(count) if count else -np.inf, lse.dtype)
    count = jnp.sum(jnp.broadcast_to(jnp.asarray(where), x.shape), axis=axis,
                    keepdims=keepdims).astype(lse.dtype)
    return lse - jnp.log(count)
