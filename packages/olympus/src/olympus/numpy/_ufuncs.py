"""Elementwise functions (NumPy's ufuncs) with JAX's semantics: weak-type-aware promotion,
integer inputs of transcendental functions promoted to the default float, `out` and `where`
accepted only as None (NotImplementedError otherwise, as in JAX).

Why one module of over 1,000 lines: it is the table of NumPy's ~100 ufuncs, each a few
lines on one shared promotion helper, and the `ufunc` objects built from that table
(``outer``, ``reduce``, ``accumulate``, ``at``); splitting the table by topic would spread
one registry over several files."""

from __future__ import annotations

import builtins
import functools

import numpy as np

from olympus_ir import dtypes
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom

from .._src import eager as _eager
from .._src.library_jit import jitted as _jitted
from . import _creation
from ._util import (
    as_output,
    aval_of,
    check_for_prngkeys,
    check_no_out,
    ensure_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
)

_shapes = prom.promote_shapes

# ufuncs whose result depends on a Python scalar's value (not just its type), so they must
# not see it traced: ``power(x, 2)`` uses exact repeated multiplication.
_VALUE_DEPENDENT = frozenset({"power", "float_power"})
# Under `jvp`, JAX's versions of these keep a tangent's own weak type (a strong tangent of
# a weak array primal stays strong; of a Python scalar primal it becomes weak; recorded
# from JAX 0.10.2), where the other ufuncs give it the primal's
# (`ad.tangents_typed_as_primals`).
_TANGENT_KEEPS_WEAK_TYPE = frozenset({
    "sqrt", "square", "tan", "arcsin", "arccos", "arctan", "cbrt", "exp2", "reciprocal"})


# --- the ufunc class ---------------------------------------------------------------------------


class ufunc:
    """An elementwise function with NumPy's ufunc interface: ``__call__`` (with ``out`` and
    ``where`` only as None), ``outer``, ``reduce``, ``accumulate`` and ``at``."""

    def __init__(self, func, nin: int, nout: int, *, name: str | None = None, identity=None,
                 reducer: str | None = None, accumulator: str | None = None,
                 at_method: str | None = None):
        self._func = func
        self.nin, self.nout = nin, nout
        self.nargs = nin + nout
        self.identity = identity
        self.__name__ = name or func.__name__
        self.__qualname__ = self.__name__
        self.__doc__ = func.__doc__
        self._reducer = reducer
        self._accumulator = accumulator
        self._at_method = at_method
        # The eager rule (outside traces: one cached jit of `func`), then NumPy values
        # from no-op paths (e.g. floor of integers) put on the device.
        self._eager = _eager.positional(func, self.__name__,
                                        scalars=self.__name__ not in _VALUE_DEPENDENT,
                                        typed_tangents=self.__name__ not in
                                        _TANGENT_KEEPS_WEAK_TYPE)

    def __repr__(self) -> str:
        return f"<olympus.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            check_no_out(self.__name__, out)
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional argument"
                            f"{'s' if self.nin != 1 else ''} but {len(args)} were given")
        return as_output(self._eager(*args))

    def outer(self, A, B, /, **kwargs):
        if self.nin != 2:
            raise ValueError("outer only supported for binary ufuncs")
        A, B = ensure_arraylike(f"{self.__name__}.outer", A, B)
        a, b = aval_of(A), aval_of(B)
        A = lax.reshape(A, a.shape + (1,) * b.ndim) if not prom.is_python_scalar(A) else A
        return as_output(self(A, B, **kwargs))

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        check_no_out(f"{self.__name__}.reduce", out)
        if self.nin != 2 or self.nout != 1:
            raise ValueError("reduce only supported for binary ufuncs with one output")
        from . import _reductions

        if self._reducer is not None:
            fn = getattr(_reductions, self._reducer)
            kw = dict(axis=axis, keepdims=keepdims, where=where)
            if self._reducer in ("sum", "prod"):
                kw["dtype"] = dtype
            if self._reducer in ("all", "any"):
                out = fn(a, **kw)
                if initial is not None:
                    out = self(out, initial)
            else:
                out = fn(a, initial=initial, **kw)
            return as_output(out if dtype is None else _creation.astype(out, dtype))
        return as_output(_generic_reduce(self, a, axis, dtype, keepdims, initial, where))

    def accumulate(self, a, axis=0, dtype=None, out=None):
        check_no_out(f"{self.__name__}.accumulate", out)
        if self.nin != 2 or self.nout != 1:
            raise ValueError("accumulate only supported for binary ufuncs with one output")
        from . import _reductions

        a = ensure_arraylike(f"{self.__name__}.accumulate", a)
        if self._accumulator is not None:
            if prom.aval_of(a).ndim == 0:
                raise ValueError("accumulate does not allow multiple axes")
            out = getattr(_reductions, self._accumulator)(a, axis=axis, dtype=dtype)
            return as_output(out)
        return as_output(_generic_accumulate(self, a, axis, dtype))

    def at(self, a, indices, b=None, /, *, inplace=True):
        if inplace:
            raise NotImplementedError(
                "olympus.numpy.ufunc.at does not support inplace=True, because OLYMPUS "
                "arrays are immutable. Use inplace=False to return an updated copy.")
        from ._indexing import _at_ref

        ref = _at_ref(a, indices)
        if self.nin == 2 and b is None:
            raise ValueError(f"{self.__name__}.at requires a third argument for binary "
                             "ufuncs")
        if self._at_method is not None and b is not None:
            return as_output(getattr(ref, self._at_method)(b))
        cur = ref.get()
        new = self(cur) if self.nin == 1 else self(cur, b)
        return as_output(ref.set(new))

    def reduceat(self, *args, **kwargs):
        raise NotImplementedError(f"{self.__name__}.reduceat is not implemented")


def _generic_reduce(uf, a, axis, dtype, keepdims, initial, where):
    """A Python-level fold along the (static) axes, for ufuncs without a reduction
    primitive (e.g. ones made with frompyfunc)."""
    from . import _shape

    a = ensure_arraylike(f"{uf.__name__}.reduce", a)
    if where is not None:
        raise NotImplementedError(f"{uf.__name__}.reduce with where= is not implemented")
    if dtype is not None:
        a = _creation.astype(a, dtype)
    nd = aval_of(a).ndim
    axes = tuple(range(nd)) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes = sorted((prom.canonicalize_axis(ax, nd) for ax in axes), reverse=True)
    out = a
    for ax in axes:
        n = aval_of(out).shape[ax]
        moved = _shape.moveaxis(out, ax, 0)
        if n == 0:
            init = initial if initial is not None else uf.identity
            if init is None:
                raise ValueError(f"zero-size array to reduction operation {uf.__name__} "
                                 "which has no identity")
            out = prom.broadcast_to(_creation.astype(init, aval_of(a).dtype),
                                   aval_of(moved).shape[1:])
        else:
            acc = moved[0] if initial is None else uf(initial, moved[0])
            for i in range(1, n):
                acc = uf(acc, moved[i])
            out = acc
        if keepdims:
            out = _shape.expand_dims(out, ax)
    return out


