"""Wrappers of the collectives (`olympus_ir.prims.collectives`): `psum`, `pmean`, `pmax`,
`pmin`, `all_gather` and `axis_index` over a named mapped axis, and the lookup of the
transformation that binds an axis name (`axis_size`).

The axis is named by an enclosing ``olympus.vmap(..., axis_name=name)``; over a vmapped axis
a collective combines the batch members' values (``psum(x, 'i')`` is the sum over the
members, the same in each). An axis name that no enclosing transformation binds is a
NameError. `axis_name` may also be a tuple of names: the collective runs over all of them.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from olympus_ir.prims.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    precv_p,
    psend_p,
    psum_p,
    psum_scatter_p,
    pvary_p,
    ragged_all_to_all_p,
)

from .. import tree_util
from ..core import bind, current_trace, get_aval
from .elementwise import add, mul

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "check_axis_name", "ppermute", "psum_scatter", "all_to_all", "pbroadcast", "pcast",
           "pvary", "bound_mesh_axes", "pshuffle", "pswapaxes", "psend", "precv",
           "ragged_all_to_all"]


# --- finding the transformation that binds an axis name -------------------------------------


#: (name, size) of the mesh axes bound by the shard_map bodies being traced, innermost last.
_mesh_axes: list[tuple[Any, int]] = []


@contextlib.contextmanager
def bound_mesh_axes(axes):
    """Bind mesh axis names (``[(name, size), ...]``) while a shard_map body is traced."""
    n = len(_mesh_axes)
    _mesh_axes.extend(axes)
    try:
        yield
    finally:
        del _mesh_axes[n:]


def _bound_axes():
    """(name, size) of every named mapped axis of the current trace stack, innermost first,
    then the mesh axes of enclosing shard_map bodies."""
    t = current_trace()
    while t is not None:
        ad = getattr(t, "axis_data", None)
        if ad is not None and ad.name is not None:
            yield ad.name, ad.size
        t = getattr(t, "parent", None)
    yield from reversed(_mesh_axes)


def _is_mesh_axis(axis_name: Any) -> bool:
    """Whether the innermost binding of `axis_name` is a shard_map body's mesh axis (not a
    vmap/pmap axis of the trace stack)."""
    t = current_trace()
    while t is not None:
        ad = getattr(t, "axis_data", None)
        if ad is not None and ad.name == axis_name:
            return False
        t = getattr(t, "parent", None)
    return any(name == axis_name for name, _ in _mesh_axes)


def axis_size(axis_name: Any) -> int:
    """The size of the mapped axis `axis_name` (a name or a tuple of names: the product);
    NameError when no enclosing transformation binds it."""
    if isinstance(axis_name, (tuple, list)):
        return int(np.prod([axis_size(n) for n in axis_name], dtype=np.int64))
    for name, size in _bound_axes():
        if name == axis_name:
            return size
    raise NameError(f"unbound axis name: {axis_name}")


def check_axis_name(axis_name: Any) -> None:
    axis_size(axis_name)


def _bind_collective(prim, x, axis_name, **params):
    check_axis_name(axis_name)
    return bind(prim, x, axis_name=axis_name, **params)


# --- the collectives ------------------------------------------------------------------------


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _no_groups(axis_index_groups, what):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{what}: axis_index_groups is not supported")


def _reducer(prim, what):
    def collective(x, axis_name, *, axis_index_groups=None):
        _no_groups(axis_index_groups, what)
        names = _names(axis_name)
        for n in names:
            check_axis_name(n)

        def one(v):
            if prim is psum_p and len(names) > 1:
                _pcast_from(v, names, "olympus.lax.psum")  # JAX's error for mixed states
            for n in names:
                v = _bind_collective(prim, v, n)
            return v

        return tree_util.tree_map(one, x)

    collective.__name__ = what
    return collective


psum = _reducer(psum_p, "psum")
pmax = _reducer(pmax_p, "pmax")
pmin = _reducer(pmin_p, "pmin")
psum.__doc__ = "Sum of `x` (a pytree) over the members of the mapped axis `axis_name`."
pmax.__doc__ = "Maximum of `x` (a pytree) over the members of the mapped axis `axis_name`."
pmin.__doc__ = "Minimum of `x` (a pytree) over the members of the mapped axis `axis_name`."


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of `x` (a pytree) over the members of the mapped axis `axis_name`."""
    _no_groups(axis_index_groups, "pmean")
    n = axis_size(axis_name)
    return tree_util.tree_map(lambda v: v / n, psum(x, axis_name))


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False):
    """Every member's `x` (a pytree), stacked along a new dimension `axis` in member
    order (concatenated along the existing dimension `axis` when `tiled`)."""
    _no_groups(axis_index_groups, "all_gather")
    names = _names(axis_name)
    for n in names:
        check_axis_name(n)

    def one(v):
        nd = get_aval(v).ndim
        lim = nd if tiled else nd + 1
        if not -lim <= axis < lim:
            raise ValueError(f"all_gather axis {axis} is out of bounds for an operand of rank "
                             f"{nd}{' (tiled)' if tiled else ''}.")
        ax = axis % lim
        # The last name first; the others then concatenate whole blocks, so the first name
        # varies slowest (row-major over the names).
        for i, n in enumerate(reversed(names)):
            v = bind(all_gather_p, v, axis_name=n, axis_size=axis_size(n), axis=ax,
                     tiled=bool(tiled) or i > 0)
        return v

    return tree_util.tree_map(one, x)


