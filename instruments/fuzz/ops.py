"""The operations the fuzzer composes programs from: how each is written (a source
template, so a program is Python text that runs as is and prints as its own reproducer)
and what NumPy says it computes (its reference).

An op's result dtype and weak type are not derived here: they come from the rules recorded
from reference JAX (`jax_rules.json`, keyed by op name, parameter key and argument types).
The reference receives its arguments already converted as the op's `compute` rule says:

- ``"result"``: every argument converted to the result dtype (JAX converts inputs to the
  result type before computing: ``sin(int8)`` computes in float32);
- ``"promote"``: every argument converted to the arguments' promoted dtype (the result of
  ``add`` on them), for comparisons and arithmetic whose result type differs;
- ``"none"``: arguments as they are.

Floating-point arguments then reach the reference as float64 (so one rounding happens, at
the end, to the result dtype), unless the op is `native` (its result depends on rounding in
the narrow dtype, e.g. ``nextafter``, ``floor_divide``): then the NumPy ufunc runs on the
narrow dtype itself (NumPy / ml_dtypes compute in float32 and round, as XLA's CPU code does).

Imports NumPy and ml_dtypes only: the recorder runs this module under reference JAX.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import value_types as vt


class Unspecified:
    """A reference result some of whose elements are implementation-defined (not compared):
    e.g. a float -> int conversion of NaN or of a value out of the target's range."""

    def __init__(self, value: np.ndarray, mask: np.ndarray):
        self.value = value
        self.mask = mask  # True where the element is not compared


@dataclass
class Ctx:
    """What a reference function may need besides its arguments."""

    keys: tuple[str, ...]  # the arguments' type keys
    compute: str  # dtype the arguments were converted to (before float64 widening)
    result: str  # result dtype


def _any(keys) -> bool:
    return True


def _no_py_pair(keys) -> bool:
    return not all(vt.is_py(k) for k in keys)


def _ints(keys) -> bool:
    return all(vt.kind(k) in "iu" for k in keys)


def _ints_or_bools(keys) -> bool:
    return all(vt.kind(k) in "iub" for k in keys)


def _not_bool(keys) -> bool:
    return all(vt.kind(k) != "b" for k in keys)


def _floats(keys) -> bool:
    return all(vt.kind(k) == "f" for k in keys)


def _arrays(keys) -> bool:
    return not any(vt.is_py(k) for k in keys)


@dataclass(frozen=True)
class Op:
    name: str
    family: str  # unary | binary | ternary | reduction | shape | index | linalg | control
    fn: str  # what the template calls, e.g. "jnp.add"; "{0} + {1}" style for operators
    ref: Callable | None
    compute: str = "result"
    exact: bool = True  # correctly rounded (or exact): compared to within one rounding
    native: bool = False
    accepts: Callable = _any
    smooth: bool = False  # differentiable everywhere it is used by the grad programs
    literals: dict = field(default_factory=dict)  # arg position -> allowed Python literals

    def render(self, args: list[str], params: dict[str, str]) -> str:
        """Source of one application: `fn` called on args with keyword params (params
        whose source is None are left out), or an operator template filled in."""
        if "{0}" in self.fn:
            return self.fn.format(*args, **params)
        kw = "".join(f", {k}={v}" for k, v in params.items() if v is not None)
        return f"{self.fn}({', '.join(args)}{kw})"


OPS: dict[str, Op] = {}


def _add(op: Op) -> None:
    assert op.name not in OPS, op.name
    OPS[op.name] = op


# ------------------------------------------------------------------ unary elementwise


def _u(name, ref, fn=None, **kw):
    _add(Op(name, "unary", fn or f"jnp.{name}", lambda a, p, c, ref=ref: ref(a[0]), **kw))


for _name in ("sin", "cos", "tanh", "arctan", "arcsinh", "exp", "expm1", "log1p", "exp2"):
    _u(_name, getattr(np, _name), exact=False, smooth=True)
for _name in ("tan", "arcsin", "arccos", "sinh", "cosh", "arccosh", "arctanh", "log",
              "log2", "log10", "sqrt", "cbrt"):
    _u(_name, getattr(np, _name), exact=False, smooth=_name in ("sinh", "cosh"))
_u("negative", np.negative, smooth=True)
_u("positive", np.positive, smooth=True)
_u("square", np.square, smooth=True)
_u("abs", np.abs)
_u("sign", np.sign)
_u("floor", np.floor)
_u("ceil", np.ceil)
_u("trunc", np.trunc)
_u("round", np.rint)  # half to even, as NumPy's round(decimals=0)
_u("rint", np.rint)
_u("reciprocal", np.reciprocal, accepts=_floats, exact=False)
_u("isnan", np.isnan, compute="none")
_u("isinf", np.isinf, compute="none")
_u("isfinite", np.isfinite, compute="none")
_u("signbit", np.signbit, compute="none", accepts=_not_bool)
_u("logical_not", np.logical_not, compute="none")
_u("invert", np.invert, accepts=_ints_or_bools)
_u("neg_op", np.negative, fn="-{0}", accepts=_arrays, smooth=True)
_u("invert_op", np.invert, fn="~{0}", accepts=lambda k: _arrays(k) and _ints_or_bools(k))
_u("abs_builtin", np.abs, fn="abs({0})", accepts=_arrays)
_u("relu", lambda x: np.maximum(x, 0), fn="olympus.nn.relu", accepts=_not_bool)
_u("sigmoid", lambda x: 1 / (1 + np.exp(-x)), fn="olympus.nn.sigmoid", exact=False,
   smooth=True)