def _generic_accumulate(uf, a, axis, dtype):
    from . import _shape

    if dtype is not None:
        a = _creation.astype(a, dtype)
    moved = _shape.moveaxis(a, axis, 0)
    n = aval_of(moved).shape[0]
    if n == 0:
        return a
    outs = [moved[0]]
    for i in range(1, n):
        outs.append(uf(outs[-1], moved[i]))
    return _shape.moveaxis(_shape.stack(outs), 0, axis)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ufunc from a function of arrays (applied elementwise by broadcasting)."""
    return ufunc(func, nin, nout, name=getattr(func, "__name__", "frompyfunc"),
                 identity=identity)


def _uf(nin, nout=1, **kw):
    def deco(f):
        return ufunc(f, nin, nout, **kw)

    return deco


def _keeps_weak(f=None, *, scalars_only=False):
    """JAX's weak type for `f`'s result: weak when every operand is (with `scalars_only`,
    every operand is a weak scalar: JAX's version of `f` makes typed constants of the
    operands' shape, so a weak array operand still gives a strong result)."""
    if f is None:
        return functools.partial(_keeps_weak, scalars_only=scalars_only)

    @functools.wraps(f)
    def g(*args):
        out = f(*args)
        avals = [aval_of(a) for a in args]
        if (all(a.weak_type for a in avals) and not aval_of(out).weak_type
                and not (scalars_only and any(a.ndim for a in avals))):
            out = lax.convert_element_type(out, _dt(out), True)
        return out

    return g


# --- helpers ----------------------------------------------------------------------------------


def _dt(x):
    return aval_of(x).dtype


def _binary(name, x1, x2, inexact=False):
    x1, x2 = ensure_arraylike(name, x1, x2)
    check_for_prngkeys(name, x1, x2)
    xs = promote_dtypes_inexact(x1, x2) if inexact else promote_dtypes(x1, x2)
    return _shapes(*xs, fun_name=name)


def _unary(name, x, inexact=False):
    x = ensure_arraylike(name, x)
    if inexact:
        (x,) = promote_dtypes_inexact(x)
    return x


def _zero(x):
    return np.array(0, _dt(x))[()]


def _const(x, v):
    """`v` as a scalar constant of x's dtype: a weakly typed Python scalar when `x` is a
    weakly typed scalar (so a function of weak scalars stays weak, forward and backward),
    else a NumPy scalar, as JAX's constants are."""
    a = aval_of(x)
    if a.weak_type and a.ndim == 0:
        py = lax.elementwise._scalar_like(v, a.dtype, True)
        if dtypes.python_scalar_dtype(py) == a.dtype:
            return py
    return np.array(v, a.dtype)[()]


def _full_like(x, v):
    """An array of `v` shaped and typed as `x`, weak type included (JAX's ``full_like``)."""
    a = aval_of(x)
    c = np.array(v, a.dtype)[()]
    if a.weak_type:
        c = lax.convert_element_type(c, a.dtype, True)
    return prom.broadcast_to(c, a.shape)


def _is_int(dt):
    return dtypes.is_integer(dt)


def _is_intlike(dt):
    return dtypes.is_integer(dt) or dt == dtypes.bool_


def _to_array(x):
    """Python scalars as weakly typed 0-d operands (other values unchanged)."""
    return x


def _where(c, a, b):
    """`a` where the boolean `c` else `b`, promoted and broadcast together."""
    a, b = promote_dtypes(a, b)
    if aval_of(c).shape == ():  # select_n takes a scalar predicate as it is
        return lax.select(c, *prom.broadcast_arrays(a, b))
    return lax.select(*prom.broadcast_arrays(c, a, b))


# --- arithmetic -------------------------------------------------------------------------------


@_uf(2, identity=0, reducer="sum", accumulator="cumsum", at_method="add")
def add(x1, x2, /):
    """Elementwise ``x1 + x2`` (logical or for booleans)."""
    x1, x2 = _binary("add", x1, x2)
    return lax.bitwise_or(x1, x2) if _dt(x1) == dtypes.bool_ else lax.add(x1, x2)


@_uf(2)
def subtract(x1, x2, /):
    """Elementwise ``x1 - x2``."""
    x1, x2 = _binary("subtract", x1, x2)
    if _dt(x1) == dtypes.bool_:
        raise TypeError("subtract does not accept dtype bool.")
    return lax.sub(x1, x2)


@_uf(2, identity=1, reducer="prod", accumulator="cumprod", at_method="multiply")
def multiply(x1, x2, /):
    """Elementwise ``x1 * x2`` (logical and for booleans)."""
    x1, x2 = _binary("multiply", x1, x2)
    return lax.bitwise_and(x1, x2) if _dt(x1) == dtypes.bool_ else lax.mul(x1, x2)


@_uf(2)
def divide(x1, x2, /):
    """Elementwise true division; integer inputs promote to the default float."""
    x1, x2 = _binary("divide", x1, x2, inexact=True)
    return lax.div(x1, x2)


true_divide = divide


def _sign_fix(r, x2):
    """Where a remainder `r` of division by `x2` is nonzero and of the other sign."""
    zero = _zero(r)
    return lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(x2, zero)))


def _float_divmod(x1, x2):
    """NumPy's floating divmod: the quotient is floored and the remainder takes the sign of
    the divisor, with the quotient adjusted to match the remainder."""
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    fix = _sign_fix(mod, x2)
    mod = lax.select(fix, lax.add(mod, x2), mod)
    div = lax.select(fix, lax.sub(div, lax.convert_element_type(1, _dt(div),
                                                                aval_of(div).weak_type)), div)
    return lax.round(div, 1), mod


@_uf(2)
def floor_divide(x1, x2, /):
    """Elementwise ``x1 // x2`` (rounding toward negative infinity)."""
    x1, x2 = _binary("floor_divide", x1, x2)
    dt = _dt(x1)
    if dt == dtypes.bool_:
        raise TypeError("floor_divide does not accept dtype bool.")
    if dtypes.is_complex(dt):
        raise TypeError("floor_divide does not support complex-valued inputs")
    if _is_int(dt):
        q = lax.div(x1, x2)
        if dtypes.is_unsigned_int(dt):
            return q
        # Round toward -inf: one less where the signs differ and there is a remainder. The
        # signs of x1 and x2 (not of the remainder) decide, so x // 0 is XLA's x / 0 minus
        # one for x != 0 (-2), as JAX returns.
        fix = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)),
                              lax.ne(lax.rem(x1, x2), _zero(x2)))
        return lax.select(fix, lax.sub(q, lax.convert_element_type(1, dt, aval_of(q).weak_type)),
                          q)
    q = _float_divmod(x1, x2)[0]
    # Division by zero gives x1 / x2 (+-inf, or NaN for 0 / 0), as in NumPy.
    return _where(lax.eq(x2, _zero(x2)), lax.div(x1, x2), q)


