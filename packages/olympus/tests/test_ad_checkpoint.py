"""Rematerialization as JAX does it: `checkpoint` policies (the residuals each saves and the
equations each recomputes, counted in the olympuspr of the gradient), `checkpoint_name`,
`print_saved_residuals` (its output compared with what reference JAX 0.10.2 prints for the
same source lines, recorded by running JAX on `_checkpoint_examples.py` in its own process),
and the memory rematerialization saves (`Compiled.memory_analysis()`).
"""

from __future__ import annotations

import contextlib
import io

import _checkpoint_examples as examples
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.ad_checkpoint import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint_name,
    print_saved_residuals,
)

F = np.float32
cp = olympus.checkpoint_policies

#: What reference JAX 0.10.2 prints for each example of `_checkpoint_examples.cases()`
#: (``{path}`` is that file).
PRINTED = {
    'f': [
        'f32[5,4] from the argument W1',
        'f32[6,5] from the argument W2',
        'f32[7,6] from the argument W3',
        'f32[4] from the argument x',
        'f32[5] output of sin from {path}:16:9 (g)',
        'f32[5] output of cos from {path}:16:9 (g)',
        'f32[6] output of sin from {path}:16:9 (g)',
        'f32[6] output of cos from {path}:16:9 (g)',
        'f32[7] output of cos from {path}:16:9 (g)',
    ],
    'f2': [
        'f32[5,4] from the argument W1',
        'f32[6,5] from the argument W2',
        'f32[7,6] from the argument W3',
        'f32[4] from the argument x',
        'f32[5] output of sin from {path}:16:9 (g)',
        'f32[6] output of sin from {path}:16:9 (g)',
    ],
    'f3': [
        'f32[5,4] from the argument W1',
        'f32[6,5] from the argument W2',
        'f32[7,6] from the argument W3',
        'f32[4] from the argument x',
        'f32[5] output of dot_general from {path}:15:6 (g)',
        'f32[6] output of dot_general from {path}:15:6 (g)',
        'f32[7] output of dot_general from {path}:15:6 (g)',
    ],
    'f4': [
        'f32[5,4] from the argument W1',
        'f32[6,5] from the argument W2',
        'f32[7,6] from the argument W3',
        'f32[4] from the argument x',
        "f32[5] named 'a' from {path}:34:6 (f4)",
    ],
    'loss': [
        'f32[4,4] from the argument params[0]',
        'f32[4,4] from the argument params[1]',
        'f32[4,4] from the argument params[2]',
        'f32[4] from the argument x',
        'f32[4] output of sin from {path}:66:9 (layer)',
        'f32[4] output of cos from {path}:66:9 (layer)',
        'f32[4] output of sin from {path}:66:9 (layer)',
        'f32[4] output of cos from {path}:66:9 (layer)',
        'f32[4] output of mul from {path}:41:17 (loss)',
    ],
    'loss_checkpoint': [
        'f32[4,4] from the argument params[0]',
        'f32[4,4] from the argument params[1]',
        'f32[4,4] from the argument params[2]',
        'f32[4] from the argument x',
        'f32[4] from the argument y',
        'f32[4] output of dot_general from {path}:66:17 (layer)',
        'f32[4] output of dot_general from {path}:66:17 (layer)',
        'f32[4] output of dot_general from {path}:48:6 (predict)',
    ],
    'loss_named': [
        'f32[4,4] from the argument params[0]',
        'f32[4,4] from the argument params[1]',
        'f32[4,4] from the argument params[2]',
        'f32[4] from the argument x',
        'f32[4] output of cos from {path}:66:9 (layer)',
        "f32[4] named 'layer0_output' from {path}:56:8 (predict_named)",
        'f32[4] output of cos from {path}:66:9 (layer)',
        "f32[4] named 'layer1_output' from {path}:56:8 (predict_named)",
        'f32[4] output of mul from {path}:62:17 (loss_named)',
    ],
    'loss_checkpoint2': [
        'f32[4,4] from the argument params[0]',
        'f32[4,4] from the argument params[1]',
        'f32[4,4] from the argument params[2]',
        'f32[4] from the argument x',
        'f32[4] from the argument y',
        "f32[4] named 'layer0_output' from {path}:56:8 (predict_named)",
    ],
    'chain8': [
        'f32[] output of cos from {path}:72:10 (chain_compose.<locals>.f)',
        'f32[] output of cos from {path}:72:10 (chain_compose.<locals>.f)',
        'f32[] output of cos from {path}:72:10 (chain_compose.<locals>.f)',
        'f32[] output of cos from {path}:72:10 (chain_compose.<locals>.f)',
        'f32[] output of cos from {path}:72:10 (chain_compose.<locals>.f)',
        'f32[] output of cos from {path}:72:10 (chain_compose.<locals>.f)',
        'f32[] output of cos from {path}:72:10 (chain_compose.<locals>.f)',
        'f32[] output of cos from {path}:72:10 (chain_compose.<locals>.f)',
    ],
    'recursive8': [
        'f32[] from the argument x',
        'f32[] output of sin from {path}:82:21 (recursive_checkpoint.<locals>.<lambda>)',
        'f32[] output of cos from {path}:82:24 (recursive_checkpoint.<locals>.<lambda>)',
        'f32[] output of cos from {path}:82:21 (recursive_checkpoint.<locals>.<lambda>)',
    ],
    'everything': [
        'f32[5,4] from the argument W1',
        'f32[6,5] from the argument W2',
        'f32[7,6] from the argument W3',
        'f32[4] from the argument x',
        'f32[5] output of sin from {path}:16:9 (g)',
        'f32[5] output of cos from {path}:16:9 (g)',
        'f32[6] output of sin from {path}:16:9 (g)',
        'f32[6] output of cos from {path}:16:9 (g)',
        'f32[7] output of cos from {path}:16:9 (g)',
    ],
    'nothing': [
        'f32[5,4] from the argument W1',
        'f32[6,5] from the argument W2',
        'f32[7,6] from the argument W3',
        'f32[4] from the argument x',
    ],
    'both': [
        'f32[5,4] from the argument W1',
        'f32[6,5] from the argument W2',
        'f32[7,6] from the argument W3',
        'f32[4] from the argument x',
        'f32[5] output of dot_general from {path}:15:6 (g)',
        "f32[5] named 'a' from {path}:34:6 (f4)",
        'f32[6] output of dot_general from {path}:15:6 (g)',
        'f32[7] output of dot_general from {path}:15:6 (g)',
    ],
}


