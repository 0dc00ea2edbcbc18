"""The transformation APIs: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev,
hessian, vmap. Each flattens pytrees and calls the flat machinery in olympus-trace."""

from __future__ import annotations

import collections
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import olympus.numpy as jnp
import olympus_trace.ad_rules  # noqa: F401  (fills the rule tables)
import olympus_trace.batching_rules  # noqa: F401
from olympus.numpy._indexing import getitem as _getitem
from olympus_ir import dtypes
from olympus_ir.core import Olympuspr
from olympus_trace import ad, batching, tree_util
from olympus_trace import lax_ops as lax
from olympus_trace.core import EvalTrace, Tracer, get_aval, trace_ctx
from olympus_trace.hitypes import MappingSpec
from olympus_trace.make_olympuspr import abstractify
from olympus_trace.staging import DebugInfo, fun_source_info, trace_to_olympuspr

from . import vmappable
from .config import config


def _check_callable(fun, name):
    if not callable(fun):
        raise TypeError(f"{name} requires a callable argument, got {fun!r}")


def _to_jnp_arrays(leaves, what):
    out = []
    for x in leaves:
        try:
            get_aval(x)
        except TypeError:
            raise TypeError(
                f"{what} arguments must be arrays or scalars, got {type(x).__name__}: {x!r}"
            ) from None
        out.append(x)
    return out


# --- forward mode -----------------------------------------------------------------------------


def _flat_fun_aux(fun, in_tree, out_store, has_aux):
    """Flatten `fun`; with `has_aux` the flat function returns (outputs, aux leaves)."""

    def flat(*leaves):
        args = tree_util.tree_unflatten(in_tree, list(leaves))
        out = fun(*args)
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("has_aux=True requires fun to return a pair (output, aux), "
                                f"got {type(out).__name__}")
            out, aux = out
            aux_leaves, aux_tree = tree_util.tree_flatten(aux)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if has_aux:
            out_store.append((out_tree, aux_tree))
            return out_leaves, aux_leaves
        out_store.append(out_tree)
        return out_leaves

    return flat


def jvp(fun: Callable, primals, tangents, has_aux: bool = False):
    """``(fun(*primals), d fun(primals)[tangents])``."""
    _check_callable(fun, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to olympus.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to olympus.jvp must have the same tree structure; "
            f"primals have tree structure {p_tree} whereas tangents have tree structure "
            f"{t_tree}."
        )
    store: list = []
    inner = _flat_fun_aux(fun, p_tree, store, has_aux)
    naux: list = []

    def flat(*leaves):
        if not has_aux:
            return inner(*leaves)
        outs, aux = inner(*leaves)
        naux.append(len(aux))
        return list(outs) + list(aux)  # aux values come back as primals (tangents dropped)

    out_p, out_t = ad.jvp_flat(flat, _to_jnp_arrays(p_leaves, "jvp"), t_leaves)
    if has_aux:
        out_tree, aux_tree = store[0]
        m = len(out_p) - naux[0]
        aux = tree_util.tree_unflatten(aux_tree, out_p[m:])
        out_p, out_t = out_p[:m], out_t[:m]
    else:
        out_tree = store[0]
    res = (tree_util.tree_unflatten(out_tree, out_p), tree_util.tree_unflatten(out_tree, out_t))
    return (*res, aux) if has_aux else res


def linearize(fun: Callable, *primals, has_aux: bool = False):
    """``(fun(*primals), f_jvp)`` where `f_jvp` evaluates the JVP at `primals` cheaply."""
    _check_callable(fun, "linearize")
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    store: list = []
    dbg = DebugInfo("linearize", fun_source_info(fun), ())
    res = ad.linearize_flat(_flat_fun_aux(fun, p_tree, store, has_aux), p_leaves, dbg,
                            has_aux=has_aux)
    outs, lin = res[0], res[1]
    out_tree = store[0][0] if has_aux else store[0]

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != p_tree:
            raise ValueError(f"linearized function called on tangents with tree structure "
                             f"{t_tree}, expected {p_tree}")
        for t, p in zip(t_leaves, p_leaves):  # JAX's check, before the JVP sees them
            p_aval = get_aval(p)
            want = ad.tangent_aval(p_aval)
            got = get_aval(t)
            if got.shape != want.shape or got.dtype != want.dtype:
                raise ValueError(
                    "linearized function called on tangent values inconsistent with the "
                    f"original primal values:\nGot tangent aval {got.str_short(False)} for "
                    f"primal aval {p_aval.str_short(False)} but expected "
                    f"{want.str_short(False)}.")
        return tree_util.tree_unflatten(out_tree, [ad.instantiate(t) for t in
                                                   lin.jvp(t_leaves)])

    out = tree_util.tree_unflatten(out_tree, outs)
    if has_aux:
        return out, f_jvp, tree_util.tree_unflatten(store[0][1], res[2])
    return out, f_jvp


