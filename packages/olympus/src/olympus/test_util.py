"""Checking derivatives against finite differences (JAX's ``jax.test_util``).

`check_jvp` and `check_vjp` compare a JVP or a VJP with central differences along one
random direction (seeded, so a check is reproducible), so the cost does not grow with the
number of inputs or outputs; `check_grads` applies them up to a given order, in forward
and/or reverse mode. Tolerances default per dtype (looser for lower precision) and are
scaled by the size of the compared arrays, as JAX's are.
"""

from __future__ import annotations

import functools

import numpy as np

from olympus_ir import dtypes as _dtypes
from olympus_trace import tree_util

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4

#: Default tolerance of a value comparison, per dtype (exact for integers and booleans).
_value_tolerance = {
    np.dtype(_dtypes.bfloat16): 1e-2, np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}

#: Default tolerance of a derivative check (finite differences are approximate).
_gradient_tolerance = {
    np.dtype(_dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}


def _dtype_of(x) -> np.dtype:
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if type(x) in (bool, int, float, complex):
        return _dtypes.python_scalar_dtype(x)
    return np.asarray(x).dtype


def _is_python_scalar(x) -> bool:
    return type(x) in (bool, int, float, complex)


def _tol(dtype, tol) -> float:
    if not isinstance(tol, dict):
        return tol
    dt = _dtypes.canonicalize_dtype(np.dtype(dtype))
    if dt == _dtypes.float0:
        return 0
    return tol.get(dt, _value_tolerance.get(dt, 0))


def _merged(tol):
    """A user tolerance (a number, or a dict by dtype overriding the defaults)."""
    if tol is None:
        return dict(_gradient_tolerance)
    if isinstance(tol, dict):
        out = dict(_gradient_tolerance)
        out.update({np.dtype(k): v for k, v in tol.items()})
        return out
    return tol


def _assert_close(a, b, atol, rtol, err_msg):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise AssertionError(f"{err_msg}: shapes differ, {a.shape} and {b.shape}")
    if a.dtype == b.dtype == _dtypes.float0:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    at = max(_tol(a.dtype, atol), _tol(b.dtype, atol)) * max(a.size, 1)
    rt = max(_tol(a.dtype, rtol), _tol(b.dtype, rtol)) * max(b.size, 1)
    upcast = (a.dtype.itemsize < 4 and a.dtype.kind == "f") or a.dtype == _dtypes.bfloat16
    if upcast:
        a, b = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, atol=at, rtol=rt, err_msg=err_msg)


def _check_close(xs, ys, atol, rtol, err_msg):
    tree_util.tree_map(functools.partial(_assert_close, atol=atol, rtol=rtol,
                                         err_msg=err_msg), xs, ys)


def _check_dtypes_match(xs, ys):
    def check(x, y):
        dx = _dtypes.canonicalize_dtype(_dtype_of(x))
        dy = _dtypes.canonicalize_dtype(_dtype_of(y))
        if dx != dy:
            raise AssertionError(f"dtypes differ: {dx} and {dy}")

    tree_util.tree_map(check, xs, ys)


def _keep_type(op):
    """Apply a NumPy `op` leafwise in the first operand's dtype; Python scalars stay so."""

    def apply(*xs):
        out = np.array(op(*xs), dtype=_dtype_of(xs[0]))
        return out.item() if all(map(_is_python_scalar, xs)) else out

    return apply


def _add(xs, ys):
    return tree_util.tree_map(_keep_type(np.add), xs, ys)


def _sub(xs, ys):
    return tree_util.tree_map(_keep_type(np.subtract), xs, ys)


def _conj(xs):
    return tree_util.tree_map(_keep_type(np.conj), xs)


def _safe_sub(xs, ys):
    """Leafwise ``x - y`` with ``inf - inf == 0`` (an infinite value that does not move)."""

    def sub(x, y):
        dt = _dtype_of(x)
        with np.errstate(invalid="ignore"):
            return np.where(np.equal(x, y), np.array(0, dt), np.subtract(x, y, dtype=dt))

    return tree_util.tree_map(sub, xs, ys)


