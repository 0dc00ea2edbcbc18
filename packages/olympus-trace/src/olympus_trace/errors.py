"""Tracing errors, with JAX's types and wording (OLYMPUS names)."""

from __future__ import annotations

_DOCS = "https://docs.olympus.dev/en/latest/errors.html#olympus.errors."


class OlympusTypeError(TypeError):
    """Base of Olympus's TypeErrors."""


class _Documented:
    def _with_link(self, msg: str) -> str:
        return f"{msg}\nSee {_DOCS}{type(self).__name__}"


class ConcretizationTypeError(OlympusTypeError, _Documented):
    """A traced value was used where a concrete Python value is needed."""

    def __init__(self, tracer=None, context: str = ""):
        if tracer is None:
            super().__init__(self._with_link(context))
            return
        msg = (
            f"Abstract tracer value encountered where concrete value is expected: "
            f"{tracer._short_repr()}\n{context}"
            "\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
            "subfunctions instead."
        )
        super().__init__(self._with_link(msg.rstrip()))


class TracerBoolConversionError(ConcretizationTypeError):
    def __init__(self, tracer):
        TypeError.__init__(
            self,
            self._with_link(
                f"Attempted boolean conversion of traced array with shape "
                f"{tracer.aval.str_short()}.\n{tracer._origin_msg()}"
                "\nIf this is inside a jitted function, consider `static_argnums` for "
                "arguments used in Python control flow, or structured control flow such as "
                "`olympus.lax.cond` / `olympus.lax.while_loop`."
            ),
        )


class TracerIntegerConversionError(ConcretizationTypeError):
    def __init__(self, tracer):
        TypeError.__init__(
            self,
            self._with_link(
                f"The __index__() method was called on traced array with shape "
                f"{tracer.aval.str_short()}.\n{tracer._origin_msg()}"
            ),
        )


class TracerArrayConversionError(OlympusTypeError, _Documented):
    def __init__(self, tracer):
        super().__init__(
            self._with_link(
                f"The numpy.ndarray conversion method __array__() was called on traced array "
                f"with shape {tracer.aval.str_short()}.\n{tracer._origin_msg()}"
            )
        )


class UnexpectedTracerError(Exception, _Documented):
    def __init__(self, msg: str):
        super().__init__(self._with_link(msg))


class KeyReuseError(Exception):
    pass
