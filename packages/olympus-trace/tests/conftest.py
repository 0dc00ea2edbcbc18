"""Shared fixtures for the olympus-trace tests.

These tests never need jaxlib. Where a test wants concrete results (to check NumPy
semantics numerically), the `numpy_eval` fixture installs a small NumPy reference evaluator
as the eager rule (`olympus_trace.set_eval_rule`) for the primitives the tests emit,
and restores the previous rule (normally none) afterwards.
"""

from __future__ import annotations

import string

import numpy as np
import pytest

import olympus_trace
from olympus_trace.olympuspr_utils import eval_olympuspr

# --- a NumPy reference evaluator (XLA semantics) for the primitives the tests emit ----------


def _int_div(x, y):
    if np.issubdtype(x.dtype, np.integer):
        q = np.abs(x) // np.abs(y)  # XLA: truncate toward zero
        return (q * np.sign(x) * np.sign(y)).astype(x.dtype)
    return np.divide(x, y)


def _rem(x, y):
    return np.fmod(x, y)


def _dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None,
                 out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(string.ascii_letters)
    ls = [next(letters) for _ in range(lhs.ndim)]
    rs = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip(lc + lb, rc + rb):
        rs[b] = ls[a]
    out = ([ls[d] for d in lb] + [ls[d] for d in range(lhs.ndim) if d not in lc + lb]
           + [rs[d] for d in range(rhs.ndim) if d not in rc + rb])
    res = np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", lhs, rhs)
    dt = preferred_element_type or np.result_type(lhs, rhs)
    return np.asarray(res, dtype=dt)


def _gather(operand, indices, *, dimension_numbers, slice_sizes, mode, **_):
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    window_dims = [d for d in range(operand.ndim) if d not in dn.collapsed_slice_dims]
    window_shape = [slice_sizes[d] for d in window_dims]
    out_rank = len(batch_shape) + len(window_dims)
    batch_pos = [k for k in range(out_rank) if k not in dn.offset_dims]
    out_shape = [0] * out_rank
    for k, s in zip(dn.offset_dims, window_shape):
        out_shape[k] = s
    for k, s in zip(batch_pos, batch_shape):
        out_shape[k] = s
    out = np.empty(out_shape, operand.dtype)
    for bidx in np.ndindex(*batch_shape):
        start = [0] * operand.ndim
        for k, d in enumerate(dn.start_index_map):
            hi = operand.shape[d] - slice_sizes[d]
            start[d] = int(np.clip(indices[bidx + (k,)], 0, hi))  # CLIP mode
        win = operand[tuple(slice(s, s + n) for s, n in zip(start, slice_sizes))]
        win = win.reshape(window_shape)
        where = [slice(None)] * out_rank
        for k, i in zip(batch_pos, bidx):
            where[k] = i
        out[tuple(where)] = win
    return out


def _dynamic_slice(x, *starts, slice_sizes):
    starts = [int(np.clip(s, 0, d - n)) for s, d, n in zip(starts, x.shape, slice_sizes)]
    return x[tuple(slice(s, s + n) for s, n in zip(starts, slice_sizes))]


def _slice(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(a, b, c) for a, b, c in zip(start_indices, limit_indices, strides))]


def _broadcast_in_dim(x, *, shape, broadcast_dimensions, sharding=None):
    expanded = np.reshape(x, [x.shape[broadcast_dimensions.index(d)]
                              if d in broadcast_dimensions else 1 for d in range(len(shape))])
    return np.broadcast_to(expanded, shape).copy()


def _reduce(fn):
    def rule(x, *, axes, out_sharding=None):
        return np.asarray(fn(x, axis=tuple(axes)), dtype=x.dtype)
    return rule


