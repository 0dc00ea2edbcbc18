"""``check`` lowering (rules/checks.py)."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder

from olympus_ir import primitives as P
from olympus_lower import lower_olympuspr

F32 = np.dtype(np.float32)


def test_check_lowers_to_nothing_when_debug_and_refuses_otherwise():
    """``check`` (rules/checks.py): XLA has no assertions. An undischarged debug check is
    dropped; any other must have been discharged by checkify first."""
    from olympus_ir.prims.checks import functionalizing

    class _Tree:  # a stand-in pytree definition with one leaf
        num_leaves = 1

    functionalizing.depth += 1  # let the shape rule accept a non-debug check
    try:
        for debug in (True, False):
            b = Builder()
            x = b.arg((), F32)
            b.eqn(P.check_p, x, err_tree=_Tree(), debug=debug)
            closed = b.build([x])
            if debug:
                text = lower_olympuspr(closed, name="dbg").as_text()
                assert "custom_call" not in text
            else:
                with pytest.raises(ValueError, match="Cannot abstractly evaluate a "
                                                     "checkify.check"):
                    lower_olympuspr(closed, name="chk")
    finally:
        functionalizing.depth -= 1
