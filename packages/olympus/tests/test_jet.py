"""olympus.experimental.jet: Taylor-mode derivatives against repeated forward-mode
differentiation (nested jvp/grad) along the same input path, for the common primitives,
through jit and custom_jvp functions; jet2's unscaled coefficients; JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.experimental.jet import jet, jet2


def _path_derivatives(f, x0, v, order):
    """d^k/ds^k f(x0 + s v) at s=0 for k=1..order, by nested jvp."""
    def along(s):
        return f(x0 + s * v)
    fns = [along]
    for _ in range(order):
        prev = fns[-1]
        fns.append(lambda s, prev=prev: olympus.jvp(prev, (s,), (jnp.ones_like(s),))[1])
    s0 = jnp.float32(0.0)
    return [np.asarray(g(s0)) for g in fns[1:]]


CASES = {
    "elementwise": lambda x: jnp.sin(x) * jnp.exp(x) / (1 + x ** 2) + jnp.tanh(x)
    + jnp.sqrt(x) * jnp.log(x) + jnp.cos(x) ** 3 - jnp.log1p(x) + olympus.nn.sigmoid(x),
    "special": lambda x: jax_erf(x) + jnp.arctan(x) + jnp.arcsinh(x) + x ** 2.5,
    "linear_algebra": lambda x: jnp.sum(jnp.outer(x, x) @ x) + jnp.sum(jnp.cumsum(x) ** 2),
    "maxes": lambda x: jnp.sum(jnp.maximum(x, 0.35) * x) + jnp.max(x ** 2)
    + jnp.sum(olympus.nn.relu(x - 0.4)) + jnp.sum(jnp.abs(x - 0.5)),
    "indexing": lambda x: jnp.sum(x[::-1][1:] * x[:-1]) + jnp.sum(jnp.where(x > 0.4, x, -x)),
}


def jax_erf(x):
    return olympus.scipy.special.erf(x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_repeated_jvp(name):
    f = CASES[name]
    x0 = jnp.array([0.3, 0.7, 1.1])
    v = jnp.array([1.0, -0.5, 0.25])
    order = 3
    y, terms = jet(lambda x: jnp.sum(f(x)), (x0,), ((v,) + (jnp.zeros(3),) * (order - 1),))
    np.testing.assert_allclose(y, np.sum(f(x0)), rtol=1e-5)
    want = _path_derivatives(lambda x: jnp.sum(f(x)), x0, v, order)
    for got, w in zip(terms, want):
        np.testing.assert_allclose(got, w, rtol=2e-3, atol=2e-3)


def test_higher_input_terms_and_jit():
    # A curved input path x(s) = x0 + v s + a s^2/2: compare with derivatives of the
    # composed function of s.
    f = olympus.jit(lambda x: jnp.exp(jnp.sin(x)) * x)
    x0, v, a = 0.4, 1.3, -0.7
    y, (y1, y2) = jet(f, (x0,), ((v, a),))

    def along(s):
        return f(x0 + v * s + 0.5 * a * s * s)
    d1 = olympus.grad(along)
    d2 = olympus.grad(d1)
    np.testing.assert_allclose([y1, y2], [d1(0.0), d2(0.0)], rtol=1e-4)


def test_custom_jvp_traced_through_and_jet2():
    f = olympus.nn.softplus  # has a custom rule in JAX; jet differentiates its body
    y, (c1, c2) = jet2(f, (0.5,), ((1.0, 0.0),))
    _, (d1, d2) = jet(f, (0.5,), ((1.0, 0.0),))
    np.testing.assert_allclose([c1, c2], [d1, d2 / 2], rtol=1e-5)
    sig = 1 / (1 + np.exp(-0.5))
    np.testing.assert_allclose([d1, d2], [sig, sig * (1 - sig)], rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="jet terms have inconsistent lengths"):
        jet(jnp.sin, (1.0, 2.0), ([1.0], [1.0, 2.0]))
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jet(lambda x: x, ((1.0, 2.0),), ([1.0],))
