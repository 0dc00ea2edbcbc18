"""Run time of the compiled MLP training step (batch 256), feeding the updated params back."""

from _common import metric, run, seconds_per_call
from _mlp import BATCH, DEPTH, WIDTH, init, make_step


def measure(lib, jnp):
    params, batch = init(jnp)
    compiled = lib.jit(make_step(lib, jnp)).trace(params, batch).lower().compile()
    state = [compiled(params, batch)]
    lib.block_until_ready(state[0])

    def one_step():
        state[0] = compiled(state[0], batch)
        return state[0]

    t = seconds_per_call(one_step, number=10, repeats=5, block=lib.block_until_ready)
    flops = 3 * 2 * BATCH * WIDTH * WIDTH * DEPTH  # forward + two backward matmuls per layer
    return {
        "step_ms": metric(1e3 * t, "ms"),
        "step_gflops": metric(flops / t / 1e9, "GFLOP/s", better="higher"),
    }


if __name__ == "__main__":
    run(measure)
