"""Reductions, cumulative reductions and statistics with JAX's semantics: `axis` as None, an
int or a tuple (negative allowed), `keepdims`, `dtype`, `where` masks (with `initial` for
reductions that have no identity), small integers and booleans accumulated in the default
integer for sum/prod, 16-bit floats accumulated in float32."""

from __future__ import annotations

import builtins
import math

import numpy as np

from olympus_ir import dtypes
from olympus_ir.shape_poly import DimExpr, to_dim
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

from .._src.eager import function as _eager_function
from .._src.library_jit import jitted as _jitted
from . import _creation, _indexing, _shape
from . import _ufuncs as uf
from ._util import (
    aval_of,
    axes_tuple,
    canon_dtype,
    canonicalize_axis,
    check_no_out,
    ensure_arraylike,
    promote_dtypes_inexact,
    static_axis,
)

# --- helpers ------------------------------------------------------------------------------------


def _upcast_f16(dt):
    return dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt


def _promote_integer_dtype(dt):
    if dt == dtypes.bool_:
        return dtypes.default_int()
    if dtypes.is_unsigned_int(dt):
        u = dtypes.canonicalize_dtype(np.uint64)
        return u if dt.itemsize < u.itemsize else dt
    if dtypes.is_integer(dt):
        i = dtypes.default_int()
        return i if dt.itemsize < i.itemsize else dt
    return dt


def _to_inexact(dt):
    return dt if dtypes.is_inexact(dt) else dtypes.default_float()


def _complex_elem(dt):
    if dtypes.is_complex(dt):
        return dtypes.float32 if dt == dtypes.complex64 else dtypes.float64
    return dt


def _expand_reduced(x, axes, shape):
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return lax.broadcast_in_dim(x, out_shape, kept)


def _lowest(dt):
    if dtypes.is_inexact(dt):
        return np.array(-np.inf, dt)[()]
    if dt == dtypes.bool_:
        return np.bool_(False)
    return np.array(dtypes.iinfo(dt).min, dt)[()]


def _highest(dt):
    if dtypes.is_inexact(dt):
        return np.array(np.inf, dt)[()]
    if dt == dtypes.bool_:
        return np.bool_(True)
    return np.array(dtypes.iinfo(dt).max, dt)[()]


def _where_mask(name, where, shape):
    where = ensure_arraylike(name, where)
    where = _creation.astype(where, dtypes.bool_)
    return prom.broadcast_to(where, shape)


def _reduction(a, name, *, lax_op, combine, init, has_identity=True, bool_op=None,
               bool_combine=None, upcast_f16=False, promote_integers=False, axis=None,
               dtype=None, out=None, keepdims=False, initial=None, where=None,
               allow_dtype=True):
    check_no_out(name, out)
    a = ensure_arraylike(name, a)
    aval = aval_of(a)
    axes = axes_tuple(axis, aval.ndim)
    if not has_identity:
        if initial is None and where is not None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to "
                             "use a where mask one has to specify 'initial'")
        if initial is None and builtins.any(aval.shape[ax] == 0 for ax in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
    if dtype is not None:
        result_dtype = canon_dtype(dtype)
    else:
        result_dtype = aval.dtype
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    comp = _upcast_f16(result_dtype) if upcast_f16 else result_dtype
    if comp == dtypes.bool_ and bool_op is not None:
        lax_op, combine = bool_op, bool_combine
    x = lax.convert_element_type(a, comp, False)
    if where is not None:
        mask = _where_mask(name, where, aval.shape)
        x = _indexing.where(mask, x, init(comp))
    res = lax_op(x, axes)
    if initial is not None:
        init_v = _creation.astype(ensure_arraylike(name, initial), comp)
        if aval_of(init_v).shape != ():
            raise ValueError("initial value must be a scalar. Got array of shape "
                             f"{aval_of(init_v).shape}")
        res = combine(init_v, res)  # JAX applies op(initial, result)
    if keepdims:
        res = _expand_reduced(res, axes, aval.shape)
    return lax.convert_element_type(res, result_dtype, False)


def _zero_init(dt):
    return np.array(0, dt)[()]


def _one_init(dt):
    return np.array(1, dt)[()]


# --- basic reductions ----------------------------------------------------------------------------


@_eager_function(static_argnames=("axis", "dtype", "out", "keepdims", "initial", "promote_integers"))
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,  # noqa: A001
        promote_integers=True):
    """Sum of elements over the given axes."""
    return _reduction(a, "sum", lax_op=lax.reduce_sum, combine=lax.add, init=_zero_init,
                      bool_op=lax.reduce_or, bool_combine=lax.bitwise_or, upcast_f16=dtype is None,
                      promote_integers=promote_integers, axis=axis, dtype=dtype, out=out,
                      keepdims=keepdims, initial=initial, where=where)