@_uf(2)
@_keeps_weak
def remainder(x1, x2, /):
    """Elementwise remainder with the sign of the divisor (Python's ``%``)."""
    x1, x2 = _binary("remainder", x1, x2)
    dt = _dt(x1)
    if dt == dtypes.bool_:
        raise TypeError("remainder does not accept dtype bool.")
    if dtypes.is_complex(dt):
        raise TypeError("remainder does not support complex-valued inputs")
    if _is_int(dt):
        x2 = _where(lax.eq(x2, _zero(x2)), np.array(1, dt)[()], x2)
        x1, x2 = _shapes(x1, x2)
    r = lax.rem(x1, x2)
    if dtypes.is_unsigned_int(dt):
        return r
    # The result takes the sign of the divisor, as in Python and NumPy.
    return lax.select(_sign_fix(r, x2), lax.add(r, x2), r)


mod = remainder


@_uf(2)
@_keeps_weak
def fmod(x1, x2, /):
    """Elementwise C-style remainder (the sign of the dividend)."""
    x1, x2 = _binary("fmod", x1, x2)
    dt = _dt(x1)
    if dt == dtypes.bool_ or dtypes.is_complex(dt):
        raise TypeError(f"fmod does not accept dtype {dt}.")
    if _is_int(dt):
        x2 = _where(lax.eq(x2, _zero(x2)), np.array(1, dt)[()], x2)
        x1, x2 = _shapes(x1, x2)
    return lax.rem(x1, x2)


@_uf(2, 2)
def divmod(x1, x2, /):  # noqa: A001
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    x1, x2 = _binary("divmod", x1, x2)
    dt = _dt(x1)
    if _is_int(dt) or dt == dtypes.bool_ or dtypes.is_complex(dt):
        return floor_divide(x1, x2), remainder(x1, x2)
    q, r = _float_divmod(x1, x2)
    return _where(lax.eq(x2, _zero(x2)), lax.div(x1, x2), q), r