def _lax_round(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)  # away from zero, lax.round's default


def _popcount(x, ctx):
    bits = np.iinfo(vt.np_dtype(ctx.result)).bits
    flat = [bin(int(v) % (1 << bits)).count("1") for v in np.ravel(x).tolist()]
    return np.array(flat).reshape(np.shape(x))


def _clz(x, ctx):
    bits = np.iinfo(vt.np_dtype(ctx.result)).bits
    flat = [bits - (int(v) % (1 << bits)).bit_length() for v in np.ravel(x).tolist()]
    return np.array(flat).reshape(np.shape(x))


for _name, _ref, _kw in (
    ("neg", np.negative, {"smooth": True}),
    ("abs", np.abs, {}),
    ("sign", np.sign, {}),
    ("floor", np.floor, {}),
    ("ceil", np.ceil, {}),
    ("round", _lax_round, {}),
    ("exp", np.exp, {"exact": False, "smooth": True}),
    ("log", np.log, {"exact": False}),
    ("sin", np.sin, {"exact": False, "smooth": True}),
    ("tanh", np.tanh, {"exact": False, "smooth": True}),
    ("logistic", lambda x: 1 / (1 + np.exp(-x)), {"exact": False, "smooth": True}),
    ("sqrt", np.sqrt, {"exact": False}),
    ("rsqrt", lambda x: 1 / np.sqrt(x), {"exact": False}),
    ("is_finite", np.isfinite, {"compute": "none"}),
    ("not_", np.invert, {"accepts": _ints_or_bools}),
):
    _u(f"lax.{_name}", _ref, fn=f"lax.{_name}", **_kw)
_add(Op("lax.population_count", "unary", "lax.population_count",
        lambda a, p, c: _popcount(a[0], c), accepts=_ints))
_add(Op("lax.clz", "unary", "lax.clz", lambda a, p, c: _clz(a[0], c), accepts=_ints))

# ------------------------------------------------------------------ binary elementwise


def _b(name, ref, fn=None, **kw):
    _add(Op(name, "binary", fn or f"jnp.{name}", lambda a, p, c, ref=ref: ref(a[0], a[1], c),
            **kw))


def _int_or(int_rule, float_ref):
    """A reference that follows XLA's integer rule for integer dtypes."""

    def ref(x, y, c):
        if c.compute in vt.INTS:
            return int_rule(x, y, c.compute)
        return float_ref(x, y)

    return ref


def _plain(f):
    return lambda x, y, c: f(x, y)


def _xla_multiply(x, y, c):
    """NumPy's product, except where a bool operand meets a float16/32/64 one: XLA's
    simplifier turns ``convert(bool) * x`` into ``select(bool, x, 0)``, so False times
    inf or nan is 0, not nan. Reference JAX 0.10.2 returns exactly that (recorded:
    ``[True, False] * [inf, inf]`` is ``[inf, 0.]``); bfloat16, computed in float32
    after a conversion the simplifier does not see through, keeps IEEE's nan."""
    out = np.multiply(x, y)
    if vt.kind(c.compute) != "f" or c.compute == "bfloat16":
        return out
    for arg, key in ((x, c.keys[0]), (y, c.keys[1])):
        if vt.kind(key) == "b":
            out = np.where(np.asarray(arg) != 0, out, np.zeros((), out.dtype))
    return out


_b("add", _plain(np.add), compute="promote", smooth=True)
_b("subtract", _plain(np.subtract), compute="promote", smooth=True,
   accepts=lambda k: not all(vt.kind(x) == "b" for x in k))
_b("multiply", _xla_multiply, compute="promote", smooth=True)
_b("true_divide", _plain(np.true_divide))
_b("floor_divide", _int_or(vt.int_floor_divide, np.floor_divide), compute="promote",
   native=True, accepts=_not_bool)
_b("remainder", _int_or(vt.int_remainder, np.remainder), compute="promote", native=True,
   accepts=_not_bool)
_b("fmod", _int_or(vt.int_fmod, np.fmod), compute="promote", native=True, accepts=_not_bool)
_b("power", _int_or(vt.int_power, np.power), compute="promote", exact=False,
   accepts=_not_bool, literals={1: (0, 1, 2, 3, 0.5, 2.0, -1.0)})
