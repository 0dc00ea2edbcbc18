"""The ref primitives are never lowered: a program holding refs is discharged first (in
olympus), so each lowering rule reports an undischarged program with a clear error."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder

from olympus_ir import ShapedArray
from olympus_ir import primitives as P
from olympus_lower import lower_olympuspr


def test_undischarged_refs_are_refused():
    b = Builder()
    x = b.arg(ShapedArray((3,), np.dtype(np.float32)))
    ref = b.eqn(P.new_ref_p, x, kind=None, memory_space=None)
    out = b.eqn(P.freeze_p, ref)
    with pytest.raises(NotImplementedError, match="'new_ref' reached lowering: programs "
                                                  "holding refs must be discharged"):
        lower_olympuspr(b.build([out]), name="f")
    for prim in (P.get_p, P.swap_p, P.addupdate_p, P.freeze_p):
        assert prim in P.REF_PRIMITIVES