@pytest.mark.parametrize("title", list(PRINTED))
def test_print_saved_residuals_as_jax_prints_it(title):
    examples.use(olympus, jnp, checkpoint_name)
    fn, args = {t: (f, a) for t, f, a in examples.cases()}[title]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_saved_residuals(fn, *args)
    want = [line.replace("{path}", examples.__file__) for line in PRINTED[title]]
    assert buf.getvalue().splitlines() == want


# --- residuals and recomputation per policy ------------------------------------------------------


def two_layers(W1, W2, x):
    x = checkpoint_name(jnp.sin(jnp.dot(W1, x)), "a")
    x = checkpoint_name(jnp.sin(jnp.dot(W2, x)), "b")
    return jnp.sum(x ** 2)


def backward_checkpoint(policy, fn=two_layers, n_args=3):
    """The gradient's olympuspr, its one backward-pass checkpoint: (number of residuals it
    takes besides the function's inputs and the cotangent, names of the primitives of the
    equations it recomputes (those not reading the cotangent))."""
    args = [np.full((4, 4), 0.1, F), np.full((4, 4), 0.2, F), np.ones(4, F)][:n_args]
    closed = olympus.make_olympuspr(
        olympus.grad(olympus.checkpoint(fn, policy=policy), argnums=tuple(range(n_args))))(
        *args)
    (eqn,) = [e for e in closed.olympuspr.eqns if e.primitive.name == "checkpoint"]
    assert eqn.params["differentiated"] and eqn.params["policy"] is policy
    body = eqn.params["call_olympuspr"].olympuspr
    linear = {id(body.invars[-1])}
    recomputed = []
    for e in body.eqns:
        if any(id(v) in linear for v in e.invars):
            linear.update(id(v) for v in e.outvars)
        else:
            recomputed.append(e.primitive.name)
    residuals = saved(closed.olympuspr)
    # The gradient is right whatever is saved.
    W1, W2, x = args[0], args[1], args[2]
    h = np.sin(W1 @ x)
    o = np.sin(W2 @ h)
    g_o = 2 * o * np.cos(W2 @ h)
    g_h = W2.T @ g_o * np.cos(W1 @ x)
    grads = olympus.grad(olympus.checkpoint(fn, policy=policy), argnums=(0, 1, 2))(*args)
    np.testing.assert_allclose(grads[0], np.outer(g_h, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1], np.outer(g_o, h), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[2], W1.T @ g_h, rtol=1e-5, atol=1e-6)
    return residuals, sorted(recomputed)


