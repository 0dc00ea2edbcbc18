"""Many devices: a data-parallel MLP training step (the `_mlp` step, batch split over a
mesh of 1, 2 and 4 virtual CPU devices, parameters replicated; ms/step), and the cost of one
jitted call on inputs sharded over 4 devices (µs/call, through each library's jit fast path).

Both libraries run with 4 virtual CPU devices and ``Auto`` mesh axes (XLA's partitioner
chooses the layout of every intermediate), so they run the same partitioned programs.
"""

from _common import metric, run, seconds_per_call
from _mlp import init, make_step

DEVICES = 4


def measure(lib, jnp):
    name = lib.__name__
    lib.config.update(f"{name}_num_cpu_devices", DEVICES)
    sharding = lib.sharding
    NamedSharding, P, AxisType = sharding.NamedSharding, sharding.PartitionSpec, \
        sharding.AxisType
    devs = lib.devices()
    out = {}
    params, batch = init(jnp)
    for n in (1, 2, 4):
        mesh = lib.make_mesh((n,), ("batch",), axis_types=(AxisType.Auto,), devices=devs[:n])
        p = lib.device_put(params, NamedSharding(mesh, P()))
        b = lib.device_put(batch, NamedSharding(mesh, P("batch")))
        step = lib.jit(make_step(lib, jnp))
        lib.block_until_ready(step(p, b))
        t = seconds_per_call(lambda: step(p, b), number=5, repeats=5,
                             block=lib.block_until_ready)
        out[f"mlp_step_{n}dev_ms"] = metric(1e3 * t, "ms")

    mesh = lib.make_mesh((DEVICES,), ("x",), axis_types=(AxisType.Auto,), devices=devs)
    s = NamedSharding(mesh, P("x"))
    x = lib.device_put(jnp.arange(64, dtype=jnp.float32), s)
    y = lib.device_put(jnp.ones(64, dtype=jnp.float32), s)
    add = lib.jit(lambda a, b: a + b)
    lib.block_until_ready(add(x, y))
    t = seconds_per_call(lambda: add(x, y), number=1000, repeats=7, block=lib.block_until_ready)
    out["sharded_dispatch_us"] = metric(1e6 * t, "us")
    return out


if __name__ == "__main__":
    run(measure)
