"""Primitives that move data without arithmetic: broadcasts, reshapes, transposes,
squeeze/expand_dims, concatenation, padding, reversal and static slicing."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..avals import ShapedArray, canonicalize_shape
from ..core import def_shape_rule, new_primitive
from ..pretty import def_pp_params
from ..shape_poly import is_dim, max_dim


def _check_axes(name, axes, ndim, what="dimensions"):
    axes = tuple(int(a) if isinstance(a, np.integer) else a for a in axes)
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < ndim:
            raise TypeError(
                f"{name} {what} must be in range [0, {ndim}) for an operand of rank "
                f"{ndim}, got {axes}."
            )
    if len(set(axes)) != len(axes):
        raise TypeError(f"{name} {what} must be unique, got {axes}.")
    return axes


broadcast_in_dim_p = new_primitive("broadcast_in_dim")


@def_shape_rule(broadcast_in_dim_p)
def broadcast_in_dim_shape_rule(x, *, shape, broadcast_dimensions, sharding=None):
    shape = canonicalize_shape(shape, "broadcast_in_dim shape")
    bdims = tuple(broadcast_dimensions)
    if len(bdims) != x.ndim:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; "
            f"got broadcast_dimensions {bdims} for operand ndim {x.ndim}."
        )
    _check_axes("broadcast_in_dim", bdims, len(shape), "broadcast_dimensions")
    # As JAX, the dimensions need not increase: the broadcast may also transpose.
    for i, d in enumerate(bdims):
        if x.shape[i] not in (1, shape[d]):
            raise TypeError(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
                f"their corresponding dimensions in the target broadcast shape; got operand "
                f"of shape {x.shape}, target broadcast shape {shape}, broadcast_dimensions "
                f"{bdims} "
            )
    return ShapedArray(shape, x.dtype, x.weak_type)


@def_pp_params(broadcast_in_dim_p)
def _broadcast_in_dim_printed(eqn):
    """As JAX: `shape` and `sharding` are implied by the result's type; empty
    `broadcast_dimensions` (a scalar operand) are not shown."""
    params = dict(eqn.params)
    params.pop("shape", None)
    params.pop("sharding", None)
    if not params.get("broadcast_dimensions", ()):
        params.pop("broadcast_dimensions", None)
    return params


reshape_p = new_primitive("reshape")


@def_shape_rule(reshape_p)
def reshape_shape_rule(x, *, new_sizes, dimensions=None, sharding=None):
    new_sizes = canonicalize_shape(new_sizes, "reshape new_sizes")
    if math.prod(new_sizes) != x.size:
        raise TypeError(
            "reshape total size must be unchanged, got new_sizes "
            f"{new_sizes} (size {math.prod(new_sizes)}) for shape {x.shape} (size {x.size})."
        )
    if dimensions is not None:
        _check_axes("reshape", dimensions, x.ndim)
        if len(dimensions) != x.ndim:
            raise TypeError(f"reshape dimensions must be a permutation, got {dimensions}.")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


transpose_p = new_primitive("transpose")


@def_shape_rule(transpose_p)
def transpose_shape_rule(x, *, permutation):
    perm = tuple(permutation)
    if sorted(perm) != list(range(x.ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {perm} for operand shape {x.shape}."
        )
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype, x.weak_type)


squeeze_p = new_primitive("squeeze")


@def_shape_rule(squeeze_p)
def squeeze_shape_rule(x, *, dimensions):
    dims = _check_axes("squeeze", dimensions, x.ndim)
    for d in dims:
        if x.shape[d] != 1:
            raise TypeError(
                "cannot select an axis to squeeze out which has size not equal to one, got "
                f"shape={x.shape} and dimensions={dims}"
            )
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dims)
    return ShapedArray(shape, x.dtype, x.weak_type)


expand_dims_p = new_primitive("expand_dims")


@def_shape_rule(expand_dims_p)
def expand_dims_shape_rule(x, *, dimensions):
    out_ndim = x.ndim + len(dimensions)
    dims = _check_axes("expand_dims", dimensions, out_ndim)
    shape = list(x.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


concatenate_p = new_primitive("concatenate")


@def_shape_rule(concatenate_p)
def concatenate_shape_rule(*xs, dimension):
    if not xs:
        raise TypeError("concatenate expects at least one operand, got 0.")
    if len({x.dtype for x in xs}) > 1:
        raise TypeError(
            "concatenate requires arguments to have the same dtypes, got "
            + ", ".join(x.dtype.name for x in xs) + "."
        )
    if len({x.ndim for x in xs}) > 1:
        raise TypeError(
            "Cannot concatenate arrays with different numbers of dimensions: got "
            + ", ".join(str(x.shape) for x in xs) + "."
        )
    if not 0 <= dimension < xs[0].ndim:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            + ", ".join(str(x.shape) for x in xs) + "."
        )
    others = {x.shape[:dimension] + x.shape[dimension + 1:] for x in xs}
    if len(others) > 1:
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than "
            f"the one being concatenated: concatenating along dimension {dimension} for "
            "shapes " + ", ".join(str(x.shape) for x in xs) + "."
        )
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(tuple(shape), xs[0].dtype, all(x.weak_type for x in xs))


pad_p = new_primitive("pad")


@def_shape_rule(pad_p)
def pad_shape_rule(x, padding_value, *, padding_config):
    if padding_value.shape != ():
        raise TypeError(f"pad padding_value must be a scalar, got shape {padding_value.shape}.")
    if padding_value.dtype != x.dtype:
        raise TypeError(
            "pad operand and padding_value must be same dtype: got "
            f"{x.dtype.name} and {padding_value.dtype.name}."
        )
    if len(padding_config) != x.ndim:
        raise TypeError(
            "length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {x.shape}"
        )
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise TypeError(f"interior padding in padding_config must be nonnegative, got "
                            f"padding_config {padding_config}")
        n = lo + hi + d + (max(0, d - 1) if type(d) is int else max_dim(0, d - 1)) * interior
        if n < 0:
            raise TypeError(
                f"Dimension size after padding is not at least 0, got result shape with "
                f"negative size for padding_config {padding_config} and shape {x.shape}"
            )
        shape.append(n)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


rev_p = new_primitive("rev")


@def_shape_rule(rev_p)
def rev_shape_rule(x, *, dimensions):
    _check_axes("rev", dimensions, x.ndim)
    return x


slice_p = new_primitive("slice")


@def_shape_rule(slice_p)
def slice_shape_rule(x, *, start_indices, limit_indices, strides=None):
    """JAX's checks, in its order and words (all limits, then all starts, then both)."""
    start = canonicalize_shape(start_indices, "slice start_indices")
    limit = canonicalize_shape(limit_indices, "slice limit_indices")
    if x.ndim != len(start):
        raise TypeError("slice start_indices must have length equal to the number of "
                        f"dimensions of the operand, got indices {start} for operand shape "
                        f"{x.shape}.")
    if len(start) != len(limit):
        raise TypeError("slice limit_indices must have the same length as start_indices, got "
                        f"start_indices {start} and limit_indices {limit}.")
    if not all(d >= lim for d, lim in zip(x.shape, limit)):
        raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                        f"limit_indices {limit} for operand shape {x.shape}.")
    if not all(s >= 0 for s in start):
        raise TypeError("slice start_indices must be greater than or equal to zero, got "
                        f"start_indices of {start}.")
    if not all(lim >= s for lim, s in zip(limit, start)):
        raise TypeError("slice limit_indices must be greater than or equal to start_indices, "
                        f"got start_indices {start} and limit_indices {limit}.")
    n = x.ndim
    strides = (1,) * n if strides is None else tuple(strides)
    if len(strides) != n:
        raise TypeError("slice strides must have length equal to the number of dimensions of "
                        f"the operand, got strides {strides} for operand shape {x.shape}.")
    if not all(st > 0 for st in strides):
        raise TypeError(f"slice strides must be positive, got {strides}")
    shape = [0 if lim == s else (lim - s + st - 1) // st
             for s, lim, st in zip(start, limit, strides)]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


