"""Where reverse mode evaluates the primal computation: JAX's semantics.

Outside `jit`, `grad`, `value_and_grad`, `vjp`, `linearize`, `jacrev` and `hessian` evaluate
the primal computation op by op on concrete values (direct linearization), so Python control
flow, `int()` and `print` of primal values work under differentiation, as in Autograd; under
`jit` the same functions still raise JAX's tracing errors. Gradients keep the input's weak
type. Expected values are by hand (derivatives of polynomials and sin/cos) or recorded from
reference JAX 0.10.2 run in its own process (said so where they are).
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.errors import ConcretizationTypeError, TracerBoolConversionError

F = np.float32


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def piecewise(x):
    """JAX's control-flow guide example: branches on the primal value."""
    if x < 3:
        return 3. * x ** 2
    return -4 * x


def power_by_loop(x):
    """`int()` of the primal and a Python `while` on it."""
    n = int(x)
    y = x
    while n > 1:
        y = y * x
        n -= 1
    return y


def vector_branch(x):
    if jnp.sum(x) > 0:
        return jnp.sin(x) * 2
    return jnp.cos(x)


def test_python_if_on_primal_under_grad():
    # d/dx 3x^2 = 6x at 2; d/dx -4x = -4 at 4 (JAX's guide prints 12.0 and -4.0).
    g = olympus.grad(piecewise)
    assert float(g(2.)) == 12.0
    assert float(g(4.)) == -4.0
    assert float(g(F(2.))) == 12.0


def test_int_and_while_on_primal_under_grad_and_value_and_grad():
    # x**3 by a loop of int(x) steps: value 27, derivative 3x^2 = 27 at x = 3.
    close(olympus.grad(power_by_loop)(3.), 27.0)
    v, g = olympus.value_and_grad(power_by_loop)(3.)
    close(v, 27.0)
    close(g, 27.0)
    # At x = 2 the loop runs once: x**2, derivative 4.
    close(olympus.grad(power_by_loop)(2.), 4.0)


def test_print_of_a_primal_under_grad(capsys):
    def f(x):
        print(x)
        return x * x

    close(olympus.grad(f)(2.), 4.0)
    # Reference JAX 0.10.2 prints the same line for grad(f)(2.).
    assert capsys.readouterr().out == "GradTracer(primal=2.0, typeof(tangent)=f32[])\n"


def test_control_flow_under_vjp_linearize_and_jacrev():
    out, pullback = olympus.vjp(piecewise, 2.)
    close(out, 12.0)
    (ct,) = pullback(1.0)
    close(ct, 12.0)
    y, f_jvp = olympus.linearize(piecewise, 4.)
    close(y, -16.0)
    close(f_jvp(1.0), -4.0)
    x = np.array([1., 2.], F)
    close(olympus.jacrev(vector_branch)(x), np.diag(2 * np.cos(x)))
    close(olympus.jacrev(vector_branch)(-x), np.diag(np.sin(x)))


def test_control_flow_under_hessian_and_nested_grad():
    x = np.array([1., 2.], F)
    close(olympus.hessian(lambda v: jnp.sum(vector_branch(v)))(x), np.diag(-2 * np.sin(x)))
    close(olympus.grad(olympus.grad(piecewise))(2.), 6.0)
    close(olympus.jacfwd(olympus.grad(piecewise))(2.), 6.0)
    close(olympus.grad(olympus.grad(power_by_loop))(3.), 18.0)


def test_grad_under_vmap_and_jit_without_control_flow():
    x = np.array([0.5, 1.0, 2.0], F)
    close(olympus.vmap(olympus.grad(lambda v: jnp.sin(v) * v))(x), np.sin(x) + x * np.cos(x))
    close(olympus.jit(olympus.grad(lambda v: jnp.sin(v) * v))(F(1.0)), np.sin(1) + np.cos(1))


@olympus.custom_jvp
def sin_with_twice_tangent(x):
    return jnp.sin(x)


sin_with_twice_tangent.defjvp(lambda p, t: (sin_with_twice_tangent(p[0]), 2 * t[0]))


@olympus.custom_vjp
def sin_with_thrice_cotangent(x):
    return jnp.sin(x)


sin_with_thrice_cotangent.defvjp(lambda x: (jnp.sin(x), x), lambda r, c: (3 * c,))


