"""Tracing errors, with JAX's types and wording (OLYMPUS names).

Messages follow JAX: ``<message>\\nSee <docs>#olympus.errors.<ClassName>``. Messages about a
tracer use ``tracer._short_repr()`` (``traced array with shape float32[3]``) followed by
``tracer._origin_msg()`` (empty, or a newline and which function arguments the value
depends on).
"""

from __future__ import annotations

_DOCS = "https://docs.olympus.dev/en/latest/errors.html#olympus.errors."


class _Documented:
    def _with_link(self, msg: str) -> str:
        return f"{msg}\nSee {_DOCS}{type(self).__name__}"


class OlympusTypeError(TypeError):
    """Base of Olympus's TypeErrors."""


class OlympusIndexError(IndexError):
    """Base of Olympus's IndexErrors."""


class ConcretizationTypeError(OlympusTypeError, _Documented):
    """A traced value was used where a concrete Python value is needed.

    `context` says where (e.g. "The problem arose with the `float` function. ..."); the
    tracer's origin (which arguments it depends on) is appended.
    """

    def __init__(self, tracer=None, context: str = ""):
        if tracer is None:
            super().__init__(self._with_link(context))
            return
        super().__init__(self._with_link(
            "Abstract tracer value encountered where concrete value is expected: "
            f"{tracer._short_repr()}\n{context}{tracer._origin_msg()}\n"
        ))


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a traced value (e.g. Python ``if`` on an argument)."""

    def __init__(self, tracer):
        TypeError.__init__(self, self._with_link(
            f"Attempted boolean conversion of {tracer._short_repr()}.{tracer._origin_msg()}"
        ))


class TracerIntegerConversionError(OlympusTypeError, _Documented):
    """``__index__`` of a traced integer scalar (e.g. ``range(x)``, ``operator.index(x)``)."""

    def __init__(self, tracer):
        super().__init__(self._with_link(
            f"The __index__() method was called on {tracer._short_repr()}"
            f"{tracer._origin_msg()}"
        ))


class TracerArrayConversionError(OlympusTypeError, _Documented):
    """``np.asarray`` of a traced value."""

    def __init__(self, tracer):
        super().__init__(self._with_link(
            "The numpy.ndarray conversion method __array__() was called on "
            f"{tracer._short_repr()}{tracer._origin_msg()}"
        ))


class NonConcreteBooleanIndexError(OlympusIndexError, _Documented):
    """A boolean mask used as an index (or in `.at[]`) is traced: its number of true
    entries, and so the result's shape, is not known when tracing."""

    def __init__(self, aval):
        shown = aval.str_short(short_dtypes=False) if hasattr(aval, "str_short") else aval
        super().__init__(self._with_link(
            f"Array boolean indices must be concrete; got {shown}\n"))


class UnexpectedTracerError(OlympusTypeError, _Documented):
    """A tracer used after the transformation that created it has finished."""

    def __init__(self, msg: str):
        super().__init__(self._with_link(msg))


class KeyReuseError(OlympusTypeError, _Documented):
    """A PRNG key was consumed more than once. Checked only while the
    ``olympus_debug_key_reuse`` option is on (see ``olympus.experimental.key_reuse``)::

      >>> with olympus.debug_key_reuse(True):  # doctest: +SKIP
      ...   key = olympus.random.key(0)
      ...   value = olympus.random.uniform(key)
      ...   new_value = olympus.random.uniform(key)
      Traceback (most recent call last):
        ...
      KeyReuseError: Previously-consumed key passed to jit-compiled function at index 0

    Keys are stateless: drawing twice from one key gives the same numbers, so a key is
    split (``olympus.random.split``) into fresh keys instead of being used again."""

    def __init__(self, msg: str):
        super().__init__(self._with_link(msg))