@_eager_function(static_argnames=("axis", "dtype", "out", "keepdims", "initial", "promote_integers"))
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """Product of elements over the given axes."""
    return _reduction(a, "prod", lax_op=lax.reduce_prod, combine=lax.mul, init=_one_init,
                      bool_op=lax.reduce_and, bool_combine=lax.bitwise_and, upcast_f16=dtype is None,
                      promote_integers=promote_integers, axis=axis, dtype=dtype, out=out,
                      keepdims=keepdims, initial=initial, where=where)


@_eager_function(static_argnames=("axis", "out", "keepdims", "initial"))
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over the given axes (NaN-propagating)."""
    return _reduction(a, "max", lax_op=lax.reduce_max, combine=lax.max, init=_lowest,
                      has_identity=False, bool_op=lax.reduce_or, bool_combine=lax.bitwise_or,
                      axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


@_eager_function(static_argnames=("axis", "out", "keepdims", "initial"))
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over the given axes (NaN-propagating)."""
    return _reduction(a, "min", lax_op=lax.reduce_min, combine=lax.min, init=_highest,
                      has_identity=False, bool_op=lax.reduce_and,
                      bool_combine=lax.bitwise_and, axis=axis, out=out, keepdims=keepdims,
                      initial=initial, where=where)


amax, amin = max, min


@_eager_function(static_argnames=("axis", "out", "keepdims"))
def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether all elements (over the given axes) are true."""
    a = ensure_arraylike("all", a)
    return _reduction(_creation.astype(a, dtypes.bool_), "all", lax_op=lax.reduce_and,
                      combine=lax.bitwise_and, init=lambda dt: np.bool_(True), axis=axis,
                      out=out, keepdims=keepdims, where=where)


@_eager_function(static_argnames=("axis", "out", "keepdims"))
def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether any element (over the given axes) is true."""
    a = ensure_arraylike("any", a)
    return _reduction(_creation.astype(a, dtypes.bool_), "any", lax_op=lax.reduce_or,
                      combine=lax.bitwise_or, init=lambda dt: np.bool_(False), axis=axis,
                      out=out, keepdims=keepdims, where=where)


def _bitwise_reduce(name, lax_op, combine, ident):
    def f(a, axis=0, keepdims=False, where=None, initial=None):
        a = ensure_arraylike(name, a)
        dt = aval_of(a).dtype
        if not (dtypes.is_integer(dt) or dt == dtypes.bool_):
            raise TypeError(f"{name} is only defined for integer and boolean dtypes")
        return _reduction(a, name, lax_op=lax_op, combine=combine,
                          init=lambda d: np.array(ident, d)[()] if d != dtypes.bool_
                          else np.bool_(ident), axis=axis, keepdims=keepdims,
                          initial=initial, where=where)

    return f


_bitwise_and_reduce = _bitwise_reduce("bitwise_and.reduce", lax.reduce_and, lax.bitwise_and,
                                      -1)
_bitwise_or_reduce = _bitwise_reduce("bitwise_or.reduce", lax.reduce_or, lax.bitwise_or, 0)
_bitwise_xor_reduce = _bitwise_reduce("bitwise_xor.reduce", lax.reduce_xor,
                                      lax.bitwise_xor, 0)