# --- reverse mode -----------------------------------------------------------------------------


def _like_primal(ct, primal_aval):
    """A cotangent takes its primal's weak type (grad of a Python float is weakly typed)."""
    ca = get_aval(ct)
    if ca.weak_type != primal_aval.weak_type and ca.dtype == primal_aval.dtype:
        return lax.convert_element_type(ct, ca.dtype, primal_aval.weak_type)
    return ct


def _vjp(fun, primals, has_aux, what, need_outputs=True, named_after=None):
    """The flat machinery of vjp. Returns (out leaves or None, out tree, out avals, f_vjp,
    aux or None)."""
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    _to_jnp_arrays(p_leaves, what)
    store: list = []
    dbg = DebugInfo(what, fun_source_info(named_after or fun), ())
    res = ad.linearize_flat(_flat_fun_aux(fun, p_tree, store, has_aux), p_leaves, dbg,
                            has_aux=has_aux, primal_outputs_needed=need_outputs)
    outs, lin = res[0], res[1]
    out_tree = store[0][0] if has_aux else store[0]
    aux = tree_util.tree_unflatten(store[0][1], res[2]) if has_aux else None
    out_avals = lin.out_avals
    # The pullback is a pytree (as JAX's): its residuals are the leaves, so it can be
    # returned from a jitted function and passed into one (`fwd_and_bwd`).
    f_vjp = tree_util.Partial(_Pullback(lin.without_values(), out_tree, p_tree),
                             list(lin.residuals))
    return outs, out_tree, out_avals, f_vjp, aux


class _Pullback:
    """The static part of a vjp's pullback: the linear olympuspr and the trees and types;
    called with the residuals (the pytree leaves of the pullback) and the cotangents."""

    def __init__(self, lin, out_tree, p_tree):
        self.lin, self.out_tree, self.p_tree = lin, out_tree, p_tree

    def __call__(self, residuals, ct):
        lin, out_tree, out_avals = self.lin, self.out_tree, self.lin.out_avals
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(
                "Tree structure of cotangent input "
                f"{ct_tree}, does not match structure of primal output {out_tree}."
            )
        for c, a in zip(ct_leaves, out_avals):
            ca = get_aval(c) if not (isinstance(c, np.ndarray) and c.dtype == dtypes.float0) \
                else ad.tangent_aval(a)
            want = ad.tangent_aval(a)
            if ca.shape != a.shape or (dtypes.is_inexact(want.dtype) and
                                       dtypes.canonicalize_dtype(ca.dtype) != want.dtype):
                raise ValueError(
                    "unexpected OLYMPUS type (e.g. shape/dtype) for argument to VJP function: "
                    f"got {_type_str(ca)}, but expected {_type_str(want)} because the "
                    "corresponding output of the differentiated function had OLYMPUS type "
                    f"{_type_str(a)}")
        # A NumPy cotangent takes its canonical dtype (strongly typed), as JAX takes it.
        ct_leaves = [ad.Zero(ad.tangent_aval(a)) if isinstance(c, np.ndarray) and
                     c.dtype == dtypes.float0 else
                     np.asarray(c, dtypes.canonicalize_dtype(c.dtype))
                     if isinstance(c, (np.ndarray, np.generic)) else c
                     for c, a in zip(ct_leaves, out_avals)]
        cts = lin.transpose(ct_leaves, residuals)
        cts = [_zeros_for_aval(a) if isinstance(c, ad.Zero) else c
               for c, a in zip(cts, lin.in_avals)]
        return tuple(tree_util.tree_unflatten(self.p_tree, cts))

    def __repr__(self) -> str:
        return "<vjp pullback>"