def _pow_int_int(x1, x2):
    """Integer power by repeated squaring over the exponent's low six bits, as JAX computes
    it (more bits would overflow any base > 1): a negative exponent is read in two's
    complement (3 ** -1 in int8 is 3 ** 63), and 0 ** y is 0 for y != 0."""
    shape = prom.broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
    x1, x2 = prom.broadcast_to(x1, shape), prom.broadcast_to(x2, shape)
    dt = _dt(x1)
    weak = aval_of(x1).weak_type and aval_of(x2).weak_type
    zero = prom.broadcast_to(lax.convert_element_type(0, dt, weak), shape)
    one = prom.broadcast_to(lax.convert_element_type(1, dt, weak), shape)
    acc = lax.select(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = lax.select(lax.ne(lax.bitwise_and(x2, one), zero), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


@_uf(2)
def power(x1, x2, /):
    """Elementwise ``x1 ** x2``. A concrete integer exponent uses exact repeated
    multiplication (``lax.integer_pow``), as in JAX."""
    x1, x2 = ensure_arraylike("power", x1, x2)
    if (isinstance(x2, (int, np.integer)) and not isinstance(x2, (bool, np.bool_))):
        (x1,) = promote_dtypes(x1)
        if _dt(x1) == dtypes.bool_:
            x1 = lax.convert_element_type(x1, dtypes.default_int(), aval_of(x1).weak_type)
        if not prom.is_python_scalar(x1) or isinstance(x1, int):
            return lax.integer_pow(x1, int(x2))
    if dtypes.is_inexact(_dt(x1)) and _is_int(_dt(x2)):
        # A float or complex base with an integer exponent: lax.pow of the operands as
        # they are (JAX's rule, differentiable in the base at 0), weak only if both are.
        # JAX computes the promoted operands first and leaves them unused: their
        # conversion is an unused equation of its jaxprs, and so of the olympusprs.
        x1, x2 = _shapes(x1, x2, fun_name="power")
        promote_dtypes(x1, x2)
        return lax.pow(x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    dt = _dt(x1)
    if dt == dtypes.bool_:
        x1 = lax.convert_element_type(x1, dtypes.default_int())
        x2 = lax.convert_element_type(x2, dtypes.default_int())
        dt = _dt(x1)
    x1, x2 = _shapes(x1, x2, fun_name="power")
    if _is_int(dt):
        return _pow_int_int(x1, x2)
    return lax.pow(x1, x2)


pow = power  # noqa: A001


@_uf(2)
def float_power(x1, x2, /):
    """``x1 ** x2`` computed in the default floating dtype (or complex)."""
    x1, x2 = _binary("float_power", x1, x2, inexact=True)
    return lax.pow(x1, x2)


@_uf(1)
def negative(x, /):
    """Elementwise ``-x``."""
    x = ensure_arraylike("negative", x)
    if _dt(x) == dtypes.bool_:
        raise TypeError("The olympus.numpy boolean negative is not supported, use "
                        "olympus.numpy.logical_not instead.")
    return -x if prom.is_python_scalar(x) else lax.neg(x)


@_uf(1)
def positive(x, /):
    """Elementwise ``+x`` (a copy of x)."""
    x = ensure_arraylike("positive", x)
    if _dt(x) == dtypes.bool_:
        raise TypeError("positive does not accept dtype bool.")
    return x


@_uf(1)
def absolute(x, /):
    """Elementwise absolute value (the magnitude for complex inputs)."""
    x = ensure_arraylike("absolute", x)
    dt = _dt(x)
    return x if dtypes.is_unsigned_int(dt) or dt == dtypes.bool_ else lax.abs(x)


abs = absolute  # noqa: A001


@_uf(1)
def fabs(x, /):
    """Elementwise absolute value, computed in a floating dtype."""
    x = _unary("fabs", x, inexact=True)
    if dtypes.is_complex(_dt(x)):
        raise TypeError("fabs does not support complex-valued inputs.")
    return lax.abs(x)


@_uf(1)
def sign(x, /):
    """-1, 0 or 1 by sign (``x / |x|`` for complex inputs)."""
    x = ensure_arraylike("sign", x)
    dt = _dt(x)
    if dt == dtypes.bool_:
        raise TypeError("sign does not accept dtype bool.")
    if dtypes.is_complex(dt):
        mag = lax.abs(x)
        safe = _where(lax.eq(mag, _zero(mag)), np.array(1, _dt(mag))[()], mag)
        return lax.div(x, lax.convert_element_type(safe, dt, aval_of(x).weak_type))
    return lax.sign(x)


@_uf(1)
def reciprocal(x, /):
    """Elementwise ``1 / x``, in a floating dtype."""
    x = _unary("reciprocal", x, inexact=True)
    return lax.integer_pow(x, -1)


@_uf(1)
def square(x, /):
    """Elementwise ``x * x``."""
    x = ensure_arraylike("square", x)
    if _dt(x) == dtypes.bool_:
        x = lax.convert_element_type(x, dtypes.default_int(), aval_of(x).weak_type)
    return lax.square(x)


# --- transcendental -----------------------------------------------------------------------------


def _make_unary_inexact(lax_fn, name, doc, float_only=False):
    def f(x, /):
        x = _unary(name, x, inexact=True)
        if float_only and dtypes.is_complex(_dt(x)):
            raise TypeError(f"{name} does not support complex-valued inputs.")
        return lax_fn(x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return ufunc(f, 1, 1)


exp = _make_unary_inexact(lax.exp, "exp", "Elementwise exponential.")
exp2 = _make_unary_inexact(lax.exp2, "exp2", "Elementwise ``2 ** x``.")
expm1 = _make_unary_inexact(lax.expm1, "expm1", "Elementwise ``exp(x) - 1``.")
log = _make_unary_inexact(lax.log, "log", "Elementwise natural logarithm.")
log1p = _make_unary_inexact(lax.log1p, "log1p", "Elementwise ``log(1 + x)``.")
sqrt = _make_unary_inexact(lax.sqrt, "sqrt", "Elementwise square root.")
cbrt = _make_unary_inexact(lax.cbrt, "cbrt", "Elementwise cube root.", float_only=True)
sin = _make_unary_inexact(lax.sin, "sin", "Elementwise sine.")
cos = _make_unary_inexact(lax.cos, "cos", "Elementwise cosine.")
tan = _make_unary_inexact(lax.tan, "tan", "Elementwise tangent.")
arcsin = _make_unary_inexact(lax.asin, "arcsin", "Elementwise inverse sine.")
arccos = _make_unary_inexact(lax.acos, "arccos", "Elementwise inverse cosine.")
arctan = _make_unary_inexact(lax.atan, "arctan", "Elementwise inverse tangent.")
sinh = _make_unary_inexact(lax.sinh, "sinh", "Elementwise hyperbolic sine.")
cosh = _make_unary_inexact(lax.cosh, "cosh", "Elementwise hyperbolic cosine.")
tanh = _make_unary_inexact(lax.tanh, "tanh", "Elementwise hyperbolic tangent.")
arcsinh = _make_unary_inexact(lax.asinh, "arcsinh", "Elementwise inverse hyperbolic sine.")
arccosh = _make_unary_inexact(lax.acosh, "arccosh", "Elementwise inverse hyperbolic cosine.")
arctanh = _make_unary_inexact(lax.atanh, "arctanh", "Elementwise inverse hyperbolic tangent.")
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def _log_base(x, base):
    return lax.div(lax.log(x), lax.log(lax.convert_element_type(base, _dt(x), False)))


@_uf(1)
def log2(x, /):
    """Elementwise base-2 logarithm."""
    x = _unary("log2", x, inexact=True)
    return _log_base(x, 2)


@_uf(1)
def log10(x, /):
    """Elementwise base-10 logarithm."""
    x = _unary("log10", x, inexact=True)
    return _log_base(x, 10)


@_uf(2)
def arctan2(x1, x2, /):
    """Elementwise ``arctan(x1 / x2)`` choosing the quadrant from the signs."""
    x1, x2 = _binary("arctan2", x1, x2, inexact=True)
    if dtypes.is_complex(_dt(x1)):
        raise TypeError("arctan2 does not support complex-valued inputs.")
    return lax.atan2(x1, x2)


atan2 = arctan2


@_uf(2)
def hypot(x1, x2, /):
    """Elementwise ``sqrt(x1**2 + x2**2)`` without intermediate overflow. Its constants
    follow JAX's: ones shaped like the operand keep its weak type, the final infinity only
    a weak scalar's (so weak scalars give a weak result, weak arrays a strong one)."""
    x1, x2 = _binary("hypot", x1, x2, inexact=True)
    if dtypes.is_complex(_dt(x1)):
        raise TypeError("hypot does not support complex-valued inputs.")
    a, b = lax.abs(x1), lax.abs(x2)
    inf = np.array(np.inf, _dt(a))[()]
    is_inf = lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf))
    big, small = lax.max(a, b), lax.min(a, b)
    big_zero = lax.eq(big, _const(big, 0))
    ratio = lax.div(small, _where(big_zero, _full_like(big, 1), big))
    out = _where(big_zero, big,
                 lax.mul(big, lax.sqrt(lax.add(_const(big, 1), lax.mul(ratio, ratio)))))
    return _where(is_inf, _const(out, np.inf), out)


@_uf(1)
def deg2rad(x, /):
    """Degrees to radians."""
    x = _unary("deg2rad", x, inexact=True)
    return lax.mul(x, _const(x, np.pi / 180))


@_uf(1)
def rad2deg(x, /):
    """Radians to degrees."""
    x = _unary("rad2deg", x, inexact=True)
    return lax.mul(x, _const(x, 180 / np.pi))


radians, degrees = deg2rad, rad2deg
radians = ufunc(deg2rad._func, 1, 1, name="radians")
degrees = ufunc(rad2deg._func, 1, 1, name="degrees")


def _replace_posinf(x):
    return lax.select(lax.eq(x, np.array(np.inf, _dt(x))[()]), _full_like(x, 0), x)


def _logaddexp_real(x1, x2, exp, scale):
    """JAX's formula, equation for equation: nan or infinities of one sign where the
    difference is nan, else max + log1p(exp(-|x1 - x2|)) (times `scale` for base 2)."""
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    isnan = lax.ne(delta, delta)
    both = lax.add(x1, x2)
    tail = lax.log1p(exp(lax.neg(lax.abs(delta))))
    if scale is not None:
        tail = lax.mul(_const(amax, scale), tail)
    return lax.select(isnan, both, lax.add(amax, tail))


def _custom_jvp_logaddexp(name, exp, scale):
    # Built on first use: olympus.numpy is imported before the custom-derivative machinery.
    from .._src.custom_derivatives import custom_jvp

    def primal(x1, x2):
        return _logaddexp_real(x1, x2, exp, scale)

    def jvp(primals, tangents):
        x1, x2 = primals
        t1, t2 = tangents
        out = f(x1, x2)
        r_out = _replace_posinf(out)
        return out, lax.add(lax.mul(t1, exp(lax.sub(_replace_posinf(x1), r_out))),
                            lax.mul(t2, exp(lax.sub(_replace_posinf(x2), r_out))))

    primal.__name__ = primal.__qualname__ = name
    jvp.__name__ = jvp.__qualname__ = f"_{name}_jvp"
    f = custom_jvp(primal)
    f.defjvp(jvp)
    return f


_LOGADDEXP = {}


def _logaddexp_fn(name):
    f = _LOGADDEXP.get(name)
    if f is None:
        exp, scale = (lax.exp, None) if name == "logaddexp" else (lax.exp2, 1 / np.log(2))
        f = _LOGADDEXP[name] = _custom_jvp_logaddexp(name, exp, scale)
    return f


@_uf(2)
def logaddexp(x1, x2, /):
    """Elementwise ``log(exp(x1) + exp(x2))`` computed stably (JAX's custom derivative:
    finite where one input is -inf)."""
    x1, x2 = _binary("logaddexp", x1, x2, inexact=True)
    if dtypes.is_complex(_dt(x1)):
        amax = lax.max(x1, x2)
        delta = lax.sub(x1, x2)
        out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
        return _where(lax.ne(delta, delta), lax.add(x1, x2), out)
    return _logaddexp_fn("logaddexp")(x1, x2)


@_uf(2)
def logaddexp2(x1, x2, /):
    """Elementwise ``log2(2**x1 + 2**x2)`` computed stably (JAX's custom derivative)."""
    x1, x2 = _binary("logaddexp2", x1, x2, inexact=True)
    if dtypes.is_complex(_dt(x1)):
        amax = lax.max(x1, x2)
        delta = lax.sub(x1, x2)
        ln2 = np.array(np.log(2), _dt(amax))[()]
        out = lax.add(amax, lax.div(lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))), ln2))
        return _where(lax.ne(delta, delta), lax.add(x1, x2), out)
    return _logaddexp_fn("logaddexp2")(x1, x2)