def with_custom_rules(x):
    if x > 0:
        return sin_with_twice_tangent(x) + sin_with_thrice_cotangent(x)
    return sin_with_twice_tangent(x) * sin_with_thrice_cotangent(x)


def test_custom_jvp_and_custom_vjp_inside_control_flow():
    close(olympus.grad(with_custom_rules)(1.), 5.0)
    # Product rule with the custom derivatives: 2 * sin(x) + sin(x) * 3 at x = -1.
    close(olympus.grad(with_custom_rules)(-1.), 5 * np.sin(-1.0))
    close(olympus.grad(olympus.grad(lambda x: sin_with_twice_tangent(x) * x))(1.), 4.0)
    v, g = olympus.value_and_grad(with_custom_rules)(1.)
    close(v, 2 * np.sin(1.0))
    close(g, 5.0)


@olympus.custom_jvp
def branchy(x):
    if x > 0:
        return jnp.sin(x)
    return jnp.cos(x)


@branchy.defjvp
def branchy_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    ans = branchy(x)
    if x > 0:
        return ans, 2 * x_dot
    return ans, 3 * x_dot


def test_python_control_flow_inside_a_custom_jvp_function_and_its_rule():
    """JAX's custom derivative rules page: ``grad(f)(1.)`` is 2.0 and ``grad(f)(-1.)`` 3.0."""
    close(olympus.grad(branchy)(1.), 2.0)
    close(olympus.grad(branchy)(-1.), 3.0)
    close(olympus.jvp(branchy, (1.,), (1.,))[1], 2.0)


def test_the_same_functions_under_jit_raise_jaxs_tracing_errors():
    # Messages as reference JAX 0.10.2 words them for jit(grad(f)).
    with pytest.raises(TracerBoolConversionError, match=(
            r"Attempted boolean conversion of traced array with shape bool\[\]\.\n"
            r"The error occurred while tracing the function piecewise at .* for jit\. "
            r"This concrete value was not available in Python because it depends on the "
            r"value of the argument x\.")):
        olympus.jit(olympus.grad(piecewise))(2.)
    with pytest.raises(ConcretizationTypeError, match=(
            r"Abstract tracer value encountered where concrete value is expected: traced "
            r"array with shape float32\[\]")):
        olympus.jit(olympus.grad(power_by_loop))(2.)
    with pytest.raises(TracerBoolConversionError):
        olympus.jit(olympus.value_and_grad(with_custom_rules))(1.)
    with pytest.raises(TracerBoolConversionError):
        olympus.jit(lambda x: olympus.vjp(piecewise, x)[0])(2.)


def test_jit_of_grad_is_one_staged_program():
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    w, x = np.ones((3, 2), F), np.ones((4, 3), F)
    j = olympus.make_olympuspr(olympus.grad(loss))(w, x)
    prims = [e.primitive.name for e in j.olympuspr.eqns]
    # The forward pass, then the transposed tangents: two dot_generals (forward and the
    # weight cotangent), no call of a separate linear program.
    assert prims.count("dot_general") == 2 and prims[0] == "dot_general"
    assert "closed_call" not in prims and "pjit" not in prims
    t = np.tanh(x @ w)
    close(olympus.jit(olympus.grad(loss))(w, x), x.T @ (2 * t * (1 - t ** 2)))


def test_gradients_keep_the_input_weak_type():
    """Weak types as reference JAX 0.10.2 returns them."""
    for fn in (lambda x: x * 2, lambda x: jnp.sin(x), lambda x: F(2) * x, lambda x: 1.0):
        assert olympus.grad(fn)(2.0).weak_type
        assert not olympus.grad(fn)(F(2.0)).weak_type
        assert olympus.value_and_grad(fn)(2.0)[1].weak_type
    close(olympus.grad(lambda x: 1.0)(2.0), 0.0)
    assert olympus.grad(lambda x, y: x * y)(2.0, 3).weak_type
    assert olympus.vjp(lambda x: x * 2, 2.0)[1](1.0)[0].weak_type
    # The value keeps its own type: a strong float32 constant times a weak input is strong.
    assert not olympus.value_and_grad(lambda x: F(2) * x)(2.0)[0].weak_type
    assert olympus.value_and_grad(lambda x: 1.0)(2.0)[0] == 1.0