_b("maximum", _plain(np.maximum), compute="promote")
_b("minimum", _plain(np.minimum), compute="promote")
_b("fmax", _plain(np.fmax), compute="promote")
_b("fmin", _plain(np.fmin), compute="promote")
_b("arctan2", _plain(np.arctan2), exact=False)
_b("hypot", _plain(np.hypot), exact=False)
_b("copysign", _plain(np.copysign))
_b("logaddexp", _plain(np.logaddexp), exact=False, smooth=True)
_b("nextafter", _plain(np.nextafter), native=True, accepts=_floats)
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    _b(_name, _plain(getattr(np, _name)), compute="promote")
for _name in ("logical_and", "logical_or", "logical_xor"):
    _b(_name, _plain(getattr(np, _name)), compute="none")
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _b(_name, _plain(getattr(np, _name)), compute="promote", accepts=_ints_or_bools)
_b("left_shift", _int_or(vt.int_shift_left, None), compute="promote", accepts=_ints)
_b("right_shift", _int_or(vt.int_shift_right, None), compute="promote", accepts=_ints)
# Operators on arrays (the Array methods' own promotion path).
for _name, _tmpl, _ref, _kw in (
    ("add_op", "{0} + {1}", _plain(np.add), {"compute": "promote", "smooth": True}),
    ("sub_op", "{0} - {1}", _plain(np.subtract),
     {"compute": "promote", "smooth": True,
      "accepts": lambda k: _no_py_pair(k) and not all(vt.kind(x) == "b" for x in k)}),
    ("mul_op", "{0} * {1}", _xla_multiply, {"compute": "promote", "smooth": True}),
    ("div_op", "{0} / {1}", _plain(np.true_divide), {}),
    ("floordiv_op", "{0} // {1}", _int_or(vt.int_floor_divide, np.floor_divide),
     {"compute": "promote", "native": True, "accepts": lambda k: _no_py_pair(k) and _not_bool(k)}),
    ("mod_op", "{0} % {1}", _int_or(vt.int_remainder, np.remainder),
     {"compute": "promote", "native": True, "accepts": lambda k: _no_py_pair(k) and _not_bool(k)}),
    ("pow_op", "{0} ** {1}", _int_or(vt.int_power, np.power),
     {"compute": "promote", "exact": False, "literals": {1: (0, 1, 2, 3, 0.5, 2.0)},
      "accepts": lambda k: _no_py_pair(k) and _not_bool(k)}),
    ("lt_op", "{0} < {1}", _plain(np.less), {"compute": "promote"}),
    ("eq_op", "{0} == {1}", _plain(np.equal), {"compute": "promote"}),
    ("and_op", "{0} & {1}", _plain(np.bitwise_and),
     {"compute": "promote", "accepts": lambda k: _no_py_pair(k) and _ints_or_bools(k)}),
    ("xor_op", "{0} ^ {1}", _plain(np.bitwise_xor),
     {"compute": "promote", "accepts": lambda k: _no_py_pair(k) and _ints_or_bools(k)}),
    ("rshift_op", "{0} >> {1}", _int_or(vt.int_shift_right, None),
     {"compute": "promote", "accepts": lambda k: _no_py_pair(k) and _ints(k)}),
):
    _kw.setdefault("accepts", _no_py_pair)
    _b(_name, _ref, fn=_tmpl, **_kw)


def _shift_right_arithmetic(x, y, dtype):
    """Arithmetic shift: an unsigned value's top bit is its sign bit here."""
    if dtype in vt.UNSIGNED:
        signed = "int" + dtype[4:]
        sx = np.asarray(x).astype(vt.np_dtype(signed))
        out = vt.int_shift_right(sx, np.asarray(y), signed)
        return out.astype(vt.np_dtype(dtype))
    return vt.int_shift_right(x, y, dtype)


def _shift_right_logical(x, y, dtype):
    bits = np.iinfo(vt.np_dtype(dtype)).bits
    return vt._elementwise(
        lambda a, b: 0 if b < 0 or b >= bits else (a % (1 << bits)) >> b, x, y, dtype)


# lax's binary ops take operands of one dtype (no promotion); the rules say which.
for _name, _ref, _kw in (
    ("add", _plain(np.add), {"smooth": True}),
    ("sub", _plain(np.subtract), {"smooth": True}),
    ("mul", _plain(np.multiply), {"smooth": True}),
    ("div", _int_or(vt.int_trunc_divide, np.true_divide), {}),
    ("rem", _int_or(vt.int_trunc_remainder, np.fmod), {}),
    ("max", _plain(np.maximum), {}),
    ("min", _plain(np.minimum), {}),
    ("pow", _plain(np.power), {"exact": False, "accepts": _floats}),
    ("atan2", _plain(np.arctan2), {"exact": False}),
    ("nextafter", _plain(np.nextafter), {"native": True}),
    ("shift_left", _int_or(vt.int_shift_left, None), {"accepts": _ints}),
    ("shift_right_arithmetic", _int_or(_shift_right_arithmetic, None), {"accepts": _ints}),
    ("shift_right_logical", _int_or(_shift_right_logical, None), {"accepts": _ints}),
    ("bitwise_and", _plain(np.bitwise_and), {"accepts": _ints_or_bools}),
    ("bitwise_or", _plain(np.bitwise_or), {"accepts": _ints_or_bools}),
    ("eq", _plain(np.equal), {}),
    ("lt", _plain(np.less), {}),
):
    _kw.setdefault("accepts", _any)
    _accepts = _kw.pop("accepts")
    fn = {"bitwise_and": "lax.bitwise_and", "bitwise_or": "lax.bitwise_or"}.get(
        _name, f"lax.{_name}")
    _b(f"lax.{_name}", _ref, fn=fn, compute="none" if _name in ("eq", "lt") else "result",
       accepts=lambda k, a=_accepts: _arrays(k) and a(k), **_kw)

