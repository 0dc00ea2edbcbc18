"""Sparse-aware `grad`, `value_and_grad` and Jacobians: a sparse argument is
differentiated through its ``data`` buffer only (its indices are fixed), and its
gradient is a sparse array with the argument's indices."""

from __future__ import annotations

import olympus

from ._base import OLYMPUSSparse

__all__ = ["grad", "value_and_grad", "jacfwd", "jacrev", "jacobian"]


def _argnums(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _split(args, nums):
    """The differentiated leaves: each sparse argument's data, or the dense argument."""
    return [args[i].data if isinstance(args[i], OLYMPUSSparse) else args[i] for i in nums]


def _rebuild(arg, data):
    if isinstance(arg, OLYMPUSSparse):
        leaves, aux = arg.tree_flatten()
        return type(arg).tree_unflatten(aux, (data,) + tuple(leaves[1:]))
    return data


def _wrap(fun, args, nums):
    def inner(*diff):
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = _rebuild(args[i], d)
        return fun(*full)
    return inner


def _regrad(g, args, nums, single):
    gs = tuple(_rebuild(args[i], gi) for i, gi in zip(nums, g))
    return gs[0] if single else gs


def value_and_grad(fun, argnums=0, has_aux=False, **kwargs):
    """`olympus.value_and_grad` where sparse arguments get sparse gradients (with respect
    to their stored elements)."""
    single = isinstance(argnums, int)

    def f(*args):
        nums = _argnums(argnums)
        res = olympus.value_and_grad(_wrap(fun, args, nums), argnums=tuple(range(len(nums))),
                                     has_aux=has_aux, **kwargs)(*_split(args, nums))
        value, g = res
        return value, _regrad(g, args, nums, single)

    return f


def grad(fun, argnums=0, has_aux=False, **kwargs):
    """`olympus.grad` where sparse arguments get sparse gradients (with respect to their
    stored elements)."""
    vg = value_and_grad(fun, argnums, has_aux=has_aux, **kwargs)

    def f(*args):
        value, g = vg(*args)
        if has_aux:
            return g, value[1]
        return g

    return f


def _jac(olympus_jac, fun, argnums, has_aux, **kwargs):
    single = isinstance(argnums, int)

    def f(*args):
        nums = _argnums(argnums)
        res = olympus_jac(_wrap(fun, args, nums), argnums=tuple(range(len(nums))),
                          has_aux=has_aux, **kwargs)(*_split(args, nums))
        jac, aux = res if has_aux else (res, None)
        out = _regrad_tree(jac, args, nums, single)
        return (out, aux) if has_aux else out

    return f


def _regrad_tree(jac, args, nums, single):
    """Jacobians of sparse arguments as sparse arrays (per output leaf)."""
    def fix(j):
        gs = tuple(_rebuild_jac(args[i], ji) for i, ji in zip(nums, j))
        return gs[0] if single else gs
    return olympus.tree_util.tree_map(fix, jac, is_leaf=lambda x: isinstance(x, tuple))


def _rebuild_jac(arg, j):
    if isinstance(arg, OLYMPUSSparse):
        # The output dims lead; the sparse layout's batch dims grow by them.
        leaves, aux = arg.tree_flatten()
        extra = j.ndim - leaves[0].ndim
        if extra == 0:
            return type(arg).tree_unflatten(aux, (j,) + tuple(leaves[1:]))
        import olympus.numpy as jnp

        from .bcoo import BCOO
        if not isinstance(arg, BCOO):
            raise NotImplementedError("sparse jacobian of a non-BCOO argument with a "
                                      "non-scalar output")
        out_shape = j.shape[:extra]
        idx = jnp.broadcast_to(arg.indices, out_shape + arg.indices.shape)
        return BCOO((j, idx), shape=out_shape + arg.shape)
    return j


def jacfwd(fun, argnums=0, has_aux=False, **kwargs):
    """`olympus.jacfwd` where sparse arguments are differentiated through their data."""
    return _jac(olympus.jacfwd, fun, argnums, has_aux, **kwargs)


def jacrev(fun, argnums=0, has_aux=False, **kwargs):
    """`olympus.jacrev` where sparse arguments are differentiated through their data."""
    return _jac(olympus.jacrev, fun, argnums, has_aux, **kwargs)


jacobian = jacrev
