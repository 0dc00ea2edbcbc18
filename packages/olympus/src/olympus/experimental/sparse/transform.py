"""`sparsify`: run a function written for dense arrays with sparse (BCOO) arguments.

The function is traced to an olympuspr with the sparse arguments standing in as dense
values of their shape; the olympuspr is then evaluated equation by equation, where an
equation with a sparse input uses that primitive's sparse rule (a BCOO result, or a
dense one for products) and an equation without one is bound as traced.
"""

from __future__ import annotations

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax, tree_util
from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray
from olympus_ir.core import Literal
from olympus_trace.core import Trace, Tracer, bind, current_trace, set_current_trace

from ._base import OLYMPUSSparse
from .bcoo import (
    BCOO,
    bcoo_dot_general,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
    bcoo_reduce_sum,
    bcoo_rev,
    bcoo_squeeze,
    bcoo_transpose,
)
from .bcoo_shape_ops import (
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_conv_general_dilated,
    bcoo_dynamic_slice,
    bcoo_gather,
    bcoo_reshape,
    bcoo_slice,
)

__all__ = ["sparsify", "sparse_rules", "SparseTracer"]

#: Unary primitives with f(0) == 0: applied to the stored elements.
_ZERO_PRESERVING = ("neg", "sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh",
                    "abs", "sign", "sqrt", "square", "expm1", "log1p", "bessel_i1e", "imag",
                    "real", "conj", "copy", "stop_gradient")
#: Primitives whose result on a sparse array would be dense (JAX's list): refused with a
#: pointer to `todense`.
_DENSIFYING = ("acos", "acosh", "bessel_i0e", "cos", "cosh", "eq", "exp", "ge", "gt", "le",
               "lt", "log", "ne", "xor")


def _unary(name):
    def rule(spenv, x, **params):
        return BCOO((bind(P.__dict__[f"{name}_p"], x.data, **params), x.indices),
                    shape=x.shape, indices_sorted=x.indices_sorted,
                    unique_indices=x.unique_indices)
    return rule


def _mul(spenv, a, b):
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return bcoo_multiply_sparse(a, b)
    if isinstance(a, BCOO):
        return bcoo_multiply_dense(a, b)
    return bcoo_multiply_dense(b, a)


def _div(spenv, a, b):
    if isinstance(b, BCOO):
        raise NotImplementedError("Division by a sparse array is not implemented because it "
                                  "would result in dense output. If this is your intent, use "
                                  "sparse.todense() to convert your arguments to dense matrices.")
    return bcoo_multiply_dense(a, 1 / jnp.asarray(b))


def _dot_general(spenv, a, b, *, dimension_numbers, preferred_element_type=None, **_):
    return bcoo_dot_general(a, b, dimension_numbers=dimension_numbers,
                            preferred_element_type=preferred_element_type)


def _reduce_sum(spenv, x, *, axes, **_):
    out = bcoo_reduce_sum(x, axes=axes)
    return out.data.sum() if out.shape == () else out


def _transpose(spenv, x, *, permutation):
    return bcoo_transpose(x, permutation=permutation)


def _convert(spenv, x, *, new_dtype, **_):
    return x.astype(new_dtype)


def _integer_pow(spenv, x, *, y):
    if y <= 0:
        raise NotImplementedError(f"sparse rule for integer_pow with non-positive exponent {y} "
                                  "is not implemented because it would result in dense output. "
                                  "If this is your intent, use sparse.todense() to convert your "
                                  "arguments to dense matrices.")
    return BCOO((x.data ** y, x.indices), shape=x.shape, indices_sorted=x.indices_sorted,
                unique_indices=x.unique_indices)


