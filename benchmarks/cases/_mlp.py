"""The MLP training step shared by the mlp_* cases: 4 dense layers of width 512, tanh,
squared error, ``grad`` + SGD. Data comes from numpy so no library RNG is needed."""

from __future__ import annotations

import numpy as np

WIDTH, DEPTH, BATCH = 512, 4, 256


def init(jnp, seed: int = 0):
    """(params, batch): params is a list of (w, b) pairs, batch is (x, y)."""
    rng = np.random.default_rng(seed)

    def normal(*shape, scale=1.0):
        return jnp.asarray((rng.standard_normal(shape) * scale).astype(np.float32))

    params = [(normal(WIDTH, WIDTH, scale=WIDTH ** -0.5), jnp.zeros((WIDTH,), jnp.float32))
              for _ in range(DEPTH)]
    batch = (normal(BATCH, WIDTH), normal(BATCH, WIDTH))
    return params, batch


def make_step(lib, jnp, lr: float = 0.01):
    """A fresh step function. A distinct ``lr`` gives a distinct program (the constant is
    baked in), so neither library's trace, lowering or compile cache can serve it."""

    def loss(params, batch):
        x, y = batch
        for w, b in params[:-1]:
            x = jnp.tanh(jnp.dot(x, w) + b)
        w, b = params[-1]
        return jnp.mean((jnp.dot(x, w) + b - y) ** 2)

    def step(params, batch):
        grads = lib.grad(loss)(params, batch)
        return [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads, strict=True)]

    return step


def fresh_lr(i: int) -> float:
    return 0.01 + 1e-4 * (i + 1)
