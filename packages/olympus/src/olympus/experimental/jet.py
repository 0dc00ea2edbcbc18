"""Taylor-mode automatic differentiation (JAX's ``jax.experimental.jet``).

``jet(f, primals, series)`` pushes a truncated Taylor series through `f`: for an input
path ``x(t) = x0 + x1 t + x2 t^2/2! + ...`` (``series`` holds the derivatives x1, x2, ...
per input) it returns ``f(x0)`` and the derivatives of ``f(x(t))`` at t=0 up to the same
order, in one pass. Internally the series are Taylor coefficients (divided by k!) and each
primitive has a rule (`jet_rules`) propagating them: linear maps term by term, products
by the Cauchy product, exp/log/sin/... by their recurrences, others through a composition
of ruled primitives or their derivative. Calls (jit, closed_call, checkpoint, custom_jvp
and custom_vjp functions) are traced through; custom derivative rules are ignored, as
in JAX.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import olympus.numpy as jnp
from olympus import lax
from olympus.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)
from olympus_ir.core import primitives_by_name as _prims
from olympus_trace.core import Trace, Tracer, bind, current_trace, get_aval, set_current_trace
from olympus_trace.olympuspr_utils import eval_olympuspr

__all__ = ["jet", "jet2", "jet_rules", "JetTrace", "JetTracer", "zero_series", "zero_term",
           "defzero", "deflinear", "def_deriv", "def_comp", "fact"]


def safe_zip(*args):
    return list(zip(*args, strict=True))


def unzip2(pairs):
    a, b = [], []
    for x, y in pairs:
        a.append(x)
        b.append(y)
    return tuple(a), tuple(b)


def weakref_lru_cache(fn):
    """JAX's memoizing decorator for functions of a weakly referenced first argument
    (here: a plain cache)."""
    import functools

    return functools.lru_cache(maxsize=None)(fn)


class ZeroTerm:
    """A Taylor coefficient known to be zero."""


zero_term = ZeroTerm()
register_pytree_node(ZeroTerm, lambda z: ((), None), lambda _, xs: zero_term)


class ZeroSeries:
    """A whole series known to be zero (a value that does not depend on t)."""


zero_series = ZeroSeries()
register_pytree_node(ZeroSeries, lambda z: ((), None), lambda _, xs: zero_series)

#: call primitive -> function updating its params (kept for JAX compatibility: calls are
#: traced through here, so nothing needs updating).
call_param_updaters: dict = {}


def fact(n):
    """n! (as a float, via lgamma: also for arrays)."""
    return lax.exp(lax.lgamma(jnp.asarray(n + 1.0, jnp.float32)))


def jet(fun: Callable, primals, series, factorial_scaled: bool = True, **_):
    """``(f(primals), derivatives)``: `primals` is a tuple of arrays, `series` a tuple (one
    per primal) of lists of the input path's derivatives (all lists of the same length,
    the order); returns the primal output and its derivatives along the path (or, with
    ``factorial_scaled=False``, Taylor coefficients in and out)."""
    try:
        order, = {len(terms) for terms in series}
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments"
                         ) from None
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise ValueError("jet requires primals and series to be tuples or lists")
    if len(primals) != len(series):
        raise ValueError(f"length mismatch between primals ({len(primals)}) and series "
                         f"({len(series)})")
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not treedef_is_leaf(tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not treedef_is_leaf(tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    primals = [jnp.asarray(x) for x in primals]
    if factorial_scaled:
        series = [[jnp.asarray(t) / math.factorial(k + 1) for k, t in enumerate(terms)]
                  for terms in series]
    else:
        series = [[jnp.asarray(t) for t in terms] for terms in series]
    out, out_tree = _jet_flat(fun, order, primals, series)
    out_primals, out_terms = unzip2(out)
    out_terms = [[jnp.zeros_like(p)] * order if s is zero_series else
                 [jnp.zeros_like(p) if t is zero_term else t for t in s]
                 for p, s in zip(out_primals, out_terms)]
    if factorial_scaled:
        out_terms = [[t * math.factorial(k + 1) for k, t in enumerate(terms)]
                     for terms in out_terms]
    return tree_unflatten(out_tree, list(out_primals)), tree_unflatten(out_tree, out_terms)


jet2 = partial(jet, factorial_scaled=False)


def _jet_flat(fun, order, primals, series):
    trace = JetTrace(current_trace(), order)
    tracers = [JetTracer(trace, p, list(s)) for p, s in zip(primals, series)]
    try:
        with set_current_trace(trace):
            ans = fun(*tracers)
        flat, out_tree = tree_flatten(ans)
        pairs = [trace.to_primal_terms_pair(x) for x in flat]
    finally:
        trace.invalidate()
    return pairs, out_tree


def jet_fun(f, order, primals, series):
    """The primal outputs of flat `f` and their Taylor coefficients (lists of arrays)."""
    pairs, _ = _jet_flat(f, order, list(primals), [list(s) for s in series])
    out_primals, out_terms = unzip2(pairs)
    return list(out_primals), [[jnp.zeros_like(p)] * order if s is zero_series else list(s)
                               for p, s in zip(out_primals, out_terms)]


def jet_subtrace(f, order, primals, series):
    """(out primals, out series) of flat `f`, zero series kept symbolic."""
    pairs, _ = _jet_flat(f, order, list(primals), [list(s) for s in series])
    return unzip2(pairs)


def traceable(f, in_tree_def, *primals_and_series):
    """`f` on the flattened (primals, series) pair, returning its flattened result."""
    primals_in, series_in = tree_unflatten(in_tree_def, list(primals_and_series))
    out = f(primals_in, series_in)
    return tree_flatten(out)[0]


class JetTracer(Tracer):
    """A value carrying its Taylor coefficients (`terms`, or `zero_series`)."""

    __slots__ = ("primal", "terms")

    def __init__(self, trace: JetTrace, primal, terms):
        self._trace = trace
        self.primal = primal
        self.terms = terms

    @property
    def aval(self):
        return get_aval(self.primal)

    def to_concrete_value(self):
        return None


class JetTrace(Trace):
    """Runs each primitive's jet rule on (primal, Taylor coefficients) pairs."""

    name = "jet"

    def __init__(self, parent: Trace, order: int):
        super().__init__()
        self.parent = parent
        self.order = order

    def to_primal_terms_pair(self, val):
        if isinstance(val, JetTracer) and val._trace is self:
            return val.primal, val.terms
        return val, zero_series

    def process_primitive(self, prim, args, params):
        primals, series = unzip2(self.to_primal_terms_pair(a) for a in args)
        if all(s is zero_series for s in series):
            with set_current_trace(self.parent):
                out = bind(prim, *primals, **params)
            if prim.multiple_results:
                return [JetTracer(self, o, zero_series) for o in out]
            return JetTracer(self, out, zero_series)
        if prim in _CALLS:
            return _CALLS[prim](self, primals, series, params)
        rule = jet_rules.get(prim)
        if rule is None:
            raise NotImplementedError(f"Jet rule for '{prim.name}' not implemented")
        with set_current_trace(self.parent):
            series = [[jnp.zeros(np.shape(x), dtype=jnp.result_type(x))] * self.order
                      if s is zero_series else
                      [jnp.zeros(np.shape(x), dtype=jnp.result_type(x)) if t is zero_term
                       else t for t in s] for x, s in zip(primals, series)]
            out, terms = rule(primals, series, **params)
        if prim.multiple_results:
            return [JetTracer(self, o, t) for o, t in zip(out, terms)]
        return JetTracer(self, out, terms)