# ------------------------------------------------------------------ ternary


def _where(a, p, c):
    return np.where(np.asarray(a[0]).astype(bool), a[1], a[2])


def _clip(a, p, c):
    return np.minimum(np.maximum(a[0], a[1]), a[2])


# where: the condition is made a bool by its truth value; x and y convert to the result.
_add(Op("where", "ternary", "jnp.where", _where, compute="result_tail"))
_add(Op("clip", "ternary", "jnp.clip", _clip, compute="result"))
_add(Op("lax.select", "ternary", "lax.select", _where, compute="none",
        accepts=lambda k: _arrays(k) and vt.dtype_of(k[0]) == "bool"))

# ------------------------------------------------------------------ reductions

#: Reductions taking a dtype= argument, and the dtypes the rules are recorded for.
DTYPE_REDUCTIONS = ("sum", "prod", "mean", "cumsum", "cumprod")
REDUCTION_DTYPES = (None, "bool", "int8", "int32", "uint32", "float16", "bfloat16", "float32")
AXIS_TUPLE_REDUCTIONS = ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all")
WHERE_REDUCTIONS = ("sum", "prod", "mean", "var", "std", "any", "all", "max", "min")


def _reduce(np_fn):
    def ref(a, p, c):
        x = a[0]
        kw = {"axis": p.get("axis"), "keepdims": p.get("keepdims", False)}
        if p.get("where") is not None:
            kw["where"] = p["where"]
        if p.get("initial") is not None:
            kw["initial"] = p["initial"]
        if np_fn in (np.var, np.std):
            ddof = p.get("ddof", 0)
            n = _reduced_count(np.shape(x), kw["axis"], p.get("where"), kw["keepdims"])
            out = np_fn(x.astype(np.float64), ddof=0, **kw)
            # JAX divides by n - ddof and gives NaN when that is <= 0 (recorded).
            n_arr = np.asarray(n, dtype=np.float64)
            var = (out if np_fn is np.var else out**2) * n_arr / np.where(
                n_arr - ddof > 0, n_arr - ddof, np.nan)
            res = var if np_fn is np.var else np.sqrt(var)
            if c.result in ("float16", "bfloat16"):
                # JAX sums the squared deviations in the narrow dtype: where that sum
                # passes the dtype's range the result is inf, not the true value.
                edge = vt.max_finite(c.result) / 4
                return Unspecified(res, np.asarray(var * n_arr) >= edge)
            return res
        if c.compute in vt.INTS and np_fn in (np.sum, np.prod):
            return _int_reduce(np_fn, x, kw, c.compute)
        if c.compute in vt.INTS and np_fn is np.mean:
            # An integer mean is the wrapped integer sum divided by the count, rounding
            # toward zero (lax.div), as JAX computes it.
            total = _int_reduce(np.sum, x, {k: v for k, v in kw.items() if k != "initial"},
                                c.compute)
            n = _reduced_count(np.shape(x), kw["axis"], p.get("where"), kw["keepdims"])
            n = np.vectorize(lambda v: vt.wrap(int(v), c.compute))(np.asarray(n))
            return vt.int_trunc_divide(total, n, c.compute)
        return np_fn(x, **kw)

    return ref


def _reduced_count(shape, axis, where, keepdims):
    """How many elements each output of a reduction reduces over (an array if `where`)."""
    ones = np.ones(shape)
    if where is not None:
        ones = ones * np.broadcast_to(where, shape)
    return np.sum(ones, axis=axis, keepdims=keepdims)


def _int_reduce(np_fn, x, kw, dtype):
    if "where" in kw and "initial" not in kw:
        kw = {**kw, "initial": 0 if np_fn is np.sum else 1}
    out = np_fn(x.astype(object), **kw)  # Python ints: exact, then wrapped as XLA wraps
    flat = [vt.wrap(int(v), dtype) for v in np.ravel(np.asarray(out, dtype=object)).tolist()]
    return np.array(flat, dtype=vt.np_dtype(dtype)).reshape(np.shape(out))


for _name, _np in (("sum", np.sum), ("prod", np.prod), ("max", np.max), ("min", np.min),
                   ("mean", np.mean), ("var", np.var), ("std", np.std), ("any", np.any),
                   ("all", np.all)):
    _add(Op(_name, "reduction", f"jnp.{_name}", _reduce(_np),
            compute="none" if _name in ("any", "all") else "result",
            exact=_name in ("max", "min", "any", "all"),
            smooth=_name in ("sum", "mean", "prod", "max", "min")))


def _argreduce(np_fn):
    def ref(a, p, c):
        return np_fn(a[0], axis=p.get("axis"), keepdims=p.get("keepdims", False))

    return ref


_add(Op("argmax", "reduction", "jnp.argmax", _argreduce(np.argmax), compute="none"))
_add(Op("argmin", "reduction", "jnp.argmin", _argreduce(np.argmin), compute="none"))


