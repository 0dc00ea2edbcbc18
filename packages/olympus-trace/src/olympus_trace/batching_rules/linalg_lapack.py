"""Batching rules for the matrix decompositions and solves, fft and top_k.

These primitives already treat leading dimensions as batch dimensions: the vmapped batch
dimension stays where it is when it is one of them, and moves to the front only when it
sits among the trailing dimensions the primitive works on.
"""

from __future__ import annotations

from olympus_ir import primitives as P

from .. import lax_ops
from ..batching import batching_rules, matchaxis, moveaxis
from ..core import bind, get_aval
from ._util import rank


def _keep_leading(x, b, n_trailing):
    """`x` with its batch dimension `b` among the leading (non-trailing) dimensions."""
    nd = get_aval(x).ndim
    if b < nd - n_trailing:
        return x, b
    return moveaxis(x, b, 0), 0


def _trailing_batcher(prim, n_trailing):
    def rule(axis_data, vals, dims, **params):
        (x,), (b,) = vals, dims
        k = n_trailing(params) if callable(n_trailing) else n_trailing
        x, b = _keep_leading(x, b, k)
        out = bind(prim, x, **params)
        if prim.multiple_results:
            return list(out), [b] * len(out)
        return out, b

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


def _triangular_solve_rule(axis_data, vals, dims, *, left_side=False, **params):
    (a, b), (ad, bd) = vals, dims
    size = axis_data.size
    if ad is None and rank(a, None) == 2 and rank(b, bd) == 2:
        # One matrix `a`, many right-hand sides: fold the batch into b's free dimension
        # (its columns when solving from the left, its rows from the right).
        m, n = get_aval(b).shape[:bd] + get_aval(b).shape[bd + 1:]
        if left_side:
            b2 = moveaxis(b, bd, 1) if bd == 0 else b  # (m, B, n) or (m, n, B)
            pos = 1 if bd == 0 else bd
            shape = get_aval(b2).shape
            out = bind(P.triangular_solve_p, a, lax_ops.reshape(b2, (m, shape[1] * shape[2])),
                       left_side=left_side, **params)
            return lax_ops.reshape(out, shape), pos
        b2 = moveaxis(b, bd, 0) if bd == 2 else b  # (B, m, n) or (m, B, n)
        pos = 0 if bd == 2 else bd
        shape = get_aval(b2).shape
        out = bind(P.triangular_solve_p, a, lax_ops.reshape(b2, (shape[0] * shape[1], n)),
                   left_side=left_side, **params)
        return lax_ops.reshape(out, shape), pos
    # General case: both share the batch dimension, among the leading ones.
    first_x, first_d = (a, ad) if ad is not None else (b, bd)
    _, target = _keep_leading(first_x, first_d, 2)
    a = matchaxis(size, ad, target, a)
    b = matchaxis(size, bd, target, b)
    return bind(P.triangular_solve_p, a, b, left_side=left_side, **params), target


def _front_batcher(prim):
    """For primitives of several operands sharing their leading (batch) dimensions: each
    operand's batch dimension moved (or broadcast) to the front."""

    def rule(axis_data, vals, dims, **params):
        vals = [matchaxis(axis_data.size, d, 0, v) for v, d in zip(vals, dims, strict=True)]
        return bind(prim, *vals, **params), 0

    rule.__name__ = f"_{prim.name}_batch_rule"
    return rule


for _p in (P.cholesky_p, P.lu_p, P.qr_p, P.eigh_p, P.svd_p, P.eig_p, P.hessenberg_p,
           P.tridiagonal_p, P.schur_p):
    batching_rules[_p] = _trailing_batcher(_p, 2)
batching_rules[P.triangular_solve_p] = _triangular_solve_rule
for _p in (P.ormqr_p, P.householder_product_p, P.symmetric_product_p,
           P.tridiagonal_solve_p):
    batching_rules[_p] = _front_batcher(_p)
batching_rules[P.lu_pivots_to_permutation_p] = _trailing_batcher(
    P.lu_pivots_to_permutation_p, 1)
batching_rules[P.fft_p] = _trailing_batcher(P.fft_p, lambda params: len(params["fft_lengths"]))
batching_rules[P.top_k_p] = _trailing_batcher(P.top_k_p, 1)