@_uf(1)
def sinc(x, /):
    """Normalized sinc ``sin(pi x) / (pi x)``, 1 at 0."""
    x = _unary("sinc", x, inexact=True)
    is_zero = lax.eq(x, _const(x, 0))
    pix = lax.mul(x, _const(x, np.pi))
    safe = _where(is_zero, _const(x, 1), pix)
    return _where(is_zero, _const(x, 1), lax.div(lax.sin(safe), safe))


# --- rounding -----------------------------------------------------------------------------------


@_uf(1)
def floor(x, /):
    """Elementwise floor (integers and booleans are returned unchanged, as in JAX)."""
    x = ensure_arraylike("floor", x)
    if _is_intlike(_dt(x)):
        return x
    if dtypes.is_complex(_dt(x)):
        raise TypeError("floor does not support complex-valued inputs.")
    return lax.floor(x)


@_uf(1)
def ceil(x, /):
    """Elementwise ceiling (integers and booleans are returned unchanged, as in JAX)."""
    x = ensure_arraylike("ceil", x)
    if _is_intlike(_dt(x)):
        return x
    if dtypes.is_complex(_dt(x)):
        raise TypeError("ceil does not support complex-valued inputs.")
    return lax.ceil(x)


@_uf(1)
def trunc(x, /):
    """Round toward zero (integers and booleans are returned unchanged)."""
    x = ensure_arraylike("trunc", x)
    if _is_intlike(_dt(x)):
        return x
    if dtypes.is_complex(_dt(x)):
        raise TypeError("trunc does not support complex-valued inputs.")
    return _where(lax.lt(x, _zero(x)), lax.ceil(x), lax.floor(x))


@_uf(1)
def rint(x, /):
    """Round to the nearest integer, ties to even (integers become the default float)."""
    x = ensure_arraylike("rint", x)
    dt = _dt(x)
    if _is_intlike(dt):
        # A strong float even for a weak int (JAX's result).
        return lax.convert_element_type(x, dtypes.default_float(), False)
    if dtypes.is_complex(dt):
        return lax.complex(lax.round(lax.real(x), 1), lax.round(lax.imag(x), 1))
    return lax.round(x, 1)


def _round(a, decimals=0, out=None):
    from ._util import static_int

    check_no_out("round", out)
    a = ensure_arraylike("round", a)
    decimals = static_int(decimals, "the 'decimals' argument of olympus.numpy.round")
    dt = _dt(a)
    if _is_intlike(dt):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a

    def _round_float(x):
        if decimals == 0:
            return lax.round(x, 1)
        xdt = _dt(x)
        work = dtypes.float32 if xdt in (dtypes.float16, dtypes.bfloat16) else xdt
        y = lax.convert_element_type(x, work, aval_of(x).weak_type)
        factor = np.array(10.0 ** decimals, work)[()]
        y = lax.div(lax.round(lax.mul(y, factor), 1), factor)
        return lax.convert_element_type(y, xdt, aval_of(x).weak_type)

    if dtypes.is_complex(dt):
        return lax.complex(_round_float(lax.real(a)), _round_float(lax.imag(a)))
    return _round_float(a)


@_jitted(static_argnames=("decimals",))
def round(a, decimals=0, out=None):  # noqa: A001
    """Round to `decimals` decimal places, ties to even (integers are returned unchanged for
    ``decimals >= 0``)."""
    return _round(a, decimals, out)


@_jitted(static_argnames=("decimals",))
def around(a, decimals=0, out=None):
    """Round to `decimals` decimal places (an alias of `round`, jitted under its own name
    around `round`'s, as JAX's)."""
    return round(a, decimals, out)


@_jitted()
def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):  # noqa: A002
    """Limit values to ``[min, max]`` (either may be None)."""
    if arr is None:
        arr = a
    if a_min is not None:
        min = a_min  # noqa: A001
    if a_max is not None:
        max = a_max  # noqa: A001
    arr = ensure_arraylike("clip", arr)
    if dtypes.is_complex(_dt(arr)):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the "
                         "real or imaginary components via olympus.numpy.real/imag "
                         "respectively.")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return arr


# --- extrema -------------------------------------------------------------------------------------


@_uf(2, reducer="max", accumulator="_cummax", at_method="max")
def maximum(x1, x2, /):
    """Elementwise maximum (NaN-propagating)."""
    x1, x2 = _binary("maximum", x1, x2)
    if dtypes.is_complex(_dt(x1)):
        return _where(_complex_cmp(lax.gt, x1, x2) | lax.ne(x1, x1), x1, x2)
    return lax.max(x1, x2)


