"""Lowering of ``device_put``: on the CPU backend a transfer inside a program is the
identity (as JAX lowers it there: device and host memory are the same RAM, and the
executable's arguments and results carry the memory kinds, see `lowering.memory_kinds`)."""

from __future__ import annotations

from olympus_ir.prims.transfers import device_put_p

from ._registry import register_lowering


@register_lowering(device_put_p)
def _device_put_lowering(ctx, *xs, devices, srcs, copy_semantics):
    return list(xs)
