"""`olympus.scipy.optimize`: `minimize` (BFGS, and JAX's experimental L-BFGS) and its
`OptimizeResults`."""

from __future__ import annotations

from typing import NamedTuple

import olympus
import olympus.numpy as jnp

from ._bfgs import minimize_bfgs, minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The outcome of `minimize`: the solution `x`, whether it converged (`success`,
    `status`: 0 converged, 1 iteration limit, 2+ line-search failure), the objective and
    its gradient there (`fun`, `jac`), the inverse Hessian estimate (BFGS only), and the
    evaluation and iteration counts."""

    x: olympus.Array
    success: bool | olympus.Array
    status: int | olympus.Array
    fun: olympus.Array
    jac: olympus.Array
    hess_inv: olympus.Array | None
    nfev: int | olympus.Array
    njev: int | olympus.Array
    nit: int | olympus.Array


def minimize(fun, x0, args: tuple = (), *, method: str, tol: float | None = None,
             options=None) -> OptimizeResults:
    """Minimize a scalar function of a one-dimensional array, `fun(x, *args)`, from `x0`
    ('BFGS'; also JAX's 'l-bfgs-experimental-do-not-rely-on-this'). `options` go to the
    method (maxiter, norm, gtol, line_search_maxiter for BFGS); `tol` is accepted and
    unused, as in JAX. Runs inside jit."""
    del tol
    options = {} if options is None else options
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to olympus.scipy.optimize.minimize must be a tuple, got "
                        f"{args}")

    def objective(x):
        return fun(x, *args)

    if method.lower() == "bfgs":
        r = minimize_bfgs(objective, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged & jnp.logical_not(r.failed),
                               status=r.status, fun=r.f_k, jac=r.g_k, hess_inv=r.H_k,
                               nfev=r.nfev, njev=r.ngev, nit=r.k)
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        r = minimize_lbfgs(objective, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged & jnp.logical_not(r.failed),
                               status=r.status, fun=r.f_k, jac=r.g_k, hess_inv=None,
                               nfev=r.nfev, njev=r.ngev, nit=r.k)
    raise ValueError(f"Method {method} not recognized")