@_uf(2, reducer="min", accumulator="_cummin", at_method="min")
def minimum(x1, x2, /):
    """Elementwise minimum (NaN-propagating)."""
    x1, x2 = _binary("minimum", x1, x2)
    if dtypes.is_complex(_dt(x1)):
        return _where(_complex_cmp(lax.lt, x1, x2) | lax.ne(x1, x1), x1, x2)
    return lax.min(x1, x2)


@_uf(2)
def fmax(x1, x2, /):
    """Elementwise maximum ignoring NaNs (NaN only where both are NaN)."""
    x1, x2 = _binary("fmax", x1, x2)
    return _where(lax.bitwise_or(less(x1, x2), isnan(x1)), x2, x1)


@_uf(2)
def fmin(x1, x2, /):
    """Elementwise minimum ignoring NaNs (NaN only where both are NaN)."""
    x1, x2 = _binary("fmin", x1, x2)
    return _where(lax.bitwise_or(greater(x1, x2), isnan(x1)), x2, x1)


@_uf(2)
@_keeps_weak(scalars_only=True)
def heaviside(x1, x2, /):
    """0 for negative x1, 1 for positive, x2 where x1 == 0."""
    x1, x2 = _binary("heaviside", x1, x2, inexact=True)
    zero = _zero(x1)
    one = np.array(1, _dt(x1))[()]
    out = _where(lax.lt(x1, zero), zero, _where(lax.gt(x1, zero), one, x2))
    return _where(lax.ne(x1, x1), x1, out)


# --- floating-point functions ------------------------------------------------------------------


@_uf(2)
def copysign(x1, x2, /):
    """The magnitude of x1 with the sign of x2."""
    x1, x2 = _binary("copysign", x1, x2, inexact=True)
    if dtypes.is_complex(_dt(x1)):
        raise TypeError("copysign does not support complex-valued inputs")
    mag = lax.abs(x1)
    return _where(signbit(x2), lax.neg(mag), mag)


@_uf(2)
def nextafter(x1, x2, /):
    """The next representable value after x1 toward x2."""
    x1, x2 = _binary("nextafter", x1, x2, inexact=True)
    return lax.nextafter(x1, x2)


@_uf(1)
def spacing(x, /):
    """The distance to the next representable value away from zero (signed like x)."""
    x = _unary("spacing", x, inexact=True)
    if dtypes.is_complex(_dt(x)):
        raise TypeError("spacing is not defined for complex inputs.")
    inf = np.array(np.inf, _dt(x))[()]
    toward = _where(signbit(x), lax.neg(inf), inf)
    return lax.sub(lax.nextafter(x, prom.broadcast_to(toward, aval_of(x).shape)), x)


_INT_OF_WIDTH = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


@_uf(1)
def signbit(x, /):
    """Whether the sign bit is set (True for -0.0 and negative NaNs)."""
    x = ensure_arraylike("signbit", x)
    dt = _dt(x)
    if dt == dtypes.bool_:
        return prom.broadcast_to(np.bool_(False), aval_of(x).shape)
    if _is_int(dt):
        return lax.lt(x, _zero(x))
    if dtypes.is_complex(dt):
        raise ValueError("signbit is not well defined for complex numbers.")
    if prom.is_python_scalar(x):
        x = np.array(x, dt)
    ity = np.dtype(_INT_OF_WIDTH[dt.itemsize])
    return lax.lt(lax.bitcast_convert_type(x, ity), np.array(0, ity)[()])


def _exp2_int(e, dt):
    """``2 ** e`` for integers e in the normal exponent range of `dt`, built exactly from
    its bits."""
    info = dtypes.finfo(dt)
    ity = np.dtype(_INT_OF_WIDTH[dt.itemsize])
    bias = -int(info.minexp) + 1
    e = lax.convert_element_type(e, ity)
    biased = lax.add(e, np.array(bias, ity)[()])
    bits = lax.shift_left(biased, np.array(int(info.nmant), ity)[()])
    return lax.bitcast_convert_type(bits, dt)


@_uf(2)
def ldexp(x1, x2, /):
    """``x1 * 2 ** x2`` for integer x2 (exact: the powers of two are built from bits)."""
    x1, x2 = ensure_arraylike("ldexp", x1, x2)
    if dtypes.is_complex(_dt(x1)) or dtypes.is_inexact(_dt(x2)):
        raise ValueError(f"ldexp not supported for input types {(_dt(x1), _dt(x2))}")
    (x1,) = promote_dtypes_inexact(x1)
    dt = _dt(x1)
    if dtypes.is_complex(dt):
        raise TypeError("ldexp does not support complex-valued inputs")
    work = dtypes.float32 if dt.itemsize < 4 else dt
    info = dtypes.finfo(work)
    bias = -int(info.minexp) + 1
    ity = np.dtype(_INT_OF_WIDTH[work.itemsize])
    e = lax.convert_element_type(x2, ity)
    lo, hi = np.array(-2 * (bias - 1), ity)[()], np.array(2 * bias - 2, ity)[()]
    e = lax.clamp(lo, e, hi)
    e1 = lax.shift_right_arithmetic(e, np.array(1, ity)[()])
    e2 = lax.sub(e, e1)
    x = lax.convert_element_type(x1, work)
    x, f1, f2 = _shapes(x, _exp2_int(e1, work), _exp2_int(e2, work), fun_name="add")
    out = lax.mul(lax.mul(x, f1), f2)
    return lax.convert_element_type(out, dt)  # strongly typed, as JAX's


