"""colocated_python on 8 CPU devices (run by test_colocated_python.py in a child process
with OLYMPUS_NUM_CPU_DEVICES=8): JAX's multi-device test cases and its docs page's
8-device output, recorded from reference JAX 0.10.2 (with cloudpickle) in its own
process."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
from olympus.experimental import colocated_python

P = olympus.sharding.PartitionSpec


@pytest.fixture(autouse=True)
def eight():
    assert len(olympus.devices()) == 8


def test_colocated_cpu_devices_take_the_next_cpu_device_per_process():
    d = olympus.devices()
    cpu = colocated_python.colocated_cpu_devices(d)
    assert str(cpu) == str([f"CpuDevice(id={i})" for i in range(8)]).replace("'", "")
    # As JAX on CPU: each input takes the next unused CPU device, in order.
    assert colocated_python.colocated_cpu_devices([d[3], d[1]]) == [d[0], d[1]]
    mesh = olympus.sharding.Mesh(np.array([d[3], d[1]]), ("x",),
                                 axis_types=(olympus.sharding.AxisType.Explicit,))
    cpu_mesh = colocated_python.colocated_cpu_devices(mesh)
    assert str(cpu_mesh) == "Mesh('x': 2, axis_types=(Explicit,))"
    assert list(cpu_mesh.devices) == [d[0], d[1]]


def test_inputs_with_different_device_orders():
    cpu = colocated_python.colocated_cpu_devices(olympus.local_devices())[:2]

    @colocated_python.colocated_python
    def add(x, y):
        arrays = [x.addressable_shards[1].data + y.addressable_shards[0].data,
                  x.addressable_shards[0].data + y.addressable_shards[1].data]
        return olympus.make_array_from_single_device_arrays(y.shape, y.sharding, arrays)

    add = add.specialize(devices=cpu)
    sharding1 = olympus.sharding.NamedSharding(
        olympus.sharding.Mesh([cpu[0], cpu[1]], "x"), P("x"))
    sharding2 = olympus.sharding.NamedSharding(
        olympus.sharding.Mesh([cpu[1], cpu[0]], "x"), P("x"))
    x = olympus.device_put(np.array([0, 2]), sharding1)
    y = olympus.device_put(np.array([4, 8]), sharding2)
    out = add(x, y)
    assert out.sharding == sharding2
    assert [s.device for s in out.addressable_shards] == [cpu[1], cpu[0]]
    np.testing.assert_equal(olympus.device_get(out), np.array([2 + 4, 0 + 8]))


def test_arguments_on_different_device_lists_are_refused():
    d = olympus.devices()
    x0, x1 = olympus.device_put(1.0, d[0]), olympus.device_put(2.0, d[1])
    with pytest.raises(ValueError, match=r"^All arguments must use the same device list, but "
                       r"got multiple device lists: \{\(CpuDevice\(id=[01]\),\), "
                       r"\(CpuDevice\(id=[01]\),\)\}\.$"):
        colocated_python.colocated_python(lambda x, y: x + y)(x0, x1)


def test_object_with_captured_sharding():
    cpu = colocated_python.colocated_cpu_devices(olympus.local_devices())
    mesh = olympus.sharding.Mesh(cpu[0:2], "x")
    sharding1 = olympus.sharding.NamedSharding(mesh, P())
    sharding2 = olympus.sharding.NamedSharding(mesh, P("x"))

    @colocated_python.colocated_python_class
    class Value:
        def __init__(self, initial_value):
            self.value = initial_value
            self.sharding1, self.sharding2 = sharding1, sharding2

        def add_sharding1(self, x):
            self.value += np.asarray(x)
            return olympus.device_put(self.value, self.sharding1)

        def add_sharding2(self, x):
            self.value += np.asarray(x)
            return olympus.device_put(self.value, self.sharding2)

    value = Value(np.array([5, 15]))
    x = olympus.device_put(np.array([1]), olympus.sharding.NamedSharding(mesh, P()))
    out = value.add_sharding1(x)
    assert out.sharding == sharding1
    np.testing.assert_array_equal(olympus.device_get(out), [6, 16])
    out = value.add_sharding2(x)
    assert out.sharding == sharding2
    np.testing.assert_array_equal(olympus.device_get(out), [7, 17])


def test_jaxs_page_on_8_devices(tmp_path, capsys):
    """docs/notebooks/colocated-python.md, cell by cell (JAX's printed outputs)."""
    devices = olympus.devices()
    cpu_devices = colocated_python.colocated_cpu_devices(devices)
    cpu_mesh = olympus.sharding.Mesh(cpu_devices, ["x"])
    cpu_sharding = olympus.sharding.NamedSharding(cpu_mesh, olympus.P())
    x = olympus.device_put(1, cpu_sharding)
    assert str(olympus.jit(lambda x: x + 1)(x)) == "2"

    f = colocated_python.colocated_python(lambda x: x + 1)
    y = f(x)
    assert y.sharding == x.sharding and str(y) == "2"

    path = tmp_path / "foo"

    def write(x):
        with open(path, "w") as fh:
            fh.write(str(x))
        return x

    assert repr(olympus.block_until_ready(colocated_python.colocated_python(write)(x))) == \
        "Array(1, dtype=int32, weak_type=True)"
    assert path.read_text() == "1"

    class Adder:
        def __init__(self, increment):
            print("Adder created")
            self.increment = increment

        def __del__(self):
            print("Adder destroyed")

        def add(self, x):
            return x + self.increment

    Adder = colocated_python.colocated_python_class(Adder)
    adder = Adder(1)
    print(adder.add(olympus.device_put(1, cpu_sharding)))
    assert capsys.readouterr().out == "Adder created\n2\n"
    del adder
    assert capsys.readouterr().out == "Adder destroyed\n"
