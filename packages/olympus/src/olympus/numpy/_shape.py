"""Shape manipulation: reshaping, transposing, joining, splitting, tiling, flipping, rolling,
padding, inserting and deleting. Sizes and positions are static (Python values), as in JAX;
a few functions also take traced shifts or repeat counts where JAX does.

Why one module of over 1,000 lines: it is NumPy's "array manipulation routines" chapter
(about 60 short functions) and nothing else; its functions call one another (``tile`` and
``repeat`` reshape and broadcast, ``pad`` slices and concatenates, ``delete``/``insert``
split and join), so the natural cut (joining and splitting, ~300 lines) would import back
and forth. Split it when a second concern appears here."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from olympus_ir import dtypes
from olympus_ir.shape_poly import DimExpr, InconclusiveDimensionOperation
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace.core import Tracer

from .._src.library_jit import jitted as _jitted
from . import _creation
from . import _ufuncs as uf
from ._util import (
    aval_of,
    canonicalize_axis,
    check_arraylike,
    check_no_out,
    concrete_or_error,
    concrete_value,
    ensure_arraylike,
    promote_dtypes,
    static_axis,
    static_int,
)


def _shape(x):
    return tuple(aval_of(x).shape)


def _ndim(x):
    return aval_of(x).ndim


def canonicalize_shape(shape, what="shape") -> tuple:
    """A shape argument as a tuple of Python ints (TypeError for traced values)."""
    if isinstance(shape, (Tracer,)) and aval_of(shape).ndim == 0:
        shape = (shape,)
    elif isinstance(shape, (int, np.integer, DimExpr)) or (
            hasattr(shape, "ndim") and getattr(shape, "ndim", 1) == 0):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    if dims is not None and not builtins.any(isinstance(d, Tracer) for d in dims):
        try:
            return tuple(d if type(d) is DimExpr else operator.index(d) for d in dims)
        except TypeError:
            pass
    got = shape if dims is None or isinstance(shape, list) else dims
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {got}."
    tracers = [d for d in (dims if dims is not None else (shape,)) if isinstance(d, Tracer)]
    if tracers:
        # JAX's wording: the hint on its own line, then where each traced size came from.
        msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                "subfunctions.")
        msg += "".join(t._origin_msg() for t in tracers)
    raise TypeError(msg)


# --- reshaping and transposing ------------------------------------------------------------------


def reshape(a, shape=None, order="C", *, copy=None):
    """A new shape for the same data (one dimension may be -1). JAX 0.10.2 removed the
    deprecated `newshape` keyword, so it is an unexpected keyword here too."""
    if shape is None:
        raise TypeError("reshape() missing required argument: 'shape'")
    a = ensure_arraylike("reshape", a)
    if isinstance(shape, Tracer) and aval_of(shape).ndim == 0:
        shape = [shape]  # as JAX: so an error shows the list it was given
    shape = canonicalize_shape(shape)
    if order == "C" or order is None:
        return _reshape_c(a, shape)
    if order == "F":
        return transpose(_reshape_c(transpose(a), shape[::-1]))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def _reshape_c(x, shape):
    """Row-major reshape to `shape` (one entry may be -1)."""
    size = aval_of(x).size
    shape = list(shape)
    if shape.count(-1) > 1:
        raise TypeError("can only specify one unknown axis size with a `-1` value, got "
                        f"{tuple(shape)}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if type(size) is DimExpr or type(known) is DimExpr:
            # JAX's rule for symbolic sizes: the quotient must be exact.
            q, r = divmod(size, math.prod(shape))
            if type(r) is DimExpr or r != 0:
                raise InconclusiveDimensionOperation(
                    f"Cannot divide evenly the sizes of shapes {_shape(x)} and "
                    f"{tuple(shape)}. The remainder {r} should be 0.", help_text=False)
            shape[shape.index(-1)] = -q
            return lax.reshape(x, tuple(shape))
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of shape {_shape(x)} (size {size}) "
                            f"into shape {tuple(shape)}")
        shape[shape.index(-1)] = size // known
    if math.prod(shape) != size:
        raise TypeError(f"cannot reshape array of shape {_shape(x)} (size {size}) into "
                        f"shape {tuple(shape)} (size {math.prod(shape)})")
    return lax.reshape(x, tuple(shape))


def ravel(a, order="C"):
    """The elements as a 1-D array."""
    a = ensure_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    if order == "F":
        a = transpose(a)
    return lax.reshape(a, (aval_of(a).size,))


def transpose(a, axes=None):
    """Permute the axes (reverse them by default)."""
    a = ensure_arraylike("transpose", a)
    nd = _ndim(a)
    if axes is None:
        perm = tuple(range(nd))[::-1]
    else:
        perm = tuple(canonicalize_axis(ax, nd) for ax in axes)
        _check_permutation(perm, _shape(a))
    return lax.transpose(a, perm)


def _check_permutation(perm, shape) -> None:
    """JAX's TypeError for axes that do not permute the dimensions of `shape`."""
    if len(perm) != len(shape) or sorted(perm) != list(range(len(shape))):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                        f"got permutation {tuple(perm)} for operand shape {tuple(shape)}.")


