"""The roofline rules of collectives inside `shard_map` (JAX's interconnect model): ring
all-gathers and reduce-scatters, an all-reduce as both, reductions of one element,
all-to-all across the mesh bisection, and ppermute routed along the torus. Each result
is keyed by the mesh axes the collective spans; a collective over axes of total size 1
costs zero on each of them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np

from olympus_ir import ShapedArray
from olympus_ir.prims import collectives as C

from .analysis import RooflineResult, RooflineRuleContext, RooflineShape, register_roofline


def _axes(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _mesh_shape(ctx: RooflineRuleContext) -> dict:
    if ctx.mesh is None:
        raise ValueError(f"roofline: {ctx.primitive} needs a mesh: pass mesh=, in_specs= and "
                         "out_specs= to roofline.")
    return dict(ctx.mesh.shape)


def _zeros_if_trivial(ctx: RooflineRuleContext, axes: tuple) -> RooflineResult | None:
    mesh = _mesh_shape(ctx)
    if np.prod([mesh[a] for a in axes]) > 1:
        return None
    return RooflineResult(ici_bytes={a: 0 for a in axes}, ici_latency={a: 0 for a in axes})


def _ring_roofline(ctx: RooflineRuleContext, axes: tuple, *, is_reduce: bool = True,
                   ) -> RooflineResult:
    """A ring collective over `axes`, done one axis after another, the largest first; the
    shard grows by each axis's size. The latency is set by the longest ring."""
    if (zeros := _zeros_if_trivial(ctx, axes)) is not None:
        return zeros
    mesh = _mesh_shape(ctx)
    shard = RooflineShape.total_bytes(ctx.avals_in)
    if is_reduce:
        shard /= np.prod([mesh[a] for a in axes])
    ordered = sorted(axes, key=lambda a: mesh[a], reverse=True)
    shard //= len(ordered)
    ici_bytes = 0
    for a in ordered:
        ici_bytes += shard * (mesh[a] - 1)
        shard *= mesh[a]
    latency = mesh[ordered[0]] * len(ordered)
    return RooflineResult(ici_bytes={a: int(ici_bytes) for a in ordered},
                          ici_latency={a: int(latency) for a in ordered})


@register_roofline(C.psum_scatter_p)
def _psum_scatter_roofline(ctx: RooflineRuleContext, *args, axis_name,
                           **params) -> RooflineResult:
    return _ring_roofline(ctx, _axes(axis_name))


@register_roofline(C.all_gather_p)
def _all_gather_roofline(ctx: RooflineRuleContext, *args, axis_name,
                         **params) -> RooflineResult:
    return _ring_roofline(ctx, _axes(axis_name), is_reduce=False)


def _one_element_roofline(ctx: RooflineRuleContext, *args, axis_name,
                          **params) -> RooflineResult:
    """pmin/pmax are modelled as gathering one element per operand."""
    scalars = [ShapedArray((1,), RooflineShape.from_aval(a).dtype) for a in ctx.avals_in]
    return _ring_roofline(replace(ctx, avals_in=scalars), _axes(axis_name), is_reduce=False)


register_roofline(C.pmin_p)(_one_element_roofline)
register_roofline(C.pmax_p)(_one_element_roofline)


@register_roofline(C.psum_invariant_p)
def _psum_invariant_roofline(ctx: RooflineRuleContext, *args, axes,
                             **params) -> RooflineResult:
    """An all-reduce: a reduce-scatter then an all-gather, twice the ring's traffic."""
    ring = _ring_roofline(ctx, _axes(axes))
    return RooflineResult(ici_bytes={k: 2 * v for k, v in ring.ici_bytes.items()},
                          ici_latency={k: 2 * v for k, v in ring.ici_latency.items()})


@register_roofline(C.all_to_all_p)
def _all_to_all_roofline(ctx: RooflineRuleContext, *args, axis_name,
                         **params) -> RooflineResult:
    """Half of the data crosses the bisection of the axes' torus; the latency is the
    number of hops across it."""
    axes = _axes(axis_name)
    if (zeros := _zeros_if_trivial(ctx, axes)) is not None:
        return zeros
    mesh = _mesh_shape(ctx)
    size = RooflineShape.total_bytes(ctx.avals_in) * np.prod([mesh[a] for a in axes])
    smallest = min(mesh[a] for a in axes)
    bisection = smallest ** (len(axes) - 1)
    if smallest > 2:
        bisection *= 2  # the wraparound link
    ici_bytes = size / 2 / bisection
    latency = sum(mesh[a] / 2 for a in axes)
    return RooflineResult(ici_bytes={a: int(ici_bytes) for a in axes},
                          ici_latency={a: int(latency) for a in axes})


@register_roofline(C.ppermute_p)
def _ppermute_roofline(ctx: RooflineRuleContext, *args, axis_name, perm,
                       **params) -> RooflineResult:
    """Each pair's shard travels the shorter way round each axis of the torus, one axis
    after another; the busiest link sets the bytes, the longest route the latency."""
    axes = _axes(axis_name)
    if (zeros := _zeros_if_trivial(ctx, axes)) is not None:
        return zeros
    mesh = _mesh_shape(ctx)
    dims = [mesh.get(a, 1) for a in axes]
    shard = RooflineShape.total_bytes(ctx.avals_in)
    link_load: dict = defaultdict(float)
    latency = 0
    for src, dst in perm:
        if src == dst:
            continue
        src_at = tuple(int(i) for i in np.unravel_index(src, dims))
        dst_at = tuple(int(i) for i in np.unravel_index(dst, dims))
        hops = 0
        for d, n in enumerate(dims):
            a, b = src_at[d], dst_at[d]
            if a == b:
                continue
            forward, backward = (b - a) % n, (a - b) % n
            step = 1 if forward <= backward else -1
            pos = a
            while pos != b:
                here = src_at[:d] + (pos,) + src_at[d + 1:]
                pos = (pos + step) % n
                there = here[:d] + (pos,) + here[d + 1:]
                link_load[tuple(sorted([here, there]))] += 1
            hops += min(forward, backward)
        latency = max(latency, hops)
    ici_bytes = shard * max(link_load.values(), default=0)
    return RooflineResult(ici_bytes={a: int(ici_bytes) for a in axes},
                          ici_latency={a: int(latency) for a in axes})