def _call_through(trace, primals, series, params, key="call_olympuspr", skip=0):
    """Trace a call's body under the jet trace (custom rules ignored, as in JAX)."""
    closed = params[key]
    args = [JetTracer(trace, p, s) for p, s in zip(primals, series)]
    with set_current_trace(trace):
        return eval_olympuspr(closed.olympuspr, closed.consts, *args[skip:])


_CALLS: dict = {}
for _name in ("closed_call", "custom_jvp_call", "custom_vjp_call", "checkpoint"):
    if _name in _prims:
        _CALLS[_prims[_name]] = _call_through
if "jit" in _prims:  # a nested jit: its body traced through (its param is `olympuspr`)
    _CALLS[_prims["jit"]] = partial(_call_through, key="olympuspr")

jet_rules: dict = {}


def _p(name: str):
    return _prims[name]


def defzero(prim):
    """`prim`'s outputs do not move along the path (comparisons, rounding ...)."""
    jet_rules[prim] = partial(zero_prop, prim)


def zero_prop(prim, primals_in, series_in, **params):
    out = bind(prim, *primals_in, **params)
    return out, ([zero_series] * len(out) if prim.multiple_results else zero_series)


def deflinear(prim, linear_args=None):
    """`prim` is linear in the operands at `linear_args` (all by default): each Taylor
    coefficient goes through it on its own (the others operands at their primal)."""
    jet_rules[prim] = partial(linear_prop, prim, linear_args)


