"""Memory spaces: `device_put` to host memory (``olympus.memory.Space.Host``, a
``SingleDeviceSharding`` with ``memory_kind="pinned_host"``), eagerly and inside a trace,
and jitted programs over host-memory values. The printed forms are reference JAX 0.10.2's
on CPU (recorded by running it in its own process)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.sharding import SingleDeviceSharding

F = np.float32
Host = olympus.memory.Space.Host


def _dev():
    return olympus.devices()[0]


def test_memory_space_enum_prints_as_jax():
    assert repr(Host) == "MemorySpace.Host"
    assert repr(olympus.memory.Space.Device) == "MemorySpace.Device"


def test_eager_device_put_to_host_memory_and_back():
    x = jnp.arange(4.0)
    for target in (Host, SingleDeviceSharding(_dev(), memory_kind="pinned_host")):
        y = olympus.device_put(x, target)
        assert y.sharding.memory_kind == "pinned_host"
        assert str(y.aval) == "float32<host>[4]"
        assert repr(y.aval) == "ShapedArray(float32<host>[4])"
        np.testing.assert_array_equal(y, [0, 1, 2, 3])
    z = olympus.device_put(np.arange(3, dtype=F), SingleDeviceSharding(_dev(),
                                                                       memory_kind="pinned_host"))
    assert z.sharding.memory_kind == "pinned_host"
    np.testing.assert_array_equal(z, [0, 1, 2])
    back = olympus.device_put(y, _dev())
    assert back.sharding.memory_kind == "device" and str(back.aval) == "float32[4]"
    back2 = olympus.device_put(y, olympus.memory.Space.Device)
    assert back2.sharding.memory_kind == "device"
    np.testing.assert_array_equal(back2, [0, 1, 2, 3])


def test_jit_accepts_host_memory_arguments_and_returns_host_results():
    x = jnp.arange(4.0)
    y = olympus.device_put(x, Host)
    double = olympus.jit(lambda v: v * 2)
    np.testing.assert_array_equal(double(y), [0, 2, 4, 6])
    assert 'mhlo.memory_kind = "pinned_host"' in double.lower(y).as_text()
    offload = olympus.jit(lambda v: olympus.device_put(v * 2, Host))
    out = offload(x)
    assert out.sharding.memory_kind == "pinned_host"
    np.testing.assert_array_equal(out, [0, 2, 4, 6])
    text = offload.lower(x).as_text()
    assert 'mhlo.memory_kind = "pinned_host"' in text  # the result's memory kind


def test_device_put_inside_a_trace_stages_the_primitive_as_jax_prints_it():
    x = jnp.arange(4.0)
    j = olympus.make_olympuspr(lambda v: olympus.device_put(v, Host))(x)
    assert str(j) == (
        "{ lambda ; a:f32[4]. let\n"
        "    b:f32<host>[4] = device_put[\n"
        "      copy_semantics=(ArrayCopySemantics.REUSE_INPUT,)\n"
        "      devices=(MemorySpace.Host,)\n"
        "      srcs=(None,)\n"
        "    ] a\n"
        "  in (b,) }")
    j = olympus.make_olympuspr(lambda v: olympus.device_put(v))(x)
    assert "b:f32[4] = device_put[" in str(j) and "devices=(None,)" in str(j)
    j = olympus.make_olympuspr(lambda v: olympus.device_put(v, may_alias=False))(x)
    assert "ArrayCopySemantics.ALWAYS_COPY" in str(j)


def test_device_put_is_batched_under_vmap():
    x = jnp.arange(4.0)
    np.testing.assert_array_equal(olympus.vmap(lambda v: olympus.device_put(v, Host))(x),
                                  [0, 1, 2, 3])


def test_device_put_refuses_donation_with_may_alias_true():
    # JAX 0.10.2's message.
    with pytest.raises(ValueError, match="may_alias and donate cannot be True at the same"):
        olympus.device_put(jnp.arange(2.0), donate=True, may_alias=True)