def axis_index(axis_name: Any):
    """This member's position along the mapped axis `axis_name` (an int32 scalar); for a
    tuple of names, the position in their row-major product."""
    names = _names(axis_name)
    out = None
    for n in names:
        check_axis_name(n)
        i = bind(axis_index_p, axis_name=n)
        out = i if out is None else add(mul(out, np.int32(axis_size(n))), i)
    return out


def ppermute(x, axis_name, perm):
    """Member ``dst`` gets member ``src``'s `x` (a pytree) for each ``(src, dst)`` in
    `perm`; members that receive nothing get zeros."""
    check_axis_name(axis_name)
    n = axis_size(axis_name)
    perm = tuple((int(s), int(d)) for s, d in perm)
    # Over mesh axes JAX checks the permutation when lowering (indices modulo the group
    # size must be unique), so a program that is only traced (roofline, make_olympuspr)
    # accepts it; over vmapped axes the indices must be in range here.
    if not all(_is_mesh_axis(a) for a in _names(axis_name)):
        for s_, d_ in perm:
            if not (0 <= s_ < n and 0 <= d_ < n):
                raise ValueError(f"ppermute: indices in perm {perm} must be in range(0, {n}).")
    return tree_util.tree_map(lambda v: bind(ppermute_p, v, axis_name=axis_name, perm=perm), x)


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, axis_index_groups=None,
                 tiled: bool = False):
    """The psum of `x` (a pytree), of which member i keeps block i along
    `scatter_dimension`."""
    _no_groups(axis_index_groups, "psum_scatter")
    check_axis_name(axis_name)
    n = axis_size(axis_name)

    def one(v):
        d = scatter_dimension % max(get_aval(v).ndim, 1)
        return bind(psum_scatter_p, v, axis_name=axis_name, axis_size=n,
                    scatter_dimension=d, tiled=bool(tiled))

    return tree_util.tree_map(one, x)


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, axis_index_groups=None,
               tiled: bool = False):
    """Split `x` in axis-size blocks along `split_axis`; member j gets every member's
    block j, joined in member order along `concat_axis`."""
    _no_groups(axis_index_groups, "all_to_all")
    check_axis_name(axis_name)
    n = axis_size(axis_name)

    def one(v):
        nd = get_aval(v).ndim
        return bind(all_to_all_p, v, axis_name=axis_name, axis_size=n,
                    split_axis=split_axis % nd, concat_axis=concat_axis % nd,
                    tiled=bool(tiled))

    return tree_util.tree_map(one, x)


def pvary(x, axis_name):
    """Mark `x` (a pytree) as varying over the manual axes `axis_name` (the identity)."""
    names = _names(axis_name)
    for n in names:
        check_axis_name(n)
    return tree_util.tree_map(lambda v: bind(pvary_p, v, axes=tuple(names)), x)


def _pcast_from(v, axes, api="olympus.lax.pcast") -> str:
    """Whether `v` varies over all of `axes` or none of them (JAX's error, naming `api`,
    if mixed); axes that are not manual axes of an enclosing shard_map do not count."""
    from ..vma_types import body_manual, vma_of

    varying = vma_of(v) or frozenset()
    manual = body_manual([v]) or ()
    states = list(dict.fromkeys("varying" if a in varying else "invarying" for a in axes
                                if a in manual)) or ["invarying"]
    if len(states) > 1:
        from olympus_trace.core import get_aval

        from ..vma_types import ordered_vma

        vs = ordered_vma(v)
        shown = get_aval(v).str_short(short_dtypes=False) + "{V:" + (
            str(vs[0]) if len(vs) == 1 else "(" + ",".join(map(str, vs)) + ")") + "}"
        raise ValueError(
            f"{api} can only accept axis_name which corresponds to one of varying, "
            "unreduced, reduced or invarying state of the input. Got input type: "
            f"{shown}, axes: {axes} and input state: "
            "{" + ", ".join(repr(s) for s in states) + "}")
    return states[0]