@_uf(1, 2)
def frexp(x, /):
    """Mantissa in [0.5, 1) and integer exponent with ``x == m * 2 ** e``."""
    x = _unary("frexp", x, inexact=True)
    dt = _dt(x)
    if dtypes.is_complex(dt):
        raise TypeError("frexp does not support complex-valued inputs")
    if prom.is_python_scalar(x):
        x = np.array(x, dt)
    info = dtypes.finfo(dt)
    ity = np.dtype(_INT_OF_WIDTH[dt.itemsize])
    nmant = int(info.nmant)
    nexp = int(info.nexp)
    bias = -int(info.minexp) + 1
    # Scale subnormals into the normal range first.
    tiny = np.array(info.smallest_normal, dt)[()]
    is_sub = lax.lt(lax.abs(x), tiny)
    scale = np.array(2.0 ** nmant, dt)[()]
    xs = _where(is_sub, lax.mul(x, scale), x)
    extra = _where(is_sub, np.array(-nmant, ity)[()], np.array(0, ity)[()])
    bits = lax.bitcast_convert_type(xs, ity)
    emask = np.array((1 << nexp) - 1, ity)[()]
    exp_field = lax.bitwise_and(lax.shift_right_logical(bits, np.array(nmant, ity)[()]),
                                emask)
    e = lax.add(lax.sub(exp_field, np.array(bias - 1, ity)[()]), extra)
    nbits = 8 * dt.itemsize
    clear_val = ~(((1 << nexp) - 1) << nmant) & ((1 << nbits) - 1)
    if clear_val >= 1 << (nbits - 1):
        clear_val -= 1 << nbits
    clear = np.array(clear_val, ity)[()]
    mbits = lax.bitwise_or(lax.bitwise_and(bits, clear),
                           np.array((bias - 1) << nmant, ity)[()])
    m = lax.bitcast_convert_type(mbits, dt)
    special = lax.bitwise_or(lax.bitwise_or(isinf(x), isnan(x)), lax.eq(x, _zero(x)))
    m = _where(special, x, m)
    e = _where(special, np.array(0, ity)[()], e)
    return m, lax.convert_element_type(e, dtypes.int32)


