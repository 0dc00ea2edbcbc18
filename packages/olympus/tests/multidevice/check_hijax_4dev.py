"""High-level types and primitives (olympus.experimental.hijax) over 4 virtual CPU devices:
JAX 0.10.2's hijax_test cases test_tuple_shit, test_tuple_shmap and
test_hijax_primitive_under_shard_map with olympus names (JAX runs them on a 2x2 and a
2-device mesh; the expected shardings and values are the ones its tests assert). Run in its
own process by `test_hijax.py` (``OLYMPUS_NUM_CPU_DEVICES=4``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.experimental.hijax import HiPspec
from olympus.sharding import AxisType
from olympus.sharding import PartitionSpec as P

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from test_hijax import get_tuple_element, make_tup, square  # noqa: E402

pytestmark = pytest.mark.skipif(
    olympus.device_count() != 4, reason="needs OLYMPUS_NUM_CPU_DEVICES=4 (see test_hijax.py)")


@dataclass(frozen=True)
class TupP(HiPspec):
    val: tuple

    def to_lo(self):
        return self.val


@pytest.fixture()
def mesh():
    m = olympus.make_mesh((2, 2), ("i", "j"), axis_types=(AxisType.Explicit,) * 2)
    with olympus.set_mesh(m):
        yield m


def test_tuple_shit(mesh):
    x = olympus.device_put(jnp.arange(4.), P("i"))
    y = olympus.device_put(jnp.arange(3.), P(None))
    tup = make_tup(x, y)
    assert olympus.typeof(get_tuple_element(tup, 0)).sharding.spec == P("i")
    assert olympus.typeof(get_tuple_element(tup, 1)).sharding.spec == P(None)


def test_tuple_shmap(mesh):
    x = olympus.device_put(jnp.arange(4.), P("i"))
    y = olympus.device_put(jnp.arange(3.), P(None))
    tup = make_tup(x, y)

    @olympus.jit
    @olympus.shard_map(in_specs=TupP((P("i"), P(None))), out_specs=TupP((P(None), P("i"))))
    def fun(tup):
        a, b = get_tuple_element(tup, 0), get_tuple_element(tup, 1)
        return make_tup(b, a)

    out = fun(tup)
    x_, y_ = get_tuple_element(out, 1), get_tuple_element(out, 0)
    np.testing.assert_array_equal(x_, np.arange(4.))
    np.testing.assert_array_equal(y_, np.arange(3.))
    assert x.sharding == x_.sharding
    assert y.sharding == y_.sharding


def test_tuple_shmap_spec_count_error(mesh):
    tup = make_tup(jnp.arange(4.), jnp.arange(3.))
    f = olympus.shard_map(lambda t: t, in_specs=TupP((P("i"),)), out_specs=P())
    with pytest.raises(ValueError, match="gives 1 specs for a value made of 2 arrays"):
        f(tup)


def test_hijax_primitive_under_shard_map(mesh):
    x = olympus.device_put(jnp.arange(10), P("i"))
    g = olympus.shard_map(square, in_specs=(P("i"),), out_specs=P("i"))
    np.testing.assert_array_equal(g(x), np.arange(10) ** 2)
    np.testing.assert_array_equal(olympus.jit(g)(x), np.arange(10) ** 2)