def permute_dims(a, /, axes):
    """Permute the axes (array API name of transpose)."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    x = ensure_arraylike("matrix_transpose", x)
    nd = _ndim(x)
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={nd}")
    return swapaxes(x, -1, -2)


def swapaxes(a, axis1, axis2):
    """Interchange two axes."""
    a = ensure_arraylike("swapaxes", a)
    nd = _ndim(a)
    perm = list(range(nd))
    for ax in (axis1, axis2):  # JAX swaps entries of a NumPy permutation: its IndexError
        if isinstance(ax, (int, np.integer)) and not -nd <= ax < nd:
            raise IndexError(f"index {ax} is out of bounds for axis 0 with size {nd}")
    a1, a2 = canonicalize_axis(axis1, nd), canonicalize_axis(axis2, nd)
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return lax.transpose(a, perm)


def _axes_seq(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def moveaxis(a, source, destination):
    """Move axes to new positions; the others keep their order."""
    a = ensure_arraylike("moveaxis", a)
    nd = _ndim(a)
    src = tuple(canonicalize_axis(s, nd) for s in _axes_seq(source))
    dst = tuple(canonicalize_axis(d, nd) for d in _axes_seq(destination))
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    _check_permutation(perm, _shape(a))  # repeated axes: JAX's TypeError
    return lax.transpose(a, tuple(perm))


def rollaxis(a, axis, start=0):
    """Roll `axis` backwards until it lies before `start`."""
    a = ensure_arraylike("rollaxis", a)
    nd = _ndim(a)
    axis = canonicalize_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if axis < start:
        start -= 1
    if axis == start:
        return a
    return moveaxis(a, axis, start)


def squeeze(a, axis=None):
    """Remove size-1 axes (all of them, or the given ones)."""
    a = ensure_arraylike("squeeze", a)
    shape = _shape(a)
    if axis is not None:
        axes = prom.axes_tuple(axis, len(shape))
        for ax in axes:
            if shape[ax] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={shape} and dimensions={axes}")
        return lax.squeeze(a, axes)
    return lax.squeeze(a, tuple(i for i, d in enumerate(shape) if d == 1))


def expand_dims(a, axis):
    """Insert size-1 axes at the given positions of the result."""
    a = ensure_arraylike("expand_dims", a)
    axes = _axes_seq(axis)
    nd = _ndim(a) + len(axes)
    canon = [canonicalize_axis(ax, nd) for ax in axes]
    if len(set(canon)) != len(canon):
        raise ValueError(f"repeated axis in expand_dims: {axis}")
    shape = list(_shape(a))
    for ax in sorted(canon):
        shape.insert(ax, 1)
    kept = tuple(i for i in range(nd) if i not in canon)
    return lax.broadcast_in_dim(a, tuple(shape), kept)


def broadcast_shapes(*shapes):
    """The shape that arrays of the given shapes broadcast to."""
    if not shapes:
        return ()
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    return prom.broadcast_shapes(*shapes)


def broadcast_to(array, shape):
    """`array` broadcast to `shape` (NumPy's rules)."""
    array = ensure_arraylike("broadcast_to", array)
    shape = canonicalize_shape(shape)
    ashape = _shape(array)
    if ashape == shape:
        return array if not prom.is_python_scalar(array) else prom.broadcast_to(
            lax.convert_element_type(array, aval_of(array).dtype, aval_of(array).weak_type),
            shape)
    nlead = len(shape) - len(ashape)
    if nlead < 0:
        raise ValueError("Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={ashape} shape={shape}")
    if builtins.any(d not in (1, s) for d, s in zip(ashape, shape[nlead:])):
        aval = aval_of(array)
        wanted = type(aval)(shape, aval.dtype).str_short(short_dtypes=False)
        raise ValueError(f"Incompatible types for broadcasting: input type={aval} and "
                         f"requested type={wanted}")
    return prom.broadcast_to(array, shape)


def broadcast_arrays(*args):
    """The arguments broadcast against each other."""
    args = [ensure_arraylike("broadcast_arrays", a) for a in args]
    shape = prom.broadcast_shapes(*(_shape(a) for a in args))
    return [broadcast_to(a, shape) for a in args]


def _atleast(arys, n, name):
    outs = []
    for a in arys:
        a = ensure_arraylike(name, a)
        s = _shape(a)
        if len(s) >= n:
            outs.append(a if not prom.is_python_scalar(a) else prom.broadcast_to(a, ()))
            continue
        if n == 1:
            new = (1,) * (1 - len(s)) + s
        elif n == 2:
            new = (1,) * (2 - len(s)) + s
        else:
            new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)]
        outs.append(lax.reshape(a, new))
    return outs[0] if len(outs) == 1 else outs


def atleast_1d(*arys):
    """Inputs as arrays with at least one dimension."""
    return _atleast(arys, 1, "atleast_1d")


def atleast_2d(*arys):
    """Inputs as arrays with at least two dimensions."""
    return _atleast(arys, 2, "atleast_2d")


def atleast_3d(*arys):
    """Inputs as arrays with at least three dimensions."""
    return _atleast(arys, 3, "atleast_3d")


# --- joining --------------------------------------------------------------------------------------


