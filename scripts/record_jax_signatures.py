"""Record the parameters of the most used JAX functions, for the compatibility sweep test
(`packages/olympus/tests/test_compat_sweep.py`). Run with reference jax 0.10.2, in its
own virtualenv (never in a process that imports olympus):

    benchmarks/.venv-jax/bin/python scripts/record_jax_signatures.py \
        > packages/olympus/tests/data/jax_signatures.json

For each function: its parameters in order, each with its kind (positional-only,
positional-or-keyword, keyword-only, *args, **kwargs) and whether it has a default.
"""

import inspect
import json
import sys

import jax
import jax.numpy as jnp
import jax.tree_util as tu
from jax import lax

FUNCTIONS = {
    "jit": jax.jit, "grad": jax.grad, "value_and_grad": jax.value_and_grad,
    "vmap": jax.vmap, "jacfwd": jax.jacfwd, "jacrev": jax.jacrev, "hessian": jax.hessian,
    "jvp": jax.jvp, "vjp": jax.vjp, "linearize": jax.linearize,
    "custom_jvp": jax.custom_jvp, "custom_vjp": jax.custom_vjp, "checkpoint": jax.checkpoint,
    "device_put": jax.device_put, "make_jaxpr": jax.make_jaxpr,
    "lax.cond": lax.cond, "lax.switch": lax.switch, "lax.scan": lax.scan,
    "lax.while_loop": lax.while_loop, "lax.fori_loop": lax.fori_loop, "lax.map": lax.map,
    "lax.dot_general": lax.dot_general, "lax.dot": lax.dot,
    "lax.conv_general_dilated": lax.conv_general_dilated,
    "numpy.reshape": jnp.reshape, "numpy.einsum": jnp.einsum, "numpy.dot": jnp.dot,
    "numpy.matmul": jnp.matmul, "numpy.sum": jnp.sum, "numpy.mean": jnp.mean,
    "numpy.where": jnp.where, "numpy.array": jnp.array, "numpy.asarray": jnp.asarray,
    "numpy.zeros": jnp.zeros, "numpy.ones": jnp.ones, "numpy.arange": jnp.arange,
    "numpy.concatenate": jnp.concatenate, "numpy.take": jnp.take,
}
FUNCTIONS.update({f"tree_util.{n}": getattr(tu, n) for n in sorted(dir(tu)) if not n.startswith("_")
                  if inspect.isfunction(getattr(tu, n))})


def describe(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, p.default is not inspect.Parameter.empty]
            for p in sig.parameters.values()]


out = {"jax_version": jax.__version__,
       "signatures": {name: describe(fn) for name, fn in FUNCTIONS.items()}}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
