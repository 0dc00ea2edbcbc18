"""Nested jit: a jitted function called under a trace is one ``jit`` equation (JAX 0.10.2).

Expected module texts were recorded by running reference JAX 0.10.2 in its own process on
the same functions (``jit(k).lower(1.0).as_text()``, ``jax.result_info`` renamed); printed
olympusprs are checked by the printing corpus (``test_printing_corpus.py``). Values are
checked against NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus._src import jit as jit_module

ONE = np.float32(1.0)

LOWERED = 'module @jit_k attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {olympus.result_info = "result"}) {\n    %0 = call @sin(%arg0) : (tensor<f32>) -> tensor<f32>\n    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>\n    %1 = stablehlo.multiply %arg0, %cst : tensor<f32>\n    %2 = call @sin(%1) : (tensor<f32>) -> tensor<f32>\n    %3 = stablehlo.add %0, %2 : tensor<f32>\n    return %3 : tensor<f32>\n  }\n  func.func private @sin(%arg0: tensor<f32>) -> tensor<f32> {\n    %0 = stablehlo.sine %arg0 : tensor<f32>\n    return %0 : tensor<f32>\n  }\n}'

LOWERED_NAMES = 'module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {olympus.result_info = "result"}) {\n    %0 = call @sin(%arg0) : (tensor<f32>) -> tensor<f32>\n    %1 = call @sin_0(%arg0) : (tensor<f32>) -> tensor<f32>\n    %2 = stablehlo.add %0, %1 : tensor<f32>\n    %3 = call @main_1(%arg0) : (tensor<f32>) -> tensor<f32>\n    %4 = stablehlo.add %2, %3 : tensor<f32>\n    %5 = call @"<lambda>"(%arg0) : (tensor<f32>) -> tensor<f32>\n    %6 = stablehlo.add %4, %5 : tensor<f32>\n    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>\n    %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2xf32>\n    %8 = call @sin_2(%7) : (tensor<2xf32>) -> tensor<2xf32>\n    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n    %9 = stablehlo.reduce(%8 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>\n    %10 = stablehlo.add %6, %9 : tensor<f32>\n    return %10 : tensor<f32>\n  }\n  func.func private @sin(%arg0: tensor<f32>) -> tensor<f32> {\n    %0 = stablehlo.sine %arg0 : tensor<f32>\n    return %0 : tensor<f32>\n  }\n  func.func private @sin_0(%arg0: tensor<f32>) -> tensor<f32> {\n    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>\n    %0 = stablehlo.multiply %arg0, %cst : tensor<f32>\n    return %0 : tensor<f32>\n  }\n  func.func private @main_1(%arg0: tensor<f32>) -> tensor<f32> {\n    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>\n    %0 = stablehlo.add %arg0, %cst : tensor<f32>\n    return %0 : tensor<f32>\n  }\n  func.func private @"<lambda>"(%arg0: tensor<f32>) -> tensor<f32> {\n    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>\n    %0 = stablehlo.multiply %arg0, %cst : tensor<f32>\n    return %0 : tensor<f32>\n  }\n  func.func private @sin_2(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n    %0 = stablehlo.sine %arg0 : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}'


def test_lowered_as_private_function_and_call():
    f = olympus.jit(jnp.sin)

    def k(x):
        return f(x) + f(x * 2)

    assert olympus.jit(k).lower(ONE).as_text().rstrip("\n") == LOWERED
    np.testing.assert_allclose(olympus.jit(k)(ONE), np.sin(1.0) + np.sin(2.0), rtol=1e-6)


def test_private_function_names_are_uniquified_as_jax():
    f = olympus.jit(jnp.sin)

    def sin(x):
        return x * 2

    def main(x):
        return x + 1

    f2, f3, g3 = olympus.jit(sin), olympus.jit(main), olympus.jit(lambda x: x * 3)
    text = olympus.jit(lambda x: f(x) + f2(x) + f3(x) + g3(x) + f(jnp.ones(2)).sum()).lower(
        ONE).as_text()
    assert text.rstrip("\n") == LOWERED_NAMES


def test_helper_called_many_times_is_traced_once():
    @olympus.jit
    def helper(x):
        return jnp.sin(x) * 2.0 + 1.0

    def f(x):
        for _ in range(50):
            x = helper(x)
        return x

    before = jit_module.counters["trace"]
    closed = olympus.make_olympuspr(f)(ONE)
    assert jit_module.counters["trace"] - before == 1
    assert [e.primitive.name for e in closed.eqns] == ["jit"] * 50
    callees = {id(e.params["olympuspr"]) for e in closed.eqns}
    assert len(callees) == 1
    text = olympus.jit(f).lower(ONE).as_text()
    assert text.count("func.func") == 2  # main and one private @helper


def _loop(x, n=5):
    y = x
    for _ in range(n):
        y = np.sin(y) * 2.0 + 1.0
    return y


@pytest.mark.parametrize("outer", ["eager", "jit"])
def test_values_under_transformations(outer):
    helper = olympus.jit(lambda x: jnp.sin(x) * 2.0 + 1.0)

    def f(x):
        for _ in range(5):
            x = helper(x)
        return x

    wrap = (lambda g: g) if outer == "eager" else olympus.jit
    x = np.float32(0.3)
    np.testing.assert_allclose(wrap(f)(x), _loop(0.3), rtol=1e-5)
    eps = 1e-3
    fd = (_loop(0.3 + eps) - _loop(0.3 - eps)) / (2 * eps)
    np.testing.assert_allclose(wrap(olympus.grad(f))(x), fd, rtol=1e-3)
    xs = np.linspace(-1, 1, 4).astype(np.float32)
    np.testing.assert_allclose(wrap(olympus.vmap(f))(xs), _loop(xs.astype(np.float64)),
                               rtol=1e-5)
    p, t = wrap(lambda x: olympus.jvp(f, (x,), (np.float32(2.0),)))(x)
    np.testing.assert_allclose(p, _loop(0.3), rtol=1e-5)
    np.testing.assert_allclose(t, 2 * fd, rtol=1e-3)
    np.testing.assert_allclose(wrap(olympus.vmap(olympus.grad(f)))(xs),
                               [(_loop(v + eps) - _loop(v - eps)) / (2 * eps)
                                for v in xs.astype(np.float64)], rtol=1e-3, atol=1e-4)


def test_multiple_results_closure_and_statics():
    g = olympus.jit(lambda x, y, n: (x * n, jnp.cos(y)), static_argnums=2)

    def f(x):
        a, b = g(x, x * 2, 3)
        c = olympus.jit(lambda y: x * y)(2.0)  # closes over the traced x
        return a + b + c

    x = np.float32(0.7)
    want = 0.7 * 3 + np.cos(1.4) + 1.4
    np.testing.assert_allclose(olympus.jit(f)(x), want, rtol=1e-6)
    np.testing.assert_allclose(olympus.grad(f)(x), 3 - 2 * np.sin(1.4) + 2, rtol=1e-5)


def test_grad_structure_is_a_primal_and_a_transposed_jit():
    f = olympus.jit(jnp.sin)
    closed = olympus.make_olympuspr(olympus.grad(lambda x: f(x) * 2.0))(ONE)
    jits = [e for e in closed.eqns if e.primitive.name == "jit"]
    assert len(jits) == 2 and all(e.params["name"] == "sin" for e in jits)
    assert [e.primitive.name for e in jits[0].params["olympuspr"].eqns] == ["sin", "cos"]
    assert [e.primitive.name for e in jits[1].params["olympuspr"].eqns] == ["mul"]


def test_checkpoint_of_nested_jit():
    f = olympus.jit(lambda x: jnp.sin(x) * x)
    g = olympus.checkpoint(lambda x: f(f(x)))
    x = np.float32(0.4)
    eps = 1e-3

    def ref(v):
        v = np.sin(v) * v
        return np.sin(v) * v

    np.testing.assert_allclose(olympus.grad(g)(x), (ref(0.4 + eps) - ref(0.4 - eps)) / (2 * eps),
                               rtol=1e-3)
    np.testing.assert_allclose(olympus.jit(olympus.grad(g))(x), olympus.grad(g)(x), rtol=1e-6)


def test_inline_traces_into_the_caller():
    f = olympus.jit(lambda y: y * 3.0, inline=True)
    closed = olympus.make_olympuspr(lambda x: f(x) + 1.0)(ONE)
    assert [e.primitive.name for e in closed.eqns] == ["mul", "add"]


def test_compiler_options_only_at_top_level():
    """JAX raises the same ValueError for compiler_options on a nested jit."""
    f = olympus.jit(lambda x: x + 1, compiler_options={"xla_embed_ir_in_executable": True})
    with pytest.raises(ValueError, match="`compiler_options` can only be passed to top-level"):
        olympus.make_olympuspr(lambda x: f(x))(ONE)


def test_callback_inside_nested_jit_runs_in_order(capfd):
    @olympus.jit
    def show(x):
        olympus.debug.print("inner {}", x)
        return x + 1

    @olympus.jit
    def f(x):
        olympus.debug.print("before {}", x)
        y = show(x)
        olympus.debug.print("after {}", y)
        return y

    np.testing.assert_allclose(f(ONE), 2.0)
    out = capfd.readouterr().out
    assert out.index("before 1.0") < out.index("inner 1.0") < out.index("after 2.0")


def test_donated_and_unused_operands():
    h = olympus.jit(lambda x, y: x * 2, donate_argnums=0, keep_unused=True)
    closed = olympus.make_olympuspr(lambda x: h(x, x + 1))(ONE)
    (eqn,) = [e for e in closed.eqns if e.primitive.name == "jit"]
    assert eqn.params["donated_invars"] == (True, False)
    assert eqn.params["keep_unused"] is True
    np.testing.assert_allclose(olympus.jit(lambda x: h(x, x + 1))(ONE), 2.0)


def test_jit_equation_evaluated_eagerly():
    """A jit equation bound outside any trace (here by re-evaluating a traced olympuspr)
    runs the callee."""
    from olympus_trace.olympuspr_utils import inline_closed

    f = olympus.jit(lambda x: jnp.sin(x) * 2.0)
    closed = olympus.make_olympuspr(lambda x: f(x) + 1.0)(ONE)
    (out,) = inline_closed(closed, np.float32(0.5))
    np.testing.assert_allclose(out, np.sin(0.5) * 2 + 1, rtol=1e-6)


def test_library_function_under_trace_is_a_jit_and_eager_is_unchanged():
    x = jnp.asarray(np.array([-1.0, 0.5, 2.0], np.float32))
    closed = olympus.make_olympuspr(lambda a: jnp.clip(a, 0.0, 1.0))(x)
    assert [(e.primitive.name, e.params.get("name")) for e in closed.eqns] == [("jit", "clip")]
    np.testing.assert_allclose(jnp.clip(x, 0.0, 1.0), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(jnp.where(x > 0, x, 0), [0.0, 0.5, 2.0])
    with pytest.raises(TypeError):
        jnp.clip([1.0, 2.0], 0.0, 1.0)


def test_lowering_prunes_unused_results_of_nested_jits():
    """As JAX 0.10.2's ``jit(lambda x, y: g(x, y)[0]).lower(1., 2.)``: the private function
    computes only the used result, and the argument feeding only the unused one is dropped
    from @main."""
    g = olympus.jit(lambda x, y: (x * 2, jnp.cos(y)))
    text = olympus.jit(lambda x, y: g(x, y)[0]).lower(ONE, ONE).as_text()
    assert "@main(%arg0: tensor<f32>) ->" in text
    assert "cosine" not in text and "call @\"<lambda>\"(%arg0)" in text
    np.testing.assert_allclose(olympus.jit(lambda x, y: g(x, y)[0])(ONE, ONE), 2.0)