def saved(olympuspr) -> int:
    """The operands of the backward-pass checkpoint computed by the forward pass."""
    (eqn,) = [e for e in olympuspr.eqns if e.primitive.name == "checkpoint"]
    defined = {id(v) for e in olympuspr.eqns for v in e.outvars}
    return sum(1 for v in eqn.invars if id(v) in defined)


FORWARD = sorted(["dot_general", "sin", "cos", "name", "dot_general", "sin", "cos", "name",
                  "mul"])


def test_nothing_saveable_recomputes_the_whole_forward_pass():
    # The default (policy None) is nothing_saveable.
    assert backward_checkpoint(None) == (0, FORWARD)
    assert backward_checkpoint(cp.nothing_saveable) == (0, FORWARD)


def test_everything_saveable_recomputes_nothing():
    # Saved: cos(W1 x), the name 'a' (an input of the second dot), cos(W2 h), and 2 * out.
    assert backward_checkpoint(cp.everything_saveable) == (4, [])
    assert backward_checkpoint(cp.save_anything_except_these_names("a")) == (4, [])


def test_dots_policies_save_the_matrix_products():
    rest = sorted(["sin", "cos", "name", "sin", "cos", "name", "mul"])
    for policy in (cp.dots_saveable, cp.checkpoint_dots, cp.dots_with_no_batch_dims_saveable,
                   cp.checkpoint_dots_with_no_batch_dims):
        assert backward_checkpoint(policy) == (2, rest)


def test_dots_with_batch_dims_are_recomputed_by_the_no_batch_dims_policies():
    def batched(W, x):
        dims = (((2,), (1,)), ((0,), (0,)))  # batch dimension 0
        return jnp.sum(jnp.sin(olympus.lax.dot_general(W, x, dims)))

    W, x = np.ones((2, 3, 3), F), np.ones((2, 3), F)

    def count(policy):
        closed = olympus.make_olympuspr(olympus.grad(olympus.checkpoint(batched,
                                                                        policy=policy)))(W, x)
        return saved(closed.olympuspr)

    assert count(cp.dots_saveable) == 1
    assert count(cp.dots_with_no_batch_dims_saveable) == 0


def test_name_policies_save_only_the_named_values_they_select():
    no_a = sorted(["dot_general", "cos", "dot_general", "sin", "cos", "name", "mul"])
    assert backward_checkpoint(cp.save_only_these_names("a")) == (1, no_a)
    # 'b' is needed too (by the square's derivative): the policy saving both saves two.
    no_ab = sorted(["dot_general", "cos", "dot_general", "cos", "mul"])
    assert backward_checkpoint(cp.save_any_names_but_these()) == (2, no_ab)
    assert backward_checkpoint(cp.save_any_names_but_these("a")) == (1, sorted(
        ["dot_general", "sin", "cos", "name", "dot_general", "cos", "mul"]))
    assert backward_checkpoint(cp.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"], names_which_can_be_offloaded=[],
        offload_src="device", offload_dst="pinned_host")) == (1, no_a)


def test_save_from_both_policies_is_their_union():
    both = cp.save_from_both_policies(cp.save_only_these_names("a"), cp.dots_saveable)
    assert backward_checkpoint(both) == (3, sorted(["cos", "sin", "cos", "name", "mul"]))
    bad = cp.save_from_both_policies(lambda *_, **__: Saveable, cp.dots_saveable)
    with pytest.raises(ValueError, match="The return value of the policies should be a "
                                         "boolean"):
        backward_checkpoint(bad)


