"""Eager op-by-op execution: 200 elementwise ops on a small array, after a warm-up pass
(the issue's case, in the geometric mean); and, not in the mean, eager library functions
made of several primitives (reductions, `where`, softmax, logsumexp), per call."""

import importlib

from _common import metric, run, seconds_per_call
from _workloads import EAGER_OPS, eager_chain


def measure(lib, jnp):
    chain, x = eager_chain(jnp)
    lib.block_until_ready(chain())  # compiles each op once
    t = seconds_per_call(chain, number=1, repeats=9, block=lib.block_until_ready)

    m = jnp.reshape(x, (8, 8))
    special = importlib.import_module(f"{lib.__name__}.scipy.special")
    composites = [lambda: jnp.mean(m, axis=0), lambda: jnp.var(x), lambda: jnp.max(m, axis=1),
                  lambda: jnp.where(x > 0, x, 0.0), lambda: jnp.clip(x, -0.5, 0.5),
                  lambda: lib.nn.softmax(m), lambda: lib.nn.gelu(x),
                  lambda: special.logsumexp(m, axis=1)]

    def composite_chain():
        for f in composites:
            out = f()
        return out

    lib.block_until_ready(composite_chain())
    tc = seconds_per_call(composite_chain, number=20, repeats=7, block=lib.block_until_ready)
    return {"eager_op_us": metric(1e6 * t / EAGER_OPS, "us"),
            "eager_function_us": metric(1e6 * tc / len(composites), "us", geomean=False)}


if __name__ == "__main__":
    run(measure)