def _type_str(aval) -> str:
    """``float32[2,3]``: JAX's spelling of a type in its messages."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=()):
    """``(fun(*primals), f_vjp)`` where ``f_vjp(ct)`` pulls an output cotangent back.
    `reduce_axes` is JAX's deprecated argument: only its empty default is accepted."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to vjp is deprecated")
    _check_callable(fun, "vjp")
    outs, out_tree, _, f_vjp, aux = _vjp(fun, primals, has_aux, "vjp")
    out = tree_util.tree_unflatten(out_tree, outs)
    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


def _zeros_for_aval(a):
    """The zero cotangent of a primal of type `a`: an array of its dtype and weak type (as
    JAX returns the gradient of an input the output does not depend on), float0 for
    integers."""
    if dtypes.is_inexact(a.dtype):
        return _like_primal(jnp.zeros(a.shape, a.dtype), a)
    return np.zeros(a.shape, dtypes.float0)


def _one_like(aval):
    """The cotangent seed of a scalar output: weakly typed if the output is (a Python scalar,
    which stages as a weak literal), so gradients of weakly typed functions stay weak without
    a conversion, as in JAX."""
    if aval.weak_type:
        one = 1.0 if dtypes.is_float(aval.dtype) else 1 + 0j
        if dtypes.python_scalar_dtype(one) == aval.dtype:
            return one
    return np.ones((), aval.dtype)


def _seed_array(c, out_aval):
    """`c` as an array if it is the gradient seed itself (a NumPy or Python scalar), typed as
    the seed: the output's dtype and weak type."""
    if isinstance(c, Tracer) or hasattr(c, "aval") or np.result_type(c) == dtypes.float0:
        return c
    arr = jnp.asarray(c, out_aval.dtype)
    return lax.convert_element_type(arr, out_aval.dtype, True) if out_aval.weak_type else arr


def _argnums_tuple(argnums, nargs, fname):
    tup = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in tup:
        if not isinstance(a, int):
            raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -nargs <= a < nargs:
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at "
                f"least {max(tup) + 1} positional arguments to be passed by the caller, but "
                f"got only {nargs} positional arguments."
            )
    if len({a % nargs for a in tup}) != len(tup):  # JAX fails here too (with a TypeError)
        raise TypeError(f"{fname}: argnums={argnums} names an argument more than once; each "
                        "argument can be differentiated with respect to only once.")
    return tup


def _check_input_dtype(x, holomorphic, allow_int, fname):
    for leaf in tree_util.tree_leaves(x):
        dt = get_aval(leaf).dtype
        if holomorphic:
            if not dtypes.is_complex(dt):
                raise TypeError(f"{fname} with holomorphic=True requires inputs with complex "
                                f"dtype, but got {dt.name}.")
        elif not dtypes.is_inexact(dt) and not allow_int:
            raise TypeError(
                f"{fname} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {dt.name}. If you want to use Boolean- or "
                "integer-valued inputs, use vjp or set allow_int to True."
            )


def _rebuild_with_none(dyn):
    """Rebuild the arguments' pytrees with None leaves, as JAX's jacfwd/jacrev do when they
    map their input check over the arguments: a custom node whose unflatten cannot take a
    None leaf fails here, with its own error, exactly as under JAX."""
    leaves, tree = tree_util.tree_flatten(dyn)
    tree_util.tree_unflatten(tree, [None] * len(leaves))


