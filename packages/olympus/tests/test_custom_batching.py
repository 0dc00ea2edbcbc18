"""olympus.custom_batching: custom_vmap's rule runs where vmap meets the call (eagerly,
under jit, nested vmaps), with JAX's errors; sequential_vmap batches by a loop (values
against NumPy, the olympuspr a scan). Expected behaviour recorded from JAX 0.10.2."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.custom_batching import custom_vmap, sequential_vmap


def _make():
    calls = []

    @custom_vmap
    def f(x, y):
        return x + y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, in_batched))
        # A deliberately different batched function, so the test sees which ran.
        return xs * ys, True
    return f, calls


def test_rule_used_only_under_vmap():
    f, calls = _make()
    assert float(f(2.0, 3.0)) == 5.0
    assert float(olympus.jit(f)(2.0, 3.0)) == 5.0
    assert calls == []
    np.testing.assert_array_equal(olympus.vmap(f)(jnp.full(3, 2.0), jnp.full(3, 3.0)), [6] * 3)
    np.testing.assert_array_equal(olympus.vmap(f, (0, None))(jnp.full(3, 2.0), 3.0), [6] * 3)
    assert calls == [(3, [True, True]), (3, [True, False])]
    np.testing.assert_array_equal(olympus.vmap(olympus.jit(f))(jnp.full(3, 2.0),
                                                               jnp.full(3, 3.0)), [6] * 3)
    np.testing.assert_array_equal(olympus.jit(olympus.vmap(f))(jnp.full(3, 2.0),
                                                               jnp.full(3, 3.0)), [6] * 3)
    text = str(olympus.make_olympuspr(olympus.vmap(f))(jnp.ones(3), jnp.ones(3)))
    assert "mul" in text and "add" not in text
    out = olympus.vmap(olympus.vmap(f))(jnp.full((2, 3), 2.0), jnp.full((2, 3), 3.0))
    np.testing.assert_array_equal(out, np.full((2, 3), 6.0))


def test_errors():
    @custom_vmap
    def g(x):
        return x

    # Recorded from JAX 0.10.2.
    with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap "
                       "function g using def_vmap."):
        g(1.0)

    @g.def_vmap
    def bad(axis_size, in_batched, xs):
        return xs, [True]
    with pytest.raises(ValueError, match=r"structure of output value and output batching "
                       r"specification returned by custom vmap rule \(bad\) do not match."):
        olympus.vmap(g)(jnp.ones(3))


def test_sequential_vmap():
    h = sequential_vmap(lambda x, y: (x * y).sum())
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(olympus.vmap(h)(x, x), (x * x).sum(1))
    np.testing.assert_allclose(olympus.vmap(h, (0, None))(x, x[0]), (x * x[0]).sum(1))
    assert "scan" in str(olympus.make_olympuspr(olympus.vmap(h))(x, x))
    assert float(h(x[0], x[1])) == float((x[0] * x[1]).sum())