iota_p = new_primitive("iota")


@def_shape_rule(iota_p)
def iota_shape_rule(*, dtype, shape, dimension, sharding=None):
    shape = canonicalize_shape(shape, "iota shape")
    dt = dtypes.dtype(dtype)
    if dtypes.is_bool(dt) or dtypes.is_complex(dt):
        raise TypeError(f"iota does not accept dtype {dt.name}.")
    if not 0 <= dimension < len(shape):
        raise TypeError(
            f"iota dimension must be in range [0, {len(shape)}), got dimension={dimension}."
        )
    return ShapedArray(shape, dt)


dim_as_value_p = new_primitive("dim_as_value")


@def_shape_rule(dim_as_value_p)
def dim_as_value_shape_rule(*, dim):
    """A symbolic dimension as a value: a weakly typed scalar of the default int type (its
    value is known only at run time, from the arguments' shapes)."""
    if not is_dim(dim):
        raise TypeError("dim_as_value dim must be a dimension (an int or a symbolic "
                        f"dimension), got {dim!r}.")
    return ShapedArray((), dtypes.default_int(), weak_type=True)

# --- tile, split, stack, unstack: JAX's structural primitives of their own ------------------

tile_p = new_primitive("tile")


@def_shape_rule(tile_p)
def tile_shape_rule(x, *, reps):
    if x.ndim != len(reps):
        raise TypeError(
            "reps length must be equal to the ndim of x, got "
            f"len(reps)={len(reps)} and x.ndim={x.ndim}."
        )
    if any(r < 0 for r in reps):
        raise ValueError(f"tile reps must be nonnegative, got {tuple(reps)}.")
    return ShapedArray(tuple(d * r for d, r in zip(x.shape, reps)), x.dtype, x.weak_type)