@_uf(1, 2)
def modf(x, /):
    """Fractional and integral parts, both with the sign of x (as JAX computes them: an
    infinite x has a nan fractional part)."""
    x = _unary("modf", x, inexact=True)
    whole = _where(lax.ge(x, _full_like(x, 0)), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


# --- classification ----------------------------------------------------------------------------


def _full_bool(x, value):
    return prom.broadcast_to(np.bool_(value), aval_of(x).shape)


@_uf(1)
def isfinite(x, /):
    """Elementwise: neither infinite nor NaN."""
    x = ensure_arraylike("isfinite", x)
    dt = _dt(x)
    if _is_intlike(dt):
        return _full_bool(x, True)
    if dtypes.is_complex(dt):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


@_uf(1)
def isinf(x, /):
    """Elementwise: positive or negative infinity."""
    x = ensure_arraylike("isinf", x)
    dt = _dt(x)
    if _is_intlike(dt):
        return _full_bool(x, False)
    if dtypes.is_complex(dt):
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    return lax.eq(lax.abs(x), np.array(np.inf, dt)[()])


@_uf(1)
def isnan(x, /):
    """Elementwise: not a number (``x != x``, for integers too, as JAX stages it)."""
    x = ensure_arraylike("isnan", x)
    return lax.ne(x, x)


def _isposneginf(name, x, value, out):
    check_no_out(name, out)
    x = ensure_arraylike(name, x)
    dt = _dt(x)
    if dtypes.is_complex(dt):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if _is_intlike(dt):
        return _full_bool(x, False)
    return lax.eq(x, np.array(value, dt)[()])


def isposinf(x, /, out=None):
    """Elementwise: positive infinity."""
    return _isposneginf("isposinf", x, np.inf, out)


def isneginf(x, /, out=None):
    """Elementwise: negative infinity."""
    return _isposneginf("isneginf", x, -np.inf, out)


@_jitted()
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN by `nan` and infinities by `posinf`/`neginf` (default: the dtype's
    largest finite magnitudes)."""
    from ._indexing import where

    del copy
    x = ensure_arraylike("nan_to_num", x)
    dt = _dt(x)
    if _is_intlike(dt):
        return x
    if dtypes.is_complex(dt):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf

    def c(v):  # the replacement values are arrays of x's dtype (strongly typed, as JAX's)
        return np.asarray(v, dt) if prom.is_python_scalar(v) or np.ndim(
            v) == 0 and not hasattr(v, "aval") else _creation.astype(v, dt)

    out = where(isnan(x), c(nan), x)
    out = where(isposinf(out), c(posinf), out)
    return where(isneginf(out), c(neginf), out)


# --- complex numbers ---------------------------------------------------------------------------


def real(val, /):
    """The real part (the value itself for real inputs)."""
    val = ensure_arraylike("real", val)
    return lax.real(val) if dtypes.is_complex(_dt(val)) else val


def imag(val, /):
    """The imaginary part (zeros for real inputs)."""
    val = ensure_arraylike("imag", val)
    if dtypes.is_complex(_dt(val)):
        return lax.imag(val)
    a = aval_of(val)
    z = lax.convert_element_type(0, a.dtype, a.weak_type)
    return lax.broadcast_in_dim(z, a.shape, ()) if a.shape else z


@_uf(1)
def conjugate(x, /):
    """The complex conjugate (the value itself for real inputs)."""
    x = ensure_arraylike("conjugate", x)
    return lax.conj(x) if dtypes.is_complex(_dt(x)) else x


conj = conjugate


def angle(z, deg=False):
    """The argument of complex values (0 or pi for reals), in radians or degrees."""
    z = ensure_arraylike("angle", z)
    re, im = real(z), imag(z)
    if not dtypes.is_inexact(_dt(re)) or (dtypes.is_float(_dt(z)) and aval_of(z).ndim == 0):
        # JAX computes integer input and real scalars in the default float type (strong).
        re = lax.convert_element_type(re, dtypes.default_float())
        im = lax.convert_element_type(im, dtypes.default_float())
    out = lax.atan2(im, re)
    return rad2deg(out) if deg else out


# --- integer functions -------------------------------------------------------------------------


def _int_args(name, x1, x2):
    x1, x2 = _binary(name, x1, x2)
    if not _is_int(_dt(x1)):
        raise ValueError(f"Arguments to olympus.numpy.{name} must be integers.")
    return x1, x2


@_uf(2)
def gcd(x1, x2, /):
    """Greatest common divisor of |x1| and |x2| (0 for gcd(0, 0))."""
    from olympus.lax import while_loop

    from ._creation import asarray

    x1, x2 = _int_args("gcd", x1, x2)
    shape = prom.broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
    weak = aval_of(x1).weak_type and aval_of(x2).weak_type
    a = prom.broadcast_to(lax.abs(asarray(x1)), shape)
    b = prom.broadcast_to(lax.abs(asarray(x2)), shape)
    dt = _dt(a)
    zero, one = np.array(0, dt)[()], np.array(1, dt)[()]

    def cond(c):
        return lax.reduce_or(lax.ne(c[1], zero), tuple(range(len(shape))))

    def body(c):
        a, b = c
        nz = lax.ne(b, zero)
        safe_b = lax.select(nz, b, prom.broadcast_to(one, shape))
        return (lax.select(nz, b, a),
                lax.select(nz, lax.rem(a, safe_b), prom.broadcast_to(zero, shape)))

    out = while_loop(cond, body, (a, b))[0]
    return lax.convert_element_type(out, dt, weak)


@_uf(2)
@_keeps_weak(scalars_only=True)
def lcm(x1, x2, /):
    """Least common multiple of |x1| and |x2|."""
    x1, x2 = _int_args("lcm", x1, x2)
    d = gcd(x1, x2)
    zero = _zero(d)
    safe = _where(lax.eq(d, zero), np.array(1, _dt(d))[()], d)
    x1, x2, safe = _shapes(*promote_dtypes(x1, x2, safe))
    out = lax.abs(lax.mul(x1, lax.div(x2, safe)))
    return _where(lax.eq(d, zero), zero, out)


# --- bitwise and logical -----------------------------------------------------------------------


def _check_int_or_bool(name, *xs):
    for x in xs:
        if not _is_intlike(_dt(x)):
            raise TypeError(f"{name} is only defined for integer and boolean dtypes, got "
                            f"{_dt(x)}.")


@_uf(2, identity=-1, reducer="_bitwise_and_reduce", at_method=None)
def bitwise_and(x1, x2, /):
    """Elementwise bitwise (logical for booleans) and."""
    x1, x2 = _binary("bitwise_and", x1, x2)
    _check_int_or_bool("bitwise_and", x1)
    return lax.bitwise_and(x1, x2)


@_uf(2, identity=0, reducer="_bitwise_or_reduce")
def bitwise_or(x1, x2, /):
    """Elementwise bitwise (logical for booleans) or."""
    x1, x2 = _binary("bitwise_or", x1, x2)
    _check_int_or_bool("bitwise_or", x1)
    return lax.bitwise_or(x1, x2)


@_uf(2, identity=0, reducer="_bitwise_xor_reduce")
def bitwise_xor(x1, x2, /):
    """Elementwise bitwise (logical for booleans) exclusive or."""
    x1, x2 = _binary("bitwise_xor", x1, x2)
    _check_int_or_bool("bitwise_xor", x1)
    return lax.bitwise_xor(x1, x2)


@_uf(1)
def invert(x, /):
    """Elementwise bitwise not (logical not for booleans)."""
    x = ensure_arraylike("invert", x)
    _check_int_or_bool("invert", x)
    return lax.bitwise_not(x)


bitwise_not = invert
bitwise_invert = invert


@_uf(2)
def left_shift(x1, x2, /):
    """Elementwise ``x1 << x2``."""
    x1, x2 = _binary("left_shift", x1, x2)
    _check_int_or_bool("left_shift", x1)
    if _dt(x1) == dtypes.bool_:
        x1, x2 = (lax.convert_element_type(v, dtypes.int8) for v in (x1, x2))
    return lax.shift_left(x1, x2)


@_uf(2)
def right_shift(x1, x2, /):
    """Elementwise ``x1 >> x2`` (arithmetic for signed integers)."""
    x1, x2 = _binary("right_shift", x1, x2)
    _check_int_or_bool("right_shift", x1)
    if _dt(x1) == dtypes.bool_:
        x1, x2 = (lax.convert_element_type(v, dtypes.int8) for v in (x1, x2))
    if dtypes.is_unsigned_int(_dt(x1)):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


@_uf(1)
def bitwise_count(x, /):
    """The number of 1 bits in |x| (as uint8)."""
    x = ensure_arraylike("bitwise_count", x)
    _check_int_or_bool("bitwise_count", x)
    if _dt(x) == dtypes.bool_:
        return lax.convert_element_type(x, dtypes.uint8)
    if dtypes.is_signed_int(_dt(x)):
        x = lax.abs(x)
    return lax.convert_element_type(lax.population_count(x), dtypes.uint8)


def _as_bool(x):
    return _creation.astype(x, dtypes.bool_)


@_uf(2, identity=True, reducer="all")
@_keeps_weak(scalars_only=True)
def logical_and(x1, x2, /):
    """Elementwise truth-value and."""
    x1, x2 = ensure_arraylike("logical_and", x1, x2)
    return lax.bitwise_and(*_shapes(_as_bool(x1), _as_bool(x2), fun_name="logical_and"))


@_uf(2, identity=False, reducer="any")
@_keeps_weak(scalars_only=True)
def logical_or(x1, x2, /):
    """Elementwise truth-value or."""
    x1, x2 = ensure_arraylike("logical_or", x1, x2)
    return lax.bitwise_or(*_shapes(_as_bool(x1), _as_bool(x2), fun_name="logical_or"))


@_uf(2, identity=False)
@_keeps_weak(scalars_only=True)
def logical_xor(x1, x2, /):
    """Elementwise truth-value exclusive or."""
    x1, x2 = ensure_arraylike("logical_xor", x1, x2)
    return lax.bitwise_xor(*_shapes(_as_bool(x1), _as_bool(x2), fun_name="logical_xor"))


@_uf(1)
@_keeps_weak(scalars_only=True)
def logical_not(x, /):
    """Elementwise truth-value not."""
    x = ensure_arraylike("logical_not", x)
    return lax.bitwise_not(_as_bool(x))


# --- comparisons -------------------------------------------------------------------------------


def _complex_cmp(lax_fn, x1, x2):
    rx, ry = lax.real(x1), lax.real(x2)
    return lax.select(lax.eq(rx, ry), lax_fn(lax.imag(x1), lax.imag(x2)), lax_fn(rx, ry))


def _comparison(lax_fn, name, doc, ordered):
    def f(x1, x2, /):
        x1, x2 = _binary(name, x1, x2)
        if ordered and dtypes.is_complex(_dt(x1)):
            return _complex_cmp(lax_fn, x1, x2)
        return lax_fn(x1, x2)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return ufunc(f, 2, 1)


equal = _comparison(lax.eq, "equal", "Elementwise ``x1 == x2``.", False)
not_equal = _comparison(lax.ne, "not_equal", "Elementwise ``x1 != x2``.", False)
less = _comparison(lax.lt, "less", "Elementwise ``x1 < x2``.", True)
less_equal = _comparison(lax.le, "less_equal", "Elementwise ``x1 <= x2``.", True)
greater = _comparison(lax.gt, "greater", "Elementwise ``x1 > x2``.", True)
greater_equal = _comparison(lax.ge, "greater_equal", "Elementwise ``x1 >= x2``.", True)


@_keeps_weak(scalars_only=True)
def iscomplex(x):
    """Elementwise: a nonzero imaginary part."""
    x = ensure_arraylike("iscomplex", x)
    i = imag(x)
    return lax.ne(i, _zero(i))


@_keeps_weak(scalars_only=True)
def isreal(x):
    """Elementwise: a zero imaginary part."""
    x = ensure_arraylike("isreal", x)
    i = imag(x)
    return lax.eq(i, _zero(i))


def _builtin_any(xs):
    return builtins.any(xs)