def _seq_of_arrays(name, arrays):
    if hasattr(arrays, "ndim") and not isinstance(arrays, (list, tuple)):
        arrays = ensure_arraylike(name, arrays)
        return [arrays[i] for i in range(_shape(arrays)[0])] if _ndim(arrays) else [arrays]
    arrays = list(arrays)
    # Nested sequences as elements are accepted (as NumPy does; JAX rejects them).
    arrays = [prom.to_operand(a) if isinstance(a, (list, tuple)) else a for a in arrays]
    check_arraylike(name, *arrays)
    return [ensure_arraylike(name, a) for a in arrays]


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (flattened first for axis=None)."""
    if hasattr(arrays, "ndim") and not isinstance(arrays, (list, tuple)):
        arrays = ensure_arraylike("concatenate", arrays)
        if _ndim(arrays) == 0:
            raise ValueError("Zero-dimensional arrays cannot be concatenated.")
        if axis is None:
            return ravel(arrays) if dtype is None else _creation.astype(ravel(arrays), dtype)
        nd = _ndim(arrays)
        ax = canonicalize_axis(axis, nd - 1)
        out = moveaxis(arrays, 0, ax)
        s = _shape(out)
        out = lax.reshape(out, s[:ax] + (s[ax] * s[ax + 1],) + s[ax + 2:])
        return out if dtype is None else _creation.astype(out, dtype)
    arrays = _seq_of_arrays("concatenate", arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    if builtins.any(_ndim(a) == 0 for a in arrays):
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    if dtype is not None:
        arrays = [_creation.astype(a, dtype) for a in arrays]
    else:
        arrays = promote_dtypes(*arrays)
    nd = _ndim(arrays[0])
    axis = canonicalize_axis(axis, nd)
    shapes = [_shape(a) for a in arrays]
    for s in shapes:
        if len(s) != nd or builtins.any(d != shapes[0][i] for i, d in enumerate(s)
                                        if i != axis):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions "
                            f"other than the one being concatenated: concatenating along "
                            f"dimension {axis} for shapes "
                            + ", ".join(str(t) for t in shapes) + ".")
    arrays = [a if not prom.is_python_scalar(a) else np.asarray(a) for a in arrays]
    if len(arrays) == 1:
        return arrays[0] if not isinstance(arrays[0], np.ndarray) else prom.broadcast_to(
            arrays[0], shapes[0])
    return lax.concatenate(arrays, axis)


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays along a new axis."""
    check_no_out("stack", out)
    from_sequence = not hasattr(arrays, "shape")
    arrays = _seq_of_arrays("stack", arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    shape0 = _shape(arrays[0])
    if builtins.any(_shape(a) != shape0 for a in arrays):
        raise ValueError("All input arrays must have the same shape.")
    axis = canonicalize_axis(axis, len(shape0) + 1)
    new = shape0[:axis] + (1,) + shape0[axis:]
    kept = tuple(i for i in range(len(new)) if i != axis)
    if dtype is not None:
        arrays = [_creation.astype(a, dtype) for a in arrays]
    else:
        arrays = promote_dtypes(*arrays)
    if from_sequence:  # as JAX: one `stack` equation
        return lax.stack(arrays, axis)
    parts = [lax.broadcast_in_dim(a, new, kept) for a in arrays]
    return lax.concatenate(parts, axis) if len(parts) > 1 else parts[0]


def hstack(tup, dtype=None):
    """Stack horizontally (along axis 1, or 0 for 1-D inputs)."""
    arrs = _seq_of_arrays("hstack", tup)
    arrs = [atleast_1d(a) for a in arrs]
    axis = 0 if arrs and _ndim(arrs[0]) == 1 else 1
    return concatenate(arrs, axis=axis, dtype=dtype)


def vstack(tup, dtype=None):
    """Stack vertically (along axis 0, 1-D inputs as rows)."""
    arrs = [atleast_2d(a) for a in _seq_of_arrays("vstack", tup)]
    return concatenate(arrs, axis=0, dtype=dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    """Stack depth-wise (along axis 2)."""
    arrs = [atleast_3d(a) for a in _seq_of_arrays("dstack", tup)]
    return concatenate(arrs, axis=2, dtype=dtype)


def column_stack(tup):
    """Stack 1-D arrays as columns (2-D inputs as they are)."""
    arrs = []
    for a in _seq_of_arrays("column_stack", tup):
        nd = _ndim(a)
        arrs.append(lax.reshape(a, (_shape(a)[0] if nd else 1, 1)) if nd < 2 else a)
    return concatenate(arrs, axis=1)


def block(arrays):
    """Assemble an array from nested lists of blocks."""

    def depth(x, where):
        if isinstance(x, tuple):
            raise TypeError(f"{where} is a tuple. Only lists can be used to arrange blocks, "
                            "and olympus.numpy.block does not allow implicit conversion from "
                            "tuple to ndarray.")
        if isinstance(x, list):
            if not x:
                raise ValueError(f"List at {where} cannot be empty")
            ds = [depth(v, f"{where}[{i}]") for i, v in enumerate(x)]
            if builtins.any(d[0] != ds[0][0] for d in ds):
                raise ValueError("List depths are mismatched.")
            return (ds[0][0] + 1, builtins.max(d[1] for d in ds))
        return (0, _ndim(ensure_arraylike("block", x)))

    list_depth, max_nd = depth(arrays, "arrays")
    nd = builtins.max(list_depth, max_nd)

    def rec(x, d):
        if d < list_depth:
            return concatenate([rec(v, d + 1) for v in x], axis=-(list_depth - d))
        x = ensure_arraylike("block", x)
        s = _shape(x)
        return lax.reshape(x, (1,) * (nd - len(s)) + s) if len(s) < nd else x

    return rec(arrays, 0)


# --- splitting ------------------------------------------------------------------------------------


def _split(name, ary, indices_or_sections, axis, equal):
    ary = ensure_arraylike(name, ary)
    shape = _shape(ary)
    axis = canonicalize_axis(axis, len(shape))
    n = shape[axis]
    ios = concrete_value(indices_or_sections)
    if ios is None:
        raise TypeError(f"{name}: indices_or_sections must be static (not traced).")
    if np.ndim(ios) == 0:
        k = int(ios)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if equal and n % k:
            raise ValueError("array split does not result in an equal division: rest is "
                             f"{n % k}")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = np.cumsum([0] + sizes)
    else:
        idx = [int(i) for i in np.asarray(ios).ravel()]
        bounds = [0] + idx + [n]
    outs = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo = builtins.min(builtins.max(int(lo) if lo >= 0 else int(lo) + n, 0), n)
        hi = builtins.min(builtins.max(int(hi) if hi >= 0 else int(hi) + n, 0), n)
        hi = builtins.max(hi, lo)
        start = [0] * len(shape)
        limit = list(shape)
        start[axis], limit[axis] = lo, hi
        outs.append(lax.slice(ary, start, limit))
    return outs


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections, or at the given indices."""
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """Split into nearly equal sections, or at the given indices."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """Split horizontally (axis 1, or 0 for 1-D)."""
    ary = ensure_arraylike("hsplit", ary)
    if _ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", ary, indices_or_sections, 1 if _ndim(ary) > 1 else 0, True)


def vsplit(ary, indices_or_sections):
    """Split vertically (axis 0)."""
    ary = ensure_arraylike("vsplit", ary)
    if _ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", ary, indices_or_sections, 0, True)


def dsplit(ary, indices_or_sections):
    """Split depth-wise (axis 2)."""
    ary = ensure_arraylike("dsplit", ary)
    if _ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", ary, indices_or_sections, 2, True)


def unstack(x, /, *, axis=0):
    """The slices of x along `axis`, as a tuple."""
    x = ensure_arraylike("unstack", x)
    if _ndim(x) == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    axis = canonicalize_axis(axis, _ndim(x))
    shape = _shape(x)
    outs = []
    for i in range(shape[axis]):
        start = [0] * len(shape)
        limit = list(shape)
        start[axis], limit[axis] = i, i + 1
        outs.append(lax.squeeze(lax.slice(x, start, limit), (axis,)))
    return tuple(outs)


# --- tiling, repeating, flipping, rolling -----------------------------------------------------


def tile(A, reps):
    """Repeat the whole array `reps` times along each axis."""
    A = ensure_arraylike("tile", A)
    rv = concrete_or_error(reps, "The error arose in the 'reps' argument of "
                                 "olympus.numpy.tile.")
    reps = tuple(np.atleast_1d(rv).tolist())
    shape = _shape(A)
    d = builtins.max(len(reps), len(shape))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    if not builtins.all(isinstance(r, (int, builtins.bool)) for r in reps):
        # JAX's error names the tiled shape it could not build.
        got = tuple(np.float64(s * r) for s, r in zip(shape, reps))
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {got}.")
    reps = tuple(int(r) for r in reps)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"negative dimensions are not allowed: reps={reps}")
    if isinstance(A, (int, float, bool, complex)):
        A = lax.convert_element_type(A, aval_of(A).dtype, aval_of(A).weak_type)
    A = lax.reshape(A, shape) if _shape(A) != shape else A
    inter = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    out = lax.broadcast_in_dim(A, inter, tuple(range(1, 2 * d, 2)))
    return lax.reshape(out, tuple(r * s for r, s in zip(reps, shape)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element `repeats` times along an axis. Traced `repeats` need a static
    `total_repeat_length`."""
    from ._indexing import take
    from ._reductions import cumsum

    a = ensure_arraylike("repeat", a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, _ndim(a))
    shape = _shape(a)
    n = shape[axis]
    reps = concrete_value(repeats) if not isinstance(repeats, Tracer) or \
        repeats.to_concrete_value() is not None else None
    if total_repeat_length is not None:
        total_repeat_length = static_int(total_repeat_length,
                                         "the total_repeat_length argument of repeat")
    if reps is not None:
        reps = np.asarray(reps)
        if not (np.issubdtype(reps.dtype, np.integer) or reps.dtype == bool):
            raise TypeError(f"repeats must be integers, got dtype {reps.dtype}")
        if np.any(reps < 0):
            raise ValueError("repeats may not contain negative values")
        if reps.ndim == 0 or reps.size == 1 and reps.ndim == 1 and n != 1:
            r = int(reps.reshape(()))
            if total_repeat_length is None or total_repeat_length == r * n:
                new = shape[:axis + 1] + (r,) + shape[axis + 1:]
                out = lax.broadcast_in_dim(a, new, tuple(i for i in range(len(new))
                                                         if i != axis + 1))
                return lax.reshape(out, shape[:axis] + (n * r,) + shape[axis + 1:])
            reps = np.full((n,), r)
        reps = np.broadcast_to(reps.ravel(), (n,)) if reps.size == 1 else reps.ravel()
        if reps.shape != (n,):
            raise ValueError(f"repeats shape {reps.shape} does not match the dimension on "
                             f"axis {axis}, {n}")
        idx = np.repeat(np.arange(n), reps)
        if total_repeat_length is not None:
            if idx.size >= total_repeat_length:
                idx = idx[:total_repeat_length]
            else:
                pad = idx[-1] if idx.size else 0
                idx = np.concatenate([idx, np.full(total_repeat_length - idx.size, pad)])
        if idx.size == 0:
            return lax.slice(a, [0] * len(shape), shape[:axis] + (0,) + shape[axis + 1:])
        return take(a, idx.astype(dtypes.default_int()), axis=axis, mode="clip")
    if total_repeat_length is None:
        concrete_or_error(repeats, "When jit-compiling olympus.numpy.repeat, the total number "
                                   "of repeats must be static. To fix this, either specify a "
                                   "static value for `repeats`, or pass a static value to "
                                   "`total_repeat_length`.")
    repeats = ensure_arraylike("repeat", repeats)
    idt = dtypes.default_int()
    repeats = prom.broadcast_to(lax.convert_element_type(repeats, idt), (n,))
    if total_repeat_length == 0 or n == 0:
        return lax.slice(a, [0] * len(shape), shape[:axis] + (0,) + shape[axis + 1:])
    # Start position of each block; mark it, and a cumulative count gives the source index.
    starts = cumsum(repeats) - repeats
    marks = _zeros((total_repeat_length,), idt)
    from ._indexing import _scatter

    marks = _scatter(marks, (starts,), np.array(1, idt), "add", mode="drop")
    src = cumsum(marks) - 1
    return take(a, src, axis=axis, mode="clip")


def _zeros(shape, dt):
    return lax.broadcast_in_dim(np.array(0, dt)[()], shape, ())


def flip(m, axis=None):
    """Reverse the order of elements along the given axes (all by default)."""
    m = ensure_arraylike("flip", m)
    return _flip(m, static_axis(axis))


@_jitted(static_argnames=("axis",))
def _flip(m, axis=None):
    nd = _ndim(m)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(canonicalize_axis(ax, nd) for ax in _axes_seq(axis))
    return lax.rev(m, axes) if axes else m


def fliplr(m):
    """Reverse along axis 1."""
    m = ensure_arraylike("fliplr", m)
    if _ndim(m) < 2:
        raise ValueError("fliplr requires an array of at least 2 dimensions, got "
                         f"ndim={_ndim(m)}")
    return flip(m, 1)


def flipud(m):
    """Reverse along axis 0."""
    m = ensure_arraylike("flipud", m)
    if _ndim(m) < 1:
        raise ValueError("flipud requires an array of at least 1 dimension, got ndim=0")
    return flip(m, 0)


def _slice_axis(x, axis, lo, hi):
    shape = _shape(x)
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = lo, hi
    return lax.slice(x, start, limit)


def roll(a, shift, axis=None):
    """Roll elements along the given axes (the flattened array for axis=None). `shift` may
    be traced."""
    a = ensure_arraylike("roll", a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _shape(a))
    nd = _ndim(a)
    axes = tuple(canonicalize_axis(ax, nd) for ax in _axes_seq(axis))
    try:
        shifts = _index_tuple(shift)
    except TypeError:  # a traced or non-integer shift
        return _roll_dynamic(a, _creation.asarray(shift), axes)
    return _roll_static(a, shifts, axes)


def _index_tuple(x) -> tuple[int, ...]:
    """An integer, or a sequence of them, as a tuple (TypeError for anything else)."""
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(v) for v in x)


@_jitted(static_argnames=("shift", "axis"))
def _roll_static(a, shift, axis):
    from ..lax._in_dim import slice_in_dim

    for ax, s in zip(*np.broadcast_arrays(axis, shift)):
        ax, n = int(ax), _shape(a)[int(ax)]
        if n == 0:
            continue
        i = int(-s) % n
        a = lax.concatenate([slice_in_dim(a, i, n, axis=ax), slice_in_dim(a, 0, i, axis=ax)],
                            ax)
    return a


@_jitted(static_argnames=("axis",))
def _roll_dynamic(a, shift, axis):
    from ..lax._in_dim import dynamic_slice_in_dim

    b_shape = np.broadcast_shapes(aval_of(shift).shape, np.shape(axis))
    if len(b_shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = prom.broadcast_to(shift, b_shape)
    for k, i in enumerate(np.broadcast_to(axis, b_shape)):
        i = int(i)
        n = _shape(a)[i]
        size = np.int32(n)
        x = uf.remainder(lax.convert_element_type(shifts[k], np.int32), np.int32(max(n, 1)))
        doubled = lax.concatenate([a, a], i)
        a = dynamic_slice_in_dim(doubled, lax.sub(size, x), n, axis=i)
    return a


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees `k` times in the plane of `axes`."""
    m = ensure_arraylike("rot90", m)
    k = static_int(k, "the 'k' argument of olympus.numpy.rot90")
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    nd = _ndim(m)
    ax1, ax2 = (canonicalize_axis(ax, nd) for ax in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different.")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(nd))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


# --- padding --------------------------------------------------------------------------------------


def _pairs(value, nd, name, integer=True):
    v = concrete_or_error(value, f"The error arose in the '{name}' argument of "
                                 "olympus.numpy.pad.")
    v = np.asarray(v)
    if integer and not (np.issubdtype(v.dtype, np.integer) or v.size == 0):
        if np.issubdtype(v.dtype, np.floating) and np.all(v == np.round(v)):
            v = v.astype(np.int64)
        else:
            raise TypeError(f"`{name}` must be of integral type.")
    try:
        out = np.broadcast_to(v, (nd, 2))
    except ValueError:
        raise ValueError(f"{name} given unexpected structure: {value}. See docstring for "
                         "valid values.") from None
    if integer and np.any(out < 0):
        raise ValueError("index can't contain negative values")
    return [(int(a), int(b)) if integer else (a, b) for a, b in out]


def _pad_index_map(n, before, after, mode, **kw):
    """Static source indices (or a linear map, for odd reflections) for one axis."""
    return np.pad(np.arange(n), (before, after), mode=mode, **kw)


def _pad_constant(x, widths, constant_values):
    nd = _ndim(x)
    dt = aval_of(x).dtype
    if isinstance(constant_values, Tracer) and aval_of(constant_values).ndim == 0:
        cv = lax.convert_element_type(constant_values, dt)
        return lax.pad(x, cv, [(b, a, 0) for b, a in widths])
    cv = concrete_or_error(constant_values, "The error arose in the 'constant_values' "
                                            "argument of olympus.numpy.pad.")
    cv = np.asarray(cv)
    if cv.ndim == 0 or np.all(cv.ravel() == cv.ravel()[0]) and cv.size:
        val = np.array(cv.ravel()[0] if cv.size else 0).astype(dt)[()]
        return lax.pad(x, val, [(b, a, 0) for b, a in widths])
    pairs = np.broadcast_to(cv, (nd, 2))
    for ax, ((b, a), (vb, va)) in enumerate(zip(widths, pairs)):
        cfg = [(0, 0, 0)] * nd
        if b:
            cfg[ax] = (b, 0, 0)
            x = lax.pad(x, np.array(vb).astype(dt)[()], cfg)
        if a:
            cfg[ax] = (0, a, 0)
            x = lax.pad(x, np.array(va).astype(dt)[()], cfg)
    return x


def _round_if_int(v, dt):
    if dtypes.is_integer(dt) or dt == dtypes.bool_:
        return lax.round(v, 1)
    return v


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array. Modes: constant (with ``constant_values``), empty, edge, wrap, reflect
    and symmetric (with ``reflect_type``), linear_ramp (with ``end_values``), maximum,
    minimum, mean and median (with ``stat_length``)."""
    from ._indexing import take
    from ._reductions import max as _max
    from ._reductions import mean as _mean
    from ._reductions import median as _median
    from ._reductions import min as _min

    x = ensure_arraylike("pad", array)
    nd = _ndim(x)
    if callable(mode):
        raise NotImplementedError("olympus.numpy.pad does not support a callable mode.")
    allowed = {
        "constant": {"constant_values"}, "empty": set(), "edge": set(), "wrap": set(),
        "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
        "linear_ramp": {"end_values"}, "maximum": {"stat_length"},
        "minimum": {"stat_length"}, "mean": {"stat_length"}, "median": {"stat_length"},
    }
    if mode not in allowed:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    bad = set(kwargs) - allowed[mode]
    if bad:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(bad)}")
    widths = _pairs(pad_width, nd, "pad_width")
    if nd == 0:
        return x
    if mode in ("constant", "empty"):
        return _pad_constant(x, widths, kwargs.get("constant_values", 0))
    shape = _shape(x)
    for ax, (b, a) in enumerate(widths):
        if (b or a) and shape[ax] == 0:
            raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' "
                             "or 'empty'")
    dt = aval_of(x).dtype
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"unsupported reflect_type '{reflect_type}'")
        for ax, (b, a) in enumerate(widths):
            if not (b or a):
                continue
            n = _shape(x)[ax]
            if mode in ("reflect", "symmetric") and reflect_type == "odd":
                # Odd reflections are linear in the values: apply NumPy's padding of the
                # identity matrix as a (small, exact) matrix product.
                mat = np.pad(np.eye(n, dtype=np.int64), ((b, a), (0, 0)), mode=mode,
                             reflect_type="odd").astype(dt)
                moved = moveaxis(x, ax, -1)
                out = lax.dot_general(moved, mat, (((_ndim(moved) - 1,), (1,)), ((), ())),
                                      preferred_element_type=dt)
                x = moveaxis(out, -1, ax)
                continue
            if mode == "reflect" and n == 1:
                idx = np.zeros(b + n + a, np.int64)
            else:
                idx = _pad_index_map(n, b, a, mode)
            x = take(x, idx.astype(dtypes.default_int()), axis=ax, mode="clip")
        return x
    if mode == "linear_ramp":
        ends = _pairs(kwargs.get("end_values", 0), nd, "end_values", integer=False)
        work = dt if dtypes.is_inexact(dt) else dtypes.default_float()
        for ax, ((b, a), (eb, ea)) in enumerate(zip(widths, ends)):
            if not (b or a):
                continue
            n = _shape(x)[ax]
            xw = lax.convert_element_type(x, work)
            parts = []
            if b:
                edge = _slice_axis(xw, ax, 0, 1)
                t = np.arange(b, dtype=np.float64) / b
                shape_t = [1] * nd
                shape_t[ax] = b
                t = t.reshape(shape_t).astype(work)
                e = np.array(eb).astype(work)[()]
                ramp = uf.add(e, uf.multiply(uf.subtract(edge, e), t))
                parts.append(_cast_ramp(ramp, dt))
            parts.append(x)
            if a:
                edge = _slice_axis(xw, ax, n - 1, n)
                t = (np.arange(a, dtype=np.float64)[::-1] / a)
                shape_t = [1] * nd
                shape_t[ax] = a
                t = t.reshape(shape_t).astype(work)
                e = np.array(ea).astype(work)[()]
                ramp = uf.add(e, uf.multiply(uf.subtract(edge, e), t))
                parts.append(_cast_ramp(ramp, dt))
            x = lax.concatenate(parts, ax) if len(parts) > 1 else parts[0]
        return x
    # Statistic modes.
    stat_fn = {"maximum": _max, "minimum": _min, "mean": _mean, "median": _median}[mode]
    sl = kwargs.get("stat_length", None)
    lengths = None if sl is None else _pairs(sl, nd, "stat_length")
    for ax, (b, a) in enumerate(widths):
        if not (b or a):
            continue
        n = _shape(x)[ax]
        lb, la = (n, n) if lengths is None else lengths[ax]
        lb, la = builtins.min(builtins.max(lb, 1), n), builtins.min(builtins.max(la, 1), n)
        parts = []
        if b:
            s = stat_fn(_slice_axis(x, ax, 0, lb), axis=ax, keepdims=True)
            s = lax.convert_element_type(_round_if_int(s, dt) if mode in ("mean", "median")
                                         else s, dt)
            parts.append(_repeat_axis(s, ax, b))
        parts.append(x)
        if a:
            s = stat_fn(_slice_axis(x, ax, n - la, n), axis=ax, keepdims=True)
            s = lax.convert_element_type(_round_if_int(s, dt) if mode in ("mean", "median")
                                         else s, dt)
            parts.append(_repeat_axis(s, ax, a))
        x = lax.concatenate(parts, ax)
    return x


