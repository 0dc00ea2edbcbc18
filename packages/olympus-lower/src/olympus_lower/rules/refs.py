"""The ref primitives have no StableHLO form of their own: a program holding refs is
discharged before lowering (every ref becomes a value threaded through the program, see
``olympus/_src/ref_discharge.py``), so these rules only report a program that was not."""

from __future__ import annotations

from olympus_ir.prims.refs import REF_PRIMITIVES

from ._registry import register_lowering


def _undischarged(prim):
    def rule(ctx, *args, **params):
        raise NotImplementedError(
            f"'{prim.name}' reached lowering: programs holding refs must be discharged "
            "(olympus._src.ref_discharge.discharge_refs) before they are lowered")
    return rule


for _p in REF_PRIMITIVES:
    register_lowering(_p)(_undischarged(_p))
