"""A jitted 2048x2048 float32 matmul as GFLOP/s, against numpy's matmul (its BLAS kernel is
recorded; OPENBLAS_* variables are left as the environment has them)."""

import os

import numpy as np

from _common import metric, note, run, seconds_per_call

N = 2048


def blas_kernel() -> str:
    try:
        from threadpoolctl import threadpool_info
        info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if info:
            i = info[0]
            return f"{i['internal_api']} {i.get('version')} {i.get('architecture')} x{i['num_threads']}"
    except ImportError:
        pass
    return "unknown"


def measure(lib, jnp):
    rng = np.random.default_rng(0)
    a_host = rng.standard_normal((N, N), dtype=np.float32)
    b_host = rng.standard_normal((N, N), dtype=np.float32)
    a, b = lib.device_put(a_host), lib.device_put(b_host)
    f = lib.jit(jnp.matmul)
    lib.block_until_ready(f(a, b))
    t = seconds_per_call(lambda: f(a, b), number=1, repeats=5, block=lib.block_until_ready)
    a_host @ b_host
    t_np = seconds_per_call(lambda: a_host @ b_host, number=1, repeats=5)
    flops = 2 * N ** 3
    env = {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS")}
    note(f"numpy BLAS: {blas_kernel()}; {env or 'no OPENBLAS_* variables set'}")
    return {
        "matmul_ms": metric(1e3 * t, "ms"),
        "matmul_gflops": metric(flops / t / 1e9, "GFLOP/s", better="higher"),
        "numpy_matmul_gflops": metric(flops / t_np / 1e9, "GFLOP/s", better="higher"),
    }


if __name__ == "__main__":
    run(measure)