NUMPY_RULES = {
    "neg": lambda x: np.negative(x), "sign": lambda x: np.sign(x),
    "floor": lambda x: np.floor(x), "ceil": lambda x: np.ceil(x),
    "exp": lambda x: np.exp(x), "log": lambda x: np.log(x), "sin": lambda x: np.sin(x),
    "cos": lambda x: np.cos(x), "tanh": lambda x: np.tanh(x), "abs": lambda x: np.abs(x),
    "sqrt": lambda x: np.sqrt(x), "not": lambda x: np.invert(x),
    "integer_pow": lambda x, *, y: np.asarray(x ** y, x.dtype),
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _int_div, "rem": _rem,
    "pow": np.power, "max": np.maximum, "min": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
    "select_n": lambda which, *cases: np.choose(np.asarray(which, np.int32), cases),
    "convert_element_type": lambda x, *, new_dtype, weak_type, sharding=None: np.asarray(
        x, new_dtype),
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": lambda x, *, new_sizes, dimensions, sharding=None: np.reshape(x, new_sizes),
    "transpose": lambda x, *, permutation: np.transpose(x, permutation),
    "squeeze": lambda x, *, dimensions: np.squeeze(x, tuple(dimensions)),
    "expand_dims": lambda x, *, dimensions: np.expand_dims(x, tuple(dimensions)),
    "rev": lambda x, *, dimensions: np.flip(x, tuple(dimensions)),
    "slice": _slice,
    "dynamic_slice": _dynamic_slice,
    "concatenate": lambda *xs, dimension: np.concatenate(xs, dimension),
    "reduce_sum": _reduce(np.sum), "reduce_prod": _reduce(np.prod),
    "reduce_max": _reduce(np.max), "reduce_min": _reduce(np.min),
    "reduce_and": _reduce(np.all), "reduce_or": _reduce(np.any),
    "argmax": lambda x, *, axes, index_dtype: np.argmax(x, axes[0]).astype(index_dtype),
    "argmin": lambda x, *, axes, index_dtype: np.argmin(x, axes[0]).astype(index_dtype),
    "iota": lambda *, dtype, shape, dimension, sharding=None: np.broadcast_to(
        np.arange(shape[dimension], dtype=dtype).reshape(
            [-1 if d == dimension else 1 for d in range(len(shape))]), shape).copy(),
    "dot_general": _dot_general,
    "gather": _gather,
}


def numpy_eval_rule(prim, args, params):
    args = [np.asarray(a) for a in args]
    try:
        rule = NUMPY_RULES[prim.name]
    except KeyError:
        raise NotImplementedError(f"no NumPy reference rule for {prim.name}") from None
    out = rule(*args, **params)
    return np.asarray(out)


def _installed_rule():
    from olympus_trace import core

    return core._eval_rule


@pytest.fixture
def numpy_eval():
    """Install the NumPy reference evaluator as the eager rule; restore the previous rule
    (none, unless e.g. the runtime was imported in the same session) afterwards."""
    prev = _installed_rule()
    olympus_trace.set_eval_rule(numpy_eval_rule)
    try:
        yield run_traced
    finally:
        olympus_trace.set_eval_rule(prev)


def run_traced(fun, *args, **kwargs):
    """Trace `fun` with make_olympuspr, then evaluate the olympuspr eagerly on `args`.

    Returns the flat list of outputs as NumPy arrays (needs the `numpy_eval` fixture)."""
    from olympus_trace import tree_util

    closed = olympus_trace.make_olympuspr(fun, **kwargs)(*args)
    static = kwargs.get("static_argnums", ())
    static = (static,) if isinstance(static, int) else tuple(static)
    dyn = [a for i, a in enumerate(args) if i not in static]
    leaves = [np.asarray(x, a.dtype)
              for x, a in zip(tree_util.tree_leaves(dyn), closed.in_avals)]
    outs = eval_olympuspr(closed.olympuspr, closed.consts, *leaves)
    return [np.asarray(o) for o in outs]


@pytest.fixture
def dummy_eval_rule():
    """An eager rule that records what it is asked to evaluate (and returns 0)."""
    calls = []

    def rule(prim, args, params):
        calls.append((prim.name, args, params))
        return np.float32(0)

    prev = _installed_rule()
    olympus_trace.set_eval_rule(rule)
    try:
        yield calls
    finally:
        olympus_trace.set_eval_rule(prev)