def _grad_impl(fun, argnums, has_aux, holomorphic, allow_int, fname, need_value):
    def impl(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), fname)
        dyn = tuple(args[i] for i in nums)
        _check_input_dtype(dyn, holomorphic, allow_int, fname)

        def f_partial(*dyn_args):
            full = list(args)
            for i, a in zip(nums, dyn_args):
                full[i] = a
            return fun(*full, **kwargs)

        outs, out_tree, out_avals, pullback, aux = _vjp(f_partial, dyn, has_aux, fname,
                                                        named_after=fun,
                                                        need_outputs=need_value)
        if out_tree.num_leaves != 1 or out_avals[0].shape != ():
            if len(out_avals) == 1:
                what = f"had shape: {out_avals[0].shape}"
            else:
                what = f"was a pytree with {len(out_avals)} leaves"
            raise TypeError(f"Gradient only defined for scalar-output functions. Output {what}.")
        dt = out_avals[0].dtype
        if holomorphic:
            if not dtypes.is_complex(dt):
                raise TypeError("grad with holomorphic=True requires outputs with complex "
                                f"dtype, but got {dt.name}.")
        elif not dtypes.is_float(dt):
            raise TypeError(
                f"{fname} requires real-valued outputs (output dtype that is a sub-dtype of "
                f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
                "holomorphic=True. For differentiation of non-holomorphic functions involving "
                "complex outputs, use olympus.vjp directly."
            )
        ct = tree_util.tree_unflatten(out_tree, [_one_like(out_avals[0])])
        g = pullback(ct)
        # Where the seed came through untouched (an identity), JAX's seed is an array.
        g = tree_util.tree_map(lambda c: _seed_array(c, out_avals[0]), g)
        g = g[0] if isinstance(argnums, int) else g
        ans = tree_util.tree_unflatten(out_tree, outs) if need_value else None
        return ans, aux, g

    return impl


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False,
                   reduce_axes: tuple = ()):
    """A function returning ``(fun(*args), gradient of fun w.r.t. args[argnums])``."""
    _check_callable(fun, "value_and_grad")
    impl = _grad_impl(fun, argnums, has_aux, holomorphic, allow_int, "value_and_grad", True)

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        ans, aux, g = impl(*args, **kwargs)
        return ((ans, aux), g) if has_aux else (ans, g)

    return value_and_grad_f


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False, reduce_axes: tuple = ()):
    """The gradient of scalar-valued `fun` with respect to ``args[argnums]``.

    The primal output is not computed (only what the gradient needs is)."""
    _check_callable(fun, "grad")
    impl = _grad_impl(fun, argnums, has_aux, holomorphic, allow_int, "grad", False)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        _, aux, g = impl(*args, **kwargs)
        return (g, aux) if has_aux else g

    return grad_f


def _std_basis(leaves):
    """Identity matrices: one batch of unit tangents per flat input element."""
    sizes = [int(np.prod(get_aval(x).shape)) for x in leaves]
    n = sum(sizes)
    eye = np.eye(n, dtype=np.float32)
    out, off = [], 0
    for x, s in zip(leaves, sizes):
        a = get_aval(x)
        dt = a.dtype if dtypes.is_inexact(a.dtype) else dtypes.default_float()
        out.append(_downcast(eye[:, off:off + s].reshape((n,) + a.shape).astype(dt),
                             dt, a.weak_type))
        off += s
    return out, n


