"""Host callbacks: `olympus.pure_callback`, `olympus.experimental.io_callback`,
`olympus.effects_barrier` (JAX's external-callbacks guide, with olympus names).

Error messages were recorded from reference JAX 0.10.2 in its own process, e.g.
``jax.grad(f)`` of a pure callback ("Pure callbacks do not support JVP. ..."), ``vmap``
without a vmap_method, ``vmap`` of an ordered io_callback, and the host-side checks of
a callback's results ("Incorrect output shape for return value #0: ...") which JAX
reports inside a ``JaxRuntimeError``. The call patterns of each ``vmap_method`` (the
argument shapes the host function sees) were recorded the same way.
"""

from __future__ import annotations

import traceback

import numpy as np
import pytest
from jaxlib._jax import JaxRuntimeError

import olympus
import olympus.numpy as jnp
from olympus import ShapeDtypeStruct
from olympus.experimental import io_callback


def _host_sin(x):
    return np.sin(x)


def _sin_cb(x):
    return olympus.pure_callback(_host_sin, ShapeDtypeStruct(x.shape, x.dtype), x)


# --- pure_callback ----------------------------------------------------------------------


def test_pure_callback_eager_and_jit():
    x = jnp.arange(3.0)
    np.testing.assert_allclose(_sin_cb(x), np.sin(np.arange(3.0)), rtol=1e-6)
    out = olympus.jit(_sin_cb)(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.sin(np.arange(3.0)), rtol=1e-6)
    assert float(_sin_cb(jnp.float32(1.0))) == pytest.approx(np.sin(1.0), rel=1e-6)


def test_pure_callback_olympuspr():
    closed = olympus.make_olympuspr(_sin_cb)(jnp.arange(3.0))
    (eqn,) = closed.olympuspr.eqns
    assert eqn.primitive.name == "pure_callback"
    assert eqn.params["result_avals"] == (olympus.typeof(jnp.arange(3.0)),)
    assert eqn.params["vmap_method"] is None and eqn.params["sharding"] is None
    assert "pure_callback[" in str(closed)


def test_pure_callback_pytrees_kwargs_and_scalars():
    def host(d, *, scale):
        return {"sum": np.asarray(d["a"] + d["b"], np.float32),
                "scaled": (np.asarray(d["a"] * scale, np.float32),)}

    shapes = {"sum": ShapeDtypeStruct((2,), np.float32),
              "scaled": (ShapeDtypeStruct((2,), np.float32),)}

    @olympus.jit
    def f(a, b):
        return olympus.pure_callback(host, shapes, {"a": a, "b": b}, scale=3.0)

    out = f(jnp.ones(2), jnp.full(2, 2.0))
    np.testing.assert_array_equal(out["sum"], [3.0, 3.0])
    np.testing.assert_array_equal(out["scaled"][0], [3.0, 3.0])
    # A result_shape_dtypes of None: the callback returns None.
    assert olympus.jit(lambda x: olympus.pure_callback(lambda x: None, None, x))(1.0) is None