def test_custom_policy_answers_and_offloading():
    def only_sin(prim, *_, **__):
        return Saveable if prim.name == "sin" else Recompute

    n, recomputed = backward_checkpoint(only_sin)
    # Both sines are saved (the names read them); the products and cosines are recomputed.
    assert n == 2 and "sin" not in recomputed and recomputed.count("dot_general") == 2
    with pytest.raises(ValueError, match="The names should be exclusive"):
        cp.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
            offload_src="device", offload_dst="pinned_host")
    offload = cp.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["a"],
        offload_src="device", offload_dst="pinned_host")
    # "a" is kept (in host memory), so only what it does not cover is recomputed, plus the
    # transfer back to the device; backward_checkpoint also checks the gradient's values.
    no_a = sorted(["dot_general", "cos", "dot_general", "sin", "cos", "name", "mul"])
    assert backward_checkpoint(offload) == (1, sorted(no_a + ["device_put"]))
    assert Offloadable("device", "pinned_host").dst == "pinned_host"
    # As JAX 0.10.2 (recorded): a policy is only called when differentiating, so a
    # non-callable one fails there, and the function itself runs.
    bad = olympus.checkpoint(two_layers, policy="everything")
    with pytest.raises(TypeError, match="'str' object is not callable"):
        olympus.grad(bad)(np.full((4, 4), 0.1, F), np.full((4, 4), 0.2, F), np.ones(4, F))


def test_checkpoint_name_is_the_identity_and_names_any_pytree():
    tree = {"u": np.ones(2, F), "v": (F(3.0),)}
    assert checkpoint_name(tree, "t") is tree  # outside a transformation: as it is
    out = olympus.jit(lambda t: checkpoint_name(t, "t"))(tree)
    np.testing.assert_allclose(out["u"], 1.0)
    j = olympus.make_olympuspr(lambda t: checkpoint_name(t, "t"))(tree)
    assert str(j).count("name[name=t]") == 2
    np.testing.assert_allclose(olympus.grad(lambda x: checkpoint_name(x, "x") ** 2)(F(3.0)),
                               6.0)
    np.testing.assert_allclose(olympus.vmap(lambda x: checkpoint_name(x, "x") * 2)(
        np.arange(3.0, dtype=F)), [0, 2, 4])


# --- memory ---------------------------------------------------------------------------------------


def test_nothing_saveable_needs_less_temporary_memory_than_everything_saveable():
    """A 10-layer MLP, each layer checkpointed: saving nothing keeps only the layer inputs
    (each layer recomputed in the backward pass), saving everything keeps every residual.
    The recomputation is not merged back into the forward pass by XLA, so remat also beats
    no checkpoint at all."""
    def make(policy):
        def block(w1, w2, x):
            return jnp.tanh(jnp.tanh(x @ w1) @ w2)

        layer = block if policy == "none" else olympus.checkpoint(block, policy=policy)

        def mlp(params, x):
            for w1, w2 in params:
                x = layer(w1, w2, x)
            return jnp.sum(x ** 2)

        return mlp

    params = [(np.full((128, 128), 0.01, F), np.full((128, 128), 0.01, F))
              for _ in range(10)]
    x = np.ones((1024, 128), F)

    def temp(policy):
        compiled = olympus.jit(olympus.grad(make(policy))).lower(params, x).compile()
        return compiled.memory_analysis().temp_size_in_bytes

    nothing, everything, plain = (temp(cp.nothing_saveable), temp(cp.everything_saveable),
                                  temp("none"))
    assert nothing < everything
    assert nothing < plain
    # The values are those of the plain gradient.
    g1 = olympus.jit(olympus.grad(make(cp.nothing_saveable)))(params, x)
    g2 = olympus.jit(olympus.grad(make("none")))(params, x)
    for (a1, b1), (a2, b2) in zip(g1, g2):
        np.testing.assert_allclose(a1, a2, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(b1, b2, rtol=1e-5, atol=1e-7)


# --- offloading ---------------------------------------------------------------------------------


def _offloading_example():
    policy = cp.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["y"],
        offload_src="device", offload_dst="pinned_host")

    def f(x):
        return jnp.sum(jnp.cos(checkpoint_name(jnp.sin(x), "y")) * x)

    return f, olympus.checkpoint(f, policy=policy)