def _downcast(x, dtype, weak_type):
    """`x` in the dtype and weak type of the value a Jacobian block belongs to (JAX casts
    the blocks so, e.g. a Jacobian at a Python float is weakly typed); a complex block of a
    real value keeps its real part."""
    if isinstance(x, np.ndarray) and x.dtype == dtypes.float0:
        return x
    if dtypes.is_complex(get_aval(x).dtype) and not dtypes.is_complex(dtype):
        x = jnp.real(x)
    a = get_aval(x)
    if a.dtype == dtype and a.weak_type == weak_type:
        return x
    return lax.convert_element_type(x, dtype, weak_type)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False):
    """Jacobian by forward mode: one JVP per input element, batched with vmap."""

    def jac(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        dyn = tuple(args[i] for i in nums)
        _check_input_dtype(dyn, holomorphic, False, "jacfwd")
        _rebuild_with_none(dyn)

        def f_partial(*d):
            full = list(args)
            for i, a in zip(nums, d):
                full[i] = a
            return fun(*full, **kwargs)

        leaves, tree = tree_util.tree_flatten(dyn)
        basis, n = _std_basis(leaves)

        def push(*ts):
            out = jvp(f_partial, dyn, tree_util.tree_unflatten(tree, list(ts)),
                      has_aux=has_aux)
            return (out[0], out[1], out[2]) if has_aux else (out[0], out[1])

        if has_aux:
            y, tangents, aux = vmap(push, in_axes=0, out_axes=(None, -1, None))(*basis)
        else:
            y, tangents = vmap(push, in_axes=0, out_axes=(None, -1))(*basis)
        jac_tree = tree_util.tree_map(
            lambda yl, t: _split_last(t, leaves, tree, isinstance(argnums, int), yl),
            y, tangents)
        return (jac_tree, aux) if has_aux else jac_tree

    return jac


def _split_last(t, leaves, tree, single, y):
    """Split the trailing basis axis of `t` back into the input leaves' shapes, in the
    inputs' pytree structure (the argument's own, for a single argnum), each block typed as
    the output `y` it differentiates."""
    outs, off = [], 0
    a, ya = get_aval(t), get_aval(y)
    for x in leaves:
        xs = get_aval(x).shape
        s = int(np.prod(xs))
        part = _getitem(t, (Ellipsis, slice(off, off + s)))
        outs.append(_downcast(jnp.reshape(part, a.shape[:-1] + xs), ya.dtype, ya.weak_type))
        off += s
    per_arg = tree_util.tree_unflatten(tree, outs)
    return per_arg[0] if single else per_arg


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False):
    """Jacobian by reverse mode: one VJP per output element, batched with vmap."""

    def jac(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacrev")
        dyn = tuple(args[i] for i in nums)
        _check_input_dtype(dyn, holomorphic, allow_int, "jacrev")
        _rebuild_with_none(dyn)

        def f_partial(*d):
            full = list(args)
            for i, a in zip(nums, d):
                full[i] = a
            return fun(*full, **kwargs)

        if has_aux:
            y, pullback, aux = vjp(f_partial, *dyn, has_aux=True)
        else:
            y, pullback = vjp(f_partial, *dyn)
        y_leaves, y_tree = tree_util.tree_flatten(y)
        basis, n = _std_basis(y_leaves)
        cts = vmap(lambda *c: pullback(tree_util.tree_unflatten(y_tree, list(c))))(*basis)
        dyn_leaves, dyn_tree = tree_util.tree_flatten(dyn)
        cts = tree_util.tree_leaves(cts)
        # cts: tuple over dyn args, each leaf with leading axis n (the flat outputs).
        out_per_y = []
        off = 0
        for yl in y_leaves:
            ys = get_aval(yl).shape
            s = int(np.prod(ys))
            part = tuple(
                _downcast(jnp.reshape(_getitem(c, slice(off, off + s)),
                                      ys + get_aval(c).shape[1:]),
                          get_aval(x).dtype, get_aval(x).weak_type)
                for c, x in zip(cts, dyn_leaves))
            part = tree_util.tree_unflatten(dyn_tree, part)
            out_per_y.append(part[0] if isinstance(argnums, int) else part)
            off += s
        jac_tree = tree_util.tree_unflatten(y_tree, out_per_y)
        return (jac_tree, aux) if has_aux else jac_tree

    return jac


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False):
    """The Hessian: forward-over-reverse (`jacfwd(jacrev(fun))`)."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


def jacobian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
             holomorphic: bool = False, allow_int: bool = False):
    """The Jacobian of `fun` (reverse mode, as `jacrev`; JAX's alias)."""
    return jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True):
    """``(fwd, bwd)``: ``fwd(*args)`` is ``vjp`` of `fun` w.r.t. ``args[argnums]`` (the
    outputs, the pullback as a pytree of residuals, and the aux values with `has_aux`);
    ``bwd(pullback, cotangent)`` applies it (one cotangent, or a tuple of them for a tuple
    `argnums`). Both are jitted unless ``jitted=False``, so the backward pass compiles once
    and is reused across steps."""
    _check_callable(fun, "fwd_and_bwd")
    if not isinstance(argnums, int):
        argnums = tuple(argnums)

    def fwd(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "fwd_and_bwd")
        dyn = tuple(args[i] for i in nums)

        def f_partial(*d):
            full = list(args)
            for i, a in zip(nums, d):
                full[i] = a
            return fun(*full, **kwargs)

        return vjp(f_partial, *dyn, has_aux=has_aux)

    def bwd(f_vjp, outgrad):
        g = f_vjp(outgrad)
        return g[0] if isinstance(argnums, int) else g

    if jitted:
        from .jit import jit

        return jit(fwd), jit(bwd)
    return fwd, bwd