def linear_prop(prim, linear_args, primals_in, series_in, **params):
    out = bind(prim, *primals_in, **params)
    idx = range(len(primals_in)) if linear_args is None else linear_args
    terms = []
    for k in range(len(series_in[0])):
        args = list(primals_in)
        for i in idx:
            args[i] = series_in[i][k]
        terms.append(bind(prim, *args, **params))
    if prim.multiple_results:
        return out, [list(t) for t in zip(*terms)]
    return out, terms


def _cauchy(prim, primals_in, series_in, **params):
    """A bilinear primitive: the k-th coefficient sums prim(x_i, y_{k-i})."""
    x, y = primals_in
    xs, ys = [x, *series_in[0]], [y, *series_in[1]]
    out = bind(prim, x, y, **params)
    terms = []
    for k in range(1, len(xs)):
        acc = None
        for i in range(k + 1):
            v = bind(prim, xs[i], ys[k - i], **params)
            acc = v if acc is None else acc + v
        terms.append(acc)
    return out, terms


def _from_derivative_series(xs, vs):
    """Coefficients of y with y' = v x': y_k = (1/k) sum_{j=1..k} j x_j v_{k-j}."""
    order = len(xs) - 1
    return [sum(j * xs[j] * vs[k - j] for j in range(1, k + 1)) / k
            for k in range(1, order + 1)]


def def_deriv(prim, deriv):
    """`prim`'s coefficients from its derivative function (itself pushed through jet)."""
    jet_rules[prim] = partial(deriv_prop, prim, deriv)


def deriv_prop(prim, deriv, primals_in, series_in):
    (x,), (series,) = primals_in, series_in
    out = bind(prim, x)
    xs = [x, *series]
    order = len(series)
    if order == 1:
        vs = [deriv(x)]
    else:
        v0, vts = jet2(deriv, (x,), (series[:order - 1],))
        vs = [v0, *vts]
    return out, _from_derivative_series(xs, vs)


def def_comp(prim, comp, **kwargs):
    """`prim` computed (for the coefficients) as the composition `comp` of ruled
    primitives."""
    def rule(primals_in, series_in, **params):
        return jet2(lambda *xs: comp(*xs, **params), tuple(primals_in),
                    tuple(series_in))
    jet_rules[prim] = rule


# --- rules --------------------------------------------------------------------------------

for _n in ("neg", "add", "sub", "reshape", "broadcast_in_dim", "transpose", "reduce_sum",
           "slice", "concatenate", "squeeze", "expand_dims", "copy", "real", "imag",
           "conj", "complex", "cumsum", "rev", "reduce_window_sum", "convert_element_type"):
    if _n in _prims:
        deflinear(_p(_n))
