"""`olympus.core` (JAX's public ``jax.core``, deprecated names warning as JAX's do) and the
top-level names and config states added beside it (``no_tracing``, ``no_execution``,
``enable_checks``, ``make_user_context``, ``ds``, ``copy_to_host_async`` ...). Behaviour and
messages recorded from reference JAX 0.10.2 (renamed)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import core


def _deprecated(name):
    with pytest.warns(DeprecationWarning, match=f"olympus.core.{name} is deprecated"):
        return getattr(core, name)


def test_plain_exports():
    closed = olympus.make_olympuspr(lambda x, y: jnp.sin(x) * y + 1.0)(1.0, 2.0)
    (out,) = core.eval_olympuspr(closed.olympuspr, closed.consts, 3.0, 4.0)
    np.testing.assert_allclose(out, np.sin(3.0) * 4.0 + 1.0, rtol=1e-6)
    assert isinstance(core.ShapedArray((2,), np.float32), core.AbstractValue)
    assert core.max_dim(2, 5) == 5 and core.min_dim(2, 5) == 2
    assert core.Tracer is olympus.Array.__mro__[0] or issubclass(core.Tracer, object)
    with core.eval_context():
        # Inside, operations run at once even under jit: the value is concrete.
        pass

    @olympus.jit
    def f(x):
        with core.ensure_compile_time_eval():
            y = jnp.sin(2.0)
        assert not isinstance(y, core.Tracer)
        return x + y
    np.testing.assert_allclose(f(1.0), 1.0 + np.sin(2.0), rtol=1e-6)


def test_deprecated_names_warn_and_work():
    closed = olympus.make_olympuspr(lambda x: x * 2.0)(1.0)
    assert _deprecated("check_olympuspr")(closed.olympuspr) is None
    assert _deprecated("is_constant_dim")(3) and not core.is_constant_dim(1.5)
    assert _deprecated("is_constant_shape")((2, 3))
    assert _deprecated("valid_olympustype")(1.0) and not core.valid_olympustype("a")
    assert _deprecated("primal_dtype_to_tangent_dtype")(np.float32) is np.float32
    assert core.primal_dtype_to_tangent_dtype(np.int32) == olympus.dtypes.float0
    assert _deprecated("no_effects") == frozenset()
    assert _deprecated("DropVar") is type(core.DropVar(core.ShapedArray((), np.float32)))
    assert _deprecated("is_concrete")(jnp.ones(2))
    gensym = _deprecated("gensym")()
    v = gensym(core.ShapedArray((2,), np.float32))
    w = gensym(core.ShapedArray((2,), np.float32))
    eqn = _deprecated("new_olympuspr_eqn")([v], [w], closed.eqns[0].primitive,
                                           closed.eqns[0].params, core.no_effects)
    assert str(eqn) == "a:f32[2] = mul b"
    found = list(_deprecated("olympusprs_in_params")({"a": closed, "b": 1,
                                                      "c": (closed.olympuspr,)}))
    assert found == [closed.olympuspr, closed.olympuspr]


def test_removed_names_raise():
    # Recorded from JAX 0.10.2 (renamed).
    with pytest.raises(AttributeError, match="olympus.core.get_aval was deprecated in OLYMPUS "
                       "v0.8.2 and removed in OLYMPUS v0.10.0; use olympus.typeof instead."):
        core.get_aval  # noqa: B018
    with pytest.raises(AttributeError):
        core.no_such_name  # noqa: B018


def test_trace_state_queries():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        jit_q, vmap_q = core.unsafe_am_i_under_a_jit_DO_NOT_USE, \
            core.unsafe_am_i_under_a_vmap_DO_NOT_USE
        names_q, env_q = core.unsafe_get_axis_names_DO_NOT_USE, \
            core.nonempty_axis_env_DO_NOT_USE
        concrete_or_error = core.concrete_or_error
    seen = {}

    def probe(x):
        seen["jit"], seen["vmap"], seen["names"], seen["env"] = (jit_q(), vmap_q(), names_q(),
                                                                 env_q())
        return x
    assert not jit_q() and not vmap_q() and names_q() == [] and not env_q()
    olympus.jit(probe)(1.0)
    assert seen["jit"] and not seen["vmap"]
    olympus.vmap(probe, axis_name="i")(jnp.ones(2))
    assert seen["vmap"] and seen["names"] == ["i"] and seen["env"]
    assert concrete_or_error(int, jnp.array(3)) == 3
    with pytest.raises(olympus.errors.ConcretizationTypeError, match="ctx here"):
        olympus.jit(lambda x: concrete_or_error(None, x, "ctx here"))(1.0)


def test_no_tracing_and_no_execution():
    f = olympus.jit(lambda x: x * 2)
    f(1.0)
    with olympus.no_tracing(True):
        r = f(2.0)  # cached: no tracing needed
        with pytest.raises(RuntimeError, match="re-tracing function .* for `jit`, but "
                           "'no_tracing' is set"):
            olympus.jit(lambda x: x + 1)(1.0)
    assert float(r) == 4.0
    with olympus.no_execution(True):
        with pytest.raises(RuntimeError, match=r"OLYMPUS tried to execute function "
                           r"jit\(<lambda>\), but the no_execution config option is set"):
            f(3.0)
    assert f(3.0) == 6.0


def test_enable_checks_and_flags():
    with olympus.enable_checks(True):
        assert float(olympus.jit(lambda x: x.sum())(jnp.ones(3))) == 3.0
    assert olympus.allow_f16_reductions.value is True
    assert olympus.legacy_prng_key.value == "allow"
    assert olympus.auto_pcast.value is True
    olympus.config.update("olympus_legacy_prng_key", "warn")
    try:
        assert olympus.config.olympus_legacy_prng_key == "warn"
    finally:
        olympus.config.update("olympus_legacy_prng_key", "allow")
    with pytest.raises(ValueError):
        olympus.config.update("olympus_legacy_prng_key", "sometimes")
    for state in (olympus.debug_key_reuse, olympus.enable_custom_prng,
                  olympus.softmax_custom_jvp, olympus.thread_guard,
                  olympus.remove_size_one_mesh_axis_from_type,
                  olympus.olympus2tf_associative_scan_reductions):
        assert state.value is False
        with state(True):
            assert state.value is True
        assert state.value is False
    assert olympus.array_garbage_collection_guard.value is None


def test_make_user_context_retraces():
    traces = []
    g = olympus.jit(lambda x: traces.append(1) or x)
    ctx = olympus.make_user_context(default_value=None)
    assert ctx.value is None
    g(1.0)
    with ctx(1):
        assert ctx.value == 1
        g(1.0)
    with ctx(1):
        g(1.0)  # same context value: cached
    with ctx(2):
        g(1.0)
    g(1.0)
    assert len(traces) == 3


def test_ds_dynamic_slices():
    x = jnp.arange(10).reshape(2, 5)
    assert olympus.ds(None) == slice(None)
    assert repr(olympus.ds(3)) == "Slice(start=0, size=3, stride=1)"
    np.testing.assert_array_equal(x[:, olympus.ds(1, 2)], [[1, 2], [6, 7]])
    np.testing.assert_array_equal(x[:, olympus.ds(1, 2, 2)], [[1, 3], [6, 8]])
    # Clamped like dynamic_slice (recorded from JAX 0.10.2).
    np.testing.assert_array_equal(x[1, olympus.ds(4, 3)], [7, 8, 9])
    f = olympus.jit(lambda x, i: x[:, olympus.ds(i, 2)])
    np.testing.assert_array_equal(f(x, 3), [[3, 4], [8, 9]])
    assert olympus.tree.leaves(olympus.ds(1, 2)) == []
    assert "dynamic_slice" in str(olympus.make_olympuspr(lambda x, i: x[olympus.ds(i, 1)])(x, 0))
    with pytest.raises(ValueError, match="Non-static stride in `dslice`"):
        olympus.ds(1, 2, jnp.int32(1))


def test_host_helpers():
    tree = {"a": jnp.ones(2)}
    assert olympus.copy_to_host_async(tree) is tree
    with pytest.warns(UserWarning, match="renamed to olympus.process_indices"):
        assert olympus.host_ids() == [0]
    assert repr(olympus.memory.Space.Host) == "MemorySpace.Host"
    assert olympus.float0 == np.dtype([("float0", "V")])
    assert olympus.ad.DontWant() == olympus.ad.DontWant()
    for name in ("core", "custom_batching", "dlpack", "image", "ops"):
        assert getattr(olympus, name).__name__ == f"olympus.{name}"


def test_inconclusive_dimension_operation_is_the_errors_class():
    """JAX 0.10.2 warns ``jax.core.InconclusiveDimensionOperation is deprecated. Use
    jax.errors.InconclusiveDimensionOperation.`` (recorded) and gives the errors class."""
    import olympus.core

    with pytest.warns(DeprecationWarning, match=re.escape(
            "olympus.core.InconclusiveDimensionOperation is deprecated. Use "
            "olympus.errors.InconclusiveDimensionOperation.")):
        cls = olympus.core.InconclusiveDimensionOperation
    assert cls is olympus.errors.InconclusiveDimensionOperation


def test_top_level_sharding_names():
    """JAX 0.10.2 exports ``jax.NamedSharding`` (``is jax.sharding.NamedSharding``) and
    ``jax.Shard`` at top level."""
    assert olympus.NamedSharding is olympus.sharding.NamedSharding
    assert olympus.Shard is olympus.sharding.Shard
    shard = olympus.device_put(np.arange(3)).addressable_shards[0]
    assert isinstance(shard, olympus.Shard)