def linear_transpose(fun: Callable, *primals, reduce_axes=()):
    """The transpose of `fun`, promised to be linear, at the shapes and dtypes of `primals`
    (arrays or anything with ``shape`` and ``dtype``). The result maps a cotangent shaped
    like ``fun(*primals)`` to a tuple shaped like `primals`, in their dtypes. It is a pytree
    (its leaves are the constants `fun` closes over)."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    leaves, in_tree = tree_util.tree_flatten(primals)
    in_avals = [abstractify(x).update(weak_type=False) for x in leaves]
    store: list = []

    def flat(*xs):
        out = fun(*tree_util.tree_unflatten(in_tree, list(xs)))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        store.append(out_tree)
        return out_leaves

    dbg = DebugInfo("linear_transpose", fun_source_info(fun), ())
    closed, _ = trace_to_olympuspr(flat, in_avals, dbg)
    out_tree = store[0]
    out_avals = closed.out_avals
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    every = in_dtypes + out_dtypes
    if not (all(dtypes.is_inexact(d) for d in every)
            or all(dtypes.is_integer(d) for d in every)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{in_dtypes} -> {out_dtypes}.")
    j = closed.olympuspr
    lin_j = Olympuspr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns, j.effects)
    return tree_util.Partial(
        _LinearTranspose(lin_j, in_tree, in_avals, out_tree, out_avals), list(closed.consts))


class _LinearTranspose:
    """The static part of `linear_transpose`'s result (the consts are its pytree leaves)."""

    def __init__(self, olympuspr, in_tree, in_avals, out_tree, out_avals):
        self.olympuspr, self.in_tree, self.in_avals = olympuspr, in_tree, in_avals
        self.out_tree, self.out_avals = out_tree, out_avals

    def __call__(self, consts, out_cotangent):
        cts, tree = tree_util.tree_flatten(out_cotangent)
        if tree != self.out_tree:
            raise TypeError("cotangent tree does not match function output, expected "
                            f"{self.out_tree} but got {tree}")
        for c, a in zip(cts, self.out_avals):
            ca = get_aval(c)
            if ca.shape != a.shape or ca.dtype != a.dtype:
                raise TypeError("cotangent type does not match function output, expected "
                                f"{tuple(self.out_avals)} but got {cts}")
        lin_avals = [ad.tangent_aval(a) for a in self.in_avals]
        in_cts = ad.backward_pass(self.olympuspr, list(consts), lin_avals, cts)
        outs = []
        for c, a in zip(in_cts, self.in_avals):
            c = ad.instantiate(c)
            if get_aval(c).dtype != a.dtype or get_aval(c).weak_type:
                c = lax.convert_element_type(c, a.dtype, False)
            outs.append(c)
        return tree_util.tree_unflatten(self.in_tree, outs)


# --- vmap -------------------------------------------------------------------------------------


def _axes_leaves(axes):
    return tree_util.tree_leaves(axes, is_leaf=lambda a: a is None)


def _check_axes_spec(what, axes):
    # A high-level type's MappingSpec (olympus.experimental.hijax) maps a value of it.
    if not all(a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, bool))
               or isinstance(a, MappingSpec) for a in _axes_leaves(axes)):
        raise TypeError(f"vmap {what} must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {axes}.")


def _flatten_axes(what, tree, axes):
    """Broadcast an in_axes/out_axes prefix tree over `tree`'s leaves: one axis (or None)
    per leaf of `tree`."""
    if axes is None or isinstance(axes, (int, np.integer, MappingSpec)):
        return [_axis(axes)] * tree.num_leaves
    return [_axis(ax) for ax in tree_util.flatten_axes(what, tree, axes)]