for _n, _lin in (("pad", (0,)), ("dynamic_slice", (0,)), ("dynamic_update_slice", (0, 1)),
                 ("gather", (0,)), ("scatter_add", (0, 2)), ("select_n", None)):
    if _n in _prims:
        deflinear(_p(_n), _lin)


def _select_n_rule(primals_in, series_in, **params):
    pred, *cases = primals_in
    out = bind(_p("select_n"), pred, *cases, **params)
    order = len(series_in[1])
    terms = [bind(_p("select_n"), pred, *[s[k] for s in series_in[1:]], **params)
             for k in range(order)]
    return out, terms


jet_rules[_p("select_n")] = _select_n_rule

for _n in ("sign", "floor", "ceil", "round", "is_finite", "eq", "ne", "lt", "le", "gt",
           "ge", "and", "or", "not", "xor", "iota", "argmax", "argmin", "stop_gradient",
           "nextafter", "population_count", "clz", "shift_left", "shift_right_logical",
           "shift_right_arithmetic", "rem_int_only"):
    if _n in _prims:
        defzero(_p(_n))

jet_rules[_p("mul")] = partial(_cauchy, _p("mul"))
jet_rules[_p("dot_general")] = partial(_cauchy, _p("dot_general"))
if "conv_general_dilated" in _prims:
    jet_rules[_p("conv_general_dilated")] = partial(_cauchy, _p("conv_general_dilated"))


def _exp_rule(primals_in, series_in, **_):
    (x,), (series,) = primals_in, series_in
    xs = [x, *series]
    ys = [lax.exp(x)]
    for k in range(1, len(xs)):
        ys.append(sum(j * xs[j] * ys[k - j] for j in range(1, k + 1)) / k)
    return ys[0], ys[1:]


jet_rules[_p("exp")] = _exp_rule


def _log_rule(primals_in, series_in, **_):
    (x,), (series,) = primals_in, series_in
    xs = [x, *series]
    ys = [lax.log(x)]
    for k in range(1, len(xs)):
        acc = xs[k] - sum(j * ys[j] * xs[k - j] for j in range(1, k)) / k
        ys.append(acc / x)
    return ys[0], ys[1:]


jet_rules[_p("log")] = _log_rule


def _div_rule(primals_in, series_in, **_):
    x, y = primals_in
    xs, ys = [x, *series_in[0]], [y, *series_in[1]]
    zs = [x / y]
    for k in range(1, len(xs)):
        zs.append((xs[k] - sum(ys[j] * zs[k - j] for j in range(1, k + 1))) / y)
    return zs[0], zs[1:]


jet_rules[_p("div")] = _div_rule


def _sincos(sign, fs, primals_in, series_in):
    (x,), (series,) = primals_in, series_in
    xs = [x, *series]
    s, c = [fs[0](x)], [fs[1](x)]
    for k in range(1, len(xs)):
        s.append(sum(j * xs[j] * c[k - j] for j in range(1, k + 1)) / k)
        c.append(sign * sum(j * xs[j] * s[k - j] for j in range(1, k + 1)) / k)
    return (s[0], c[0]), (s[1:], c[1:])


def _pick(rule, i):
    def r(primals_in, series_in, **_):
        outs, terms = rule(primals_in, series_in)
        return outs[i], terms[i]
    return r


jet_rules[_p("sin")] = _pick(partial(_sincos, -1, (lax.sin, lax.cos)), 0)
jet_rules[_p("cos")] = _pick(partial(_sincos, -1, (lax.sin, lax.cos)), 1)
jet_rules[_p("sinh")] = _pick(partial(_sincos, 1, (lax.sinh, lax.cosh)), 0)
jet_rules[_p("cosh")] = _pick(partial(_sincos, 1, (lax.sinh, lax.cosh)), 1)


def _sqrt_rule(primals_in, series_in, **_):
    (x,), (series,) = primals_in, series_in
    xs = [x, *series]
    ys = [lax.sqrt(x)]
    for k in range(1, len(xs)):
        ys.append((xs[k] - sum(ys[j] * ys[k - j] for j in range(1, k))) / (2 * ys[0]))
    return ys[0], ys[1:]


