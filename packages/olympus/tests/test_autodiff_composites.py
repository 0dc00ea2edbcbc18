"""Gradients of composite functions against formulas derived by hand (computed in numpy)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp

RTOL, ATOL = 2e-4, 2e-5


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(0)


def test_tanh_mlp_loss(rng):
    """L = 0.5 * ||W2 tanh(W1 x + b1) - y||^2."""
    W1, b1 = rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=5).astype(np.float32)
    W2, x, y = (rng.normal(size=(2, 5)).astype(np.float32),
                rng.normal(size=3).astype(np.float32), rng.normal(size=2).astype(np.float32))

    def loss(W1, b1, W2):
        h = jnp.tanh(W1 @ x + b1)
        r = W2 @ h - y
        return 0.5 * jnp.sum(r * r)

    h = np.tanh(W1 @ x + b1)
    r = W2 @ h - y
    dW2 = np.outer(r, h)
    dz = (W2.T @ r) * (1 - h * h)
    dW1, db1 = np.outer(dz, x), dz
    g = olympus.grad(loss, argnums=(0, 1, 2))(W1, b1, W2)
    for got, want in zip(g, (dW1, db1, dW2)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=RTOL, atol=ATOL)


def test_softmax_cross_entropy(rng):
    """d/dz [-sum(t * log softmax(z))] = softmax(z) * sum(t) - t."""
    z = rng.normal(size=(4, 6)).astype(np.float32)
    t = np.eye(6, dtype=np.float32)[[1, 0, 5, 3]]

    def ce(z):
        logp = z - jnp.log(jnp.sum(jnp.exp(z - z.max(axis=-1, keepdims=True)), axis=-1,
                                   keepdims=True)) - z.max(axis=-1, keepdims=True)
        return -jnp.sum(t * logp)

    s = np.exp(z - z.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(olympus.grad(ce)(z)), s - t, rtol=RTOL, atol=ATOL)


def test_logsumexp_gradient_is_softmax(rng):
    z = (rng.normal(size=7) * 30).astype(np.float32)  # large values: stability matters
    g = olympus.grad(lambda v: olympus.nn.logsumexp(v))(z)
    s = np.exp(z.astype(np.float64) - z.max())
    np.testing.assert_allclose(np.asarray(g), s / s.sum(), rtol=RTOL, atol=ATOL)


def test_norm_gradient_is_unit_vector(rng):
    v = rng.normal(size=9).astype(np.float32)
    g = olympus.grad(lambda v: jnp.sqrt(jnp.sum(v * v)))(v)
    np.testing.assert_allclose(np.asarray(g), v / np.linalg.norm(v), rtol=RTOL, atol=ATOL)
    g2 = olympus.grad(lambda v: jnp.linalg.norm(v))(v)
    np.testing.assert_allclose(np.asarray(g2), v / np.linalg.norm(v), rtol=RTOL, atol=ATOL)


def test_matmul_chain(rng):
    """d/dB trace(A B C) = A^T C^T."""
    A, B, C = (rng.normal(size=s).astype(np.float32) for s in ((3, 4), (4, 5), (5, 3)))
    g = olympus.grad(lambda B: jnp.trace(A @ B @ C))(B)
    np.testing.assert_allclose(np.asarray(g), A.T @ C.T, rtol=RTOL, atol=ATOL)


def test_quadratic_form_hessian_is_the_symmetrized_matrix(rng):
    M = rng.normal(size=(4, 4)).astype(np.float32)
    x = rng.normal(size=4).astype(np.float32)
    H = olympus.hessian(lambda x: x @ M @ x)(x)
    np.testing.assert_allclose(np.asarray(H), M + M.T, rtol=RTOL, atol=ATOL)
    g = olympus.grad(lambda x: x @ M @ x)(x)
    np.testing.assert_allclose(np.asarray(g), (M + M.T) @ x, rtol=RTOL, atol=ATOL)


def test_where_guarded_log_has_finite_gradient():
    def f(x):
        safe = jnp.where(x > 0, x, 1.0)
        return jnp.sum(jnp.where(x > 0, jnp.log(safe), 0.0))

    g = np.asarray(olympus.grad(f)(jnp.array([0.0, 2.0, -1.0])))
    np.testing.assert_allclose(g, [0.0, 0.5, 0.0])


def test_grad_through_jit_equals_jit_through_grad(rng):
    W = rng.normal(size=(3, 3)).astype(np.float32)

    def f(x):
        return jnp.sum(jnp.tanh(W @ x) ** 2)

    x = rng.normal(size=3).astype(np.float32)
    a = olympus.grad(olympus.jit(f))(x)
    b = olympus.jit(olympus.grad(f))(x)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)
