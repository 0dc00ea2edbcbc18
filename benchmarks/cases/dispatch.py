"""Steady-state jit dispatch (µs/call) with inputs already on device: a scalar f32 add,
a dict of 20 arrays in and out, and 10 positional arguments plus two keyword arguments."""

import numpy as np

from _common import metric, run, seconds_per_call


def measure(lib, jnp):
    block = lib.block_until_ready

    def per_call_us(f, *args, number, **kwargs):
        block(f(*args, **kwargs))  # trace and compile outside the timing
        return 1e6 * seconds_per_call(lambda: f(*args, **kwargs), number=number,
                                      repeats=7, block=block)

    a = lib.device_put(np.float32(1.0))
    b = lib.device_put(np.float32(2.0))
    add = lib.jit(lambda x, y: x + y)

    tree = {f"x{i:02d}": lib.device_put(np.full((8,), i, np.float32)) for i in range(20)}
    double = lib.jit(lambda d: {k: v * 2.0 for k, v in d.items()})

    xs = [lib.device_put(np.full((8,), i, np.float32)) for i in range(10)]

    def combine(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, *, scale, shift):
        return (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9) * scale + shift

    many = lib.jit(combine)
    return {
        "scalar_add_us": metric(per_call_us(add, a, b, number=2000), "us"),
        "pytree20_us": metric(per_call_us(double, tree, number=500), "us"),
        "args10_kwargs_us": metric(per_call_us(many, *xs, scale=a, shift=b, number=500), "us"),
    }


if __name__ == "__main__":
    run(measure)