def _axis(ax):
    return None if ax is None else ax if isinstance(ax, MappingSpec) else int(ax)


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None, spmd_axis_name: Any = None, sum_match: bool = False):
    """Vectorize `fun` over the `in_axes` of its arguments. With `sum_match`, an output
    that is batched where its out axis is None is summed over the batch axis (instead of
    the error)."""
    _check_callable(fun, "vmap")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple) or isinstance(in_axes, MappingSpec)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {in_axes}."
        )
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)

    compiled = None if sum_match else _compiled_vmap_of_jit(
        fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name)

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        if compiled is not None and type(trace_ctx.trace) is EvalTrace \
                and not config._values["olympus_disable_jit"]:
            return compiled(*args, **kwargs)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                "the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}"
            )
        # A registered sparse array is one leaf here (mapped as a whole, see vmappable).
        leaves, tree = tree_util.tree_flatten((args, kwargs), is_leaf=vmappable.is_vmappable)
        args_tree = tree_util.tree_structure(args, is_leaf=vmappable.is_vmappable)
        # Keyword arguments are always mapped along their leading axis.
        dims = (_flatten_axes("vmap in_axes", args_tree,
                              in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args))
                + [0] * (tree.num_leaves - args_tree.num_leaves))
        sizes = {}
        canon = []
        for i, (x, d) in enumerate(zip(leaves, dims)):
            if d is None:
                canon.append(None)
                continue
            if vmappable.is_vmappable(x):
                canon.append(d)
                sz = None if isinstance(d, MappingSpec) else vmappable.mapped_size(x, d)
                if sz is not None:
                    sizes.setdefault(sz, []).append(i)
                continue
            if isinstance(d, MappingSpec):
                raise TypeError(f"vmap was given the mapping spec {d!r} for an argument of "
                                f"type {get_aval(x).str_short()}: a mapping spec maps a "
                                "value of a high-level type (olympus.experimental.hijax)")
            nd = get_aval(x).ndim
            if not -nd <= d < nd:
                raise ValueError(
                    f"vmap was requested to map its argument along axis {d}, which implies "
                    f"that its rank should be at least {(d + 1) if d >= 0 else -d}, but is "
                    f"only {nd} (its shape is {get_aval(x).shape})"
                )
            d %= nd
            canon.append(d)
            sizes.setdefault(get_aval(x).shape[d], []).append(i)
        if len(sizes) > 1 or (sizes and axis_size is not None and axis_size not in sizes):
            raise _inconsistent_sizes(fun, args, kwargs, leaves, canon, axis_size)
        if sizes:
            size = next(iter(sizes))
        elif axis_size is not None:
            size = axis_size
        else:
            raise ValueError("vmap must have at least one non-None value in in_axes or axis_size "
                             "must be specified")
        flat_in, flat_dims, in_parts = vmappable.expand(leaves, canon, size, vmappable.to_elt)
        store: list = []

        def flat(*xs):
            a, k = tree_util.tree_unflatten(tree, vmappable.collapse(xs, in_parts))
            out = fun(*a, **k)
            out_leaves, out_tree = tree_util.tree_flatten(out, is_leaf=vmappable.is_vmappable)
            for o in out_leaves:
                if not _is_array(o) and not vmappable.is_vmappable(o):
                    _check_output_value(o)
            axes = _flatten_axes("vmap out_axes", out_tree, out_axes)
            store.append((out_tree, axes, *vmappable.expand(out_leaves, axes, size,
                                                            vmappable.from_elt)))
            return store[0][2]

        try:
            outs = batching.vmap_flat(flat, batching.AxisData(size, axis_name, spmd_axis_name),
                                      flat_in, flat_dims, lambda n: store[0][3],
                                      sum_match=sum_match)
        except batching.SpecMatchError as e:
            out_tree, axes = store[0][:2]
            axes = tree_util.tree_unflatten(out_tree, list(axes))
            paths = tree_util.tree_flatten_with_path(axes, is_leaf=lambda a: a is None)[0]
            path = tree_util.keystr(paths[vmappable.flat_index(store[0][4], e.leaf_idx)][0])
            raise ValueError(f"at vmap out_axes{path}, got axis spec {e.dst} but output was "
                             f"batched on axis {e.src}") from None
        # As in JAX, an unmapped result that never met an operation (an argument returned
        # as is, a Python or NumPy constant) comes back as it is.
        return tree_util.tree_unflatten(store[0][0], vmappable.collapse(outs, store[0][4]))

    return vmap_f


def _compiled_vmap_of_jit(fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name):
    """For ``vmap(jit(f))`` called outside any trace: ``jit(vmap(f))``, one compiled program
    (as JAX batches the jitted call), instead of running the batched ops one by one.

    Only for a jitted function without static or donated arguments and hashable axis specs;
    the compiled wrapper is remembered on the jitted function, so building the same vmap
    again (e.g. inline in a loop) reuses its executables. None when it does not apply.
    """
    state = getattr(fun, "_olympus_jit", None)
    if state is None or any(state._options[:4]):
        return None
    key = (in_axes, out_axes, axis_name, axis_size, spmd_axis_name)
    try:
        hash(key)
    except TypeError:
        return None
    cache = fun.__dict__.setdefault("_olympus_vmaps", {}) if hasattr(fun, "__dict__") else None
    if cache is None:
        return None
    wrapped = cache.get(key)
    if wrapped is None:
        from .jit import jit

        wrapped = cache[key] = jit(vmap(state._fun, in_axes, out_axes, axis_name, axis_size,
                                        spmd_axis_name))
    return wrapped


