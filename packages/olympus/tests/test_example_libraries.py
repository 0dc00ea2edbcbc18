"""olympus.example_libraries (stax, optimizers) against reference JAX 0.10.2's recorded
outputs (``data/jax_example_libraries.json``, written by running the same programs under
JAX): four steps of every optimizer and schedule on a small least-squares-like problem,
clip_grads/l2_norm, a conv/pool/dense/batchnorm network's shapes and outputs, fan-out /
parallel / concat combinators, a transposed convolution, and Dense's random init (the PRNG
streams match JAX's)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.example_libraries import optimizers, stax

with open(os.path.join(os.path.dirname(__file__), "data", "jax_example_libraries.json")) as f:
    EXPECTED = json.load(f)

X = np.linspace(-1, 1.7, 12, dtype=np.float32).reshape(4, 3)
P0 = {"w": np.arange(6, dtype=np.float32).reshape(3, 2) / 10 - 0.2,
      "b": np.array([0.1, -0.3], np.float32)}


def _loss(p, x):
    return jnp.sum((jnp.tanh(x @ p["w"]) + p["b"]) ** 2)


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=1e-4, atol=1e-5)


OPTIMIZERS = {
    "sgd": lambda: optimizers.sgd(0.1),
    "momentum": lambda: optimizers.momentum(0.1, 0.9),
    "nesterov": lambda: optimizers.nesterov(0.1, 0.9),
    "adagrad": lambda: optimizers.adagrad(0.1),
    "rmsprop": lambda: optimizers.rmsprop(0.01),
    "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.01),
    "adam": lambda: optimizers.adam(0.01),
    "adamax": lambda: optimizers.adamax(0.01),
    "sm3": lambda: optimizers.sm3(0.1),
    "adam_sched": lambda: optimizers.adam(optimizers.exponential_decay(0.1, 2, 0.5)),
    "sgd_poly": lambda: optimizers.sgd(optimizers.polynomial_decay(0.1, 3, 0.01)),
    "sgd_pw": lambda: optimizers.sgd(optimizers.piecewise_constant([1, 2], [0.1, 0.05, 0.01])),
    "sgd_inv": lambda: optimizers.sgd(optimizers.inverse_time_decay(0.1, 2, 0.5,
                                                                    staircase=True)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_against_jax(name):
    init, update, get_params = OPTIMIZERS[name]()
    grad = olympus.grad(_loss)

    def step(i, s):
        return update(i, grad(get_params(s), X), s)
    # sm3 keeps the parameter's shape (Python ints) in its state: not jittable, in JAX too.
    step = step if name == "sm3" else olympus.jit(step)
    state = init(P0)
    for i in range(4):
        state = step(i, state)
    params = get_params(state)
    for k in ("w", "b"):
        _close(params[k], EXPECTED[name][k])


def test_utilities():
    clipped = optimizers.clip_grads(P0, 0.5)
    for k in ("w", "b"):
        _close(clipped[k], EXPECTED["clip"][k])
    _close(optimizers.l2_norm(P0), EXPECTED["l2"])
    sched = optimizers.make_schedule(0.3)
    assert sched(7) == 0.3
    with pytest.raises(TypeError):
        optimizers.make_schedule([0.1, 0.2])
    with pytest.raises(ValueError, match="boundaries length must be one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1])


def test_state_pack_unpack_and_tree_checks():
    init, update, get_params = optimizers.adam(0.1)
    state = init(P0)
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    again = optimizers.pack_optimizer_state(marked)
    for a, b in zip(olympus.tree.leaves(state), olympus.tree.leaves(again)):
        np.testing.assert_array_equal(a, b)
    assert olympus.tree.structure(state) == olympus.tree.structure(again)
    with pytest.raises(TypeError, match="gradient tree that did not match the parameter tree"):
        update(0, {"w": P0["w"]}, state)
    out = olympus.jit(lambda s: s)(state)  # the state is a pytree
    np.testing.assert_array_equal(get_params(out)["b"], P0["b"])


def _cos_params(params, scale=0.7):
    return olympus.tree.map(lambda a: np.asarray(
        np.cos(np.arange(np.size(a)).reshape(np.shape(a)) * scale), np.float32), params)


def test_stax_network_against_jax():
    init_fn, apply_fn = stax.serial(
        stax.Conv(3, (2, 2), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), strides=(1, 1)),
        stax.AvgPool((2, 2)), stax.Flatten, stax.Dense(4), stax.BatchNorm(axis=(0,)),
        stax.LogSoftmax)
    key = olympus.random.PRNGKey(0)
    shape, params = init_fn(key, (2, 5, 5, 1))
    assert list(shape) == EXPECTED["stax_shape"]
    assert [[list(np.shape(a)) for a in olympus.tree.leaves(p)] for p in params] == \
        EXPECTED["stax_params_shapes"]
    xs = np.sin(np.arange(50, dtype=np.float32)).reshape(2, 5, 5, 1)
    _close(olympus.jit(apply_fn)(_cos_params(params), xs), EXPECTED["stax_out"])


def test_stax_combinators_and_transpose_against_jax():
    key = olympus.random.PRNGKey(0)
    init2, apply2 = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity),
                                stax.FanInConcat())
    shape2, _ = init2(key, (2, 3))
    assert list(shape2) == EXPECTED["fan"][0]
    w = (np.ones((3, 3), np.float32) * 0.5, np.arange(3, dtype=np.float32))
    _close(olympus.jit(apply2)([(), [w, ()], ()], X[:2]), EXPECTED["fan"][1])
    init3, apply3 = stax.serial(stax.Conv1DTranspose(2, (3,), strides=(2,)),
                                stax.SumPool((2,), spec="NWC"))
    shape3, p3 = init3(key, (1, 4, 1))
    assert list(shape3) == EXPECTED["convT"][0]
    out = olympus.jit(apply3)(_cos_params(p3, 1.0),
                              np.arange(4, dtype=np.float32).reshape(1, 4, 1))
    _close(out, EXPECTED["convT"][1])
    _, dense = stax.Dense(3)[0](key, (5, 2))
    for got, want in zip(dense, EXPECTED["dense_init"]):
        _close(got, want)


def test_stax_dropout_and_elementwise():
    init, apply = stax.Dropout(0.5)
    x = jnp.ones((100,))
    with pytest.raises(ValueError, match="Dropout layer requires apply_fun to be called with "
                       "a PRNG key argument"):
        apply((), x)
    y = apply((), x, rng=olympus.random.PRNGKey(1))
    assert set(np.unique(np.asarray(y)).tolist()) <= {0.0, 2.0}
    np.testing.assert_array_equal(
        stax.Dropout(0.5, mode="test")[1]((), x, rng=olympus.random.PRNGKey(1)), x)
    np.testing.assert_allclose(stax.Tanh[1]((), np.float32(0.5)), np.tanh(0.5), rtol=1e-6)
    shape, params = stax.shape_dependent(lambda s: stax.Dense(s[-1]))[0](
        olympus.random.PRNGKey(0), (2, 4))
    assert shape == (2, 4) and params[0].shape == (4, 4)
