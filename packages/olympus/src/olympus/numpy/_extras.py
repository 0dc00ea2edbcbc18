"""Matrix-vector products with NumPy 2.2's gufunc signatures: matvec and vecmat."""

from __future__ import annotations

from olympus_ir import dtypes
from olympus_trace import lax_ops as lax

from ._util import aval_of, ensure_arraylike

__all__ = ["matvec", "vecmat"]


def _shape(x):
    return tuple(aval_of(x).shape)


def matvec(x1, x2, /):
    """``sum_n x1[..., m, n] * x2[..., n]`` with broadcast batch dimensions."""
    from ._products import matmul

    x1, x2 = ensure_arraylike("matvec", x1, x2)
    if len(_shape(x1)) < 2 or len(_shape(x2)) < 1:
        raise ValueError(f"matvec: x1 must be at least 2-D and x2 at least 1-D, got shapes "
                         f"{_shape(x1)} and {_shape(x2)}.")
    if _shape(x1)[-1] != _shape(x2)[-1]:
        raise ValueError(f"matvec: the last dimensions of x1 {_shape(x1)} and x2 "
                         f"{_shape(x2)} must match.")
    out = matmul(x1, lax.reshape(x2, _shape(x2) + (1,)))
    return lax.reshape(out, _shape(out)[:-1])


def vecmat(x1, x2, /):
    """``sum_n conj(x1[..., n]) * x2[..., n, m]`` with broadcast batch dimensions."""
    from ._products import matmul

    x1, x2 = ensure_arraylike("vecmat", x1, x2)
    if len(_shape(x1)) < 1 or len(_shape(x2)) < 2:
        raise ValueError(f"vecmat: x1 must be at least 1-D and x2 at least 2-D, got shapes "
                         f"{_shape(x1)} and {_shape(x2)}.")
    if _shape(x1)[-1] != _shape(x2)[-2]:
        raise ValueError(f"vecmat: the last dimension of x1 {_shape(x1)} must match the "
                         f"second-to-last of x2 {_shape(x2)}.")
    if dtypes.is_complex(aval_of(x1).dtype):
        x1 = lax.conj(x1)
    s = _shape(x1)
    out = matmul(lax.reshape(x1, s[:-1] + (1, s[-1])), x2)
    o = _shape(out)
    return lax.reshape(out, o[:-2] + o[-1:])