@_eager_function(static_argnames=("axis", "keepdims"))
def count_nonzero(a, axis=None, keepdims=False):
    """The number of nonzero elements over the given axes."""
    a = ensure_arraylike("count_nonzero", a)
    nz = uf.not_equal(a, 0) if aval_of(a).dtype != dtypes.bool_ else a
    return sum(nz, axis=axis, keepdims=keepdims, dtype=dtypes.default_int())


@_eager_function(static_argnames=("axis", "out", "keepdims"))
def ptp(a, axis=None, out=None, keepdims=False):
    """Range (maximum minus minimum) over the given axes."""
    check_no_out("ptp", out)
    a = ensure_arraylike("ptp", a)
    return uf.subtract(max(a, axis=axis, keepdims=keepdims),
                       min(a, axis=axis, keepdims=keepdims))


def _axis_size(shape, axes):
    return to_dim(math.prod(shape[ax] for ax in axes))


def _count(shape, axes, dtype):
    """How many elements the axes hold, as a scalar of `dtype`; a symbolic count becomes a
    value computed at run time (JAX's dimension-as-value)."""
    n = _axis_size(shape, axes)
    if type(n) is DimExpr:
        return lax.convert_element_type(lax.dim_as_value(n), dtype, False)
    return np.array(n, dtype)[()]


@_eager_function(static_argnames=("axis", "dtype", "out", "keepdims"))
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over the given axes (integers averaged in the default float)."""
    check_no_out("mean", out)
    a = ensure_arraylike("mean", a)
    aval = aval_of(a)
    axes = axes_tuple(axis, aval.ndim)
    result_dtype = canon_dtype(dtype) if dtype is not None else _to_inexact(aval.dtype)
    # An explicit half-precision `dtype` is also the computation's (as in JAX).
    comp = _upcast_f16(result_dtype) if dtype is None else result_dtype
    if where is None:
        n = _count(aval.shape, axes, comp)
    else:
        n = sum(_where_mask("mean", where, aval.shape), axis=axis, dtype=comp,
                keepdims=keepdims)
    s = sum(a, axis=axis, dtype=comp, keepdims=keepdims, where=where)
    # Divided in the computation dtype (an integer `dtype=` divides integers, as JAX does).
    return lax.convert_element_type(lax.div(s, n), result_dtype, False)


def _var_types(a_dtype, dtype):
    if dtype is not None:
        dtype = canon_dtype(dtype)
        if dtypes.is_complex(a_dtype) and not dtypes.is_complex(dtype):
            raise ValueError("olympus.numpy.var does not yet support real dtype parameters "
                             "when computing the variance of an array of complex values.")
        comp = dtype
    elif not dtypes.is_inexact(a_dtype):
        dtype = comp = dtypes.default_float()
    else:
        dtype = _complex_elem(a_dtype)
        comp = a_dtype
    return _upcast_f16(comp), dtype


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Variance over the given axes (``ddof``/``correction`` subtracted from the count)."""
    check_no_out("var", out)
    a = ensure_arraylike("var", a)
    return _var(a, static_axis(axis), dtype, out, _correction(ddof, correction),
                  keepdims, where=where)


def _correction(ddof, correction):
    """The count's correction from `ddof` or `correction` (JAX's error for both)."""
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


