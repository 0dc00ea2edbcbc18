"""Wrappers of the indexing primitives (`olympus_ir.prims.indexing`): `dynamic_slice`,
`dynamic_update_slice`, and XLA's gather and scatter family with explicit dimension
numbers, as JAX's lax exposes them. The index vector is the last dimension of the indices.

``mode`` is a `GatherScatterMode` or one of ``"clip"``, ``"fill"``/``"drop"``,
``"promise_in_bounds"``; None means fill (gather) or drop (scatter) out-of-bounds windows,
as in JAX. A filling gather uses `fill_value`, by default NaN for inexact dtypes, the
minimum of signed and the maximum of unsigned integers, and True for bool.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import ShapedArray
from olympus_ir.prims.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)

from ..core import bind, get_aval
from ..promotion import to_operand
from .elementwise import add, lt, select
from .shape_ops import broadcast_in_dim

__all__ = ["dynamic_slice", "dynamic_update_slice", "GatherDimensionNumbers",
           "GatherScatterMode", "ScatterDimensionNumbers", "gather", "scatter", "scatter_add",
           "scatter_max", "scatter_min", "scatter_mul", "scatter_sub", "scatter_apply", "default_fill",
           "gather_bind", "scatter_bind"]


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The window of `slice_sizes` at `start_indices`; as in JAX a negative start counts
    from the end of its dimension first, then XLA clamps the window into range."""
    shape = get_aval(operand).shape
    if len(start_indices) != len(shape):  # JAX's ValueError, before the shape rule's
        raise ValueError("Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {shape})")
    starts = _wrap_negative(operand, start_indices, allow_negative_indices)
    return bind(P.dynamic_slice_p, operand, *starts, slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """`operand` with `update` written at `start_indices` (negative starts as in dynamic_slice)."""
    starts = _wrap_negative(operand, start_indices, allow_negative_indices)
    return bind(P.dynamic_update_slice_p, operand, update, *starts)


def _wrap_negative(x, starts, allow):
    """Start indices with negative ones counted from the end of their dimension: static
    ones in Python, traced signed ones with a select (unsigned ones cannot be negative)."""
    starts = list(starts)
    if allow is False:
        return starts
    shape = get_aval(x).shape
    if len(starts) != len(shape):
        return starts  # the shape rule reports the mismatch
    allow = [allow] * len(starts) if isinstance(allow, bool) else list(allow)
    out = []
    for i, d, ok in zip(starts, shape, allow):
        if not ok:
            out.append(i)
        elif isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            out.append(i + d if i < 0 else i)
        else:
            dt = get_aval(i).dtype
            if dtypes.is_unsigned_int(dt) or not dtypes.is_integer(dt):
                out.append(i)  # non-integer starts: the shape rule's error
            else:
                d_i = np.array(d, dt)[()]
                out.append(select(lt(i, np.array(0, dt)[()]), add(i, d_i), i))
    return out


def _operand(name: str, what: str, x: Any) -> Any:
    x = to_operand(x)
    if isinstance(x, (bool, int, float, complex)):
        x = np.asarray(x, dtypes.python_scalar_dtype(x))
    try:
        get_aval(x)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an array, got {type(x).__name__}") from None
    return x


def _indices(name: str, x: Any) -> Any:
    x = _operand(name, "indices", x)
    aval = get_aval(x)
    if not dtypes.is_integer(aval.dtype):
        raise TypeError(f"{name}: indices must have an integer dtype, got {aval.dtype.name}")
    if aval.ndim == 0:
        raise TypeError(f"{name}: indices must have rank >= 1 (the last dimension is the index "
                        f"vector), got a scalar")
    return x


def default_fill(dt: np.dtype) -> Any:
    """What a filling gather puts in out-of-bounds windows unless told (as JAX)."""
    if dtypes.is_inexact(dt):
        return np.nan
    if dtypes.is_signed_int(dt):
        return int(dtypes.iinfo(dt).min)
    if dtypes.is_unsigned_int(dt):
        return int(dtypes.iinfo(dt).max)
    return True


def gather(operand, start_indices, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value=None):
    """XLA's gather: for each index vector in `start_indices` (its last dimension), the
    `slice_sizes` window of `operand` starting there, laid out by `dimension_numbers`."""
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError(f"gather: dimension_numbers must be a GatherDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    operand = _operand("gather", "operand", operand)
    start_indices = _indices("gather", start_indices)
    # JAX's lax.gather promises in-bounds indices unless told otherwise (jnp indexing
    # passes its mode explicitly).
    parsed = GatherScatterMode.from_any(
        GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    dt = get_aval(operand).dtype
    fv = None
    if parsed == GatherScatterMode.FILL_OR_DROP:
        fv = default_fill(dt) if fill_value is None else fill_value
        if not dtypes.is_inexact(dt) or not isinstance(fv, (bool, int, float)):
            fv = np.array(fv).astype(dt).item()
    return gather_bind(operand, start_indices,
                       GatherDimensionNumbers(*map(tuple, dimension_numbers)),
                       tuple(int(s) for s in slice_sizes),
                       indices_are_sorted=bool(indices_are_sorted),
                       unique_indices=bool(unique_indices), mode=parsed, fill_value=fv)


def gather_bind(operand, start_indices, dimension_numbers, slice_sizes, *,
                indices_are_sorted, unique_indices, mode, fill_value):
    """The gather equation of `gather` once its arguments are checked and canonical: arrays,
    a `GatherDimensionNumbers` of int tuples, a tuple of int `slice_sizes`, bools, a
    `GatherScatterMode` and the resolved `fill_value` (None unless `mode` fills), bound as
    given. olympus.numpy's indexing, which builds exactly these, calls it directly (an
    eager hot path)."""
    return bind(P.gather_p, operand, start_indices, dimension_numbers=dimension_numbers,
                slice_sizes=slice_sizes, indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices, mode=mode, fill_value=fill_value)


def _scatter(prim, name: str, operand, scatter_indices, updates, dimension_numbers, *,
             indices_are_sorted: bool, unique_indices: bool, mode):
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a ScatterDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    operand = _operand(name, "operand", operand)
    scatter_indices = _indices(name, scatter_indices)
    updates = _operand(name, "updates", updates)
    a, u = get_aval(operand), get_aval(updates)
    if a.dtype != u.dtype:
        raise TypeError(f"{name}: updates must have the operand's dtype {a.dtype.name}, got "
                        f"{u.dtype.name}")
    return bind(prim, operand, scatter_indices, updates,
                dimension_numbers=ScatterDimensionNumbers(*map(tuple, dimension_numbers)),
                indices_are_sorted=bool(indices_are_sorted),
                unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode))


_SCATTER_PRIMS = {"set": P.scatter_p, "add": P.scatter_add_p, "mul": P.scatter_mul_p,
                  "min": P.scatter_min_p, "max": P.scatter_max_p, "sub": P.scatter_sub_p}


def scatter_bind(kind, operand, scatter_indices, updates, dimension_numbers, *,
                 indices_are_sorted, unique_indices, mode):
    """The scatter equation (`kind`: "set", "add", "sub", "mul", "min" or "max") of the
    wrappers once their arguments are checked and canonical: arrays of one dtype, a
    `ScatterDimensionNumbers` of int tuples, bools and a `GatherScatterMode`, bound as
    given. olympus.numpy's indexing, which builds exactly these, calls it directly (an
    eager hot path)."""
    return bind(_SCATTER_PRIMS[kind], operand, scatter_indices, updates,
                dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices, mode=mode)


def _make_scatter(prim, name: str, what: str) -> Callable:
    def f(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers, *,
          indices_are_sorted: bool = False, unique_indices: bool = False,
          mode: str | GatherScatterMode | None = None):
        return _scatter(prim, name, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"XLA's scatter: `operand` with the windows that `dimension_numbers` maps "
                 f"from `scatter_indices` {what} `updates`.")
    return f


scatter = _make_scatter(P.scatter_p, "scatter", "replaced by")
scatter_add = _make_scatter(P.scatter_add_p, "scatter_add", "plus")
scatter_mul = _make_scatter(P.scatter_mul_p, "scatter_mul", "times")
scatter_min = _make_scatter(P.scatter_min_p, "scatter_min", "combined by minimum with")
scatter_max = _make_scatter(P.scatter_max_p, "scatter_max", "combined by maximum with")


scatter_sub = _make_scatter(P.scatter_sub_p, "scatter_sub", "minus")


#: func -> {dtype: the traced update computation}: the same function applied again reuses
#: its program (so a jitted caller's cache hits), as JAX caches it.
_scatter_apply_programs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _apply_program(func, dtype):
    try:
        per_func = _scatter_apply_programs.setdefault(func, {})
    except TypeError:  # not weakly referenceable: traced each time
        per_func = {}
    closed = per_func.get(dtype)
    if closed is None:
        from ..core import Tracer
        from ..staging import trace_to_olympuspr

        scalar = ShapedArray((), dtype)
        closed, _ = trace_to_olympuspr(lambda x, _: [func(x)], [scalar, scalar])
        if any(isinstance(c, Tracer) for c in closed.consts):
            raise NotImplementedError(
                "Reduction computations can't close over Tracers. Please open an issue at "
                "https://github.com/olympus-ml/olympus.")
        out = closed.out_avals[0]
        if out.shape != () or out.dtype != dtype:
            raise TypeError(f"scatter_apply: func must map a {scalar.str_short()} to a "
                            f"{scalar.str_short()}, got {out.str_short()}")
        per_func[dtype] = closed
    return closed


def scatter_apply(operand, scatter_indices, func: Callable, dimension_numbers:
                  ScatterDimensionNumbers, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False,
                  mode: str | GatherScatterMode | None = None):
    """XLA's scatter with `func` as its update computation: each window of `operand` that
    `dimension_numbers` maps from `scatter_indices` replaced by `func` of itself, applied
    once per index (twice for an index given twice). `update_shape` is the shape the
    updates would have (JAX's placeholder operand). Not differentiable, as in JAX."""
    name = "scatter_apply"
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a ScatterDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    operand = _operand(name, "operand", operand)
    scatter_indices = _indices(name, scatter_indices)
    dtype = get_aval(operand).dtype
    update_shape = tuple(int(d) for d in update_shape)
    unused = (np.zeros((), dtype) if not update_shape
              else broadcast_in_dim(np.zeros((), dtype), update_shape, ()))
    return bind(P.scatter_p, operand, scatter_indices, unused,
                dimension_numbers=ScatterDimensionNumbers(*map(tuple, dimension_numbers)),
                indices_are_sorted=bool(indices_are_sorted),
                unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
                update_olympuspr=_apply_program(func, dtype))