def _scale(xs, a):
    def mul(x):
        dt = _dtype_of(x)
        out = np.multiply(x, np.array(a, dtype=dt), dtype=dt)
        return out.item() if _is_python_scalar(x) else out

    return tree_util.tree_map(mul, xs)


def _random_like(rng, x):
    dt = _dtype_of(x)
    shape = np.shape(x)
    out = np.asarray(rng.randn(*shape), dtype=dt)
    if np.issubdtype(dt, np.complexfloating):
        out = out + dt.type(1j) * np.asarray(rng.randn(*shape), dtype=dt)
    return out.item() if _is_python_scalar(x) else out


def _inner(xs, ys):
    def dot(x, y):
        return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))

    return tree_util.tree_reduce(np.add, tree_util.tree_map(dot, xs, ys))


def numerical_jvp(f, primals, tangents, eps=EPS):
    """Central differences of `f` at `primals` along `tangents`."""
    step = _scale(tangents, eps)
    hi = f(*_add(primals, step))
    lo = f(*_sub(primals, step))
    return _scale(_safe_sub(hi, lo), 0.5 / eps)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check ``f_jvp`` (typically ``functools.partial(olympus.jvp, f)``) at ``f(*args)``
    against finite differences along one random tangent. Raises AssertionError."""
    atol, rtol = _merged(atol), _merged(rtol)
    rng = np.random.RandomState(0)
    tangent = tree_util.tree_map(functools.partial(_random_like, rng), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out)
    v_expected = f(*args)
    _check_dtypes_match(v_out, v_expected)
    t_expected = numerical_jvp(f, args, tangent, eps=eps)
    _check_close(v_out, v_expected, atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    _check_close(t_out, t_expected, atol, rtol,
                 f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check ``f_vjp`` (typically ``functools.partial(olympus.vjp, f)``) at ``f(*args)``:
    the pulled-back random cotangent, projected on a random tangent, must equal the
    cotangent projected on the finite-difference JVP. Raises AssertionError."""
    atol, rtol = _merged(atol), _merged(rtol)
    rng = np.random.RandomState(0)
    v_out, pullback = f_vjp(*args)
    v_expected = f(*args)
    _check_close(v_out, v_expected, atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_util.tree_map(functools.partial(_random_like, rng), args)
    t_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_util.tree_map(functools.partial(_random_like, rng), v_out)
    ct_in = _conj(pullback(_conj(cotangent)))
    _check_close(_inner(tangent, ct_in), _inner(t_out, cotangent), atol, rtol,
                 f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def check_grads(f, args, order: int, modes=("fwd", "rev"), atol=None, rtol=None,
                eps=None) -> None:
    """Check the derivatives of `f` at `args` up to `order` against finite differences,
    in the `modes` given ("fwd": jvp, "rev": vjp, "lin": linearize). Raises
    AssertionError naming the mode chain (e.g. "VJP of JVP") that disagrees."""
    from ._src.api import jvp, linearize, vjp

    args = tuple(args)
    eps = eps or EPS
    jvp_check = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    vjp_check = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def jvp_by_linearize(fun, primals, tangents):
        out, f_lin = linearize(fun, *primals)
        return out, f_lin(*tangents)

    def check(fun, xs, k, msg=""):
        if "fwd" in modes:
            m = f"JVP of {msg}" if msg else "JVP"
            jvp_check(fun, functools.partial(jvp, fun), xs, err_msg=m)
            if k > 1:
                check(functools.partial(jvp, fun), (xs, xs), k - 1, m)
        if "rev" in modes:
            m = f"VJP of {msg}" if msg else "VJP"
            vjp_check(fun, functools.partial(vjp, fun), xs, err_msg=m)
            if k > 1:
                def pulled_back(*ys):
                    out, pullback = vjp(fun, *ys)
                    return pullback(out)

                check(pulled_back, xs, k - 1, m)
        if "lin" in modes:
            m = f"LIN of {msg}" if msg else "LIN"
            jvp_check(fun, functools.partial(jvp_by_linearize, fun), xs, err_msg=m)
            if k > 1:
                check(functools.partial(jvp_by_linearize, fun), (xs, xs), k - 1, m)

    check(f, args, order)
