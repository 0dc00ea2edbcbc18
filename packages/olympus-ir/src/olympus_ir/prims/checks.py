"""Runtime checks: ``check`` (the primitive behind ``olympus.experimental.checkify``).

``check(*leaves; err_tree, debug)`` says "raise the error the pytree ``unflatten(err_tree,
leaves)`` holds, if it holds one". It has no results. It only has a meaning where it is
discharged: the ``checkify`` transformation turns it into values of the function's error
output; outside a trace it raises at once (a ``debug`` check does nothing there). A
program that stages one without ``checkify`` cannot express it (XLA has no assertions):
the shape rule refuses it unless `functionalizing` says a ``checkify`` is tracing (a
``debug`` check may be staged anywhere: undischarged, it does nothing).
"""

from __future__ import annotations

import threading

from ..core import def_shape_rule, new_primitive

__all__ = ["check_p", "functionalizing", "FUNCTIONALIZATION_ERROR"]

check_p = new_primitive("check", multiple_results=True)

FUNCTIONALIZATION_ERROR = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
    "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
    "functionalizing it through `checkify.checkify`.")


class _Functionalizing(threading.local):
    depth = 0


#: ``functionalizing.depth > 0`` while a ``checkify`` traces its function on this thread.
functionalizing = _Functionalizing()


@def_shape_rule(check_p)
def check_shape_rule(*avals, err_tree, debug=False):
    if functionalizing.depth <= 0 and not debug:  # a debug check may stage: it is a no-op
        raise ValueError(FUNCTIONALIZATION_ERROR)
    if err_tree is None or not hasattr(err_tree, "num_leaves"):
        raise TypeError(f"check err_tree must be a pytree definition, got {err_tree!r}.")
    if err_tree.num_leaves != len(avals):
        raise TypeError(f"check takes {err_tree.num_leaves} operands for its error, got "
                        f"{len(avals)}.")
    return []