def _cumulative(np_fn):
    def ref(a, p, c):
        x, axis = a[0], p.get("axis")
        if c.compute in vt.INTS:
            out = np_fn(x.astype(object), axis=axis)
            flat = [vt.wrap(int(v), c.compute) for v in np.ravel(out).tolist()]
            return np.array(flat, dtype=vt.np_dtype(c.compute)).reshape(np.shape(out))
        return np_fn(x, axis=axis)

    return ref


_add(Op("cumsum", "reduction", "jnp.cumsum", _cumulative(np.cumsum), exact=False,
        smooth=True))
_add(Op("cumprod", "reduction", "jnp.cumprod", _cumulative(np.cumprod), exact=False))

# ------------------------------------------------------------------ shapes


def _shape_op(name, fn, ref, **kw):
    kw.setdefault("smooth", True)
    _add(Op(name, "shape", fn, ref, compute="none", **kw))


_shape_op("reshape", "jnp.reshape", lambda a, p, c: np.reshape(a[0], p["shape"]))
_shape_op("reshape_method", "{0}.reshape({shape})",
          lambda a, p, c: np.reshape(a[0], p["shape"]), accepts=_arrays)
_shape_op("transpose", "jnp.transpose", lambda a, p, c: np.transpose(a[0], p.get("axes")))
_shape_op("T", "{0}.T", lambda a, p, c: np.transpose(a[0]), accepts=_arrays)
_shape_op("swapaxes", "jnp.swapaxes", lambda a, p, c: np.swapaxes(a[0], p["axis1"], p["axis2"]))
_shape_op("moveaxis", "jnp.moveaxis",
          lambda a, p, c: np.moveaxis(a[0], p["source"], p["destination"]))
_shape_op("expand_dims", "jnp.expand_dims", lambda a, p, c: np.expand_dims(a[0], p["axis"]))
_shape_op("squeeze", "jnp.squeeze", lambda a, p, c: np.squeeze(a[0], p.get("axis")))
_shape_op("broadcast_to", "jnp.broadcast_to", lambda a, p, c: np.broadcast_to(a[0], p["shape"]))
_shape_op("flip", "jnp.flip", lambda a, p, c: np.flip(a[0], p.get("axis")))
_shape_op("ravel", "jnp.ravel", lambda a, p, c: np.ravel(a[0]))
_shape_op("roll", "jnp.roll", lambda a, p, c: np.roll(a[0], p["shift"], p.get("axis")))
_shape_op("tile", "jnp.tile", lambda a, p, c: np.tile(a[0], p["reps"]))
_shape_op("repeat", "jnp.repeat", lambda a, p, c: np.repeat(a[0], p["repeats"], p.get("axis")))
_shape_op("lax.reshape", "lax.reshape", lambda a, p, c: np.reshape(a[0], p["new_sizes"]),
          accepts=_arrays)
_shape_op("lax.transpose", "lax.transpose",
          lambda a, p, c: np.transpose(a[0], p["permutation"]), accepts=_arrays)
_shape_op("lax.rev", "lax.rev", lambda a, p, c: np.flip(a[0], p["dimensions"]), accepts=_arrays)
_shape_op("lax.squeeze", "lax.squeeze",
          lambda a, p, c: np.squeeze(a[0], p["dimensions"]), accepts=_arrays)
_shape_op("lax.expand_dims", "lax.expand_dims",
          lambda a, p, c: np.expand_dims(a[0], p["dimensions"]), accepts=_arrays)


def _broadcast_in_dim(a, p, c):
    x, shape, dims = a[0], p["shape"], p["broadcast_dimensions"]
    expanded = [1] * len(shape)
    for d, size in zip(dims, np.shape(x)):
        expanded[d] = size
    return np.broadcast_to(np.reshape(x, expanded), shape)


_shape_op("lax.broadcast_in_dim", "lax.broadcast_in_dim", _broadcast_in_dim, accepts=_arrays)


def _lax_slice(a, p, c):
    strides = p.get("strides") or (1,) * len(p["start_indices"])
    idx = tuple(slice(s, e, st) for s, e, st in zip(p["start_indices"], p["limit_indices"],
                                                      strides))
    return np.asarray(a[0])[idx]


_shape_op("lax.slice", "lax.slice", _lax_slice, accepts=_arrays)


def _lax_pad(a, p, c):
    x, value, config = np.asarray(a[0]), a[1], p["padding_config"]
    out = x
    for axis, (lo, hi, interior) in enumerate(config):
        n = out.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(out.shape)
        shape[axis] = size
        spread = np.full(shape, value, dtype=out.dtype)
        idx = [slice(None)] * out.ndim
        idx[axis] = slice(0, size, interior + 1)
        spread[tuple(idx)] = out
        # low / high: positive pads, negative crops.
        pads = [(0, 0)] * out.ndim
        pads[axis] = (max(lo, 0), max(hi, 0))
        spread = np.pad(spread, pads, constant_values=value)
        idx = [slice(None)] * out.ndim
        idx[axis] = slice(-min(lo, 0), spread.shape[axis] + min(hi, 0))
        out = spread[tuple(idx)]
    return out


_add(Op("lax.pad", "shape", "lax.pad", _lax_pad, compute="result",
        accepts=lambda k: _arrays(k[:1]), smooth=True))


def _concat(a, p, c):
    return np.concatenate(a, axis=p.get("axis", 0))


