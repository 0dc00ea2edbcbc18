"""Records reference JAX 0.10.2's olympuspr-equivalent (jaxpr) text, output types and the
signature of the lowered `@main` for functions traced with symbolic shapes.

Run with reference JAX's interpreter (never in a process that imports olympus):
    /work/main/benchmarks/.venv-jax/bin/python scripts/record_shape_poly_tracing.py
Writes packages/olympus/tests/data/shape_poly_tracing.json, read by
packages/olympus/tests/test_shape_poly.py. Each case is `(spec, dtype, source)`: `source` is
a lambda over `jnp`/`lax`/`np` written the same way in both libraries.
"""

import json
import pathlib

CASES = [
    ("b, 4", "float32", "lambda x: jnp.sin(x) * 2"),
    ("b, 4", "float32", "lambda x: x.shape[0]"),
    ("b, 4", "float32", "lambda x: jnp.reshape(x, (-1, 2))"),
    ("b, 4", "float32", "lambda x: x.reshape(x.shape[0] * 4)"),
    ("b, 4", "float32", "lambda x: x + jnp.ones(x.shape)"),
    ("b, 4", "float32", "lambda x: jnp.arange(x.shape[0])"),
    ("b, 4", "float32", "lambda x: jnp.concatenate([x, x], axis=0)"),
    ("b, 4", "float32", "lambda x: jnp.concatenate([x, x], axis=1)"),
    ("b, 4", "float32", "lambda x: x[:, :2]"),
    ("b, 4", "float32", "lambda x: x[0:1]"),
    ("b, 4", "float32", "lambda x: x[1:]"),
    ("b, 4", "float32", "lambda x: x[-1]"),
    ("b, 4", "float32", "lambda x: x[None]"),
    ("b, 4", "float32", "lambda x: jnp.mean(x, axis=0)"),
    ("b, 4", "float32", "lambda x: jnp.mean(x)"),
    ("b, 4", "float32", "lambda x: jnp.sum(x, axis=0) / x.shape[0]"),
    ("b, 4", "float32", "lambda x: x @ jnp.ones((4, 3), jnp.float32)"),
    ("b, 4", "float32", "lambda x: x.T @ x"),
    ("b, 4", "float32", "lambda x: jnp.max(x, axis=1)"),
    ("b, 4", "float32", "lambda x: x.T"),
    ("b, 4", "float32", "lambda x: jnp.zeros((x.shape[0], 2))"),
    ("b, 4", "float32", "lambda x: jnp.array(x.shape[0]) + x"),
    ("b, 4", "float32", "lambda x: jnp.where(x > 0, x, 0.0)"),
    ("b, 4", "float32", "lambda x: jnp.cumsum(x, axis=0)"),
    ("b, 4", "float32", "lambda x: x.ravel()"),
    ("b, 4", "float32", "lambda x: 5. + x.shape[0]"),
    ("b, 4", "float32", "lambda x: x + x.shape[0]"),
    ("b, 4", "float32", "lambda x: jnp.broadcast_to(x[:, :1], x.shape)"),
    ("b", "int32", "lambda x: jnp.array(x.shape[0]) + x"),
    ("b, c", "int32", "lambda x: jnp.sum(x, axis=0) / x.shape[0]"),
    ("b, 4", "int32", "lambda x: jnp.reshape(x, (x.shape[0] * x.shape[1],))"),
    ("b + 15", "int32", "lambda x: x[0:16]"),
    ("a, b", "int32", "lambda x: jnp.concatenate([x, x], axis=1)"),
    ("2*b, 3", "float32", "lambda x: x.reshape((x.shape[0] // 2, 6))"),
    ("b, 4", "float32", "lambda x: jnp.stack([x, x])"),
    ("b, 4", "float32", "lambda x: jnp.expand_dims(x, 1).squeeze(1)"),
    ("b, 4", "float32", "lambda x: jnp.transpose(x)[:, ::2]"),
]


def run(jax, jnp, lax, np, export):
    out = []
    for spec, dtype, src in CASES:
        f = eval(src, dict(jnp=jnp, lax=lax, np=np))
        arg = jax.ShapeDtypeStruct(export.symbolic_shape(spec), getattr(jnp, dtype))
        rec = {"spec": spec, "dtype": dtype, "source": src}
        try:
            j = jax.make_jaxpr(f)(arg)
            rec["olympuspr"] = str(j)
            rec["out_avals"] = [str(a) for a in j.out_avals]
            text = jax.jit(f).lower(arg).as_text()
            rec["lowered_main"] = next(ln.strip() for ln in text.splitlines()
                                       if ln.strip().startswith("func.func public @main"))
        except Exception as e:  # noqa: BLE001
            rec["error"] = type(e).__name__
            rec["message"] = str(e).split("\n")[0]
        out.append(rec)
    return out


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import export, lax
    path = (pathlib.Path(__file__).resolve().parent.parent
            / "packages/olympus/tests/data/shape_poly_tracing.json")
    path.write_text(json.dumps({"jax_version": jax.__version__,
                                "cases": run(jax, jnp, lax, np, export)}, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
