"""`olympus.scipy.ndimage`: `map_coordinates` (nearest or linear interpolation; JAX
supports orders 0 and 1)."""

from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

import olympus
import olympus.numpy as jnp

__all__ = ["map_coordinates"]


def _mirror(index, size):
    s = size - 1
    return jnp.abs((index + s) % (2 * s) - s) if s else jnp.zeros_like(index)


def _reflect(index, size):
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(a):
    return a if np.issubdtype(a.dtype, np.integer) else jnp.sign(a) * jnp.floor(
        jnp.abs(a) + 0.5)


@functools.partial(olympus.jit, static_argnums=(2, 3))
def _map_coordinates(input, coordinates, order, mode, cval):
    arr = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, arr.dtype)
    fix = _INDEX_FIXERS[mode]
    per_axis = []
    for c, size in zip(coords, arr.shape):
        if order == 0:
            nodes = [(_round_half_away(c).astype(np.int32), None)]
        else:
            lower = jnp.floor(c)
            frac = c - lower
            idx = lower.astype(np.int32)
            nodes = [(idx, 1 - frac), (idx + 1, frac)]
        entries = []
        for idx, w in nodes:
            valid = ((idx >= 0) & (idx < size)) if mode == "constant" else None
            entries.append((fix(idx, size), valid, w))
        per_axis.append(entries)
    total = None
    for combo in itertools.product(*per_axis):
        idxs = tuple(e[0] for e in combo)
        value = arr[idxs]
        valids = [e[1] for e in combo if e[1] is not None]
        if valids:
            value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
        weights = [e[2] for e in combo if e[2] is not None]
        term = functools.reduce(operator.mul, weights) * value if weights else value
        total = term if total is None else total + term
    if np.issubdtype(arr.dtype, np.integer):
        total = _round_half_away(total)
    return total.astype(arr.dtype)


def map_coordinates(input, coordinates, order: int, mode: str = "constant", cval=0.0):
    """Sample `input` at the (fractional) `coordinates` (one array per axis) with nearest
    (order 0) or multilinear (order 1) interpolation; outside the array as `mode` says
    ('constant' gives `cval`)."""
    arr = jnp.asarray(input)
    if len(coordinates) != arr.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {arr.ndim}")
    if mode not in _INDEX_FIXERS:
        raise NotImplementedError(
            f"olympus.scipy.ndimage.map_coordinates does not yet support mode {mode}. Currently "
            f"supported modes are {set(_INDEX_FIXERS)}.")
    if order not in (0, 1):
        raise NotImplementedError("olympus.scipy.ndimage.map_coordinates currently requires "
                                  "order<=1")
    return _map_coordinates(arr, list(coordinates), order, mode, cval)