#: Reference JAX 0.10.2's `make_olympuspr(grad(g))(x)` of `_offloading_example` (outer
#: program; recorded on CPU): the offloaded residual goes to host memory right after it is
#: named, and the backward checkpoint takes it as a host value.
JAX_OFFLOAD_FORWARD = """\
    p:f32[4] = sin o
    q:f32[4] = name[name=y] p
    r:f32<host>[4] = device_put[
      copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,)
      devices=(MemorySpace.Host,)
      srcs=(None,)
    ] q
    s:f32[4] = cos q
    t:f32[4] = mul s o
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] t"""


def test_offloaded_residuals_equal_the_plain_gradient_eagerly_and_under_jit():
    f, g = _offloading_example()
    x = np.arange(4, dtype=F)
    x64 = x.astype(np.float64)
    expected = np.cos(np.sin(x64)) - x64 * np.sin(np.sin(x64)) * np.cos(x64)
    for grad in (olympus.grad(g), olympus.jit(olympus.grad(g)), olympus.grad(f)):
        np.testing.assert_allclose(grad(x), expected, rtol=1e-5, atol=1e-6)
    vjp_out, vjp_fn = olympus.vjp(g, x)
    np.testing.assert_allclose(vjp_fn(F(2.0))[0], 2 * expected, rtol=1e-5, atol=1e-6)


def test_offloaded_residuals_show_as_host_transfers_in_the_olympuspr():
    _, g = _offloading_example()
    x = np.arange(4, dtype=F)
    text = str(olympus.make_olympuspr(olympus.grad(g))(x))
    assert JAX_OFFLOAD_FORWARD in text
    # The backward pass takes the host value and moves it back to the device first.
    assert "{ lambda ; a:f32<host>[4] b:f32[4] c:f32[]. let\n    d:f32[4] = device_put[" in text
    assert "devices=(MemorySpace.Device,)" in text
    lin = str(olympus.make_olympuspr(olympus.linearize(g, x)[1])(x))
    assert "{ lambda o:f32<host>[4] p:f32[4]; q:f32[4]. let" in lin


def test_print_saved_residuals_shows_the_offloaded_residual_in_host_memory():
    _, g = _offloading_example()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(g, np.arange(4, dtype=F))
    lines = out.getvalue().splitlines()
    # As reference JAX 0.10.2 prints it (its second line ends after "from ").
    assert lines[0] == "f32[4] from the argument x"
    assert lines[1].startswith("f32<host>[4] output of device_put from ")
    assert len(lines) == 2


def test_offloading_lowers_on_cpu_with_memory_kinds_as_jax_does():
    _, g = _offloading_example()
    text = olympus.jit(olympus.grad(g)).lower(np.arange(4, dtype=F)).as_text()
    # JAX 0.10.2 on CPU: transfers inside the program are the identity, and once memory
    # spaces are in play the result names its memory kind.
    assert 'mhlo.memory_kind = "device"' in text
    assert "annotate_device_placement" not in text


def test_offload_policies_refuse_a_memory_kind_the_backend_lacks():
    with pytest.raises(ValueError, match="offload_dst='hbm' is not a memory kind"):
        cp.save_and_offload_only_these_names(
            names_which_can_be_saved=[], names_which_can_be_offloaded=["y"],
            offload_src="device", offload_dst="hbm")
    with pytest.raises(ValueError, match="offload_src='tpu' is not a memory kind"):
        cp.offload_dot_with_no_batch_dims("tpu", "pinned_host")


def test_offload_dot_policy_moves_the_products_to_host_memory():
    policy = cp.offload_dot_with_no_batch_dims("device", "pinned_host")
    n, recomputed = backward_checkpoint(policy)
    assert n == 2 and recomputed.count("device_put") == 2
    assert recomputed.count("dot_general") == 0


def test_concrete_option_is_refused_as_jax_does():
    """JAX 0.10.2 keeps ``concrete=`` only to raise this NotImplementedError, for True and
    False alike (recorded from reference JAX, JEP 11830's example; jax -> olympus)."""
    for value in (True, False):
        with pytest.raises(NotImplementedError) as info:
            olympus.checkpoint(lambda x: x, concrete=value)
        assert str(info.value) == (
            "The `concrete` option to `olympus.checkpoint` was deprecated in OLYMPUS v0.8.2, "
            "and removed in OLYMPUS v0.10.0. In its place please use `static_argnums`; for "
            "details refer to "
            "https://docs.olympus.dev/en/latest/jep/11830-new-remat-checkpoint.html.")
