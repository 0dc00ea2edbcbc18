"""The examples of JAX 0.10.2's ``docs/export/export.md`` with olympus names; the expected
outputs are the documented ones.

Adapted: ``export.export(jnp.cos)`` becomes ``export.export(olympus.jit(jnp.cos))``
(``jax.numpy`` functions are jitted objects in JAX; olympus.numpy's run eagerly).

Skipped:
* the custom-call compatibility example (it defines a primitive through JAX internals,
  ``jax._src.core`` / ``jax._src.interpreters.mlir``; the check itself is tested in
  `test_export.py`);
* the device-polymorphic examples (``AbstractMesh``, ``NamedSharding`` inputs,
  ``in_shardings_jax``, calling on 4 or 8 devices): exporting shardings over several
  devices is not supported yet;
* ``config.jax_export_calling_convention_version(10)`` (a JAX-internal config);
* the shape-polymorphism examples (``docs/export/shape_poly.md``), which need symbolic
  dimensions.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import export, lax


def test_serialization_example():
    def f(x):
        return 2 * x * x

    exported = export.export(olympus.jit(f))(olympus.ShapeDtypeStruct((), np.float32))
    assert re.search(r".*@main.*", exported.mlir_module()).group(0) == (
        '  func.func public @main(%arg0: tensor<f32> loc("x")) -> (tensor<f32> '
        '{jax.result_info = "result"}) {')
    serialized = exported.serialize()
    rehydrated_exp = export.deserialize(serialized)

    def callee(y):
        return 3.0 * rehydrated_exp.call(y * 4.0)

    assert repr(callee(1.0)) == "Array(96., dtype=float32)"


def test_vjp_order_example():
    def f(x):
        return 7 * x * x * x

    blob = export.export(olympus.jit(f))(1.0).serialize(vjp_order=3)
    rehydrated_f = export.deserialize(blob).call
    assert repr(rehydrated_f(0.1)) == "Array(0.007, dtype=float32)"
    # The documented reprs have no weak_type: in JAX a custom_vjp's cotangent keeps the
    # bwd's (strong) type, olympus.grad gives a cotangent its primal's weak type (a
    # divergence of olympus.grad, outside olympus.export). Values and dtypes are checked.
    for fn, want in ((olympus.grad(rehydrated_f), "Array(0.21000001, dtype=float32"),
                     (olympus.grad(olympus.grad(rehydrated_f)), "Array(4.2, dtype=float32"),
                     (olympus.grad(olympus.grad(olympus.grad(rehydrated_f))),
                      "Array(42., dtype=float32")):
        assert repr(fn(0.1)).startswith(want)
    with pytest.raises(ValueError, match="No VJP is available"):
        olympus.grad(olympus.grad(olympus.grad(olympus.grad(rehydrated_f))))(0.1)


def test_default_export_platform_example():
    assert export.default_export_platform() == "cpu"


def test_cross_platform_examples():
    exp = export.export(olympus.jit(lax.cos), platforms=["tpu"])(1.0)
    with pytest.raises(ValueError, match="Function 'cos' was exported for platforms"):
        exp.call(1.0)
    exp_unsafe = export.export(olympus.jit(lax.cos), platforms=["tpu"],
                               disabled_checks=[export.DisabledSafetyCheck.platform()])(1.0)
    assert repr(exp_unsafe.call(1.0)) == "Array(0.5403023, dtype=float32, weak_type=True)"
    exp_multi = export.export(olympus.jit(lax.cos), platforms=["tpu", "cpu", "cuda"])(1.0)
    assert repr(exp_multi.call(1.0)) == "Array(0.5403023, dtype=float32, weak_type=True)"


def test_multi_platform_module_size_example():
    """Only the size relation is documented (the sizes themselves are ``+SKIP``): a module
    without platform-specific lowering is barely larger for three platforms."""
    def f(x):
        for _ in range(100):
            x = jnp.cos(x)
        return x

    exp_single = export.export(olympus.jit(f))(1.0)
    exp_multi = export.export(olympus.jit(f), platforms=["cpu", "tpu", "cuda"])(1.0)
    single, multi = len(exp_single.mlir_module_serialized), len(exp_multi.mlir_module_serialized)
    assert single < multi < single + 200


def test_single_device_export_example():
    arg = jnp.arange(4)
    exp = export.export(olympus.jit(lambda x: jnp.cos(x)))(arg)
    assert repr(exp.in_avals) == "(ShapedArray(int32[4]),)"
    assert exp.nr_devices == 1


def test_calling_convention_version_examples():
    exp = export.export(olympus.jit(jnp.cos))(1.0)
    assert exp.calling_convention_version == 10
    assert (export.minimum_supported_calling_convention_version,
            export.maximum_supported_calling_convention_version) == (9, 10)


def test_export_docstring_example():
    """``jax.export.export``'s docstring."""
    exported = export.export(olympus.jit(jnp.sin))(np.arange(4, dtype=np.float32))
    assert repr(exported.in_avals) == "(ShapedArray(float32[4]),)"
    blob = exported.serialize()
    rehydrated = export.deserialize(blob)
    assert rehydrated.fun_name == "sin"
    out = rehydrated.call(np.array([.1, .2, .3, .4], dtype=np.float32))
    np.testing.assert_allclose(out, [0.09983342, 0.19866933, 0.29552022, 0.38941833],
                               rtol=1e-6)
