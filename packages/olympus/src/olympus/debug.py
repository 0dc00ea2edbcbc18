"""`olympus.debug`: look at values while a (jitted, vmapped, differentiated) program runs.

* ``debug.print(fmt, *args, ordered=False, **kwargs)`` prints
  ``fmt.format(*args, **kwargs)`` (the values as numpy arrays) and a newline to
  ``sys.stdout`` when the program runs, not when it is traced.
* ``debug.callback(fn, *args, ordered=False, **kwargs)`` calls ``fn(*args, **kwargs)``
  with every array leaf of the pytrees `args` / `kwargs` replaced by its numpy value.

Both bind the ``debug_callback`` primitive. Outside any transformation the function runs
at once; under ``jit`` it becomes a host callback of the compiled program, and the calls
of one program run in program order (also inside ``scan``, ``while_loop`` and ``cond``).
Under ``vmap`` the function runs once per batch member; under ``grad`` / ``jvp`` it sees
the primal values only. Leaves that are not arrays (strings, None, ...) are passed
through unchanged. `ordered` is accepted for JAX compatibility: every call is ordered.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Callable
from typing import Any

from olympus_ir.prims.callbacks import debug_effect, ordered_debug_effect
from olympus_trace import lax_ops, tree_util
from olympus_trace.core import is_array_like

__all__ = ["callback", "print"]


def callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
             **kwargs: Any) -> None:
    """Call ``callback(*args, **kwargs)`` on the host with numpy values, when the program
    runs. Returns None; the callback's return value is ignored."""
    if not callable(callback):
        raise TypeError(f"debug.callback: expected a callable, got {callback!r}")
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    is_dyn = [is_array_like(x) for x in leaves]
    static = [None if d else x for x, d in zip(leaves, is_dyn, strict=True)]
    dyn = [x for x, d in zip(leaves, is_dyn, strict=True) if d]

    def _flat_callback(*values):
        it = iter(values)
        full = [next(it) if d else s for s, d in zip(static, is_dyn, strict=True)]
        a, kw = tree_util.tree_unflatten(tree, full)
        callback(*a, **kw)

    effect = ordered_debug_effect if ordered else debug_effect
    lax_ops.debug_callback(*dyn, callback=_flat_callback, effect=effect)


class _FormatChecker(string.Formatter):
    """Checks a format string against the arguments without formatting any value."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `olympus.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `olympus.debug.print`: {unused_kw}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `olympus.debug.print` and instead "
                "should pass in a regular string.")


_FORMAT_CHECKER = _FormatChecker()


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` when the program runs (values as numpy
    arrays), followed by a newline, to ``sys.stdout``; flushed."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: fmt must be a str, got {type(fmt).__name__}")
    # At trace time, as JAX does: a missing field raises (KeyError / IndexError) now, not
    # as a runtime error inside the compiled program; unused arguments raise ValueError.
    _FORMAT_CHECKER.format(fmt, *args, **kwargs)

    def _print(*a, **kw):
        sys.stdout.write(fmt.format(*a, **kw) + "\n")
        sys.stdout.flush()

    callback(_print, *args, ordered=ordered, **kwargs)
