"""`olympus.experimental.random` (JAX 0.10.2's stateful RNG): values recorded from
reference JAX 0.10.2 running the same calls (its docstring examples and more) in its own
process; float samples compared with a tolerance, keys and integers exactly."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
from olympus import random as R
from olympus.experimental import random


def test_draws_advance_eagerly_and_under_jit():
    rng = random.stateful_rng(42)
    np.testing.assert_allclose([rng.uniform(), rng.uniform()], [0.5302608, 0.72766423],
                               rtol=1e-6)
    jit_uniform = olympus.jit(rng.uniform)
    np.testing.assert_allclose([jit_uniform(), jit_uniform()], [0.6672406, 0.3890121],
                               rtol=1e-6)
    np.testing.assert_array_equal(R.key_data(rng.key()), [2954079971, 3276725750])
    np.testing.assert_array_equal(R.key_data(rng.key()), [2765691542, 824333390])
    np.testing.assert_allclose(rng.normal(size=2), [-0.25440374, -0.6385937], rtol=1e-5)
    np.testing.assert_array_equal(rng.integers(10, size=3), [3, 6, 4])
    np.testing.assert_allclose(rng.random(), 0.55718946, rtol=1e-6)
    assert repr(rng) == ("StatefulPRNG(_base_key=Array((), dtype=key<fry>) overlaying:\n"
                         "[ 0 42], _counter=Ref(9, dtype=int32, weak_type=True))")


def test_split_under_vmap_and_spawn():
    rng = random.stateful_rng(42)
    for _ in range(9):
        rng.key()
    children = rng.split(2)
    np.testing.assert_allclose(olympus.vmap(lambda r: r.uniform())(children),
                               [0.7997472, 0.05703998], rtol=1e-6)
    assert repr(children._counter) == "Ref([1, 1], dtype=int32)"
    got = [r.integers(10, size=2) for r in rng.spawn(2)]
    np.testing.assert_array_equal(got, [[7, 5], [0, 7]])


def test_errors():
    with pytest.raises(TypeError, match="requires an explicit seed to be set"):
        olympus.jit(lambda: random.stateful_rng())()
    with pytest.raises(ValueError, match="Expected base_key to be a typed PRNG key"):
        random.StatefulPRNG(R.PRNGKey(0), olympus.new_ref(0))
    with pytest.raises(ValueError, match="cannot operate on split stateful generator"):
        random.stateful_rng(0).split(2).key()
    assert isinstance(random.stateful_rng().uniform(), olympus.Array)
