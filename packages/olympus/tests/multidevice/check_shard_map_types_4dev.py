"""shard_map's type checks over 4 virtual CPU devices (a 2x2 mesh): in_specs against the
shardings of arguments typed on ``Explicit`` axes, and the varying-manual-axes (vma) types
of values inside the body. Run in its own process by `test_sharding.py`
(``OLYMPUS_NUM_CPU_DEVICES=4``). Error messages and printed types were recorded from
reference JAX 0.10.2 (names jax -> olympus)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
from olympus.sharding import AxisType, NamedSharding
from olympus.sharding import PartitionSpec as P

pytestmark = pytest.mark.skipif(
    olympus.device_count() != 4, reason="needs OLYMPUS_NUM_CPU_DEVICES=4 (see test_sharding.py)")

X = np.arange(16.0, dtype=np.float32).reshape(4, 4)


@pytest.fixture(scope="module")
def explicit_mesh():
    return olympus.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)


def _mismatch(want, have, ty):
    return (f"in_specs passed to shard_map: {want} does not match the specs of the input: "
            f"{have} for arg: {ty}. `in_specs` is an optional argument so you can omit "
            "specifying it and shard_map will infer the in_specs from the arguments. If you "
            "want to reshard your inputs, you can use `olympus.reshard` on the arguments and "
            "then pass those args to shard_map.")


@pytest.mark.parametrize("spec,arg_sharded,msg", [
    (P("x"), False, _mismatch("P('x', None)", "P(None, None)", "float32[4,4]")),
    (P(None, "x"), True, _mismatch("P(None, 'x')", "P('x', None)", "float32[4@x,4]")),
    (P("y"), True, _mismatch("P('y', None)", "P('x', None)", "float32[4@x,4]")),
    (P(("x", "y")), True, _mismatch("P(('x', 'y'), None)", "P('x', None)",
                                    "float32[4@x,4]")),
])
@pytest.mark.parametrize("jitted", [False, True])
def test_in_specs_must_match_explicit_argument_shardings(explicit_mesh, spec, arg_sharded,
                                                         msg, jitted):
    x = olympus.device_put(X, NamedSharding(explicit_mesh, P("x"))) if arg_sharded else X
    f = olympus.shard_map(lambda a: a * 2, mesh=explicit_mesh, in_specs=spec, out_specs=spec)
    with pytest.raises(ValueError) as e:
        (olympus.jit(f) if jitted else f)(x)
    assert str(e.value) == msg


def test_matching_in_specs_on_explicit_mesh_run(explicit_mesh):
    xs = olympus.device_put(X, NamedSharding(explicit_mesh, P("x")))
    for spec in (P("x"), P("x", None)):
        f = olympus.shard_map(lambda a: a * 2, mesh=explicit_mesh, in_specs=spec,
                              out_specs=P("x"))
        np.testing.assert_allclose(np.asarray(f(xs)), X * 2)
        np.testing.assert_allclose(np.asarray(olympus.jit(f)(xs)), X * 2)
    rep = olympus.shard_map(lambda a: a * 2, mesh=explicit_mesh, in_specs=P(), out_specs=P())
    np.testing.assert_allclose(np.asarray(rep(X)), X * 2)
    # Only when every mesh axis is Explicit and manual: a partly manual map is not checked.
    part = olympus.shard_map(lambda a: a, mesh=explicit_mesh, in_specs=P("y"),
                             out_specs=P("y"), axis_names={"y"})
    np.testing.assert_allclose(np.asarray(part(xs)), X)
    mixed = olympus.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    xm = olympus.device_put(X, NamedSharding(mixed, P("x")))
    out = olympus.shard_map(lambda a: a, mesh=mixed, in_specs=P("y"), out_specs=P("y"))(xm)
    np.testing.assert_allclose(np.asarray(out), X)
