"""`olympus.extend.core` and the helpers JAX's custom-interpreter guide uses
(``ClosedOlympuspr.literals``, ``olympus._src.util.safe_map``)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus._src.util import safe_map, safe_zip
from olympus.extend import core
from olympus.extend.core import primitives


def _eval(olympuspr, consts, *args):
    """The guide's interpreter: walk the equations, binding each primitive."""
    env = {}

    def read(v):
        return v.val if type(v) is core.Literal else env[v]

    def write(v, val):
        env[v] = val

    safe_map(write, olympuspr.invars, args)
    safe_map(write, olympuspr.constvars, consts)
    for eqn in olympuspr.eqns:
        outvals = eqn.primitive.bind(*safe_map(read, eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            outvals = [outvals]
        safe_map(write, eqn.outvars, outvals)
    return safe_map(read, olympuspr.outvars)


def test_custom_interpreter_from_the_guide():
    """The guide's `eval_olympuspr` over `closed.olympuspr` and `closed.literals` gives the
    function's value (checked against NumPy)."""
    def f(x):
        return jnp.exp(jnp.tanh(x)) + jnp.float32(np.pi) * jnp.ones(5)

    closed = olympus.make_olympuspr(f)(jnp.ones(5))
    assert closed.literals is closed.consts
    assert closed.invars == closed.olympuspr.invars
    assert closed.outvars == closed.olympuspr.outvars
    assert closed.constvars == closed.olympuspr.constvars
    (out,) = _eval(closed.olympuspr, closed.literals, jnp.ones(5))
    np.testing.assert_allclose(out, np.exp(np.tanh(1.0)) + np.pi, rtol=1e-6)
    assert out.dtype == np.float32


def test_extend_core_names():
    """The IR types and helpers as ``jax.extend.core`` exports them."""
    closed = olympus.make_olympuspr(lambda x: x + 1)(1)
    assert isinstance(closed, core.ClosedOlympuspr)
    assert isinstance(closed.olympuspr, core.Olympuspr)
    (eqn,) = closed.eqns
    assert isinstance(eqn, core.OlympusprEqn)
    assert isinstance(eqn.invars[0], core.Var) and isinstance(eqn.invars[1], core.Literal)
    assert eqn.primitive is primitives.add_p is lax.add_p
    assert isinstance(eqn.primitive, core.Primitive)
    assert core.olympuspr_as_fun(closed)(4) == [5]
    assert list(core.subolympusprs(closed.olympuspr)) == []
    assert core.primal_dtype_to_tangent_dtype(np.dtype(np.float32)) == np.float32
    assert core.valid_olympustype(1.0) and not core.valid_olympustype("a")


def test_extend_primitives():
    """JAX's primitive names that Olympus has (each a real primitive, never a stand-in);
    add_olympusvals_p is add_any_p."""
    assert primitives.sin_p is lax.sin_p
    assert primitives.add_olympusvals_p is primitives.add_any_p
    assert primitives.add_any_p.name == "add_any"
    assert "cond_p" in primitives.__all__ and "scan_p" in primitives.__all__
    assert all(isinstance(getattr(primitives, n), core.Primitive) for n in primitives.__all__)


def test_safe_map_and_zip_messages():
    """Messages recorded from reference JAX 0.10.2's jax._src.util."""
    assert safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    assert safe_zip([1], [2]) == [(1, 2)]
    with pytest.raises(ValueError, match=r"^safe_map\(\) argument 2 is shorter than argument 1$"):
        safe_map(lambda a, b: a, [1, 2], [1])
    with pytest.raises(ValueError, match=r"^safe_map\(\) argument 2 is longer than argument 1$"):
        safe_map(lambda a, b: a, [1], [1, 2])
    with pytest.raises(ValueError, match=r"^safe_zip\(\) argument 1 has length 3 but argument 0 "
                                         r"has length 1\. All lengths: \(1, 3\)$"):
        safe_zip([1], [1, 2, 3])


def test_private_paths_the_primitives_page_imports():
    """JAX's "writing new primitives" page imports ``jax._src.lax.lax`` and ``jax._src.api``;
    the same paths reach olympus.lax and the transformations (values as the page prints
    them under reference JAX 0.10.2: 14.0 and 4.0)."""
    from olympus._src import api
    from olympus._src.lax import lax as lax_mod

    assert api.jit is olympus.jit
    assert lax_mod.add is lax.add

    def square_add_lax(a, b):
        return lax_mod.add(lax_mod.mul(a, a), b)

    assert float(square_add_lax(2.0, 10.0)) == 14.0
    assert float(api.grad(square_add_lax, argnums=0)(2.0, 10.0)) == 4.0
    assert float(api.jit(square_add_lax)(2.0, 10.0)) == 14.0
    with pytest.raises(AttributeError):
        api.no_such_name  # noqa: B018
