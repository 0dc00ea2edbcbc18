"""Adaptive ODE integration with adjoint gradients (JAX's ``jax.experimental.ode``).

`odeint` integrates ``dy/dt = func(y, t, *args)`` with the Dormand–Prince 5(4) embedded
Runge–Kutta pair: the step size adapts so that the estimated local error stays within
``atol + rtol * |y|``, and the solution at the requested times is read from each step's
4th-order interpolating polynomial. Its gradient is computed by the adjoint method:
the augmented system (state, state cotangent, time and argument cotangents) is integrated
backwards from the last time to the first, in the same way.
"""

from __future__ import annotations

import builtins
import operator as op
from collections.abc import Callable
from functools import partial

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus._src.custom_derivatives import closure_convert, custom_vjp
from olympus.flatten_util import ravel_pytree
from olympus.tree_util import tree_leaves, tree_map
from olympus_trace.promotion import promote_dtypes_inexact  # noqa: F401 (as JAX's module)

__all__ = ["odeint"]


def safe_map(f, *args):
    return [f(*xs) for xs in builtins.zip(*args, strict=True)]


def safe_zip(*args):
    return list(builtins.zip(*args, strict=True))


map = safe_map  # noqa: A001 - as in JAX's module
zip = safe_zip  # noqa: A001 - as in JAX's module (the helpers above use the builtins)


def ravel_first_arg_(f, unravel, y_flat, *args):
    """``f`` called with its first argument unraveled from a flat vector, its output
    raveled back into one."""
    y = unravel(y_flat)
    out = f(y, *args)
    flat, _ = ravel_pytree(out)
    return flat


def ravel_first_arg(f, unravel, debug_info=None):
    """`f` on flat first arguments and outputs (see `ravel_first_arg_`)."""
    return partial(ravel_first_arg_, f, unravel)


def interp_fit_dopri(y0, y1, k, dt):
    """The 4th-order polynomial through a Dormand–Prince step (its midpoint from the
    step's stages), as coefficients for ``polyval`` on [0, 1]."""
    dps_c_mid = jnp.array([
        6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
        -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
        -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2], dtype=y0.dtype)
    y_mid = y0 + dt.astype(y0.dtype) * jnp.dot(dps_c_mid, k)
    return jnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    """Coefficients (highest power first) of the quartic with values y0, y_mid, y1 and
    slopes dy0, dy1 (per unit of `dt`) at 0, 1/2 and 1."""
    dt = dt.astype(y0.dtype)
    a = -2.0 * dt * dy0 + 2.0 * dt * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * dt * dy0 - 3.0 * dt * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * dt * dy0 + dt * dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    d = dt * dy0
    e = y0
    return a, b, c, d, e


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """A first step size from the scale of the solution and its derivatives (Hairer,
    Nørsett & Wanner, Solving ODEs I, II.4)."""
    dtype = y0.dtype
    scale = atol + jnp.abs(y0) * rtol
    d0 = jnp.linalg.norm(y0 / scale.astype(dtype))
    d1 = jnp.linalg.norm(f0 / scale.astype(dtype))
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale.astype(dtype)) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


