"""The deprecated ``pjit`` (JAX's ``jax.experimental.pjit``): `olympus.jit` with
``in_shardings``/``out_shardings``; reading it warns, as in JAX."""

from __future__ import annotations

import warnings


def _pjit(fun, in_shardings=None, out_shardings=None, static_argnums=None,
          static_argnames=None, donate_argnums=None, donate_argnames=None,
          keep_unused=False, device=None, backend=None, inline=False, compiler_options=None):
    """`olympus.jit` under its old name."""
    from .._src.jit import jit

    kwargs = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                  donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                  keep_unused=keep_unused, inline=inline, compiler_options=compiler_options)
    if in_shardings is not None:
        kwargs["in_shardings"] = in_shardings
    if out_shardings is not None:
        kwargs["out_shardings"] = out_shardings
    if device is not None:
        kwargs["device"] = device
    if backend is not None:
        kwargs["backend"] = backend
    return jit(fun, **kwargs)


def __getattr__(name: str):
    if name == "pjit":
        warnings.warn("olympus.experimental.pjit.pjit has been deprecated. Please use "
                      "`olympus.jit` instead.", DeprecationWarning, stacklevel=2)
        return _pjit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