def _is_array(x) -> bool:
    """An olympus Array or a tracer (not a NumPy or Python value)."""
    from olympus_runtime import Array
    from olympus_trace.core import Tracer

    return isinstance(x, (Array, Tracer))


def _check_output_value(x) -> None:
    """JAX's TypeError for a batched function's result that is not an array value."""
    from olympus_trace.core import get_aval

    if x is None:
        return
    try:
        get_aval(x)
    except TypeError:
        raise TypeError(f"Output from batched function {x!r} with type {type(x)} is not a "
                        "valid OLYMPUS type") from None


def _inconsistent_sizes(fun, args, kwargs, leaves, dims, axis_size) -> ValueError:
    """JAX's error for mapped axes of different sizes: the most common size first, with one
    example argument per size (named as JAX names them: the parameter bound by position,
    else ``args[i]``, and ``kwargs['k']`` for keywords)."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = None

    def arg_name(path):
        i = path[0].idx
        if params is None or i >= len(params):
            return f"args{tree_util.keystr(tuple(path))}"
        return f"argument {params[i]}{tree_util.keystr(tuple(path[1:]))}"

    arg_paths = [p for p, _ in tree_util.tree_flatten_with_path(args)[0]]
    kw_paths = [p for p, _ in tree_util.tree_flatten_with_path(kwargs)[0]]
    names = ([arg_name(p) for p in arg_paths]
             + [f"kwargs{tree_util.keystr(tuple(p))}" for p in kw_paths])
    mapped = [(i, vmappable.mapped_size(x, d) if vmappable.is_vmappable(x)
               else get_aval(x).shape[d])
              for i, (x, d) in enumerate(zip(leaves, dims)) if d is not None]
    mapped = [(i, sz) for i, sz in mapped if sz is not None]
    # As JAX does, the examples name and type the i-th buffer of the fully flattened
    # arguments (a sparse array counts once in `leaves` but as its buffers here).
    full = tree_util.tree_leaves((args, kwargs))
    counts = collections.Counter(sz for _, sz in mapped).most_common()
    msg = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        msg.append(f"  * the `axis_size` argument was {axis_size};\n")
    for k, (sz, ct) in enumerate(counts):
        i = next(i for i, s in mapped if s == sz)
        ex = f"axis {dims[i]} of {names[i]} of type {get_aval(full[i]).str_short(False)}"
        if ct == 1:
            msg.append(f"  * one axis had size {sz}: {ex};\n")
        else:
            which = "most" if k == 0 else "some"
            msg.append(f"  * {which} axes ({ct} of them) had size {sz}, e.g. {ex};\n")
    return ValueError("".join(msg)[:-2])


def _arg_names(fun, leaves, tree):
    """``argument x``, ``argument params['w'][0]``, ... for each leaf of ``(args, kwargs)``."""
    try:
        sig = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        sig = []
    positional = [p.name for p in sig if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var = [p.name for p in sig if p.kind == p.VAR_POSITIONAL]
    paths = [p for p, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(tree, [0] * len(leaves)))[0]]
    names = []
    for p in paths:
        # ((args...), kwargs): the first key selects args or kwargs, the second the argument.
        rest = tree_util.keystr(tuple(p[2:]))
        key = p[1]
        if getattr(p[0], "idx", None) == 0:
            i = key.idx
            if i < len(positional):
                nm = positional[i]
            elif var:
                nm = f"{var[0]}[{i - len(positional)}]"
            else:
                nm = f"args[{i}]"
        else:
            nm = str(getattr(key, "key", key))
        names.append(f"argument {nm}{rest}")
    return names


def stop_gradient(x):
    """`x` (any pytree) with its floating-point leaves cut from differentiation (as
    ``olympus.lax.stop_gradient``); other leaves are returned as they are."""
    return lax.stop_gradient(x)


def __getattr__(name: str):
    # JAX's documentation (the "writing new primitives" page) calls ``jax._src.api.jit``;
    # jit lives in its own module, which is imported on first use (no import cycle).
    if name == "jit":
        from .jit import jit

        return jit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
