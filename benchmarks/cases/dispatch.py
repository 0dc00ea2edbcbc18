"""Steady-state jit dispatch (µs/call) with inputs already on device: a scalar f32 add,
a dict of 20 arrays in and out, and 10 positional arguments plus two keyword arguments."""

from _common import metric, run, seconds_per_call
from _workloads import dispatch_calls

NUMBER = {"scalar_add": 2000, "pytree20": 500, "args10_kwargs": 500}  # calls per batch


def measure(lib, jnp):
    block = lib.block_until_ready
    out = {}
    for name, call in dispatch_calls(lib).items():
        block(call())  # trace and compile outside the timing
        t = seconds_per_call(call, number=NUMBER[name], repeats=7, block=block)
        out[f"{name}_us"] = metric(1e6 * t, "us")
    return out


if __name__ == "__main__":
    run(measure)
