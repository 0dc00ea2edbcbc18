"""``ffi_call`` lowering: the typed-FFI custom call, its attributes (JAX's conversions of
Python and numpy values) and layouts. Execution against a real kernel is olympus's
``test_ffi.py`` (it builds one with the system compiler). ``buffer_callback``: jaxlib's
buffer-callback handler, run on the CPU client."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, _Cpu, execute
from jaxlib import xla_client as xc

from olympus_ir import ShapedArray
from olympus_ir import primitives as P
from olympus_ir.prims.ffi import FrozenDict, HashableArray
from olympus_lower import lower_olympuspr

F32 = np.dtype(np.float32)


def _lowered(attributes=(), version=4, legacy=None, aliases=()):
    b = Builder()
    x = b.arg(ShapedArray((2, 3), F32))
    out = b.eqn(P.ffi_call_p, x, result_avals=(ShapedArray((2, 3), F32),), vmap_method=None,
                target_name="my_target", has_side_effect=True, input_layouts=((0, 1),),
                output_layouts=((1, 0),), input_output_aliases=aliases,
                custom_call_api_version=version, legacy_backend_config=legacy,
                attributes=attributes)
    return lower_olympuspr(b.build(out), name="f").as_text()


def test_attributes_layouts_and_side_effect():
    text = _lowered((("a", np.float32(2.5)), ("b", 7), ("c", 1.5), ("d", "s"), ("e", True),
                     ("f", HashableArray(np.arange(3, dtype=np.int32))),
                     ("g", FrozenDict({"k": np.int8(1)}))))
    assert "stablehlo.custom_call @my_target(%arg0)" in text
    for s in ("a = 2.500000e+00 : f32", "b = 7 : i64", "c = 1.500000e+00 : f64",
              'd = "s"', "e = true", "f = dense<[0, 1, 2]> : tensor<3xi32>",
              "g = {k = 1 : i8}", 'backend_config = ""', "mhlo.backend_config = {",
              "has_side_effect = true",
              "operand_layouts = [dense<[0, 1]>", "result_layouts = [dense<[1, 0]>"):
        assert s in text, (s, text)
    assert "api_version" not in text  # JAX's form: the default version, the dict aside


def test_legacy_backend_config_and_aliases():
    text = _lowered(version=2, legacy="opaque")
    assert 'backend_config = "opaque"' in text and "api_version = 2" in text
    text = _lowered(aliases=((0, 0),))
    assert "output_operand_aliases" in text
    with pytest.raises(ValueError, match="attributes requires a custom call API version"):
        _lowered((("a", 1),), version=2)


class _Flat:
    """A tree stand-in (the real ones are olympus_trace pytrees): `leaves` leaves, rebuilt
    as ``((*leaves,), {})`` for the inputs or a tuple for the outputs."""

    def __init__(self, leaves, args=False):
        self.num_leaves, self.args = leaves, args

    def unflatten(self, leaves):
        return (tuple(leaves), {}) if self.args else tuple(leaves)


def test_buffer_callback_lowers_and_writes_results_in_place():
    seen = []

    def cb(ctx, outs, x, n):
        seen.append((x.writeable, outs[0].writeable, n.shape))
        np.asarray(outs[0])[...] = np.asarray(x) * np.asarray(n)
        np.asarray(outs[1])[...] = 7

    b = Builder()
    x = b.arg(ShapedArray((2, 3), F32))
    n = b.arg(ShapedArray((), F32))
    outs = b.eqn(P.buffer_callback_p, x, n, callback=cb,
                 result_avals=(ShapedArray((2, 3), F32), ShapedArray((), np.dtype(np.int32))),
                 in_tree=_Flat(2, args=True), out_tree=_Flat(2), vmap_method=None,
                 has_side_effect=False, input_output_aliases=(),
                 command_buffer_compatible=False)
    lowered = lower_olympuspr(b.build(outs), name="f")
    assert ("stablehlo.custom_call @xla_buffer_python_cpu_callback(%arg0, %arg1) "
            '{backend_config = "", mhlo.backend_config = {index = 0 : ui64}') in lowered.as_text()
    cpu = _Cpu.get()
    exe = cpu.client.compile_and_load(lowered.module, cpu.devices, xc.CompileOptions(),
                                      host_callbacks=list(lowered.host_callbacks))
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    got, seven = execute(lowered, data, np.float32(3), exe=exe)
    np.testing.assert_array_equal(got, data * 3)
    assert int(seven) == 7 and seen == [(False, True, ())]
