"""Wrappers of the data-movement primitives (`olympus_ir.prims.shape_ops`): broadcasts,
reshapes, transposes, squeeze/expand_dims, concatenation, padding, reversal, static slicing
and iota. Parameters are canonicalized (tuples of Python ints, canonical dtypes); a call
that changes nothing records no equation."""

from __future__ import annotations

from olympus_ir import dtypes, shape_poly
from olympus_ir import primitives as P
from olympus_ir.shape_poly import to_dim

from ..core import EvalTrace, bind, current_trace, get_aval

__all__ = [
    "broadcast_in_dim", "broadcast", "reshape", "transpose", "squeeze", "expand_dims",
    "concatenate", "pad", "rev", "slice", "iota", "broadcasted_iota",
    "dim_as_value",
]


def broadcast_in_dim(x, shape, broadcast_dimensions):
    shape = tuple(to_dim(d) for d in shape)
    if get_aval(x).shape == shape and tuple(broadcast_dimensions) == tuple(range(len(shape))):
        return x
    return bind(P.broadcast_in_dim_p, x, shape=shape,
                broadcast_dimensions=tuple(broadcast_dimensions), sharding=None)


def broadcast(x, sizes):
    """Add leading dimensions `sizes` to `x`."""
    aval = get_aval(x)
    sizes = tuple(sizes)
    return broadcast_in_dim(x, sizes + aval.shape,
                            tuple(range(len(sizes), len(sizes) + aval.ndim)))


def reshape(x, new_sizes, dimensions=None):
    new_sizes = tuple(to_dim(d) for d in new_sizes)
    aval = get_aval(x)
    if aval.shape == new_sizes and dimensions is None:
        return x
    return bind(P.reshape_p, x, new_sizes=new_sizes,
                dimensions=None if dimensions is None else tuple(dimensions), sharding=None)


def transpose(x, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return bind(P.transpose_p, x, permutation=permutation)


def squeeze(x, dimensions):
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return bind(P.squeeze_p, x, dimensions=dimensions)


def expand_dims(x, dimensions):
    return bind(P.expand_dims_p, x, dimensions=tuple(int(d) for d in dimensions))


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return bind(P.concatenate_p, *operands, dimension=int(dimension))


def pad(x, padding_value, padding_config):
    return bind(P.pad_p, x, padding_value,
                padding_config=tuple(tuple(to_dim(v) for v in c) for c in padding_config))


def rev(x, dimensions):
    return bind(P.rev_p, x, dimensions=tuple(int(d) for d in dimensions))


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001
    return bind(P.slice_p, x, start_indices=tuple(to_dim(i) for i in start_indices),
                limit_indices=tuple(to_dim(i) for i in limit_indices),
                strides=None if strides is None else tuple(int(s) for s in strides))


def iota(dtype, size: int):
    return bind(P.iota_p, dtype=dtypes.canonicalize_dtype(dtype), shape=(to_dim(size),),
                dimension=0, sharding=None)


def broadcasted_iota(dtype, shape, dimension: int):
    return bind(P.iota_p, dtype=dtypes.canonicalize_dtype(dtype),
                shape=tuple(to_dim(s) for s in shape), dimension=int(dimension), sharding=None)


def dim_as_value(dim):
    """A dimension as an array value: the identity for an int, else a `dim_as_value`
    equation whose value the lowering computes from the arguments' shapes."""
    if not shape_poly.is_symbolic_dim(dim):
        return dim
    if isinstance(current_trace(), EvalTrace):
        raise NotImplementedError(
            "Evaluation rule for 'dim_as_value' is not implemented. It seems that you are "
            "using shape polymorphism outside olympus.export.")
    return bind(P.dim_as_value_p, dim=dim)


shape_poly.set_dim_as_value(dim_as_value)