def _add(spenv, a, b):
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        if a.shape != b.shape or (a.n_batch, a.n_dense) != (b.n_batch, b.n_dense):
            raise NotImplementedError("Addition between sparse matrices of different shapes "
                                      "or layouts")
        nb = a.n_batch
        bshape = tuple(max(x, y) for x, y in zip(a.shape[:nb], a.shape[:nb]))
        da = jnp.broadcast_to(a.data, bshape + a.data.shape[nb:])
        db = jnp.broadcast_to(b.data, bshape + b.data.shape[nb:])
        ia = jnp.broadcast_to(a.indices, bshape + a.indices.shape[nb:])
        ib = jnp.broadcast_to(b.indices, bshape + b.indices.shape[nb:])
        return BCOO((jnp.concatenate([da, db], nb), jnp.concatenate([ia, ib], nb)),
                    shape=a.shape)
    x, y = (a, b) if isinstance(a, BCOO) else (b, a)
    y = jnp.asarray(y)
    if y.shape != tuple(np.broadcast_shapes(x.shape, y.shape)):
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when "
            "the output shape is larger than Y.shape. This is to prevent silent densification "
            "of a large sparse array. If this is your intent, you can explicitly cast the "
            "sparse array to a dense matrix.")
    # As JAX: the dense operand has the full shape already, so the sum is dense.
    return x.todense() + y


def _sub(spenv, a, b):
    if not (isinstance(a, BCOO) and isinstance(b, BCOO)):
        raise NotImplementedError("Subtraction between sparse and dense array.")
    return _add(spenv, a, -b)


def _as_bcoo(x):
    if not isinstance(x, BCOO):
        raise NotImplementedError("sparsify: this operation needs all its operands sparse "
                                  f"or all dense; got a {type(x).__name__}")
    return x


def _slice(spenv, x, *, start_indices, limit_indices, strides=None):
    return bcoo_slice(x, start_indices=start_indices, limit_indices=limit_indices,
                      strides=strides)


def _dynamic_slice(spenv, x, *starts, slice_sizes):
    return bcoo_dynamic_slice(x, starts, slice_sizes)


def _concatenate(spenv, *xs, dimension):
    return bcoo_concatenate([_as_bcoo(x) for x in xs], dimension=dimension)


def _reshape(spenv, x, *, new_sizes, dimensions=None, **_):
    return bcoo_reshape(x, new_sizes=new_sizes, dimensions=dimensions)


def _squeeze(spenv, x, *, dimensions):
    return bcoo_squeeze(x, dimensions=dimensions)


def _expand_dims(spenv, x, *, dimensions):
    shape = list(x.shape)
    for d in sorted(dimensions):
        shape.insert(d, 1)
    kept = [i for i in range(len(shape)) if i not in set(dimensions)]
    return bcoo_broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=tuple(kept))


