"""`olympus.debug`: look at values while a (jitted, vmapped, differentiated) program runs.

* ``debug.print(fmt, *args, ordered=False, **kwargs)`` prints
  ``fmt.format(*args, **kwargs)`` and a newline to ``sys.stdout`` when the program runs,
  not when it is traced (a `fmt` without placeholders is followed by the values, space
  separated; NumPy's print options in force at trace time apply).
* ``debug.log(fmt, *args, **kwargs)``: the same message as a logging record (INFO, logger
  ``olympus._src.debugging``) attributed to the user's source line.
* ``debug.callback(fn, *args, ordered=False, **kwargs)`` calls ``fn(*args, **kwargs)``
  with every array leaf of the pytrees `args` / `kwargs` as an ``olympus.Array`` (as in
  JAX).
* ``debug.breakpoint()`` stops the running program in a pdb-like debugger
  (`olympus._src.debugger`).

All bind the ``debug_callback`` primitive. Outside any transformation the function runs
at once; under ``jit`` it becomes a host callback of the compiled program, and the calls
of one program run in program order (also inside ``scan``, ``while_loop`` and ``cond``).
Under ``vmap`` the function runs once per batch member; under ``grad`` / ``jvp`` it sees
the primal values only. Leaves that are not arrays (strings, None, ...) are passed
through unchanged. `ordered` is accepted for JAX compatibility: every call is ordered;
so is `partitioned` (a single device holds every value). Each also has JAX's two-call
form, ``debug.print(ordered=True)("x={}", x)``.
"""

from __future__ import annotations

import logging
import string
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from olympus_ir.prims.callbacks import DebugEffect, debug_effect, ordered_debug_effect
from olympus_trace import lax_ops, tree_util
from olympus_trace.core import is_array_like
from olympus_trace.staging import user_source_info

from ._src.visualize import (  # noqa: E402  (sharding pictures: olympus/_src/visualize.py)
    inspect_array_sharding,
    visualize_array_sharding,
    visualize_sharding,
)

__all__ = ["callback", "print", "log", "breakpoint", "DebugEffect", "OrderedDebugEffect",
           "inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"]

#: JAX names the ordered debug effect's type too; here both are `DebugEffect` values.
OrderedDebugEffect = type(ordered_debug_effect)

_logger = logging.getLogger("olympus._src.debugging")


def _as_array(v):
    import olympus_runtime as rt

    return rt.device_put(v)


def callback(callback: Callable[..., Any] | None = None, *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any):
    """Call ``callback(*args, **kwargs)`` on the host when the program runs, with the
    array leaves as ``olympus.Array`` values. Returns None; the callback's return value
    is ignored. ``callback(ordered=...)`` with no function returns the one-argument-set
    form."""
    if callback is None:
        if args or kwargs:
            raise TypeError("debug_callback received unexpected arguments in the two-call "
                            f"form: {args=} {kwargs=}")

        def two_call(cb: Callable[..., Any], *a: Any, **kw: Any) -> None:
            return _callback(cb, a, kw, ordered)

        return two_call
    return _callback(callback, args, kwargs, ordered)


def _callback(callback: Callable[..., Any], args: tuple, kwargs: dict, ordered: bool,
              convert: bool = True) -> None:
    if not callable(callback):
        raise TypeError(f"debug.callback: expected a callable, got {callback!r}")
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    is_dyn = [is_array_like(x) for x in leaves]
    static = [None if d else x for x, d in zip(leaves, is_dyn, strict=True)]
    dyn = [x for x, d in zip(leaves, is_dyn, strict=True) if d]

    def _flat_callback(*values):
        it = iter(_as_array(v) for v in values) if convert else iter(values)
        full = [next(it) if d else s for s, d in zip(static, is_dyn, strict=True)]
        a, kw = tree_util.tree_unflatten(tree, full)
        callback(*a, **kw)

    # Printed in olympusprs: named as JAX's wrapper is, so the text reads as JAX's does.
    _flat_callback.__qualname__ = "debug_callback.<locals>._debug_callback.<locals>._flat_callback"
    effect = ordered_debug_effect if ordered else debug_effect
    lax_ops.debug_callback(*dyn, callback=_flat_callback, effect=effect)


class _FormatChecker(string.Formatter):
    """Checks that every field of a format string names an argument, without formatting
    the (possibly traced) values."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        return value

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `olympus.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `olympus.debug.print`: {unused_kw}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `olympus.debug.print` and "
                "instead should pass in a regular string.")


def _print_fn(fmt: str, *, ordered: bool, skip_format_check: bool,
              record: logging.LogRecord | None):
    def emit(*args: Any, **kwargs: Any) -> None:
        if not isinstance(fmt, str):
            raise TypeError(f"debug.print: fmt must be a str, got {type(fmt).__name__}")
        placeholders = any(f is not None for _, f, _, _ in string.Formatter().parse(fmt))
        if not skip_format_check and placeholders:  # fails when traced, not when run
            _FormatChecker().format(fmt, *args, **kwargs)
        if not placeholders and kwargs:
            raise ValueError("Format without placeholders should not have kwargs.")
        printopts = np.get_printoptions()

        def out(*a: Any, **kw: Any) -> None:
            with np.printoptions(**printopts):
                msg = fmt.format(*a, **kw) if placeholders else " ".join(
                    (fmt, *(str(x) for x in a)))
            if record is not None:
                r = logging.makeLogRecord(record.__dict__)
                r.msg = msg
                _logger.handle(r)
            else:
                sys.stdout.write(msg + "\n")
                sys.stdout.flush()

        _callback(out, args, kwargs, ordered, convert=False)

    return emit


def print(fmt: str | None = None, *args: Any, ordered: bool = False,  # noqa: A001
          partitioned: bool = False, skip_format_check: bool = False, **kwargs: Any):
    """Print ``fmt.format(*args, **kwargs)`` when the program runs (values as numpy
    arrays), followed by a newline, to ``sys.stdout``; flushed. ``print(ordered=...)``
    with no format returns the two-call form."""
    return _print_or_log(fmt, args, kwargs, ordered, skip_format_check, None)


def log(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs: Any):
    """`print`, as an INFO record of the ``olympus._src.debugging`` logger whose file and
    line are the user's call."""
    src = user_source_info()
    record = _logger.makeRecord(_logger.name, logging.INFO,
                                src.file if src else "(unknown file)",
                                src.line if src else 0, "", (), None)
    return _print_or_log(fmt, args, kwargs, ordered, skip_format_check, record)


def _print_or_log(fmt, args, kwargs, ordered, skip_format_check, record):
    if fmt is not None:
        _print_fn(fmt, ordered=ordered, skip_format_check=skip_format_check,
                  record=record)(*args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_print received unexpected arguments in the two-call form: "
                        f"{args=} {kwargs=}")

    def two_call(fmt: str, *a: Any, **kw: Any) -> None:
        _print_fn(fmt, ordered=ordered, skip_format_check=skip_format_check,
                  record=record)(*a, **kw)

    return two_call


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any):
    """Stop in a pdb-like debugger (reading commands from ``sys.stdin``) when the program
    reaches this point, with the arrays of the calling frames' locals as values."""
    from ._src.debugger import breakpoint as _breakpoint

    return _breakpoint(filter_frames=filter_frames, num_frames=num_frames, ordered=ordered)
