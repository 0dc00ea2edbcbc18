"""Lowering of ``device_put`` and of memory kinds: transfers are the identity on CPU (as
JAX 0.10.2 lowers them there), and once a program moves values between memory spaces its
results, and its host-memory arguments, carry ``mhlo.memory_kind`` (JAX's CPU output)."""

from __future__ import annotations

import numpy as np
from _lower_util import Builder

from olympus_ir import MemorySpace, ShapedArray
from olympus_ir import primitives as P
from olympus_ir.prims.transfers import ArrayCopySemantics as ACS
from olympus_lower import lower_olympuspr

F32 = np.dtype(np.float32)


def _put(b, x, space):
    (out,) = b.eqn(P.device_put_p, x, devices=(space,), srcs=(None,),
                   copy_semantics=(ACS.ALWAYS_COPY,))
    return out


def test_offload_and_back_is_the_identity_with_memory_kinds_on_results():
    b = Builder()
    x = b.arg(ShapedArray((4,), F32))
    host = _put(b, x, MemorySpace.Host)
    back = _put(b, host, MemorySpace.Device)
    text = lower_olympuspr(b.build([back, host]), name="offload").as_text()
    assert "return %arg0, %arg0" in text
    assert ('-> (tensor<4xf32> {mhlo.memory_kind = "device"}, '
            'tensor<4xf32> {mhlo.memory_kind = "pinned_host"})') in text


def test_host_arguments_name_their_memory_and_plain_programs_none():
    b = Builder()
    x = b.arg(ShapedArray((4,), F32, memory_space=MemorySpace.Host))
    text = lower_olympuspr(b.build([_put(b, x, MemorySpace.Device)]), name="h").as_text()
    assert '%arg0: tensor<4xf32> {mhlo.memory_kind = "pinned_host"}' in text
    plain = Builder()
    y = plain.arg(ShapedArray((4,), F32))
    assert "memory_kind" not in lower_olympuspr(plain.build([y]), name="p").as_text()