def _stack(a, p, c):
    return np.stack(a, axis=p.get("axis", 0))


_add(Op("concatenate", "shape", "jnp.concatenate([{0}, {1}], axis={axis})", _concat,
        accepts=_arrays, smooth=True))
_add(Op("stack", "shape", "jnp.stack([{0}, {1}], axis={axis})", _stack, smooth=True,
        accepts=_arrays))
_add(Op("lax.concatenate", "shape", "lax.concatenate([{0}, {1}], {axis})", _concat,
        compute="none", accepts=_arrays, smooth=True))


def _astype(a, p, c):
    x = np.asarray(a[0])
    target = c.result
    if np.dtype(x.dtype).kind == "f" or x.dtype == vt.np_dtype("bfloat16"):
        wide = x.astype(np.float64)
        if target in vt.INTS:
            # Float -> int of NaN, inf or a value out of range is implementation-defined.
            info = np.iinfo(vt.np_dtype(target))
            bad = ~np.isfinite(wide) | (np.trunc(wide) < info.min) | (np.trunc(wide) > info.max)
            safe = np.where(bad, 0, np.trunc(wide))
            return Unspecified(safe.astype(vt.np_dtype(target)), bad)
        if target == "bool":
            return wide != 0
    return x.astype(vt.np_dtype(target))


_add(Op("astype", "shape", "{0}.astype({dtype})", _astype, compute="none", accepts=_arrays))
_add(Op("jnp.astype", "shape", "jnp.astype", _astype, compute="none"))
_add(Op("lax.convert_element_type", "shape", "lax.convert_element_type", _astype,
        compute="none"))

# ------------------------------------------------------------------ indexing


def _getitem(a, p, c):
    """JAX reads clamp every integer index (static or traced) into range after counting
    negative ones from the end; everything else is NumPy's indexing."""
    x = np.asarray(a[0])
    index = p["index"](a[1:])
    return x[_normalize_read(index, x.shape)]


def _is_mask(e) -> bool:
    """A boolean-array index component."""
    return isinstance(e, np.ndarray) and e.dtype == np.bool_


def _index_dims(index, ndim):
    """For each component of a tuple index, the dimension of x it applies to (None for
    components that consume none: None/newaxis)."""
    consumed = [0 if e is None else (np.ndim(e) if _is_mask(e) else
                                     (0 if e is Ellipsis else 1)) for e in index]
    n_ellipsis = ndim - sum(consumed)
    dims, d = [], 0
    for e, k in zip(index, consumed):
        if e is Ellipsis:
            dims.append(None)
            d += n_ellipsis
        elif e is None:
            dims.append(None)
        else:
            dims.append(d)
            d += k
    return dims


def _normalize_read(index, shape):
    out = []
    for e, d in zip(index, _index_dims(index, len(shape))):
        if d is not None and not isinstance(e, slice) and not _is_mask(e):
            n = shape[d]
            arr = np.asarray(e)
            arr = np.vectorize(lambda i, n=n: vt.normalize_index(int(i), n), otypes=[np.intp])(
                arr) if arr.size else arr.astype(np.intp)
            out.append(arr if arr.ndim else int(arr))
        else:
            out.append(e)
    return tuple(out)


def _at_update(mode):
    """JAX updates drop out-of-range integer indices (after counting negative ones from the
    end). The reference gives every integer-indexed dimension one extra "trash" slot, sends
    out-of-range indices there, updates with NumPy, and crops the slot off again."""

    def ref(a, p, c):
        x = np.asarray(a[0])
        index = p["index"](a[2:])
        pad = [0] * x.ndim
        resolved = []
        for e, d in zip(index, _index_dims(index, x.ndim)):
            if d is None or _is_mask(e):
                resolved.append(e)
            elif isinstance(e, slice):
                # Explicit bounds (the padded array is longer): an empty range stays empty.
                r = range(*e.indices(x.shape[d]))
                resolved.append(slice(0, 0) if not r else
                                slice(r.start, r.stop if r.stop >= 0 else None, r.step))
            else:
                n = x.shape[d]
                arr = np.asarray(e).astype(np.int64)
                arr = np.where(arr < 0, arr + n, arr)
                arr = np.where((arr >= 0) & (arr < n), arr, n)
                pad[d] = 1
                resolved.append(arr if arr.ndim else int(arr))
        index = tuple(resolved)
        value = np.asarray(a[1]).astype(x.dtype)
        if mode == "set":
            out = np.pad(x, [(0, k) for k in pad])
            out[index] = value
        elif x.dtype.kind in "iu":
            out = np.pad(x.astype(object), [(0, k) for k in pad])
            np.add.at(out, index, value.astype(object))
            flat = [vt.wrap(int(v), x.dtype.name) for v in out.ravel().tolist()]
            out = np.array(flat, dtype=x.dtype).reshape(out.shape)
        elif x.dtype == bool:
            out = np.pad(x, [(0, k) for k in pad])
            np.logical_or.at(out, index, value)
        else:
            out = np.pad(x.astype(np.float64), [(0, k) for k in pad])
            np.add.at(out, index, value.astype(np.float64))
            out = out.astype(x.dtype)
        return out[tuple(slice(0, n) for n in x.shape)]

    return ref