def runge_kutta_step(func, y0, f0, t0, dt):
    """One Dormand–Prince step: (y1, f1, the error estimate, the 7 stages)."""
    alpha = jnp.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0], dtype=dt.dtype)
    beta = jnp.array([
        [1 / 5, 0, 0, 0, 0, 0, 0],
        [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
        [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
        [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
        [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
        [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]], dtype=f0.dtype)
    c_sol = jnp.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
                      dtype=f0.dtype)
    c_error = jnp.array([
        35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
        -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0], dtype=f0.dtype)

    def stage(i, k):
        ti = t0 + dt * alpha[i - 1]
        yi = y0 + dt.astype(f0.dtype) * jnp.dot(beta[i - 1, :], k)
        return k.at[i, :].set(func(yi, ti))

    k = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, stage, k)
    y1 = dt.astype(f0.dtype) * jnp.dot(c_sol, k) + y0
    y1_error = dt.astype(f0.dtype) * jnp.dot(c_error, k)
    return y1, k[-1], y1_error, k


def abs2(x):
    """|x|^2 (without a square root for complex x)."""
    if jnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    """The RMS of the error estimate relative to the tolerance."""
    err_tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(abs2(ratio)))


def optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2,
                      order=5.0):
    """The next step size for an error ratio: grow by at most `ifactor`, shrink by at
    most `dfactor` (and not at all after an accepted step)."""
    dfactor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor, jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety,
                                              dfactor))
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def odeint(func: Callable, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=jnp.inf,
           hmax=jnp.inf):
    """The solution of ``dy/dt = func(y, t, *args)`` with ``y(t[0]) = y0`` at the times
    `t` (increasing floats); `y0` may be any pytree of arrays. Differentiable with respect
    to `y0`, `t` and `args` (by the adjoint method)."""
    for arg in tree_leaves(args):
        if not isinstance(arg, olympus.Array) and not _valid_value(arg):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but "
                            f"got {arg}.")
    t = jnp.asarray(t)
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _valid_value(x) -> bool:
    try:
        from olympus_trace.core import get_aval

        get_aval(x)
        return True
    except TypeError:
        return False


def _odeint_wrapper(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    y0_flat, unravel = ravel_pytree(y0)
    flat_func = ravel_first_arg(func, unravel)
    out = _odeint(flat_func, rtol, atol, mxstep, hmax, y0_flat, ts, *args)
    return olympus.vmap(unravel)(out)


def _odeint_impl(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    def f(y, t):
        return func(y, t, *args)

    def to_target(carry, target_t):
        def keep_going(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def step(state):
            i, y, fy, t, dt, last_t, coeff = state
            next_y, next_f, err, k = runge_kutta_step(f, y, fy, t, dt)
            next_t = t + dt
            ratio = mean_error_ratio(err, rtol, atol, y, next_y)
            next_coeff = interp_fit_dopri(y, next_y, k, dt)
            dt = jnp.clip(optimal_step_size(dt, ratio), min=0.0, max=hmax)
            accepted = [i + 1, next_y, next_f, next_t, dt, t, next_coeff]
            rejected = [i + 1, y, fy, t, dt, last_t, coeff]
            return [jnp.where(ratio <= 1.0, a, r) for a, r in zip(accepted, rejected)]

        _, *carry = lax.while_loop(keep_going, step, [0, *carry])
        _, _, t, _, last_t, coeff = carry
        rel = (target_t - last_t) / (t - last_t)
        rel = rel.astype(coeff.dtype)
        y = coeff[0]
        for c in coeff[1:]:  # Horner's rule, one polynomial per state component
            y = y * rel + c
        return carry, y

    f0 = f(y0, ts[0])
    dt = jnp.clip(initial_step_size(f, ts[0], y0, 4, rtol, atol, f0), min=0.0, max=hmax)
    coeff = jnp.array([y0] * 5)
    _, ys = lax.scan(to_target, [y0, f0, ts[0], dt, ts[0], coeff], ts[1:])
    return jnp.concatenate((y0[None], ys))


_odeint = custom_vjp(_odeint_impl, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_rev(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res

    def aug_dynamics(state, t, *args):
        # Integrated in negative time: -t is the original time.
        y, y_bar, *_ = state
        y_dot, vjp_fn = olympus.vjp(func, y, -t, *args)
        return (-y_dot, *vjp_fn(y_bar))

    def back_one_interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i])
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics, (ys[i], y_bar, t0_bar, args_bar), jnp.array([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(op.itemgetter(1), (y_bar, t0_bar, args_bar))
        y_bar = y_bar + g[i - 1]
        return (y_bar, t0_bar, args_bar), t_bar

    init = (g[-1], jnp.zeros((), ts.dtype), tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
        back_one_interval, init, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)
del np
