"""`i0` and the Kaiser window (the other windows live in `_numeric`)."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_trace import array_ops as ops
from olympus_trace import lax_ops as lax

from ._numeric import _window
from ._util import ensure_arraylike, promote_dtypes_inexact


def i0(x):
    """The modified Bessel function of the first kind of order 0, I0(x) = exp(|x|) i0e(x)
    (real input; differentiable)."""
    from ..lax import bessel_i0e

    x = ensure_arraylike("i0", x)
    (x,) = promote_dtypes_inexact(x)
    if dtypes.is_complex(ops.aval_of(x).dtype):
        raise TypeError(f"i0 supports real input only, got {ops.aval_of(x).dtype}.")
    return ops.multiply(lax.exp(lax.abs(x)), bessel_i0e(x))


def kaiser(M, beta):
    """The Kaiser window of length M with shape parameter beta:
    I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta), computed as a ratio of exponentially
    scaled Bessel functions so that large beta does not overflow."""
    from ..lax import bessel_i0e

    if np.ndim(M) != 0:
        raise TypeError(f"kaiser: M must be an integer, got an array of shape {np.shape(M)}.")

    def fn(n, M):
        dt = ops.aval_of(n).dtype
        b = lax.convert_element_type(ops._to_array_operand(beta), dt)
        r = ops.subtract(ops.true_divide(ops.multiply(n, np.asarray(2, dt)),
                                         np.asarray(M - 1, dt)), np.asarray(1, dt))
        arg = ops.multiply(b, lax.sqrt(ops.subtract(np.asarray(1, dt), ops.multiply(r, r))))
        ratio = ops.true_divide(bessel_i0e(arg), bessel_i0e(ops.broadcast_to(b, (M,))))
        return ops.multiply(ratio, lax.exp(ops.subtract(lax.abs(arg), lax.abs(b))))

    return _window(M, fn)