def _broadcast_in_dim(spenv, x, *, shape, broadcast_dimensions, **_):
    return bcoo_broadcast_in_dim(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


def _rev(spenv, x, *, dimensions):
    return bcoo_rev(x, dimensions)


def _gather(spenv, x, idx, *, dimension_numbers, slice_sizes, unique_indices=False,
            indices_are_sorted=False, mode=None, fill_value=None):
    if _is_sparse(idx):
        raise NotImplementedError("sparsify: gather with sparse indices")
    return bcoo_gather(x, idx, dimension_numbers, slice_sizes, mode=mode)


def _conv(spenv, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          dimension_numbers, feature_group_count, batch_group_count, precision=None,
          preferred_element_type=None, **_):
    return bcoo_conv_general_dilated(
        lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        precision=precision, preferred_element_type=preferred_element_type)


def _inline(sub, ins):
    return _eval(sub.olympuspr, sub.consts, ins)


def _while(spenv, *ops, cond_olympuspr, body_olympuspr, cond_nconsts, body_nconsts):
    cc, bc = ops[:cond_nconsts], ops[cond_nconsts:cond_nconsts + body_nconsts]
    init = tuple(ops[cond_nconsts + body_nconsts:])

    def cond_fun(carry):
        return _inline(cond_olympuspr, [*cc, *carry])[0]

    def body_fun(carry):
        return tuple(_inline(body_olympuspr, [*bc, *carry]))

    return list(lax.while_loop(cond_fun, body_fun, init))


def _cond(spenv, index, *ops, branches, **_):
    fns = [lambda *a, b=b: tuple(_inline(b, list(a))) for b in branches]
    return list(lax.switch(index, fns, *ops))


def _scan(spenv, *ops, olympuspr, length, reverse, num_consts, num_carry, unroll=1, **_):
    consts, init = ops[:num_consts], tuple(ops[num_consts:num_consts + num_carry])
    xs = tuple(ops[num_consts + num_carry:])
    if any(_is_sparse(x) for x in xs):
        raise NotImplementedError("sparsify: scanning over a sparse array")

    def f(carry, x):
        out = _inline(olympuspr, [*consts, *carry, *x])
        return tuple(out[:num_carry]), tuple(out[num_carry:])

    carry, ys = lax.scan(f, init, xs, length=length, reverse=reverse, unroll=unroll)
    return [*carry, *ys]


def _call(spenv, *ops, call_olympuspr, **_):
    return _inline(call_olympuspr, list(ops))


#: primitive name -> rule(spenv, *operands, **params) for equations with a sparse input.
sparse_rules = {
    "mul": _mul, "div": _div, "dot_general": _dot_general, "reduce_sum": _reduce_sum,
    "transpose": _transpose, "convert_element_type": _convert, "integer_pow": _integer_pow,
    "add": _add, "add_any": _add, "sub": _sub, "slice": _slice,
    "dynamic_slice": _dynamic_slice, "concatenate": _concatenate, "reshape": _reshape,
    "squeeze": _squeeze, "expand_dims": _expand_dims, "broadcast_in_dim": _broadcast_in_dim,
    "rev": _rev, "gather": _gather, "conv_general_dilated": _conv, "while": _while, "cond": _cond, "scan": _scan, "custom_jvp_call": _call,
    "custom_vjp_call": _call, "checkpoint": _call,
    "todense": lambda spenv, *bufs, tree: bufs[0].todense() if _is_sparse(bufs[0]) else bufs[0],
}
for _name in _ZERO_PRESERVING:
    if f"{_name}_p" in P.__dict__:
        sparse_rules.setdefault(_name, _unary(_name))


def _apply(prim, ins, params):
    """One primitive on operands some of which are sparse: its sparse rule (nested calls
    are evaluated with the sparse values). Returns the list of results."""
    name = prim.name
    if name in ("jit", "pjit", "closed_call"):
        sub = params.get("olympuspr") or params.get("call_olympuspr")
        return _eval(sub.olympuspr, sub.consts, ins)
    rule = sparse_rules.get(name)
    if rule is None:
        if name in _DENSIFYING:
            raise NotImplementedError(
                f"sparse rule for {name} is not implemented because it would "
                "result in dense output. If this is your intent, use "
                "sparse.todense() to convert your arguments to dense matrices.")
        raise NotImplementedError(f"sparse rule for {name} is not implemented.")
    out = rule(None, *ins, **params)
    return out if prim.multiple_results else [out]


def _eval(olympuspr, consts, args):
    env = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    for v, c in zip(olympuspr.constvars, consts):
        env[v] = c
    for v, a in zip(olympuspr.invars, args):
        env[v] = a
    for eqn in olympuspr.eqns:
        ins = [read(v) for v in eqn.invars]
        if any(isinstance(x, OLYMPUSSparse) for x in ins):
            outs = _apply(eqn.primitive, ins, eqn.params)
        else:
            out = bind(eqn.primitive, *ins, **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    return [read(v) for v in olympuspr.outvars]


class SparseTracer(Tracer):
    """A sparse value inside `sparsify(f, use_tracer=True)`: ``f`` sees an array of the
    sparse array's shape and dtype; each primitive applied to it runs its sparse rule."""

    __slots__ = ("val",)

    def __init__(self, trace, val):
        self._trace = trace
        self.val = val

    @property
    def aval(self):
        return ShapedArray(tuple(self.val.shape), self.val.dtype)

    def to_concrete_value(self):
        return None

    def __repr__(self):
        return f"SparseTracer[{self.val!r}]"


class _SparseTrace(Trace):
    name = "sparse"

    def __init__(self, parent):
        super().__init__()
        self.parent = parent

    def _value(self, x):
        return x.val if isinstance(x, SparseTracer) and x._trace is self else x

    def process_primitive(self, prim, args, params):
        vals = [self._value(a) for a in args]
        with set_current_trace(self.parent):
            if any(_is_sparse(v) for v in vals):
                outs = _apply(prim, vals, params)
            else:
                out = bind(prim, *vals, **params)
                outs = out if prim.multiple_results else [out]
        wrapped = [SparseTracer(self, o) if _is_sparse(o) else o for o in outs]
        return wrapped if prim.multiple_results else wrapped[0]


def _sparsify_with_tracer(f, args, kwargs):
    flat, tree = tree_util.tree_flatten((args, kwargs), is_leaf=_is_sparse)
    trace = _SparseTrace(current_trace())
    try:
        ins = [SparseTracer(trace, x) if _is_sparse(x) else x for x in flat]
        a, k = tree_util.tree_unflatten(tree, ins)
        with set_current_trace(trace):
            out = f(*a, **k)
        out = tree_util.tree_map(trace._value, out)
    finally:
        trace.invalidate()
    return out


def _is_sparse(x):
    return isinstance(x, OLYMPUSSparse)


def sparsify(f, use_tracer=False):
    """A version of `f` that accepts sparse (BCOO) arguments.

    Each primitive applied to a sparse value uses its sparse rule (products with a dense
    operand give dense results, elementwise products and zero-preserving unary functions
    keep the sparsity); a primitive without one raises NotImplementedError.

    >>> import olympus.numpy as jnp
    >>> from olympus.experimental import sparse
    >>> M = sparse.BCOO.fromdense(jnp.array([[0., 1.], [2., 0.]]))
    >>> sparse.sparsify(lambda m, v: m @ v)(M, jnp.array([1., 1.]))
    Array([1., 2.], dtype=float32)
    """
    def wrapped(*args, **kwargs):
        if use_tracer:
            return _sparsify_with_tracer(f, args, kwargs)
        flat, tree = tree_util.tree_flatten((args, kwargs), is_leaf=_is_sparse)
        shapes = [olympus.ShapeDtypeStruct(x.shape, x.dtype) if _is_sparse(x) else x
                  for x in flat]

        def dense_fn(*leaves):
            a, k = tree_util.tree_unflatten(tree, leaves)
            return f(*a, **k)

        closed, out_shape = olympus.make_olympuspr(dense_fn, return_shape=True)(*shapes)
        args = [x if _is_sparse(x) else jnp.asarray(x) for x in flat]
        outs = _eval(closed.olympuspr, closed.consts, args)
        out_tree = tree_util.tree_structure(out_shape)
        return tree_util.tree_unflatten(out_tree, outs)

    return wrapped


def _swap(f):
    return lambda x, y: f(y, x)


def _bcoo_getitem(self, idx):
    """NumPy indexing of a BCOO array (static or array indices), through `sparsify`."""
    return sparsify(lambda x: x[idx])(self)


def _bcoo_reshape(self, *args, **kwargs):
    """The same elements in a new shape (``jnp.reshape`` through `sparsify`)."""
    return sparsify(lambda x: x.reshape(*args, **kwargs))(self)


def _bcoo_sum(self, *args, **kwargs):
    """Sum along axes (``jnp.sum`` through `sparsify`; a full sum is a dense scalar)."""
    return sparsify(lambda x: x.sum(*args, **kwargs))(self)


# As JAX: BCOO's remaining methods and operators are the sparsified jax.numpy functions.
BCOO.reshape = _bcoo_reshape
BCOO.sum = _bcoo_sum
BCOO.__getitem__ = _bcoo_getitem
BCOO.__abs__ = sparsify(jnp.abs)
BCOO.__truediv__ = sparsify(jnp.divide)
BCOO.__rtruediv__ = sparsify(_swap(jnp.divide))
BCOO.__add__ = sparsify(jnp.add)
BCOO.__radd__ = sparsify(_swap(jnp.add))
BCOO.__sub__ = sparsify(jnp.subtract)
BCOO.__rsub__ = sparsify(_swap(jnp.subtract))
