"""`eval_shape`, `typeof`, `make_olympuspr(return_shape=True)`, `named_scope`,
`named_call`, `ensure_compile_time_eval`, `print_environment_info`.

Expected reprs and messages were recorded from reference JAX 0.10.2 in its own process
(``str(jax.typeof(1.0)) == '~float32[]'``, ``jax.typeof([1, 2])``'s TypeError, the
``jit(g)/outer/sin`` location names, ...), with jax -> olympus.
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import ShapeDtypeStruct


def test_eval_shape_of_arrays_and_shape_dtype_structs():
    out = olympus.eval_shape(lambda x, y: (x @ y, x.sum()), jnp.ones((2, 3)),
                             ShapeDtypeStruct((3, 4), jnp.float32))
    assert out == (ShapeDtypeStruct((2, 4), np.float32), ShapeDtypeStruct((), np.float32))
    assert repr(out[0]) == "ShapeDtypeStruct(shape=(2, 4), dtype=float32)"


def test_eval_shape_keeps_weak_types_and_pytrees_and_compiles_nothing():
    from olympus._src.jit import counters

    before = counters["compile"]
    out = olympus.eval_shape(lambda d: {"a": d["x"] * 2, "b": [d["x"].astype(jnp.int32)]},
                             {"x": 1.0})
    assert out["a"] == ShapeDtypeStruct((), np.float32, weak_type=True)
    assert repr(out["a"]) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    assert out["b"][0].dtype == np.int32
    assert counters["compile"] == before


def test_eval_shape_does_not_run_the_computation():
    calls = []
    big = ShapeDtypeStruct((10_000, 10_000), np.float32)  # 400 MB if it were made
    out = olympus.eval_shape(lambda a: (calls.append(1), a @ a)[1], big)
    assert out.shape == (10_000, 10_000) and calls == [1]


def test_eval_shape_with_sharding_and_bad_argument():
    with pytest.raises(TypeError, match=r"Error interpreting argument to <function .*> as an abstract array\. The problematic value is of type <class 'str'> and was passed to the function at path x\."):  # JAX 0.10.2's words
        olympus.eval_shape(lambda x: x, "abc")
    with pytest.raises(ValueError, match="ShapeDtypeStruct: dtype must be specified."):
        ShapeDtypeStruct((2,), None)


def test_shape_dtype_struct_like():
    """`ShapeDtypeStruct.like` (the external-callbacks page's result shapes). Expected reprs
    recorded from reference JAX 0.10.2: uncommitted arrays carry no sharding, Python scalars
    stay weak, NumPy int64 is canonicalized, tracers give their aval; a str is a TypeError
    and a ref a NotImplementedError."""
    S = ShapeDtypeStruct
    assert repr(S.like(jnp.arange(3.0))) == "ShapeDtypeStruct(shape=(3,), dtype=float32)"
    assert repr(S.like(1.0)) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    assert repr(S.like(np.int64(3))) == "ShapeDtypeStruct(shape=(), dtype=int32)"
    assert S.like(np.zeros((2, 3))) == S((2, 3), np.float32)
    assert S.like(S((2,), jnp.int8)) == S((2,), np.int8)
    committed = olympus.device_put(jnp.arange(3.0), olympus.devices()[0])
    assert S.like(committed).sharding == committed.sharding
    seen = []
    olympus.jit(lambda x: seen.append(S.like(x)))(2)
    assert seen == [S((), np.int32, weak_type=True)]
    with pytest.raises(TypeError, match="Argument 'a' of type <class 'str'> is not a valid"):
        S.like("a")
    with pytest.raises(NotImplementedError, match="Ref/AbstractRef support is not implemented"):
        S.like(olympus.new_ref(1.0))


def test_typeof_prints_as_jax_does():
    assert str(olympus.typeof(jnp.ones(3))) == "float32[3]"
    assert repr(olympus.typeof(jnp.ones(3))) == "ShapedArray(float32[3])"
    assert str(olympus.typeof(1.0)) == "~float32[]"
    assert repr(olympus.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
    assert str(olympus.typeof(jnp.ones((2, 3), "int32"))) == "int32[2,3]"
    assert str(olympus.typeof(3)) == "~int32[]"
    assert str(olympus.typeof(True)) == "bool[]"
    assert str(olympus.typeof(np.int8(3))) == "int8[]"
    assert str(olympus.typeof(np.ones(3))) == "float32[3]"  # canonicalized, as in JAX
    seen = []
    olympus.jit(lambda x: seen.append(str(olympus.typeof(x))) or x)(jnp.ones(2))
    assert seen == ["float32[2]"]


def test_typeof_rejects_non_arrays():
    with pytest.raises(TypeError) as info:
        olympus.typeof("abc")
    assert str(info.value) == "Argument 'abc' of type <class 'str'> is not a valid OLYMPUS type"
    with pytest.raises(TypeError) as info:
        olympus.typeof([1, 2])
    assert str(info.value) == ("Argument '[1, 2]' of type '<class 'list'>' is not a valid "
                               "OLYMPUS type")


def test_make_olympuspr_return_shape():
    closed, shapes = olympus.make_olympuspr(lambda x: (x, x + 1), return_shape=True)(1.0)
    # as reference JAX 0.10.2 prints make_jaxpr of the same function
    assert str(closed) == "{ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (a, b) }"
    assert shapes == (ShapeDtypeStruct((), np.float32, weak_type=True),) * 2


def _g(x):
    with olympus.named_scope("outer"):
        with olympus.named_scope("inner"):
            y = jnp.sin(x)
        return y * 2


def test_named_scope_names_the_locations():
    text = olympus.jit(_g).lower(1.0).as_text(debug_info=True)
    assert 'loc("outer/inner/sin"' in text
    assert 'loc("outer/mul"' in text
    closed = olympus.make_olympuspr(_g)(1.0)
    stacks = [e.source_info.name_stack for e in closed.olympuspr.eqns]
    assert stacks == ["outer/inner", "outer"]
    assert olympus.jit(_g)(0.5) == pytest.approx(2 * np.sin(0.5), rel=1e-6)
    with pytest.raises(TypeError, match="named_scope name argument must be a string."):
        with olympus.named_scope(3):
            pass


def test_named_call():
    f = olympus.named_call(lambda x: x * 2, name="foo")
    text = olympus.jit(f).lower(1.0).as_text(debug_info=True)
    assert 'loc("foo/mul"' in text
    # As in JAX, the olympuspr itself has no call: just the scoped equations.
    eqns = olympus.make_olympuspr(f)(1.0).olympuspr.eqns
    assert [e.primitive.name for e in eqns] == ["mul"]

    def double(x):
        return x + x

    assert 'loc("double/add"' in olympus.jit(olympus.named_call(double)).lower(1.0).as_text(
        debug_info=True)


def test_ensure_compile_time_eval_inside_jit():
    seen = []

    def h(x):
        with olympus.ensure_compile_time_eval():
            z = jnp.ones(3) * 2
            seen.append((type(z).__name__, np.asarray(z).tolist()))
        return x + z

    np.testing.assert_array_equal(olympus.jit(h)(1.0), [3.0, 3.0, 3.0])
    assert seen == [("ArrayImpl", [2.0, 2.0, 2.0])]

    def uses_tracer(x):
        with olympus.ensure_compile_time_eval():
            return x * 2

    with pytest.raises(Exception, match="(?i)tracer"):
        olympus.jit(uses_tracer)(1.0)


def test_print_environment_info(capsys):
    import jaxlib

    olympus.print_environment_info()
    out = capsys.readouterr().out
    assert f"olympus:    {olympus.__version__}" in out
    assert f"jaxlib:     {jaxlib.__version__}" in out
    assert "device info: cpu-1," in out or "device info: cpu-" in out
    assert olympus.print_environment_info(return_string=True).startswith("olympus:")