_add(Op("getitem", "index", "{0}[{index}]", _getitem, compute="none", smooth=True,
        accepts=_arrays))
_add(Op("at_set", "index", "{0}.at[{index}].set({1})", _at_update("set"), compute="none",
        smooth=True, accepts=lambda k: _arrays(k[:1])))
_add(Op("at_add", "index", "{0}.at[{index}].add({1})", _at_update("add"), compute="none",
        smooth=True, exact=False, accepts=lambda k: _arrays(k[:1])))


def _dynamic_slice(a, p, c):
    x = np.asarray(a[0])
    starts = p["starts"](a[1:])
    sizes = p["slice_sizes"]
    idx = tuple(slice(s, s + n) for s, n in (
        (vt.dynamic_start(int(s), dim, n), n) for s, dim, n in zip(starts, x.shape, sizes)))
    return x[idx]


def _dynamic_update_slice(a, p, c):
    x = np.array(a[0], copy=True)
    update = np.asarray(a[1])
    starts = p["starts"](a[2:])
    idx = tuple(slice(s, s + n) for s, n in (
        (vt.dynamic_start(int(s), dim, n), n)
        for s, dim, n in zip(starts, x.shape, update.shape)))
    x[idx] = update
    return x


_add(Op("lax.dynamic_slice", "index", "lax.dynamic_slice({0}, {starts}, {slice_sizes})",
        _dynamic_slice, compute="none", smooth=True, accepts=_arrays))
_add(Op("lax.dynamic_update_slice", "index", "lax.dynamic_update_slice({0}, {1}, {starts})",
        _dynamic_update_slice, compute="none", smooth=True, accepts=_arrays))

# ------------------------------------------------------------------ contractions


def _contract(fn):
    def ref(a, p, c):
        x, y = a
        if c.compute in vt.INTS or c.compute == "bool":
            out = fn(x.astype(object), y.astype(object), p)
            if c.compute == "bool":
                return np.asarray(out != 0)
            flat = [vt.wrap(int(v), c.compute) for v in np.ravel(out).tolist()]
            return np.array(flat, dtype=vt.np_dtype(c.compute)).reshape(np.shape(out))
        return fn(x, y, p)

    return ref


def _einsum(x, y, p):
    if x.dtype == object:  # np.einsum has no object loops: contract by broadcasting
        spec = p["subscripts"]
        ins, out = spec.split("->")
        a_idx, b_idx = ins.split(",")
        letters = sorted(set(a_idx + b_idx))
        xa = _expand_to(x, a_idx, letters)
        yb = _expand_to(y, b_idx, letters)
        prod = xa * yb
        summed = tuple(i for i, ch in enumerate(letters) if ch not in out)
        res = prod.sum(axis=summed) if summed else prod
        kept = [ch for ch in letters if ch in out]
        return np.transpose(res, [kept.index(ch) for ch in out])
    return np.einsum(p["subscripts"], x, y)


def _expand_to(x, idx, letters):
    perm = sorted(range(len(idx)), key=lambda i: letters.index(idx[i]))
    xt = np.transpose(x, perm)
    shape = [1] * len(letters)
    for i in perm:
        shape[letters.index(idx[i])] = x.shape[i]
    return xt.reshape(shape)


_add(Op("dot", "linalg", "jnp.dot", _contract(lambda x, y, p: np.dot(x, y)), exact=False,
        smooth=True))
_add(Op("matmul", "linalg", "jnp.matmul", _contract(lambda x, y, p: np.matmul(x, y)),
        exact=False, smooth=True, accepts=_arrays))
_add(Op("matmul_op", "linalg", "{0} @ {1}", _contract(lambda x, y, p: np.matmul(x, y)),
        exact=False, smooth=True, accepts=_arrays))
_add(Op("einsum", "linalg", "jnp.einsum({subscripts}, {0}, {1})", _contract(_einsum),
        exact=False, smooth=True, accepts=_arrays))
_add(Op("lax.dot", "linalg", "lax.dot", _contract(lambda x, y, p: np.dot(x, y)), exact=False,
        smooth=True, accepts=_arrays))

#: jnp functions whose result is weakly typed when every operand is a weak *scalar*, while
#: weak operands of rank 1 or more give a strong result (JAX 0.10.2, recorded by hand:
#: ``jnp.hypot(0, jnp.asarray(1.0))`` is weak, ``jnp.hypot(0, broadcast_to(weak, (2,)))``
#: is not).
WEAK_FOR_SCALARS = frozenset({"hypot", "heaviside", "logical_and", "logical_or",
                              "logical_xor", "logical_not", "lcm", "isreal", "iscomplex"})


# ------------------------------------------------------------------ control flow

#: Binary ops a loop body applies to its carry; unary ops a cond branch applies.
LOOP_BODIES = ("add", "multiply", "maximum", "true_divide", "subtract", "add_op", "mul_op")
COND_BODIES = ("negative", "sin", "abs", "square", "floor", "sqrt")
# A control-flow op's body applies one binary op (`body`) to the carry and an operand.
# Its result type comes from the rules recorded for (loop, body op, carry type, operand
# type): JAX promotes a weakly typed initial carry to the body's result type.


