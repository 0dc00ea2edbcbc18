"""sort: ``stablehlo.sort`` with a comparator region.

Keys compare lexicographically over the first `num_keys` operands. Floating keys use a
total order like JAX: -0.0 and 0.0 are made equal and every NaN is made the same
positive NaN before a ``TOTALORDER`` comparison, so NaNs sort last and stable sorts
keep equal keys in order. Complex keys order by real part, then imaginary part.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir import dtypes

from .. import mlir_utils as mu
from ._registry import register_lowering


def _canonicalize_float(x, dt):
    zero = mu.full((), 0, dt)
    x = hlo.select(mu.compare(x, zero, "EQ", dt), zero, x)
    is_nan = mu.compare(x, x, "NE", dt)
    return hlo.select(is_nan, mu.full((), np.nan, dt), x)


def _keys(x, dt):
    """Scalar sort keys of one operand element, with their comparison types."""
    dt = np.dtype(dt)
    if dtypes.is_complex(dt):
        rdt = np.dtype(dtypes.finfo(dt).dtype)
        return [(_canonicalize_float(hlo.real(x), rdt), rdt, "TOTALORDER"),
                (_canonicalize_float(hlo.imag(x), rdt), rdt, "TOTALORDER")]
    if dtypes.is_float(dt):
        return [(_canonicalize_float(x, dt), dt, "TOTALORDER")]
    return [(x, dt, mu.compare_type(dt))]


def lt_comparator(lhs_args, rhs_args, key_dtypes):
    """``lhs < rhs`` lexicographically over the key operands."""
    lhs_keys, rhs_keys = [], []
    for a, b, dt in zip(lhs_args, rhs_args, key_dtypes, strict=True):
        lhs_keys += _keys(a, dt)
        rhs_keys += _keys(b, dt)
    result = None
    for (a, dt, ct), (b, _, _) in reversed(list(zip(lhs_keys, rhs_keys, strict=True))):
        lt = mu.compare(a, b, "LT", dt, ct)
        if result is None:
            result = lt
        else:
            eq = mu.compare(a, b, "EQ", dt, ct)
            result = hlo.or_(lt, hlo.and_(eq, result))
    return result


@register_lowering("sort")
def _sort_lowering(ctx, *operands, dimension, is_stable=True, num_keys=1):
    avals = ctx.avals_in
    op = hlo.SortOp([mu.aval_to_ir_type(a) for a in avals], list(operands),
                    dimension=int(dimension), is_stable=bool(is_stable))
    arg_types = []
    for a in avals:
        s = mu.scalar_type(a.dtype)
        arg_types += [s, s]

    def body(*args):
        lhs, rhs = args[0::2], args[1::2]
        k = int(num_keys)
        return [lt_comparator(lhs[:k], rhs[:k], [a.dtype for a in avals[:k]])]

    mu.build_region(op.comparator, arg_types, body)
    return list(op.results)