jet_rules[_p("sqrt")] = _sqrt_rule


def _pow_by_squaring(x, n):
    if n < 0:
        return 1 / _pow_by_squaring(x, -n)
    acc = None
    while n:
        if n & 1:
            acc = x if acc is None else acc * x
        n >>= 1
        if n:
            x = x * x
    return jnp.ones_like(x) if acc is None else acc


def _integer_pow_rule(primals_in, series_in, *, y):
    return jet2(lambda x: _pow_by_squaring(x, y), tuple(primals_in), tuple(series_in))


jet_rules[_p("integer_pow")] = _integer_pow_rule
def_comp(_p("square"), lambda x: x * x)
def_comp(_p("rsqrt"), lambda x: 1 / lax.sqrt(x))
def_comp(_p("tanh"), lambda x: 2 / (1 + lax.exp(-2 * x)) - 1)
def_comp(_p("logistic"), lambda x: 1 / (1 + lax.exp(-x)))
def_comp(_p("expm1"), lambda x: lax.exp(x) - 1)
def_comp(_p("log1p"), lambda x: lax.log(1 + x))
def_comp(_p("pow"), lambda x, y: lax.exp(y * lax.log(x)))
def_comp(_p("tan"), lambda x: lax.sin(x) / lax.cos(x))
def_comp(_p("exp2"), lambda x: lax.exp(x * np.log(2).astype(np.float32)))
def_deriv(_p("erf"), lambda x: 2 / np.sqrt(np.pi) * lax.exp(-x * x))
def_deriv(_p("erfc"), lambda x: -2 / np.sqrt(np.pi) * lax.exp(-x * x))
def_deriv(_p("atan"), lambda x: 1 / (1 + x * x))
def_deriv(_p("asin"), lambda x: 1 / lax.sqrt(1 - x * x))
def_deriv(_p("acos"), lambda x: -1 / lax.sqrt(1 - x * x))
def_deriv(_p("asinh"), lambda x: 1 / lax.sqrt(x * x + 1))
def_deriv(_p("acosh"), lambda x: 1 / lax.sqrt(x * x - 1))
def_deriv(_p("atanh"), lambda x: 1 / (1 - x * x))
def_deriv(_p("lgamma"), lambda x: lax.digamma(x))


def _abs_rule(primals_in, series_in, **_):
    (x,), (series,) = primals_in, series_in
    s = lax.sign(x)
    return lax.abs(x), [s * t for t in series]


jet_rules[_p("abs")] = _abs_rule


def _minmax_rule(prim, pick_first, primals_in, series_in, **params):
    x, y = primals_in
    out = bind(prim, x, y, **params)
    first = pick_first(x, y)
    x_b, y_b = jnp.broadcast_arrays(x, y)
    terms = [jnp.where(first, jnp.broadcast_to(tx, x_b.shape), jnp.broadcast_to(ty, y_b.shape))
             for tx, ty in zip(series_in[0], series_in[1])]
    return out, terms


jet_rules[_p("max")] = partial(_minmax_rule, _p("max"), lambda x, y: x > y)
jet_rules[_p("min")] = partial(_minmax_rule, _p("min"), lambda x, y: x < y)


def _reduce_choose_rule(prim, primals_in, series_in, *, axes, **params):
    (x,), (series,) = primals_in, series_in
    out = bind(prim, x, axes=axes, **params)
    keep = jnp.expand_dims(out, axes)
    hit = (x == keep)
    count = jnp.sum(hit, axis=axes)
    terms = [jnp.sum(jnp.where(hit, t, 0), axis=axes) / count for t in series]
    return out, terms


for _n in ("reduce_max", "reduce_min"):
    jet_rules[_p(_n)] = partial(_reduce_choose_rule, _p(_n))


def linear_jet_names() -> list[str]:
    """The primitives with a jet rule (for documentation and tests)."""
    return sorted(p.name for p in jet_rules)


del _n, _lin, _name
Any = Any