def test_pure_callback_results_are_checked_on_the_host():
    x = jnp.arange(3.0)
    wrong_shape = olympus.jit(lambda x: olympus.pure_callback(
        lambda x: np.ones(4, np.float32), ShapeDtypeStruct((3,), jnp.float32), x))
    with pytest.raises(JaxRuntimeError) as info:
        wrong_shape(x)
    assert "Incorrect output shape for return value #0: Expected: (3,), Actual: (4,)" in str(
        info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(JaxRuntimeError, match="Incorrect output dtype for return value #0: "
                                              "Expected: float32, Actual: int32"):
        olympus.pure_callback(lambda x: np.ones(3, np.int32),
                              ShapeDtypeStruct((3,), jnp.float32), x)
    with pytest.raises(JaxRuntimeError, match="Mismatched number of outputs from callback. "
                                              "Expected: 1, Actual: 2"):
        olympus.jit(lambda x: olympus.pure_callback(
            lambda x: (x, x), ShapeDtypeStruct((3,), jnp.float32), x))(x)
    # float64 stands for float32 without x64 (canonicalized first, as in JAX).
    out = olympus.jit(lambda x: olympus.pure_callback(
        lambda x: np.ones(3, np.float64), ShapeDtypeStruct((3,), jnp.float32), x))(x)
    np.testing.assert_array_equal(out, np.ones(3, np.float32))


def _boom(x):
    raise ValueError("boom in callback")


def test_exception_in_callback_reaches_the_caller_with_its_traceback():
    f = olympus.jit(lambda x: olympus.pure_callback(_boom, ShapeDtypeStruct((), jnp.float32),
                                                    x))
    for call in (lambda: f(1.0), lambda: olympus.pure_callback(
            _boom, ShapeDtypeStruct((), jnp.float32), 1.0)):
        with pytest.raises(JaxRuntimeError) as info:
            call()
        msg = str(info.value)
        assert "ValueError: boom in callback" in msg
        assert "_boom" in msg and __file__ in msg  # the function's own frame
        cause = info.value.__cause__
        assert isinstance(cause, ValueError) and str(cause) == "boom in callback"
        frames = [fr.name for fr in traceback.extract_tb(cause.__traceback__)]
        assert frames[-1] == "_boom"
    np.testing.assert_allclose(_sin_cb(jnp.ones(2)), np.sin(np.ones(2)), rtol=1e-6)


def test_pure_callback_bad_arguments():
    with pytest.raises(ValueError) as info:
        olympus.pure_callback(_host_sin, ShapeDtypeStruct((), jnp.float32), 1.0,
                              vmap_method="nope")
    assert str(info.value) == (
        "vmap_method must be on of the allowed methods ['sequential', 'sequential_unrolled', "
        "'expand_dims', 'broadcast_all', 'legacy_vectorized', None], but got: nope")
    with pytest.raises(TypeError, match="callback must be callable"):
        olympus.pure_callback(3, ShapeDtypeStruct((), jnp.float32), 1.0)
    with pytest.raises(TypeError, match="shape"):
        olympus.pure_callback(_host_sin, "float32", 1.0)


def test_pure_callback_is_removed_when_unused_under_jit():
    calls = []

    def host(x):
        calls.append(1)
        return x

    f = olympus.jit(lambda x: (olympus.pure_callback(host, ShapeDtypeStruct((), jnp.float32),
                                                     x), x + 1)[1])
    assert float(f(1.0)) == 2.0
    assert calls == []


# --- differentiation ------------------------------------------------------------------------


def test_pure_callback_grad_needs_custom_jvp():
    with pytest.raises(ValueError) as info:
        olympus.grad(_sin_cb)(1.0)
    assert str(info.value) == ("Pure callbacks do not support JVP. Please use "
                               "`olympus.custom_jvp` to use callbacks while taking gradients.")

    @olympus.custom_jvp
    def f(x):
        return _sin_cb(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        cos = olympus.pure_callback(np.cos, ShapeDtypeStruct(x.shape, x.dtype), x)
        return f(x), cos * t

    x = jnp.float32(0.3)
    assert float(olympus.grad(f)(x)) == pytest.approx(np.cos(0.3), rel=1e-6)
    assert float(olympus.jit(olympus.grad(f))(x)) == pytest.approx(np.cos(0.3), rel=1e-6)
    g = olympus.vmap(olympus.grad(f))
    # vmap of the custom rule's callbacks needs a vmap_method: the error says so.
    with pytest.raises(NotImplementedError, match="vmap_method"):
        g(jnp.arange(3.0))


# --- vmap ----------------------------------------------------------------------------------

_RECORDED_CALLS = {  # the shapes the host function saw, as recorded from JAX 0.10.2
    "sequential": [((2,), (2,))] * 3,
    "sequential_unrolled": [((2,), (2,))] * 3,
    "expand_dims": [((3, 2), (1, 2))],
    "broadcast_all": [((3, 2), (3, 2))],
    "legacy_vectorized": [((3, 2), (2,))],
}


@pytest.mark.parametrize("method", sorted(_RECORDED_CALLS))
@pytest.mark.parametrize("jitted", [False, True])
def test_pure_callback_vmap_methods(method, jitted):
    calls = []

    def host(x, y):
        calls.append((x.shape, y.shape))
        return np.asarray(x * 10 + y, np.float32)

    def g(x, y):
        shape = np.broadcast_shapes(x.shape, y.shape)
        return olympus.pure_callback(host, ShapeDtypeStruct(shape, x.dtype), x, y,
                                     vmap_method=method)

    vg = olympus.vmap(g, in_axes=(0, None))
    if jitted:
        vg = olympus.jit(vg)
    x = jnp.arange(6.0).reshape(3, 2)
    y = jnp.array([1.0, 2.0])
    np.testing.assert_array_equal(vg(x, y), np.arange(6.0).reshape(3, 2) * 10 + [1.0, 2.0])
    assert calls == _RECORDED_CALLS[method]


def test_pure_callback_vmap_batch_axis_not_first_and_nested():
    def host(x):
        return np.asarray(x * 2, np.float32)

    def g(x):
        return olympus.pure_callback(host, ShapeDtypeStruct(x.shape, x.dtype), x,
                                     vmap_method="sequential")

    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(olympus.vmap(g, in_axes=1)(x), (np.arange(6.0).reshape(2, 3)
                                                                  * 2).T)
    np.testing.assert_array_equal(olympus.vmap(olympus.vmap(g))(x),
                                  np.arange(6.0).reshape(2, 3) * 2)


def test_pure_callback_vmap_without_method_is_an_error():
    with pytest.raises(NotImplementedError) as info:
        olympus.vmap(_sin_cb)(jnp.arange(3.0))
    assert str(info.value) == (
        "vmap is only supported for the pure_callback primitive when vmap_method is one of "
        "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
        "'legacy_vectorized'. Got vmap_method=None.")


# --- control flow --------------------------------------------------------------------------


def test_pure_callback_in_scan_cond_while():
    def body(c, x):
        return c + _sin_cb(x), None

    out = olympus.jit(lambda xs: olympus.lax.scan(body, jnp.float32(0.0), xs)[0])(
        jnp.arange(3.0))
    assert float(out) == pytest.approx(np.sin([0.0, 1.0, 2.0]).sum(), rel=1e-6)

    def branchy(p, x):
        return olympus.lax.cond(p, _sin_cb, lambda x: x * 0, x)

    assert float(olympus.jit(branchy)(True, 1.0)) == pytest.approx(np.sin(1.0), rel=1e-6)
    assert float(olympus.jit(branchy)(False, 1.0)) == 0.0

    def loop(x):
        return olympus.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, _sin_cb(c[1])),
                                      (0, x))[1]

    assert float(olympus.jit(loop)(1.0)) == pytest.approx(np.sin(np.sin(np.sin(1.0))),
                                                          rel=1e-5)


