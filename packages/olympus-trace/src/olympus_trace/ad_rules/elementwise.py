"""JVP and transpose rules for elementwise primitives, the conversions, select_n (linear
in its cases) and clamp."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_ir import primitives as P

from .. import lax_ops as lax
from ..ad import (
    Zero,
    add_tangents,
    instantiate,
    is_undefined_primal,
    jvp_rules,
    tangent_aval,
    transpose_rules,
)
from ..core import bind, get_aval
from ._util import aval_of, broadcast_to_shape, inst, scalar, unbroadcast, zero_jvp, zeros


def _out_shape(*xs):
    shapes = [get_aval(x).shape for x in xs]
    return max(shapes, key=len)


def _fit(t, shape):
    """Broadcast a tangent (of a rank-0 operand, or one with size-1 dimensions) to the
    output shape."""
    if isinstance(t, Zero):
        return t
    return broadcast_to_shape(t, shape)


def defjvp_unary(prim, deriv):
    """d prim(x) = deriv(x, prim(x)) * dx. A requested `accuracy` applies to the primal
    only (as in JAX): the derivative is computed with the default implementations."""

    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        y = bind(prim, x, **params)
        if isinstance(t, Zero):
            return y, Zero(aval_of(t))
        params.pop("accuracy", None)
        return y, lax.mul(t, deriv(x, y, **params))

    jvp_rules[prim] = rule


def defjvp_tangent(prim, tangent):
    """d prim(x) = tangent(dx, x, prim(x)): the whole tangent expression, for rules whose
    operation order matters (see below)."""

    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        y = bind(prim, x, **params)
        if isinstance(t, Zero):
            return y, Zero(aval_of(t))
        return y, tangent(t, x, y)

    jvp_rules[prim] = rule


def deflinear_unary(prim, transpose):
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        y = bind(prim, x, **params)
        return y, (t if isinstance(t, Zero) else bind(prim, t, **params))

    jvp_rules[prim] = rule
    transpose_rules[prim] = lambda ct, x, **params: [
        Zero(x.aval) if isinstance(ct, Zero) else transpose(ct, **params)]


# Piecewise-constant and boolean-valued functions have zero derivative; so has
# bitcast_convert_type (a reinterpretation of bits, not a smooth map).
for _p in (P.sign_p, P.floor_p, P.ceil_p, P.round_p, P.is_finite_p, P.eq_p, P.ne_p, P.lt_p,
           P.le_p, P.gt_p, P.ge_p, P.eq_to_p, P.le_to_p, P.lt_to_p, P.and_p, P.or_p, P.xor_p, P.not_p, P.population_count_p,
           P.clz_p, P.shift_left_p, P.shift_right_arithmetic_p, P.shift_right_logical_p,
           P.nextafter_p, P.stop_gradient_p, P.bitcast_convert_type_p, P.mulhi_p):
    jvp_rules[_p] = zero_jvp(_p)

deflinear_unary(P.neg_p, lambda ct: lax.neg(ct))
deflinear_unary(P.copy_p, lambda ct: ct)
deflinear_unary(P.stage_p, lambda ct: ct)  # JAX's: linear, the cotangent passes through
deflinear_unary(P.real_p, lambda ct: lax.complex(ct, lax._scalar_like(0, get_aval(ct).dtype,
                                                                        False)))
deflinear_unary(P.imag_p, lambda ct: lax.complex(lax._scalar_like(0, get_aval(ct).dtype, False),
                                                   lax.neg(ct)))


def _conj_transpose(ct, x):
    # conj of a real operand returns a complex value: its transpose keeps the real part.
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    from olympus_ir import dtypes

    if dtypes.is_complex(x.aval.dtype):
        return [lax.conj(ct)]
    return [lax.real(ct)]


deflinear_unary(P.conj_p, None)
transpose_rules[P.conj_p] = _conj_transpose
deflinear_unary(P.reduce_precision_p, lambda ct, **p: bind(P.reduce_precision_p, ct, **p))

# Each tangent is JAX 0.10.2's expression, operation for operation, so the values agree to
# the bit and the olympusprs of derivatives print alike: `t` is the input's tangent, `x` the
# input, `y` the primal output.
defjvp_tangent(P.exp_p, lambda t, x, y: lax.mul(t, y))
defjvp_tangent(P.exp2_p, lambda t, x, y: lax.mul(lax.log(scalar(2, x)), lax.mul(t, y)))
defjvp_tangent(P.log_p, lambda t, x, y: lax.div(t, x))
defjvp_tangent(P.log1p_p, lambda t, x, y: lax.div(t, lax.add(x, scalar(1, x))))
defjvp_tangent(P.expm1_p, lambda t, x, y: lax.mul(t, lax.add(y, scalar(1, y))))
defjvp_tangent(P.tanh_p, lambda t, x, y: lax.mul(lax.add(t, lax.mul(t, y)),
                                                 lax.sub(scalar(1, x), y)))
defjvp_tangent(P.logistic_p, lambda t, x, y: lax.mul(t, lax.mul(y, lax.sub(scalar(1, y), y))))
defjvp_tangent(P.sin_p, lambda t, x, y: lax.mul(t, lax.cos(x)))
defjvp_tangent(P.cos_p, lambda t, x, y: lax.neg(lax.mul(t, lax.sin(x))))
defjvp_tangent(P.tan_p, lambda t, x, y: lax.mul(t, lax.add(scalar(1, x), lax.square(y))))
defjvp_tangent(P.asin_p, lambda t, x, y: lax.mul(
    t, lax.rsqrt(lax.sub(scalar(1, x), lax.square(x)))))
defjvp_tangent(P.acos_p, lambda t, x, y: lax.mul(
    t, lax.neg(lax.rsqrt(lax.sub(scalar(1, x), lax.square(x))))))
defjvp_tangent(P.atan_p, lambda t, x, y: lax.div(t, lax.add(scalar(1, x), lax.square(x))))
defjvp_tangent(P.sinh_p, lambda t, x, y: lax.mul(t, lax.cosh(x)))
defjvp_tangent(P.cosh_p, lambda t, x, y: lax.mul(t, lax.sinh(x)))
defjvp_tangent(P.asinh_p, lambda t, x, y: lax.mul(
    t, lax.rsqrt(lax.add(lax.square(x), scalar(1, x)))))
defjvp_tangent(P.acosh_p, lambda t, x, y: lax.mul(
    t, lax.rsqrt(lax.sub(lax.square(x), scalar(1, x)))))
defjvp_tangent(P.atanh_p, lambda t, x, y: lax.mul(
    lax.integer_pow(lax.add(scalar(1, x), x), -1), lax.div(t, lax.sub(scalar(1, x), x))))
defjvp_tangent(P.sqrt_p, lambda t, x, y: lax.mul(t, lax.div(scalar(0.5, x), y)))
defjvp_tangent(P.rsqrt_p, lambda t, x, y: lax.mul(t, lax.mul(scalar(-0.5, x), lax.div(y, x))))
defjvp_tangent(P.cbrt_p, lambda t, x, y: lax.mul(
    t, lax.mul(scalar(1 / 3, x), lax.integer_pow(y, -2))))
defjvp_tangent(P.square_p, lambda t, x, y: lax.mul(t, lax.mul(scalar(2, x), x)))
defjvp_tangent(P.erf_p, lambda t, x, y: lax.mul(
    scalar(2 / np.sqrt(np.pi), x), lax.mul(t, lax.exp(lax.neg(lax.square(x))))))
defjvp_tangent(P.erfc_p, lambda t, x, y: lax.mul(
    scalar(-2 / np.sqrt(np.pi), x), lax.mul(t, lax.exp(lax.neg(lax.square(x))))))
defjvp_tangent(P.erf_inv_p, lambda t, x, y: lax.mul(
    scalar(np.sqrt(np.pi) / 2, x), lax.mul(t, lax.exp(lax.square(y)))))
defjvp_tangent(P.lgamma_p, lambda t, x, y: lax.mul(t, lax.digamma(x)))


def _abs_jvp(primals, tangents):
    from olympus_ir import dtypes

    (x,), (t,) = primals, tangents
    y = lax.abs(x)
    if not dtypes.is_complex(get_aval(x).dtype):
        # t where x >= 0, else -t: the derivative at 0 is taken as 1 (JAX's choice), not
        # sign(0) = 0.
        return y, lax.select(lax.ge(x, scalar(0, x)), t, lax.neg(t))
    # d|z| = Re(conj(z) dz) / |z|, taken as 0 at z == 0.
    zero = lax.broadcast_in_dim(scalar(0, y), get_aval(y).shape, ())
    one = lax.broadcast_in_dim(scalar(1, y), get_aval(y).shape, ())
    is0 = lax.eq(y, zero)
    safe = lax.select(is0, one, y)
    d = lax.real(lax.mul(lax.conj(x), t))
    return y, lax.select(is0, zero, lax.div(d, safe))


jvp_rules[P.abs_p] = _abs_jvp


def _integer_pow_jvp(primals, tangents, *, y):
    (x,), (t,) = primals, tangents
    out = lax.integer_pow(x, y)
    if isinstance(t, Zero):
        return out, t
    if y == 0:
        return out, Zero(aval_of(t))
    if y == 1:
        d = None
    elif y == 2:  # 2 * x, with no integer_pow[y=1] (JAX's derivative of a square)
        d = lax.mul(scalar(2, x), x)
    else:
        d = lax.mul(scalar(y, x), lax.integer_pow(x, y - 1))
    return out, (t if d is None else lax.mul(t, d))


jvp_rules[P.integer_pow_p] = _integer_pow_jvp


def _trigamma(x):
    """polygamma(1, x) from elementwise primitives: the recurrence
    psi1(x) = psi1(x + 6) + sum_{k<6} 1/(x+k)^2, the asymptotic series at x + 6, and the
    reflection psi1(1-x) + psi1(x) = pi^2 / sin^2(pi x) for x < 0.5."""
    import numpy as np

    shape = get_aval(x).shape
    c = lambda v: lax.broadcast_in_dim(scalar(v, x), shape, ())  # noqa: E731
    reflect = lax.lt(x, c(0.5))
    z = lax.select(reflect, lax.sub(c(1), x), x)
    acc = c(0)
    for k in range(6):
        zk = lax.add(z, c(k))
        acc = lax.add(acc, lax.div(c(1), lax.mul(zk, zk)))
    w = lax.add(z, c(6))
    iw = lax.div(c(1), w)
    iw2 = lax.mul(iw, iw)
    # 1/w + 1/(2w^2) + sum_k B_2k / w^(2k+1)
    series = c(0)
    for b in (5.0 / 66, -1.0 / 30, 1.0 / 42, -1.0 / 30, 1.0 / 6):
        series = lax.add(lax.mul(series, iw2), c(b))
    tail = lax.add(lax.add(iw, lax.mul(c(0.5), iw2)), lax.mul(lax.mul(series, iw2), iw))
    psi1 = lax.add(acc, tail)
    s = lax.sin(lax.mul(c(np.pi), x))
    refl = lax.sub(lax.div(c(np.pi ** 2), lax.mul(s, s)), psi1)
    return lax.select(reflect, refl, psi1)


defjvp_unary(P.digamma_p, lambda x, y: _trigamma(x))


# --- binary -----------------------------------------------------------------------------------


def _add_jvp(primals, tangents):
    """JAX's: one nonzero tangent is broadcast to the result; two are added by `add`,
    which broadcasts them itself."""
    x, y = primals
    tx, ty = tangents
    out = lax.add(x, y)
    if isinstance(tx, Zero) and isinstance(ty, Zero):
        return out, Zero(tangent_aval(get_aval(out)))
    shape = get_aval(out).shape
    if isinstance(tx, Zero):
        return out, _fit(ty, shape)
    if isinstance(ty, Zero):
        return out, _fit(tx, shape)
    return out, lax.add(tx, ty)


def _sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = lax.sub(x, y)
    if isinstance(tx, Zero) and isinstance(ty, Zero):
        return out, Zero(tangent_aval(get_aval(out)))
    shape = get_aval(out).shape
    if isinstance(ty, Zero):
        return out, _fit(tx, shape)
    if isinstance(tx, Zero):
        return out, _fit(lax.neg(ty), shape)
    return out, lax.sub(tx, ty)


def _mul_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = lax.mul(x, y)
    a = Zero(aval_of(tx)) if isinstance(tx, Zero) else lax.mul(tx, y)
    b = Zero(aval_of(ty)) if isinstance(ty, Zero) else lax.mul(x, ty)
    shape = get_aval(out).shape
    return out, add_tangents(_fit(a, shape), _fit(b, shape))


def _div_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = lax.div(x, y)
    shape = get_aval(out).shape
    a = Zero(aval_of(tx)) if isinstance(tx, Zero) else lax.div(tx, y)
    # JAX's formula, -t * x * y**-2, so values agree to the bit and olympusprs print alike.
    b = Zero(aval_of(ty)) if isinstance(ty, Zero) else lax.mul(
        lax.mul(lax.neg(ty), x), lax.integer_pow(y, -2))
    return out, add_tangents(_fit(a, shape), _fit(b, shape))


def _max_min_jvp(prim, pick_x):
    def rule(primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = bind(prim, x, y)
        shape = get_aval(out).shape
        tx = _fit(instantiate(tx), shape) if not isinstance(tx, Zero) else tx
        ty = _fit(instantiate(ty), shape) if not isinstance(ty, Zero) else ty
        xb = broadcast_to_shape(x, shape)
        yb = broadcast_to_shape(y, shape)
        # Ties split the gradient evenly, as JAX does.
        gt = pick_x(xb, yb)
        eq = lax.eq(xb, yb)
        half = scalar(0.5, out)
        zero = lax.broadcast_in_dim(scalar(0, out), shape, ())
        one = lax.broadcast_in_dim(scalar(1, out), shape, ())
        wx = lax.select(eq, lax.broadcast_in_dim(half, shape, ()), lax.select(gt, one, zero))
        wy = lax.sub(one, wx)
        a = Zero(aval_of(tx)) if isinstance(tx, Zero) else lax.mul(tx, wx)
        b = Zero(aval_of(ty)) if isinstance(ty, Zero) else lax.mul(ty, wy)
        return out, add_tangents(_fit(a, shape), _fit(b, shape))

    return rule


def _replace_zero(x):
    """`x` with its zeros replaced by ones (keeps log and 0**(y-1) finite where the other
    factor is zero)."""
    return lax.select(lax.eq(x, scalar(0, x)), _fit(scalar(1, x), get_aval(x).shape), x)


def _pow_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = lax.pow(x, y)
    shape = get_aval(out).shape
    rdt = get_aval(out).dtype
    int_exponent = dtypes.is_integer(get_aval(y).dtype)
    if isinstance(tx, Zero):
        a = Zero(aval_of(tx))
    else:
        # d/dx x**y = y * x**(y-1), in the result's (strong) type as JAX computes it; an
        # integer exponent gives 0 where y == 0 (also at x == 0).
        xc = lax.convert_element_type(x, rdt)
        yc = lax.convert_element_type(y, rdt)
        if int_exponent:
            xc, yc = _fit(xc, shape), _fit(yc, shape)
            jac = lax.select(lax.eq(yc, scalar(0, yc)), zeros(get_aval(yc)),
                             lax.mul(_replace_zero(yc), lax.pow(xc, lax.sub(yc, scalar(1, yc)))))
        else:
            jac = lax.mul(yc, lax.pow(xc, lax.sub(yc, scalar(1, yc))))
        a = lax.mul(tx, jac)
    if isinstance(ty, Zero) or int_exponent:
        b = Zero(aval_of(ty))
    else:
        # d/dy x**y = log(x) * x**y, with log(x) replaced by 0 where x == 0 (JAX's way).
        b = lax.mul(ty, lax.mul(lax.log(_replace_zero(x)), out))
        if get_aval(b).dtype != get_aval(y).dtype:
            b = lax.convert_element_type(b, get_aval(y).dtype)
    return out, add_tangents(_fit(a, shape), _fit(b, shape))


def _atan2_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = lax.atan2(x, y)
    shape = get_aval(out).shape
    denom = lax.add(lax.mul(x, x), lax.mul(y, y))
    a = Zero(aval_of(tx)) if isinstance(tx, Zero) else lax.mul(tx, lax.div(y, denom))
    b = Zero(aval_of(ty)) if isinstance(ty, Zero) else lax.mul(ty, lax.div(lax.neg(x), denom))
    return out, add_tangents(_fit(a, shape), _fit(b, shape))


def _rem_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = lax.rem(x, y)
    shape = get_aval(out).shape
    a = _fit(tx, shape)
    if isinstance(ty, Zero):
        return out, a
    q = lax.round(lax.div(lax.sub(x, out), y))
    return out, add_tangents(a, _fit(lax.neg(lax.mul(ty, q)), shape))


def _complex_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = lax.complex(x, y)
    tx = instantiate(tx)
    ty = instantiate(ty)
    return out, lax.complex(tx, ty)


jvp_rules[P.add_p] = _add_jvp
jvp_rules[P.add_any_p] = lambda primals, tangents: (
    lax.add_any(*primals), add_tangents(*tangents))
jvp_rules[P.sub_p] = _sub_jvp
jvp_rules[P.mul_p] = _mul_jvp
jvp_rules[P.div_p] = _div_jvp
jvp_rules[P.max_p] = _max_min_jvp(P.max_p, lax.gt)
jvp_rules[P.min_p] = _max_min_jvp(P.min_p, lax.lt)
jvp_rules[P.pow_p] = _pow_jvp
jvp_rules[P.atan2_p] = _atan2_jvp
jvp_rules[P.rem_p] = _rem_jvp
jvp_rules[P.complex_p] = _complex_jvp


# --- transposes of the linear binary ops ----------------------------------------------------


def _add_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined_primal(x) else None,
            unbroadcast(ct, y.aval) if is_undefined_primal(y) else None]


def _sub_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined_primal(x) else None,
            unbroadcast(lax.neg(ct) if not isinstance(ct, Zero) else ct, y.aval)
            if is_undefined_primal(y) else None]


def _mul_transpose(ct, x, y):
    if isinstance(ct, Zero):
        return [Zero(x.aval) if is_undefined_primal(x) else None,
                Zero(y.aval) if is_undefined_primal(y) else None]
    if is_undefined_primal(x):
        return [unbroadcast(lax.mul(ct, y), x.aval), None]
    return [None, unbroadcast(lax.mul(x, ct), y.aval)]


def _div_transpose(ct, x, y):
    if isinstance(ct, Zero):
        return [Zero(x.aval), None]
    return [unbroadcast(lax.div(ct, y), x.aval), None]


def _convert_jvp(primals, tangents, *, new_dtype, weak_type, sharding=None):
    from olympus_ir import dtypes

    (x,), (t,) = primals, tangents
    out = bind(P.convert_element_type_p, x, new_dtype=new_dtype, weak_type=weak_type,
               sharding=sharding)
    if isinstance(t, Zero) or not dtypes.is_inexact(new_dtype) or not dtypes.is_inexact(
            get_aval(x).dtype):
        return out, Zero(tangent_aval(get_aval(out)))
    return out, bind(P.convert_element_type_p, t, new_dtype=new_dtype, weak_type=weak_type,
                     sharding=sharding)


def _convert_transpose(ct, x, *, new_dtype, weak_type, sharding=None):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [bind(P.convert_element_type_p, ct, new_dtype=x.aval.dtype,
                 weak_type=x.aval.weak_type, sharding=sharding)]


def _complex_transpose(ct, x, y):
    # complex(x, y) = x + i y; under the pairing Re(sum(a * b)) its transpose is
    # (real(ct), -imag(ct)).
    if isinstance(ct, Zero):
        return [Zero(x.aval) if is_undefined_primal(x) else None,
                Zero(y.aval) if is_undefined_primal(y) else None]
    return [unbroadcast(lax.real(ct), x.aval) if is_undefined_primal(x) else None,
            unbroadcast(lax.neg(lax.imag(ct)), y.aval) if is_undefined_primal(y) else None]


transpose_rules[P.complex_p] = _complex_transpose
transpose_rules[P.add_p] = _add_transpose
transpose_rules[P.add_any_p] = _add_transpose
transpose_rules[P.sub_p] = _sub_transpose
transpose_rules[P.mul_p] = _mul_transpose
transpose_rules[P.div_p] = _div_transpose
jvp_rules[P.convert_element_type_p] = _convert_jvp
transpose_rules[P.convert_element_type_p] = _convert_transpose


# --- select_n: linear in the cases ------------------------------------------------------------


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = bind(P.select_n_p, which, *cases)
    ts = tangents[1:]
    if all(isinstance(t, Zero) for t in ts):
        return out, Zero(tangent_aval(get_aval(out)))
    return out, bind(P.select_n_p, which, *[inst(t) for t in ts])


def _select_n_transpose(ct, which, *cases):
    if is_undefined_primal(which):  # pragma: no cover - the predicate is never linear
        raise NotImplementedError("select_n is not linear in its predicate")
    out = [None]
    if isinstance(ct, Zero):
        return out + [Zero(c.aval) if is_undefined_primal(c) else None for c in cases]
    z = zeros(get_aval(ct))
    for i, c in enumerate(cases):
        if is_undefined_primal(c):
            out.append(bind(P.select_n_p, which,
                            *[ct if j == i else z for j in range(len(cases))]))
        else:
            out.append(None)
    return out


jvp_rules[P.select_n_p] = _select_n_jvp
transpose_rules[P.select_n_p] = _select_n_transpose


# --- clamp ------------------------------------------------------------------------------------


def _clamp_jvp(primals, tangents):
    lo, x, hi = primals
    tlo, tx, thi = tangents
    out = bind(P.clamp_p, lo, x, hi)
    shape = get_aval(out).shape
    z = zeros(tangent_aval(get_aval(out)))

    def fit(t):
        return t if get_aval(t).shape == shape else lax.broadcast_in_dim(t, shape, ())

    t = Zero(tangent_aval(get_aval(out)))
    if not isinstance(tx, Zero):
        inside = lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi))
        t = add_tangents(t, lax.select(inside, tx, z))
    if not isinstance(tlo, Zero):
        below = lax.bitwise_and(lax.gt(lo, x), lax.lt(lo, hi))
        if get_aval(below).shape != shape:
            below = lax.broadcast_in_dim(below, shape, ())
        t = add_tangents(t, lax.select(below, fit(tlo), z))
    if not isinstance(thi, Zero):
        above = lax.lt(hi, x)
        if get_aval(above).shape != shape:
            above = lax.broadcast_in_dim(above, shape, ())
        t = add_tangents(t, lax.select(above, fit(thi), z))
    return out, t


jvp_rules[P.clamp_p] = _clamp_jvp