def _fori(a, p, c):
    body = OPS[p["body"]]
    carry = a[0]
    for i in range(p["lower"], p["upper"]):
        other = np.asarray(i, np.int32) if p.get("operand") == "i" else a[1]
        carry = apply(body, [carry, other], [c.result, p["operand_key"]], c.result,
                      {"_promoted": c.result})
    return carry


def _while(a, p, c):
    body = OPS[p["body"]]
    carry = a[0]
    for _ in range(p["trips"]):
        carry = apply(body, [carry, a[1]], [c.result, p["operand_key"]], c.result,
                      {"_promoted": c.result})
    return carry


def _scan(a, p, c):
    body = OPS[p["body"]]
    carry, xs = a[0], a[1]
    ys = []
    for x in np.asarray(xs):
        ys.append(carry)
        carry = apply(body, [carry, x], [c.result, p["operand_key"]], c.result,
                      {"_promoted": c.result})
    if p["which"] == 0:
        return carry
    return np.stack(ys) if ys else np.zeros((0,) + np.shape(carry), carry.dtype)


def _cond(a, p, c):
    branch = p["true_body"] if bool(np.asarray(a[0])) else p["false_body"]
    return apply(OPS[branch], [a[1]], [p["operand_key"]], c.result)


_add(Op("fori_loop", "control",
        "lax.fori_loop({lower}, {upper}, lambda i, c: {body_src}, {0})", _fori,
        compute="none", exact=False, smooth=True))
_add(Op("while_loop", "control",
        "lax.while_loop(lambda c: c[0] < {trips}, lambda c: (c[0] + 1, {body_src}), (0, {0}))[1]",
        _while, compute="none", exact=False))
_add(Op("scan", "control",
        "lax.scan(lambda c, x: ({body_src}, c), {0}, {1})[{which}]", _scan, compute="none",
        exact=False, smooth=True))
_add(Op("cond", "control",
        "lax.cond({0}, lambda c: {true_src}, lambda c: {false_src}, {1})", _cond,
        compute="none", exact=False, smooth=True))


# ------------------------------------------------------------------ evaluation


def widen(x: np.ndarray) -> np.ndarray:
    """Float arguments as float64 (one rounding, at the end, to the result dtype)."""
    x = np.asarray(x)
    if x.dtype.kind == "f" or x.dtype == vt.np_dtype("bfloat16"):
        return x.astype(np.float64)
    return x


def to_dtype(value, dtype: str) -> np.ndarray:
    """A reference value converted to `dtype`: float64 results rounded once; ints wrapped."""
    arr = np.asarray(value)
    target = vt.np_dtype(dtype)
    if dtype in vt.INTS and arr.dtype.kind == "f":
        arr = np.where(np.isfinite(arr), arr, 0)
    with np.errstate(all="ignore"):
        return arr.astype(target)


def apply(op: Op, args: list, keys: list[str], result: str, params: dict | None = None):
    """The reference value of one op application whose result dtype is `result`: args are
    converted per the op's compute rule, the NumPy reference runs, the result is converted.
    Returns a NumPy array or an `Unspecified`."""
    params = params or {}
    keys = tuple(keys)
    if op.compute in ("result", "result_tail"):
        compute = result
    elif op.compute == "promote":
        compute = params.get("_promoted") or _promoted(keys)
    else:
        compute = None
    prepared = []
    unspecified = False
    for i, x in enumerate(args):
        if compute is not None and not (op.compute == "result_tail" and i == 0):
            unspecified |= _converts_out_of_range(x, compute)
            x = to_dtype(x, compute)
        x = np.asarray(x)
        if not op.native and op.family in ("unary", "binary", "ternary", "reduction",
                                           "linalg"):
            x = widen(x)
        prepared.append(x)
    ctx = Ctx(keys, compute or result, result)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's empty-slice / ddof warnings
        out = op.ref(prepared, params, ctx)
    if isinstance(out, Unspecified):
        return out
    out = to_dtype(out, result)
    if unspecified:
        return Unspecified(out, np.ones(np.shape(out), bool))
    return out


def _converts_out_of_range(x, dtype: str) -> bool:
    """Whether converting float `x` to integer `dtype` meets NaN, inf or a value out of
    range: implementation-defined in XLA, so such a step's values are not compared."""
    a = np.asarray(x)
    if dtype not in vt.INTS or not (a.dtype.kind == "f" or a.dtype == vt.np_dtype("bfloat16")):
        return False
    w = np.trunc(a.astype(np.float64))
    info = np.iinfo(vt.np_dtype(dtype))
    with np.errstate(invalid="ignore"):
        return bool(np.any(~np.isfinite(w) | (w < info.min) | (w > info.max)))


#: Set by the fuzzer: (op name, param key, argument type keys) -> result type key or
#: "!ErrorType"; `promoted` looks up the recorded `add` rule.
RULES: dict = {}


def _promoted(keys) -> str:
    if len(keys) == 1:
        return vt.dtype_of(keys[0])
    if any(vt.dtype_of(k) == "float64" for k in keys):
        return "float64"  # the grad programs: float64 values and Python scalars only
    return vt.dtype_of(RULES["add"][""][",".join(keys[:2])])
