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


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` when the program runs (values as numpy
    arrays), followed by a newline, to ``sys.stdout``; flushed."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: fmt must be a str, got {type(fmt).__name__}")

    def _print(*a, **kw):
        sys.stdout.write(fmt.format(*a, **kw) + "\n")
        sys.stdout.flush()

    callback(_print, *args, ordered=ordered, **kwargs)