def _cast_ramp(r, dt):
    if dtypes.is_integer(dt):
        r = lax.floor(r)
    return lax.convert_element_type(r, dt)


def _repeat_axis(x, ax, k):
    shape = list(_shape(x))
    shape[ax] = k
    return lax.broadcast_in_dim(lax.squeeze(x, (ax,)), tuple(shape),
                                tuple(i for i in range(len(shape)) if i != ax))


# --- inserting, deleting, appending ---------------------------------------------------------------


def append(arr, values, axis=None):
    """`values` appended to `arr` (both flattened for axis=None)."""
    arr, values = ensure_arraylike("append", arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def _static_index_obj(obj, n, name):
    if isinstance(obj, slice):
        return np.arange(n)[obj], True
    v = concrete_or_error(obj, f"The error arose in the 'obj' argument of "
                               f"olympus.numpy.{name}: indices must be static.")
    v = np.asarray(v)
    if v.dtype == bool:
        if v.shape != (n,):
            raise ValueError(f"boolean array argument obj to {name} must be one dimensional "
                             f"and match the axis length of {n}")
        return np.nonzero(v)[0], False
    if v.size and not np.issubdtype(v.dtype, np.integer):
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return v.astype(np.int64), v.ndim == 0


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """`arr` without the entries at the (static) indices `obj` along `axis`."""
    from ._indexing import take

    arr = ensure_arraylike("delete", arr)
    if axis is None:
        arr = ravel(arr)
        axis = 0
    axis = canonicalize_axis(axis, _ndim(arr))
    n = _shape(arr)[axis]
    idx, _ = _static_index_obj(obj, n, "delete")
    idx = np.atleast_1d(idx)
    if np.any((idx < -n) | (idx >= n)):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    keep = np.ones(n, bool)
    keep[idx % n if n else idx] = False
    kept = np.nonzero(keep)[0]
    if kept.size == n:
        return arr
    if kept.size == 0:
        return _slice_axis(arr, axis, 0, 0)
    return take(arr, kept.astype(dtypes.default_int()), axis=axis, mode="clip")


def insert(arr, obj, values, axis=None):
    """`values` inserted before the (static) indices `obj` along `axis`."""
    from ._indexing import take

    arr, values = ensure_arraylike("insert", arr, values)
    if axis is None:
        arr = ravel(arr)
        axis = 0
    nd = _ndim(arr)
    axis = canonicalize_axis(axis, nd)
    n = _shape(arr)[axis]
    if isinstance(obj, slice):
        idx, scalar = np.arange(*obj.indices(n)), False
    else:
        idx, scalar = _static_index_obj(obj, n + 1, "insert")
    if np.any((idx < -n) | (idx > n)):
        bad = idx[(idx < -n) | (idx > n)].ravel()[0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    idx = np.where(idx < 0, idx + n, idx)
    values = _creation.astype(values, aval_of(arr).dtype)
    vshape = _shape(values)
    if scalar:
        # values get the array's rank; their axis-0 is the inserted count.
        v = values
        if len(vshape) < nd:
            v = lax.reshape(v, (1,) * (nd - len(vshape)) + vshape)
        v = moveaxis(v, 0, axis) if nd > 1 and len(vshape) >= 1 else v
        k = _shape(v)[axis]
        target = list(_shape(arr))
        target[axis] = k
        v = broadcast_to(v, tuple(target))
        positions = np.full(k, int(idx))
        order_vals = np.arange(k)
    else:
        idx = idx.ravel()
        k = idx.size
        target = list(_shape(arr))
        target[axis] = k
        v = values
        if len(vshape) == 1 and vshape[0] == k and nd > 1:
            v = moveaxis(lax.reshape(v, (k,) + (1,) * (nd - 1)), 0, axis)
        v = broadcast_to(v, tuple(target))
        order = np.argsort(idx, kind="stable")
        positions = idx[order]
        order_vals = order
    # Output position of each inserted value: its index plus the number inserted before it.
    new_pos = positions + np.arange(k)
    total = n + k
    src = np.empty(total, np.int64)
    is_new = np.zeros(total, bool)
    is_new[new_pos] = True
    src[new_pos] = n + order_vals
    src[~is_new] = np.arange(n)
    combined = concatenate([arr, v], axis=axis)
    return take(combined, src.astype(dtypes.default_int()), axis=axis, mode="clip")


def resize(a, new_shape):
    """A new array of `new_shape` filled by cycling through a's (flattened) elements."""
    a = ensure_arraylike("resize", a)
    new_shape = canonicalize_shape(new_shape)
    if builtins.any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    a = ravel(a)
    size = int(math.prod(new_shape))
    n = _shape(a)[0]
    if n == 0 or size == 0:
        return lax.broadcast_in_dim(np.array(0, aval_of(a).dtype)[()], new_shape, ())
    reps = -(-size // n)
    flat = tile(a, reps) if reps > 1 else a
    return lax.reshape(lax.slice(flat, (0,), (size,)), new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    """`filt` without its leading ('f' in `trim`) and/or trailing ('b') all-zero slices
    along each of `axis` (None: every axis), as JAX 0.10.2 trims N-D arrays. The values
    must be concrete: the result's shape depends on them."""
    filt = ensure_arraylike("trim_zeros", filt)
    v = concrete_or_error(filt, "Error arose in the `filt` argument of trim_zeros()")
    axes = set(prom.axes_tuple(axis, v.ndim))
    front, back = "f" in trim.lower(), "b" in trim.lower()
    if not axes or not (front or back):
        return filt
    index = []
    for ax in range(v.ndim):
        if ax not in axes:
            index.append(slice(None))
            continue
        mask = v.any(axis=tuple(i for i in range(v.ndim) if i != ax))
        if not mask.any():
            index.append(slice(0, 0))
            continue
        nz = np.flatnonzero(mask)
        index.append(slice(int(nz[0]) if front else None, int(nz[-1]) + 1 if back else None))
    return filt[tuple(index)]


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along an axis."""
    a = ensure_arraylike("diff", a)
    n = static_int(n, "the 'n' argument of olympus.numpy.diff")
    nd = _ndim(a)
    if nd == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a
    axis = canonicalize_axis(axis, nd)
    parts = []
    if prepend is not None:
        p = ensure_arraylike("diff", prepend)
        if _ndim(p) == 0:
            shp = list(_shape(a))
            shp[axis] = 1
            p = broadcast_to(p, tuple(shp))
        parts.append(p)
    parts.append(a)
    if append is not None:
        p = ensure_arraylike("diff", append)
        if _ndim(p) == 0:
            shp = list(_shape(a))
            shp[axis] = 1
            p = broadcast_to(p, tuple(shp))
        parts.append(p)
    if len(parts) > 1:
        a = concatenate(parts, axis=axis)
    from ._ufuncs import not_equal, subtract

    op = not_equal if aval_of(a).dtype == dtypes.bool_ else subtract
    for _ in range(n):
        m = _shape(a)[axis]
        if m == 0:
            break
        a = op(_slice_axis(a, axis, 1, m), _slice_axis(a, axis, 0, m - 1))
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array, with optional
    values before and after."""
    from ._ufuncs import subtract

    ary = ravel(ensure_arraylike("ediff1d", ary))
    m = _shape(ary)[0]
    d = subtract(_slice_axis(ary, 0, 1, m), _slice_axis(ary, 0, 0, m - 1)) if m else ary
    parts = []
    if to_begin is not None:
        parts.append(ravel(_creation.astype(ensure_arraylike("ediff1d", to_begin),
                                      aval_of(d).dtype)))
    parts.append(d)
    if to_end is not None:
        parts.append(ravel(_creation.astype(ensure_arraylike("ediff1d", to_end), aval_of(d).dtype)))
    return concatenate(parts) if len(parts) > 1 else d