def pcast(x, axis_name, *, to: str):
    """Change how `x` (a pytree) varies over the manual axes `axis_name`: ``to='varying'``
    marks an invariant value as varying (`pvary`). (JAX's ``'unreduced'`` / ``'reduced'``
    states are not supported.)"""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name:
        return x
    if to not in ("unreduced", "reduced", "varying"):
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         "{'unreduced', 'reduced', 'varying'}")
    if to != "varying":
        raise NotImplementedError(f"pcast to {to!r} is not supported; only to='varying'")
    for n in axes:
        check_axis_name(n)

    def one(v):
        frm = _pcast_from(v, axes)
        if frm != "invarying":
            raise ValueError(f"Unsupported pcast from={frm}, to={to!r}")
        return bind(pvary_p, v, axes=tuple(axes))

    return tree_util.tree_map(one, x)


def pbroadcast(x, axis_name, source: int):
    """Every member gets member `source`'s `x` (a pytree)."""
    check_axis_name(axis_name)
    n = axis_size(axis_name)
    if not 0 <= source < n:
        raise ValueError(f"pbroadcast: source {source} is out of range for axis size {n}.")
    from .elementwise import eq, select_n
    from .shape_ops import broadcast_in_dim

    def one(v):
        from ..vma_types import vma_of

        aval = get_aval(v)
        me = axis_index(axis_name)
        mine = broadcast_in_dim(eq(me, np.int32(source)), aval.shape, ())
        zero = broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
        out = psum(select_n(mine, zero, v), axis_name)
        # As JAX's pbroadcast: the result keeps varying over the axis the value varied over.
        if axis_name in (vma_of(v) or ()):
            out = bind(pvary_p, out, axes=(axis_name,))
        return out

    return tree_util.tree_map(one, x)


def pshuffle(x, axis_name, perm):
    """`ppermute` with the permutation given by sources: member i gets member ``perm[i]``'s
    `x` (a pytree). `perm` must hold each of ``0 .. len(perm) - 1`` once."""
    perm = list(perm)
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)), strict=True)))


def pswapaxes(x, axis_name, axis: int, *, axis_index_groups=None):
    """Swap the mapped axis `axis_name` with the unmapped axis `axis` of `x` (a pytree),
    whose size must be the axis size: ``all_to_all(x, axis_name, axis, axis)``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# --- one-sided and ragged communication (JAX's; axis_name kept as a tuple) -------------------


def _axis_tuple(axis_name) -> tuple:
    names = tuple(axis_name) if isinstance(axis_name, (list, tuple)) else (axis_name,)
    for n in names:
        check_axis_name(n)
    return names


def _perm_pairs(perm) -> tuple:
    return tuple((int(s), int(d)) for s, d in perm)


def psend(x, axis_name, perm):
    """Send `x` (a pytree) along the ``(source, destination)`` pairs of `perm`: a token per
    leaf, for the matching `precv` to order after (JAX's ``lax.psend``; only GPUs run it,
    so lowering it elsewhere raises JAX's NotImplementedError)."""
    names, pairs = _axis_tuple(axis_name), _perm_pairs(perm)
    return tree_util.tree_map(lambda v: bind(psend_p, v, axis_name=names, perm=pairs), x)


def precv(token, out_shape, axis_name, perm):
    """Receive a value of `out_shape` (a ``ShapeDtypeStruct``) along `perm`, after `token`
    (JAX's ``lax.precv``; GPU only, as `psend`)."""
    from olympus_ir import dtypes
    from olympus_ir.avals import ShapedArray

    names, pairs = _axis_tuple(axis_name), _perm_pairs(perm)
    aval = ShapedArray(tuple(out_shape.shape), dtypes.dtype(out_shape.dtype))
    return bind(precv_p, token, out_shape=aval, axis_name=names, perm=pairs)


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    """`output` with, from every member, the leading-axis slices of its `operand` at
    `input_offsets` of `send_sizes` written at the `output_offsets` it names (JAX's
    ``lax.ragged_all_to_all``, whose docstring gives the full contract). XLA's CPU backend
    has no ragged all-to-all: a program using it traces and lowers, and fails to compile
    with XLA's error, as in JAX."""
    names = tuple(axis_name) if isinstance(axis_name, (list, tuple)) else (axis_name,)
    if not any(True for _ in _bound_axes()):
        raise RuntimeError("ragged_all_to_all must be used within a mapped context like "
                           "vmap or shard_map.")
    for n in names:
        check_axis_name(n)
    if axis_index_groups is not None:
        axis_index_groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    return bind(ragged_all_to_all_p, operand, output, input_offsets, send_sizes,
                output_offsets, recv_sizes, axis_name=names,
                axis_index_groups=axis_index_groups)