@_jitted(static_argnames=("axis", "dtype", "keepdims"))
def _var(a, axis, dtype, out, correction, keepdims, *, where=None):
    aval = aval_of(a)
    axes = axes_tuple(axis, aval.ndim)
    comp, dtype = _var_types(aval.dtype, dtype)
    x = lax.convert_element_type(a, comp, False)
    m = mean(x, axis=axis, dtype=comp, keepdims=True, where=where)
    c = uf.subtract(x, m)
    if dtypes.is_complex(comp):
        c = lax.real(lax.mul(c, lax.conj(c)))
    else:
        c = lax.square(c)
    real_comp = aval_of(c).dtype
    if where is None:
        n = _count(aval.shape, axes, real_comp)
    else:
        n = sum(_where_mask("var", where, aval.shape), axis=axis, dtype=real_comp,
                keepdims=keepdims)
    n = uf.subtract(n, _creation.astype(ensure_arraylike("var", correction), real_comp))
    s = sum(c, axis=axis, dtype=real_comp, keepdims=keepdims, where=where)
    out = lax.convert_element_type(uf.true_divide(s, n), dtype, False)
    # No degrees of freedom left (ddof >= count): nan, as in JAX (not inf or -0).
    return _indexing.where(uf.greater(n, 0), out, np.nan)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Standard deviation over the given axes."""
    check_no_out("std", out)
    a = ensure_arraylike("std", a)
    return _std(a, static_axis(axis), dtype, out, _correction(ddof, correction),
                  keepdims, where=where)


@_jitted(static_argnames=("axis", "dtype", "keepdims"))
def _std(a, axis, dtype, out, correction, keepdims, *, where=None):
    return uf.sqrt(var(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where,
                       correction=correction))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average over the given axes; optionally also the sum of the weights."""
    a = ensure_arraylike("average", a)
    aval = aval_of(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        axes = axes_tuple(axis, aval.ndim)
        wsum = prom.broadcast_to(_count(aval.shape, axes, aval_of(avg).dtype),
                                aval_of(avg).shape)
    else:
        weights = ensure_arraylike("average", weights)
        a, weights = promote_dtypes_inexact(a, weights)
        wshape = aval_of(weights).shape
        if aval.shape != wshape:
            if len(wshape) != 1:
                raise ValueError("1D weights expected when shapes of a and weights differ.")
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights "
                                 "differ.")
            if isinstance(axis, (tuple, list)):
                raise ValueError("Single axis expected when shapes of a and weights differ")
            ax = canonicalize_axis(axis, aval.ndim)
            if wshape[0] != aval.shape[ax]:
                raise ValueError("Length of weights not compatible with specified axis.")
            shape = [1] * aval.ndim
            shape[ax] = wshape[0]
            weights = lax.reshape(weights, tuple(shape))
        wsum = sum(prom.broadcast_to(weights, aval.shape) if aval.shape != aval_of(
            weights).shape else weights, axis=axis, keepdims=keepdims)
        avg = uf.true_divide(sum(uf.multiply(a, weights), axis=axis, keepdims=keepdims),
                              wsum)
    if returned:
        if aval_of(wsum).shape != aval_of(avg).shape:
            wsum = prom.broadcast_to(wsum, aval_of(avg).shape)
        return avg, wsum
    return avg


# --- arg reductions -----------------------------------------------------------------------------


def _arg_reduce(name, lax_fn, a, axis, out, keepdims):
    check_no_out(name, out)
    a = ensure_arraylike(name, a)
    aval = aval_of(a)
    if axis is None:
        x = _shape.ravel(a) if aval.ndim != 1 else a
        ax = 0
    else:
        x = a
        ax = canonicalize_axis(axis, aval.ndim)
    if aval_of(x).shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    if aval.dtype == dtypes.bool_:
        x = lax.convert_element_type(x, dtypes.int8)
    res = lax_fn(x, ax, dtypes.default_int())
    if keepdims:
        shape = (1,) * aval.ndim if axis is None else tuple(
            1 if i == ax else d for i, d in enumerate(aval.shape))
        res = lax.reshape(res, shape)
    return res


@_eager_function(static_argnames=("axis", "out", "keepdims"))
def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the maximum (the first one, or the first NaN)."""
    return _arg_reduce("argmax", lax.argmax, a, axis, out, keepdims)


@_eager_function(static_argnames=("axis", "out", "keepdims"))
def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the minimum (the first one, or the first NaN)."""
    return _arg_reduce("argmin", lax.argmin, a, axis, out, keepdims)


# --- NaN-ignoring reductions --------------------------------------------------------------------


def _is_inexact_arr(a):
    return dtypes.is_inexact(aval_of(a).dtype)


def _replace_nan(a, value):
    return _indexing.where(uf.isnan(a), lax.convert_element_type(value, aval_of(a).dtype, False), a)


