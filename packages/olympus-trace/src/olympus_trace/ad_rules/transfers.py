"""JVP and transpose of ``device_put``: linear (the identity on values), so a tangent takes
the same transfer and a cotangent the reverse one (back to where the operand came from;
a transfer is never transposed into a donation)."""

from __future__ import annotations

from olympus_ir.avals import MemorySpace
from olympus_ir.prims.transfers import ArrayCopySemantics, device_put_p

from ..ad import Zero, is_undefined_primal, jvp_rules, tangent_aval, transpose_rules
from ..core import bind, get_aval


def _device_put_jvp(primals, tangents, *, devices, srcs, copy_semantics):
    outs = bind(device_put_p, *primals, devices=devices, srcs=srcs,
                copy_semantics=copy_semantics)
    nz = [i for i, t in enumerate(tangents) if not isinstance(t, Zero)]
    t_outs = [Zero(tangent_aval(get_aval(o))) for o in outs]
    if nz:
        moved = bind(device_put_p, *[tangents[i] for i in nz],
                     devices=tuple(devices[i] for i in nz), srcs=tuple(srcs[i] for i in nz),
                     copy_semantics=tuple(copy_semantics[i] for i in nz))
        for i, t in zip(nz, moved):
            t_outs[i] = t
    return outs, t_outs


def _device_put_transpose(cts, *args, devices, srcs, copy_semantics):
    out = [None] * len(args)
    back = []
    for i, (ct, a) in enumerate(zip(cts, args)):
        if not is_undefined_primal(a):
            continue
        if isinstance(ct, Zero):
            out[i] = Zero(a.aval)
            continue
        if copy_semantics[i] is ArrayCopySemantics.DONATE_INPUT:
            raise ValueError("device_put with donation cannot be transposed: a donated "
                             "operand has no buffer left to send the cotangent back to.")
        src = srcs[i]
        if src is None and a.aval.memory_space is MemorySpace.Host:
            src = MemorySpace.Host
        back.append((i, ct, src, devices[i]))
    if back:
        moved = bind(device_put_p, *[ct for _, ct, _, _ in back],
                     devices=tuple(s for _, _, s, _ in back),
                     srcs=tuple(d for _, _, _, d in back),
                     copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) * len(back))
        for (i, _, _, _), m in zip(back, moved):
            out[i] = m
    return out


jvp_rules[device_put_p] = _device_put_jvp
transpose_rules[device_put_p] = _device_put_transpose
