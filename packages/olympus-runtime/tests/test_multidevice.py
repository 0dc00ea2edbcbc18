"""Arrays and executables over several devices (GSPMDSharding, num_partitions > 1)."""

from __future__ import annotations

import json
import pickle

import jaxlib.xla_client as xc
import ml_dtypes
import numpy as np
import pytest
from conftest import run_python
from mlir_helpers import parse

import olympus_runtime as ort

SPLIT = xc.HloSharding.iota_tile([2])
REPLICATED = xc.HloSharding.replicate()


def split2():
    return ort.GSPMDSharding(ort.devices(), SPLIT)


def test_sharding_interning_and_layout():
    s = split2()
    assert ort.GSPMDSharding(ort.devices(), xc.HloSharding.from_string("{devices=[2]<=[2]}")) is s
    # JAX 0.10.2's repr (recorded from reference JAX): no device list.
    assert repr(s) == "GSPMDSharding({devices=[2]<=[2]}, memory_kind=device)"
    assert s.num_devices == 2 and not s.is_fully_replicated and s.device_set == set(ort.devices())
    d0, d1 = ort.devices()
    assert s.devices_indices_map((6,)) == {d0: (slice(0, 3),), d1: (slice(3, 6),)}
    assert s.shard_shape((6,)) == (3,)
    rows = ort.GSPMDSharding(ort.devices(), xc.HloSharding.iota_tile([2, 1]))
    # A dimension in one piece is indexed slice(None), as JAX indexes it.
    assert rows.devices_indices_map((6, 3)) == {d0: (slice(0, 3), slice(None)),
                                                d1: (slice(3, 6), slice(None))}
    with pytest.raises(ValueError, match="does not fit a rank-2 array"):
        s.shard_shape((6, 3))
    with pytest.raises(ValueError, match="does not divide shape"):
        s.shard_shape((5,))
    assert pickle.loads(pickle.dumps(s)) is s


@pytest.mark.parametrize("dtype", [np.float32, np.int8, ml_dtypes.bfloat16, np.bool_,
                                   ml_dtypes.float8_e4m3fn, ml_dtypes.int4,
                                   ml_dtypes.float4_e2m1fn])
def test_split_put_and_read_back(dtype):
    x = (np.arange(12).reshape(4, 3) % 5).astype(dtype)
    rows = ort.GSPMDSharding(ort.devices(), xc.HloSharding.iota_tile([2, 1]))
    a = ort.device_put(x, rows)
    assert a.sharding is rows and a.devices() == set(ort.devices())
    assert a.device is rows and a.committed
    np.testing.assert_array_equal(ort.device_get(a), x)
    np.testing.assert_array_equal(np.asarray(a), x)
    assert repr(a) == repr(ort.device_put(x))  # the values, like a single-device array
    assert [r.tolist() for r in a] == np.asarray(x, np.float32 if dtype is ml_dtypes.bfloat16
                                                 else dtype).tolist()


def test_replicated_put_and_read_back():
    s = ort.GSPMDSharding(ort.devices(), REPLICATED)
    a = ort.device_put(np.arange(5, dtype=np.int32), s)
    assert a.sharding.is_fully_replicated
    np.testing.assert_array_equal(np.asarray(a), np.arange(5))
    w = ort.device_put(1.5, s)
    assert repr(w) == "Array(1.5, dtype=float32, weak_type=True)"


def test_resharding_with_device_put():
    x = np.arange(8, dtype=np.float32)
    single = ort.device_put(x)
    split = ort.device_put(single, split2())
    assert split.sharding is split2()
    back = ort.device_put(split, ort.devices()[1])
    assert back.device is ort.devices()[1]
    np.testing.assert_array_equal(np.asarray(back), x)
    assert ort.device_put(split, split2()) is split


SPMD_SIN = """
module @jit_spmd attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
      -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>},
          tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %0 = stablehlo.sine %a : tensor<8xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %1 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    return %0, %1 : tensor<8xf32>, tensor<f32>
  }
}"""


def test_spmd_executable():
    exe = ort.compile(parse(SPMD_SIN), num_partitions=2)
    assert exe.in_shardings == (split2(),)
    assert exe.out_shardings[0] is split2() and exe.out_shardings[1].is_fully_replicated
    x = np.linspace(0, 3, 8, dtype=np.float32)
    sin, total = exe.execute([ort.device_put(x, split2())])
    np.testing.assert_allclose(np.asarray(sin), np.sin(x), rtol=1e-6)
    assert float(total) == pytest.approx(float(x.sum()), rel=1e-6)
    assert sin.sharding is split2()
    # A wrongly placed argument is rejected before C++ (which would crash, JAXLIB.md §0).
    with pytest.raises(ValueError, match=r"argument 0 is on cpu:0, but the executable runs on cpu:0, cpu:1"):
        exe.execute([ort.device_put(x)])
    replicated = ort.device_put(x, ort.GSPMDSharding(ort.devices(), REPLICATED))
    with pytest.raises(ValueError, match=r"argument 0 \(f32\[8\]\) has sharding GSPMDSharding\(\{replicated\}, memory_kind=device\), but the executable expects GSPMDSharding\(\{devices=\[2\]<=\[2\]\}, memory_kind=device\)"):
        exe.execute([replicated])


def test_four_devices_two_by_two_in_subprocess():
    r = run_python("""
        import json, numpy as np, jaxlib.xla_client as xc, olympus_runtime as ort
        ort.set_num_cpu_devices(4)
        devs = ort.devices()
        x = np.arange(32, dtype=np.float32).reshape(4, 8)
        grid = ort.GSPMDSharding(devs, xc.HloSharding.iota_tile([2, 2]))
        a = ort.device_put(x, grid)
        # Partially replicated: rows split in 2, each half on 2 devices.
        part = ort.GSPMDSharding(devs, xc.HloSharding.from_string(
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"))
        b = ort.device_put(x, part)
        shards = {d.id: tuple((s.start, s.stop) for s in idx)
                  for d, idx in part.devices_indices_map((4, 8)).items()}
        print(json.dumps({"a": np.asarray(a).tolist() == x.tolist(),
                          "b": np.asarray(b).tolist() == x.tolist(),
                          "shards": {str(k): v for k, v in shards.items()}}))
    """)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["a"] and out["b"]
    # A dimension in one piece is indexed slice(None), as JAX indexes it.
    assert out["shards"] == {"0": [[0, 2], [None, None]], "1": [[0, 2], [None, None]],
                             "2": [[2, 4], [None, None]], "3": [[2, 4], [None, None]]}