# --- io_callback ---------------------------------------------------------------------------


def test_io_callback_ordered_calls_run_in_program_order():
    log = []

    def record(x):
        log.append(float(x))
        return np.asarray(x, np.float32)

    sds = ShapeDtypeStruct((), jnp.float32)

    @olympus.jit
    def f(x):
        a = io_callback(record, sds, x, ordered=True)
        b = io_callback(record, sds, x * 2, ordered=True)
        c = io_callback(record, sds, x * 3, ordered=True)
        return a + b + c

    for _ in range(5):
        assert float(f(1.0)) == 6.0
    assert log == [1.0, 2.0, 3.0] * 5


def test_io_callback_is_never_removed_and_runs_in_loops():
    log = []

    def record(x):
        log.append(int(x))
        return np.asarray(x, np.int32)

    sds = ShapeDtypeStruct((), jnp.int32)

    @olympus.jit
    def f(n):
        def body(i, c):
            io_callback(record, sds, i)  # result unused: kept anyway
            return c + i
        return olympus.lax.fori_loop(0, n, body, 0)

    assert int(f(4)) == 6
    assert log == [0, 1, 2, 3]
    log.clear()
    olympus.jit(lambda x: (io_callback(record, sds, x), x)[1])(7)
    assert log == [7]


def test_io_callback_eager_vmap_and_grad():
    log = []

    def record(x):
        log.append(float(x))
        return np.asarray(x, np.float32)

    sds = ShapeDtypeStruct((), jnp.float32)
    assert float(io_callback(record, sds, 1.0)) == 1.0
    np.testing.assert_array_equal(olympus.vmap(lambda x: io_callback(record, sds, x))(
        jnp.arange(3.0)), [0.0, 1.0, 2.0])
    assert log == [1.0, 0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        olympus.vmap(lambda x: io_callback(record, sds, x, ordered=True))(jnp.arange(3.0))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
        olympus.grad(lambda x: io_callback(record, sds, x))(1.0)
    assert olympus.jit(lambda x: io_callback(lambda x: None, None, x))(1.0) is None


def test_io_callback_effects_recorded():
    sds = ShapeDtypeStruct((), jnp.float32)
    j = olympus.make_olympuspr(lambda x: io_callback(np.asarray, sds, x, ordered=True))(1.0)
    assert {str(e) for e in j.olympuspr.effects} == {"OrderedIO"}
    j = olympus.make_olympuspr(lambda x: io_callback(np.asarray, sds, x))(1.0)
    assert {str(e) for e in j.olympuspr.effects} == {"IO"}
    assert olympus.make_olympuspr(_sin_cb)(1.0).olympuspr.effects == frozenset()


def test_effects_barrier_waits_for_callbacks():
    import time

    done = []

    def slow(x):
        time.sleep(0.05)
        done.append(1)
        return np.asarray(x, np.float32)

    f = olympus.jit(lambda x: io_callback(slow, ShapeDtypeStruct((), jnp.float32), x))
    f(1.0)
    olympus.effects_barrier()
    assert done == [1]
    assert olympus.effects_barrier() is None


def test_shape_dtype_struct_sharding_and_weak_type():
    import olympus_runtime as rt

    s = rt.sharding_for(olympus.devices()[0]) if hasattr(rt, "sharding_for") else None
    sds = ShapeDtypeStruct((2,), jnp.float32, sharding=s, weak_type=True)
    assert sds.sharding is s and sds.weak_type is True
    assert repr(ShapeDtypeStruct((2,), jnp.float32, weak_type=True)) == (
        "ShapeDtypeStruct(shape=(2,), dtype=float32, weak_type=True)")
    # As in JAX, a callback's results are not weakly typed even if the struct says so.
    out = olympus.jit(lambda x: olympus.pure_callback(
        lambda x: np.float32(x), ShapeDtypeStruct((), jnp.float32, weak_type=True), x))(1.0)
    assert olympus.typeof(out).weak_type is False