@_eager_function(static_argnames=("axis", "dtype", "out", "keepdims", "initial"))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaNs as zero."""
    a = ensure_arraylike("nansum", a)
    if _is_inexact_arr(a):
        a = _replace_nan(a, 0)
    return sum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial,
               where=where)


@_eager_function(static_argnames=("axis", "dtype", "out", "keepdims", "initial"))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaNs as one."""
    a = ensure_arraylike("nanprod", a)
    if _is_inexact_arr(a):
        a = _replace_nan(a, 1)
    return prod(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial,
                where=where)


def _nan_extremum(name, fn, fill, a, axis, out, keepdims, initial, where):
    a = ensure_arraylike(name, a)
    if not _is_inexact_arr(a):
        return fn(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
    nan = uf.isnan(a)
    res = fn(_replace_nan(a, fill), axis=axis, out=out, keepdims=keepdims, initial=initial,
             where=where)
    all_nan = all(nan, axis=axis, keepdims=keepdims)
    return _indexing.where(all_nan, np.array(np.nan, aval_of(res).dtype)[()], res)


@_eager_function(static_argnames=("axis", "out", "keepdims", "initial"))
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum ignoring NaNs (NaN where a slice is all NaN)."""
    return _nan_extremum("nanmax", max, -np.inf, a, axis, out, keepdims, initial, where)


@_eager_function(static_argnames=("axis", "out", "keepdims", "initial"))
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum ignoring NaNs (NaN where a slice is all NaN)."""
    return _nan_extremum("nanmin", min, np.inf, a, axis, out, keepdims, initial, where)


def _nan_arg(name, fn, fill, a, axis, out, keepdims):
    a = ensure_arraylike(name, a)
    if not _is_inexact_arr(a):
        return fn(a, axis=axis, out=out, keepdims=keepdims)
    nan = uf.isnan(a)
    res = fn(_replace_nan(a, fill), axis=axis, out=out, keepdims=keepdims)
    return _indexing.where(all(nan, axis=axis, keepdims=bool(keepdims)),
                     np.array(-1, aval_of(res).dtype)[()], res)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """Index of the maximum ignoring NaNs (-1 where a slice is all NaN)."""
    return _nan_arg("nanargmax", argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """Index of the minimum ignoring NaNs (-1 where a slice is all NaN)."""
    return _nan_arg("nanargmin", argmin, np.inf, a, axis, out, keepdims)


@_eager_function(static_argnames=("axis", "dtype", "out", "keepdims"))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean ignoring NaNs."""
    check_no_out("nanmean", out)
    a = ensure_arraylike("nanmean", a)
    if not _is_inexact_arr(a):
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    dt = canon_dtype(dtype) if dtype is not None else aval_of(a).dtype
    notnan = lax.bitwise_not(uf.isnan(a))
    n = sum(notnan, axis=axis, dtype=_upcast_f16(dt), keepdims=keepdims, where=where)
    s = nansum(a, axis=axis, dtype=_upcast_f16(dt), keepdims=keepdims, where=where)
    return lax.convert_element_type(uf.true_divide(s, n), dt, False)


@_eager_function(static_argnames=("axis", "dtype", "out", "ddof", "keepdims"))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    """Variance ignoring NaNs."""
    check_no_out("nanvar", out)
    a = ensure_arraylike("nanvar", a)
    comp, dtype = _var_types(aval_of(a).dtype, dtype)
    x = lax.convert_element_type(a, comp, False)
    m = nanmean(x, axis=axis, dtype=comp, keepdims=True, where=where)
    isn = uf.isnan(x)
    c = _indexing.where(isn, np.array(0, comp)[()], uf.subtract(x, m))
    if dtypes.is_complex(comp):
        c = lax.real(lax.mul(c, lax.conj(c)))
    else:
        c = lax.square(c)
    real_comp = aval_of(c).dtype
    n = sum(lax.bitwise_not(isn), axis=axis, keepdims=keepdims, where=where,
            dtype=real_comp)
    n = uf.subtract(n, np.array(ddof, real_comp)[()])
    bad = uf.less_equal(n, np.array(0, real_comp)[()])
    s = sum(c, axis=axis, keepdims=keepdims, where=where, dtype=real_comp)
    s = _indexing.where(bad, np.array(np.nan, real_comp)[()], s)
    n = _indexing.where(bad, np.array(1, real_comp)[()], n)
    return lax.convert_element_type(uf.true_divide(s, n), dtype, False)


@_eager_function(static_argnames=("axis", "dtype", "out", "ddof", "keepdims"))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    """Standard deviation ignoring NaNs."""
    check_no_out("nanstd", out)
    return uf.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                          where=where))


# --- cumulative reductions ----------------------------------------------------------------------


_CUMULATIVES = {"cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax,
                "cummin": lax.cummin}


def _cumulative(name, prim_name, a, axis, dtype, out, promote_integers=False, fill_nan=None):
    check_no_out(name, out)
    a = ensure_arraylike(name, a)
    aval = aval_of(a)
    if axis is None or aval.ndim == 0:
        a = lax.reshape(a, (aval.size,)) if aval.ndim != 1 else a
        axis = 0
    nd = aval_of(a).ndim
    axis = canonicalize_axis(axis, nd)
    if fill_nan is not None and _is_inexact_arr(a):
        a = _replace_nan(a, fill_nan)
    in_dt = aval_of(a).dtype
    result_dt = canon_dtype(dtype) if dtype is not None else in_dt
    if (dtype is None and promote_integers) or result_dt == dtypes.bool_:
        result_dt = _promote_integer_dtype(result_dt)
    if in_dt != dtypes.bool_ and dtype is not None and canon_dtype(dtype) == dtypes.bool_:
        a = _creation.astype(a, dtypes.bool_)
    comp = result_dt
    x = lax.convert_element_type(a, comp, False)
    if aval_of(x).shape[axis] == 0:
        res = x
    else:
        res = _CUMULATIVES[prim_name](x, axis=axis, reverse=False)
    if dtype is not None and canon_dtype(dtype) == dtypes.bool_:
        res = lax.convert_element_type(res, dtypes.bool_)
    return res


@_jitted(static_argnames=("axis", "dtype"))
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along an axis (the flattened array for axis=None)."""
    return _cumulative("cumsum", "cumsum", a, axis, dtype, out)


@_jitted(static_argnames=("axis", "dtype"))
def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along an axis (the flattened array for axis=None)."""
    return _cumulative("cumprod", "cumprod", a, axis, dtype, out)


@_jitted(static_argnames=("axis", "dtype"))
def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaNs as zero."""
    return _cumulative("nancumsum", "cumsum", a, axis, dtype, out, fill_nan=0)


@_jitted(static_argnames=("axis", "dtype"))
def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaNs as one."""
    return _cumulative("nancumprod", "cumprod", a, axis, dtype, out, fill_nan=1)


cumproduct = cumprod


def _cum_extremum(name, a, axis=0, dtype=None):
    a = ensure_arraylike(name, a)
    dt = aval_of(a).dtype
    if dt == dtypes.bool_:
        r = _cumulative(name, name, lax.convert_element_type(a, dtypes.int8), axis, None,
                        None)
        return lax.convert_element_type(r, dtypes.bool_)
    r = _cumulative(name, name, a, axis, None, None)
    return r if dtype is None else _creation.astype(r, dtype)


def _cummax(a, axis=0, dtype=None):
    return _cum_extremum("cummax", a, axis, dtype)


def _cummin(a, axis=0, dtype=None):
    return _cum_extremum("cummin", a, axis, dtype)


def _cumulative_new(name, prim_name, x, axis, dtype, include_initial, ident,
                    promote_integers=False):
    x = ensure_arraylike(name, x)
    nd = aval_of(x).ndim
    if axis is None:
        if nd > 1:
            raise ValueError(f"{name}: axis must be specified for multi-dimensional arrays "
                             f"(got an array of shape {aval_of(x).shape}).")
        axis = 0
    if nd == 0:
        raise ValueError(f"{name}: the input must be at least 1-dimensional.")
    out = _cumulative(name, prim_name, x, axis, dtype, None, promote_integers=promote_integers)
    if include_initial:
        from ._shape import concatenate

        ax = canonicalize_axis(axis, nd)
        shape = list(aval_of(out).shape)
        shape[ax] = 1
        first = prom.broadcast_to(np.array(ident, aval_of(out).dtype), tuple(shape))
        out = concatenate([first, out], axis=ax)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum (the array-API form: optional leading zero). Small integers
    accumulate in the default integer of their signedness, as the standard and JAX ask
    (uint8 -> uint32); cumulative_prod keeps them, as JAX's does."""
    return _cumulative_new("cumulative_sum", "cumsum", x, axis, dtype, include_initial, 0,
                           promote_integers=True)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product (the array-API form: optional leading one)."""
    return _cumulative_new("cumulative_prod", "cumprod", x, axis, dtype, include_initial, 1)


# --- quantiles -----------------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _sort_last(x):
    nd = aval_of(x).ndim
    return lax.sort(x, dimension=nd - 1, is_stable=True, num_keys=1)


def _quantile(name, a, q, axis, method, keepdims, squash_nans):
    from ._indexing import take_along_axis

    a, q = ensure_arraylike(name, a, q)
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', or "
                         "'nearest'")
    (a,) = promote_dtypes_inexact(a)
    aval = aval_of(a)
    if dtypes.is_complex(aval.dtype):
        raise ValueError(f"{name} does not support complex input")
    dt = aval.dtype
    if dtypes.is_complex(aval_of(q).dtype):
        raise ValueError(f"{name}: q must be real")
    q = lax.convert_element_type(q, dt, False)
    qshape = aval_of(q).shape
    nd = aval.ndim
    axes = axes_tuple(axis, nd)
    keep = [d for d in range(nd) if d not in axes]
    x = lax.transpose(a, tuple(keep) + axes) if nd else a
    batch = tuple(aval.shape[d] for d in keep)
    n = _axis_size(aval.shape, axes)
    x = lax.reshape(x, batch + (n,))
    if keepdims:
        out_tail = tuple(1 if d in axes else aval.shape[d] for d in range(nd))
    else:
        out_tail = batch
    if n == 0:
        return prom.broadcast_to(np.array(np.nan, dt), qshape + out_tail)
    xs = _sort_last(x)
    nb = len(batch)
    qv = _concrete_q(q)
    if qv is not None and not squash_nans:
        res = _static_quantile(xs, qv, n, method, dt)  # batch + (nq,)
        res = _indexing.where(lax.broadcast_in_dim(any(uf.isnan(x), axis=-1), aval_of(res).shape,
                                             tuple(range(nb))),
                        np.array(np.nan, dt)[()], res)
        if qshape:
            res = lax.transpose(res, (nb,) + tuple(range(nb)))
        return lax.reshape(res, qshape + out_tail)
    # Positions: q.shape + batch + (1,)
    qb = lax.reshape(q, qshape + (1,) * (nb + 1)) if qshape else q
    if squash_nans:
        cnt = sum(lax.bitwise_not(uf.isnan(x)), axis=-1, keepdims=True, dtype=dt)
        nm1 = uf.subtract(cnt, np.array(1, dt)[()])
        nm1 = uf.maximum(nm1, np.array(0, dt)[()])
    else:
        nm1 = np.array(n - 1, dt)[()]
    pos = uf.multiply(qb, nm1)
    pshape = qshape + batch + (1,)
    pos = prom.broadcast_to(pos, pshape)
    low = lax.floor(pos)
    high = lax.ceil(pos)
    idt = dtypes.default_int()

    def gather(p):
        i = lax.convert_element_type(lax.clamp(np.array(0, dt)[()], p,
                                               np.array(n - 1, dt)[()]), idt)
        src = prom.broadcast_to(xs, qshape + batch + (n,))
        return take_along_axis(src, i, axis=-1, mode="clip")

    if method == "lower":
        res = gather(low)
    elif method == "higher":
        res = gather(high)
    elif method == "nearest":
        res = gather(lax.round(pos, 1))
    else:
        lo, hi = gather(low), gather(high)
        if method == "midpoint":
            res = lax.mul(lax.add(lo, hi), np.array(0.5, dt)[()])
        else:
            t = lax.sub(pos, low)
            diff = lax.sub(hi, lo)
            one = np.array(1, dt)[()]
            res = _indexing.where(uf.greater_equal(t, np.array(0.5, dt)[()]),
                            lax.sub(hi, lax.mul(diff, lax.sub(one, t))),
                            lax.add(lo, lax.mul(diff, t)))
            res = _indexing.where(lax.eq(lo, hi), lo, res)
    res = lax.reshape(res, qshape + batch)
    if not squash_nans:
        anynan = any(uf.isnan(x), axis=-1)
        res = _indexing.where(prom.broadcast_to(anynan, qshape + batch),
                        np.array(np.nan, dt)[()], res)
    return lax.reshape(res, qshape + out_tail)


def _concrete_q(q):
    from olympus_trace.core import Tracer

    from ._util import Array

    if isinstance(q, Tracer):
        return None
    if isinstance(q, Array):
        return np.asarray(q)
    return np.asarray(q)


def _static_quantile(xs, qv, n, method, dt):
    """Quantiles of the sorted last axis at concrete `qv`: positions, gathers and
    interpolation weights computed on the host (two static gathers)."""
    from ._indexing import take

    pos = np.asarray(qv, np.float64).ravel() * (n - 1)
    low = np.clip(np.floor(pos), 0, n - 1)
    high = np.clip(np.ceil(pos), 0, n - 1)
    frac = pos - low
    if method == "lower":
        high, frac = low, np.zeros_like(frac)
    elif method == "higher":
        low, frac = high, np.zeros_like(frac)
    elif method == "nearest":
        low = high = np.clip(np.round(pos), 0, n - 1)
        frac = np.zeros_like(frac)
    elif method == "midpoint":
        frac = np.where(frac > 0, 0.5, 0.0)
    idt = dtypes.default_int()
    lo = take(xs, low.astype(idt), axis=-1, mode="clip")
    if np.array_equal(low, high):
        return lo
    hi = take(xs, high.astype(idt), axis=-1, mode="clip")
    t = frac.astype(dt)
    diff = lax.sub(hi, lo)
    one = np.array(1, dt)[()]
    upper = lax.sub(hi, lax.mul(diff, prom.broadcast_to(lax.sub(one, t), aval_of(diff).shape)))
    lower = lax.add(lo, lax.mul(diff, prom.broadcast_to(t, aval_of(diff).shape)))
    res = _indexing.where(prom.broadcast_to(t >= 0.5, aval_of(diff).shape), upper, lower)
    return _indexing.where(lax.eq(lo, hi), lo, res)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None):
    """The q-th quantiles (q in [0, 1]) over the given axes."""
    check_no_out("quantile", out)
    if interpolation is not None:
        method = interpolation
    return _quantile("quantile", a, q, axis, method, keepdims, squash_nans=False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None):
    """The q-th quantiles ignoring NaNs."""
    check_no_out("nanquantile", out)
    if interpolation is not None:
        method = interpolation
    return _quantile("nanquantile", a, q, axis, method, keepdims, squash_nans=True)


def _pct(q):
    q = ensure_arraylike("percentile", q)
    (q,) = promote_dtypes_inexact(q)
    return uf.true_divide(q, 100.0)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None):
    """The q-th percentiles (q in [0, 100]) over the given axes."""
    check_no_out("percentile", out)
    if interpolation is not None:
        method = interpolation
    return _quantile("percentile", a, _pct(q), axis, method, keepdims, squash_nans=False)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None):
    """The q-th percentiles ignoring NaNs."""
    check_no_out("nanpercentile", out)
    if interpolation is not None:
        method = interpolation
    return _quantile("nanpercentile", a, _pct(q), axis, method, keepdims, squash_nans=True)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median over the given axes."""
    check_no_out("median", out)
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, squash_nans=False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median ignoring NaNs."""
    check_no_out("nanmedian", out)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, squash_nans=True)