split_p = new_primitive("split", multiple_results=True)


@def_shape_rule(split_p)
def split_shape_rule(x, *, sizes, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if x.shape[axis] != sum(sizes):
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
            f"operand shape {list(x.shape)}"
        )
    outs = []
    for s in sizes:
        shape = list(x.shape)
        shape[axis] = s
        outs.append(ShapedArray(tuple(shape), x.dtype, x.weak_type))
    return outs


stack_p = new_primitive("stack")


@def_shape_rule(stack_p)
def stack_shape_rule(*xs, axis):
    if not xs:
        raise ValueError("stack expects at least one operand, got 0.")
    if len({x.ndim for x in xs}) != 1:
        raise ValueError("Cannot stack arrays with different numbers of dimensions: got "
                         + ", ".join(str(x.shape) for x in xs) + ".")
    if len({x.shape for x in xs}) != 1:
        raise ValueError("All input arrays must have the same shape. Got "
                         + ", ".join(str(x.shape) for x in xs) + ".")
    if len({x.dtype for x in xs}) != 1:
        raise TypeError("lax.stack requires arguments to have the same dtypes, got "
                        + ", ".join(x.dtype.name for x in xs) + ".")
    if not 0 <= axis <= xs[0].ndim:
        raise ValueError(
            f"axis {axis} is out of bounds for array of dimension {xs[0].ndim + 1}")
    shape = list(xs[0].shape)
    shape.insert(axis, len(xs))
    return ShapedArray(tuple(shape), xs[0].dtype, all(x.weak_type for x in xs))


unstack_p = new_primitive("unstack", multiple_results=True)


@def_shape_rule(unstack_p)
def unstack_shape_rule(x, *, axis):
    if x.ndim == 0:
        raise ValueError("unstack requires arrays with rank > 0, however a scalar array of "
                         f"shape {x.shape} was passed.")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type)] * x.shape[axis]
