"""One process of the multi-process training check (run by test_multiprocess.py).

``train_worker.py <out.json> single`` trains on one process with one device;
``train_worker.py <out.json> <coordinator host:port> <num_processes> <process_id>`` joins
the distributed runtime (2 CPU devices per process) and trains with the batch split over
every process's devices (each process puts only its half of the batch) and the parameters
replicated. Both write the losses and final parameters to <out.json> (process 0 only).
"""

from __future__ import annotations

import json
import sys

import numpy as np


def data():
    rng = np.random.default_rng(0)
    params = {"w1": (rng.normal(size=(4, 8)) * 0.5).astype(np.float32),
              "b1": np.zeros(8, np.float32),
              "w2": (rng.normal(size=(8, 2)) * 0.5).astype(np.float32)}
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = rng.normal(size=(16, 2)).astype(np.float32)
    return params, x, y


def main() -> None:
    out, mode = sys.argv[1], sys.argv[2]
    import olympus

    if mode != "single":
        nproc, pid = int(sys.argv[3]), int(sys.argv[4])
        olympus.config.update("olympus_num_cpu_devices", 2)
        olympus.distributed.initialize(mode, nproc, pid, initialization_timeout=60)
        assert olympus.distributed.is_initialized()
    import olympus.numpy as jnp
    from olympus.sharding import AxisType, NamedSharding
    from olympus.sharding import PartitionSpec as P

    params, x, y = data()

    def loss(p, xb, yb):
        h = jnp.tanh(xb @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - yb) ** 2)

    @olympus.jit
    def step(p, xb, yb):
        val, g = olympus.value_and_grad(loss)(p, xb, yb)
        return val, {k: p[k] - 0.1 * g[k] for k in p}

    if mode == "single":
        xb, yb = x, y
    else:
        assert olympus.process_count() == nproc and olympus.device_count() == 2 * nproc
        assert olympus.local_device_count() == 2 and olympus.process_index() == pid
        mesh = olympus.make_mesh((olympus.device_count(),), ("batch",),
                                 axis_types=(AxisType.Auto,))
        batch = NamedSharding(mesh, P("batch"))
        per = x.shape[0] // nproc
        mine = slice(pid * per, (pid + 1) * per)
        xb = olympus.make_array_from_process_local_data(batch, x[mine], x.shape)
        yb = olympus.make_array_from_process_local_data(batch, y[mine], y.shape)
        assert not xb.is_fully_addressable and len(xb.addressable_shards) == 2
        params = olympus.device_put(params, NamedSharding(mesh, P()))
    losses = []
    for _ in range(3):
        val, params = step(params, xb, yb)
        losses.append(float(val))
    result = {"losses": losses, "params": {k: np.asarray(v).tolist() for k, v in params.items()}}
    if mode == "single" or pid == 0:
        with open(out, "w") as f:
            json.dump(result, f)
    if mode != "single":
        olympus.distributed.shutdown()


if __name__ == "__main__":
    main()
