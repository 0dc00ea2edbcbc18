"""`olympus.debug.print` / `olympus.debug.callback` and the `debug_callback` primitive:
eager, under jit (host callbacks, program order), vmap (once per member), grad/jvp (primal
values), cond/scan/while bodies; olympuspr text, effects, DCE, the lowered custom call,
and errors raised inside callbacks."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import debug, lax
from olympus_ir.prims.callbacks import debug_callback_p, debug_effect, ordered_debug_effect
from olympus_runtime.compiler import XlaRuntimeError
from olympus_trace.olympuspr_utils import dce_olympuspr


def lines(capfd):
    out, _ = capfd.readouterr()
    return out.splitlines()


# --- debug.print ------------------------------------------------------------------------------


def test_print_eager(capfd):
    debug.print("x={} y={y}", np.float32(1.5), y=np.arange(3))
    debug.print("no args")
    assert lines(capfd) == ["x=1.5 y=[0 1 2]", "no args"]


def test_print_format_spec_and_static_args(capfd):
    @olympus.jit
    def f(x):
        debug.print("{:.3f} {} {name}", x, "static", name=None)
        return x

    f(np.float32(2.0))
    assert lines(capfd) == ["2.000 static None"]


def test_print_in_jit_runs_at_run_time(capfd):
    @olympus.jit
    def f(x):
        debug.print("x={}", x)
        y = x * 2
        debug.print("y={y}", y=y)
        return y

    assert lines(capfd) == []  # defining prints nothing
    out = f(np.float32(3))
    assert float(out) == 6.0
    assert lines(capfd) == ["x=3.0", "y=6.0"]
    f(np.float32(4))  # the cached executable (C++ fast path) prints again
    f(np.float32(5))
    assert lines(capfd) == ["x=4.0", "y=8.0", "x=5.0", "y=10.0"]


def test_print_without_outputs(capfd):
    olympus.jit(lambda x: debug.print("only {}", x))(np.int32(7))
    assert lines(capfd) == ["only 7"]


def test_print_aot_compiled(capfd):
    def f(x):
        debug.print("aot {}", x)
        return x + 1

    compiled = olympus.jit(f).lower(np.float32(1)).compile()
    compiled(np.float32(2))
    assert lines(capfd) == ["aot 2.0"]


def test_jitted_scan_prints_each_iteration_in_order(capfd):
    @olympus.jit
    def f(xs):
        def step(c, x):
            debug.print("step c={} x={}", c, x)
            return c + x, c

        debug.print("before")
        c, _ = lax.scan(step, np.int32(0), xs)
        debug.print("after c={}", c)
        return c

    f(np.arange(5, dtype=np.int32))
    expected = ["before"]
    c = 0
    for x in range(5):
        expected.append(f"step c={c} x={x}")
        c += x
    expected.append(f"after c={c}")
    assert lines(capfd) == expected


def test_straight_line_prints_keep_program_order(capfd):
    # Independent prints: XLA would be free to reorder them (x * 1 needs no work, so it is
    # scheduled first) without the order token the lowering threads between callbacks.
    @olympus.jit
    def f(x):
        for i in range(30):
            debug.print("{}", x * i)
        return x

    for _ in range(3):
        f(np.int32(1))
        assert lines(capfd) == [str(i) for i in range(30)]


def test_print_in_while_and_cond_bodies(capfd):
    @olympus.jit
    def f(n):
        def body(i):
            lax.cond(i % 2 == 0, lambda i: debug.print("even {}", i),
                     lambda i: debug.print("odd {}", i), i)
            return i + 1

        return lax.while_loop(lambda i: i < n, body, 0)

    assert int(f(4)) == 4
    assert lines(capfd) == ["even 0", "odd 1", "even 2", "odd 3"]


def test_print_in_while_cond_fun(capfd):
    def f(x):
        return lax.while_loop(lambda c: (debug.print("cond {}", c), c < 2)[1],
                              lambda c: (debug.print("body {}", c), c + 1)[1], x)

    expected = ["cond 0", "body 0", "cond 1", "body 1", "cond 2"]
    olympus.jit(lambda: f(0))()  # constant start: XLA knows the trip count
    assert lines(capfd) == expected
    olympus.jit(f)(0)
    assert lines(capfd) == expected
    f(0)  # eager
    assert lines(capfd) == expected
    olympus.jit(f)(5)
    assert lines(capfd) == ["cond 5"]


def test_print_in_fori_loop_dynamic_and_nested_scan(capfd):
    @olympus.jit
    def f(n):
        def outer(i, acc):
            def inner(c, j):
                debug.print("{} {}", i, j)
                return c + j, None

            c, _ = lax.scan(inner, acc, jnp.arange(2))
            return c

        return lax.fori_loop(0, n, outer, 0)

    f(3)
    assert lines(capfd) == ["0 0", "0 1", "1 0", "1 1", "2 0", "2 1"]


# --- vmap -------------------------------------------------------------------------------------


def test_vmap_prints_once_per_element(capfd):
    def f(x, y):
        debug.print("x={} y={}", x, y)
        return x * y

    out = olympus.vmap(f, in_axes=(0, None))(np.arange(3, dtype=np.float32), np.float32(2))
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])
    assert lines(capfd) == ["x=0.0 y=2.0", "x=1.0 y=2.0", "x=2.0 y=2.0"]
    olympus.jit(olympus.vmap(f, in_axes=(1, None)))(np.arange(4.0).reshape(2, 2), 1.0)
    assert lines(capfd) == ["x=[0. 2.] y=1.0", "x=[1. 3.] y=1.0"]


def test_vmap_unbatched_operands_print_once(capfd):
    def f(x):
        debug.print("constant {}", 5)
        return x + 1

    olympus.vmap(f)(np.arange(3))
    assert lines(capfd) == ["constant 5"]


def test_nested_vmap_prints_every_member(capfd):
    def f(x):
        debug.print("{}", x)
        return x

    olympus.vmap(olympus.vmap(f))(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert lines(capfd) == [str(i) for i in range(6)]


def test_vmap_scan_prints(capfd):
    def f(xs):
        def step(c, x):
            debug.print("{}", x)
            return c, None

        return lax.scan(step, 0, xs)[0]

    olympus.jit(olympus.vmap(f))(np.array([[1, 2], [3, 4]], np.int32))
    assert lines(capfd) == ["1", "3", "2", "4"]  # per step, every member


# --- autodiff ---------------------------------------------------------------------------------


def test_grad_prints_primal_once(capfd):
    def f(x):
        debug.print("x={}", x)
        y = jnp.sin(x)
        debug.print("y={:.4f}", y)
        return y * 2

    g = olympus.grad(f)(np.float32(0.5))
    np.testing.assert_allclose(float(g), 2 * np.cos(0.5), rtol=1e-6)
    assert lines(capfd) == ["x=0.5", f"y={np.sin(0.5):.4f}"]
    olympus.jit(olympus.grad(f))(np.float32(0.5))
    assert lines(capfd) == ["x=0.5", f"y={np.sin(0.5):.4f}"]


def test_jvp_prints_primals(capfd):
    def f(x):
        debug.print("p={}", x)
        return x * x

    out, t = olympus.jvp(f, (np.float32(3),), (np.float32(1),))
    assert float(t) == 6.0
    assert lines(capfd) == ["p=3.0"]


def test_grad_through_scan_with_print(capfd):
    def f(h):
        def step(h, x):
            debug.print("h={:.3f}", h)
            return jnp.tanh(h * 0.5 + x), None

        return lax.scan(step, h, jnp.arange(3.0))[0]

    g = olympus.jit(olympus.grad(f))(np.float32(1.0))
    assert np.isfinite(float(g))
    hs, h = [], 1.0
    for x in range(3):
        hs.append(f"h={h:.3f}")
        h = np.tanh(h * 0.5 + x)
    assert lines(capfd) == hs


# --- debug.callback ---------------------------------------------------------------------------


def test_callback_receives_array_values():
    """As in JAX 0.10.2 (recorded: ``jax.debug.callback`` passes ``ArrayImpl`` values,
    eager and under jit), the callback gets device arrays."""
    got = []

    def cb(a, tree, *, k, s):
        got.append((a, tree, k, s))

    @olympus.jit
    def f(x, y):
        debug.callback(cb, x, {"y": y, "z": (y + 1,)}, k=x * 2, s="label")
        return x

    f(np.arange(3, dtype=np.float32), np.int32(4))
    ((a, tree, k, s),) = got
    assert isinstance(a, olympus.Array) and a.dtype == np.float32 and a.shape == (3,)
    np.testing.assert_array_equal(a, [0, 1, 2])
    assert isinstance(tree["y"], olympus.Array) and tree["y"].dtype == np.int32
    assert int(tree["y"]) == 4 and int(tree["z"][0]) == 5
    np.testing.assert_array_equal(k, [0, 2, 4])
    assert s == "label"


def test_callback_values_are_copies():
    # The buffers a host callback sees are only valid during the call; the values kept
    # from every iteration must stay distinct.
    kept = []

    @olympus.jit
    def f(xs):
        def step(c, x):
            debug.callback(kept.append, c)
            return c + x, None

        return lax.scan(step, jnp.zeros(4), xs)[0]

    f(np.ones((3, 4), np.float32))
    assert [float(k[0]) for k in kept] == [0.0, 1.0, 2.0]


def test_callback_eager_dtypes():
    got = []
    debug.callback(lambda *a: got.extend(a), 1, 2.0, True, olympus.numpy.ones(2))
    assert [g.dtype for g in got] == [np.int32, np.float32, np.bool_, np.float32]


def test_callback_return_value_ignored():
    assert debug.callback(lambda x: 123, 1.0) is None
    assert float(olympus.jit(lambda x: (debug.callback(lambda v: v, x), x)[1])(2.0)) == 2.0


def test_callback_not_callable():
    with pytest.raises(TypeError, match="expected a callable"):
        debug.callback(3, 1.0)


# --- errors inside callbacks ------------------------------------------------------------------


def _boom(x):
    raise ValueError(f"boom {x}")


def test_exception_eager_is_the_original():
    with pytest.raises(ValueError, match="boom 1"):
        debug.callback(_boom, 1)


@pytest.mark.parametrize("with_output", [True, False])
def test_exception_in_jit_surfaces(with_output):
    def f(x):
        debug.callback(_boom, x)
        if with_output:
            return x + 1

    jf = olympus.jit(f)
    for _ in range(3):  # first call and cached (fast path) calls
        with pytest.raises(XlaRuntimeError, match=r"ValueError: boom 2"):
            jf(np.int32(2))
    # the process is fine afterwards
    assert float(olympus.jit(lambda x: x * 2)(3.0)) == 6.0


def test_exception_in_scan_body_stops_the_loop():
    seen = []

    def cb(i):
        seen.append(int(i))
        if i == 2:
            raise RuntimeError("stop at 2")

    @olympus.jit
    def f(xs):
        return lax.scan(lambda c, x: (debug.callback(cb, x), (c, None))[1], 0, xs)[0]

    with pytest.raises(XlaRuntimeError, match="RuntimeError: stop at 2"):
        f(np.arange(5))
    assert seen == [0, 1, 2]


# --- the primitive: olympuspr, effects, DCE, lowering -------------------------------------------


def test_olympuspr_text_and_effects():
    def f(x):
        debug.print("{}", x)
        debug.print("{}", x, ordered=True)
        return x

    closed = olympus.make_olympuspr(f)(1.0)
    # JAX's layout and params (its `debug.print` is a `debug_print` primitive since 0.10:
    # compare the `debug.callback` form); the function's address is masked, as in JAX
    assert str(closed) == """\
{ lambda ; a:f32[]. let
    debug_callback[
      callback=<function debug_callback.<locals>._debug_callback.<locals>._flat_callback at 0xXXXXXXXXXXXX>
      effect=Debug
      partitioned=False
    ] a
    debug_callback[
      callback=<function debug_callback.<locals>._debug_callback.<locals>._flat_callback at 0xXXXXXXXXXXXX>
      effect=OrderedDebug
      partitioned=False
    ] a
  in (a,) }"""
    assert closed.effects == {debug_effect, ordered_debug_effect}
    assert [e.primitive for e in closed.eqns] == [debug_callback_p] * 2


def test_effects_propagate_from_bodies():
    def f(x):
        return lax.cond(x > 0, lambda x: (debug.print("{}", x), x)[1], lambda x: x, x)

    assert olympus.make_olympuspr(f)(1.0).effects == {debug_effect}
    assert olympus.make_olympuspr(lambda x: x + 1)(1.0).effects == frozenset()


def test_dce_keeps_callbacks_and_bodies_with_callbacks():
    def f(x):
        debug.print("{}", x)
        lax.cond(x > 0, lambda x: (debug.print("{}", x), x)[1], lambda x: x, x)
        y = x * 3  # noqa: F841  (dead)
        return x

    j = olympus.make_olympuspr(f)(1.0).olympuspr
    dced, _ = dce_olympuspr(j)
    names = [e.primitive.name for e in dced.eqns]
    assert names.count("debug_callback") == 1 and "cond" in names and "mul" not in names


def test_lowered_module_has_host_callbacks():
    def f(x):
        debug.print("{}", x)
        debug.print("{}", x + 1)
        return x

    lowered = olympus.jit(f).lower(np.float32(1))
    text = lowered.as_text()
    assert text.count("stablehlo.custom_call @xla_ffi_python_cpu_callback") == 2
    assert "has_side_effect = true" in text
    assert "mhlo.backend_config = {index = 0 : ui64}" in text
    assert "mhlo.backend_config = {index = 1 : ui64}" in text
    assert len(lowered._lowered.host_callbacks) == 2


def test_shape_rule_checks():
    from olympus_ir.avals import ShapedArray
    from olympus_ir.core import abstract_eval

    a = ShapedArray((2,), np.float32)
    assert abstract_eval(debug_callback_p, a, callback=print, effect=debug_effect) == []
    with pytest.raises(TypeError, match="must be callable"):
        abstract_eval(debug_callback_p, a, callback=None, effect=debug_effect)
    with pytest.raises(TypeError, match="must be a DebugEffect"):
        abstract_eval(debug_callback_p, a, callback=print, effect="Debug")


# --- JAX 0.10.2's other forms: two-call, no placeholders, debug.log, breakpoint ----------------


def test_two_call_forms_and_partitioned(capsys):
    """``jax.debug.print(ordered=True)("...", x)`` and ``jax.debug.callback(ordered=True)``
    (JAX's recommended two-call forms); `partitioned` is accepted."""
    seen = []

    @olympus.jit
    def f(x):
        debug.print(ordered=True)("two-call {} {y}", x, y=x + 1)
        debug.callback(ordered=True)(lambda v: seen.append(float(v)), x)
        debug.print("partitioned {}", x, partitioned=True)
        return x

    f(1.5)
    assert capsys.readouterr().out == "two-call 1.5 2.5\npartitioned 1.5\n"
    assert seen == [1.5]
    with pytest.raises(TypeError, match="unexpected arguments in the two-call form"):
        debug.print(None, 3)


def test_print_without_placeholders_appends_the_values(capsys):
    """Recorded from JAX: ``jax.debug.print("x", jnp.ones(2), 3)`` prints ``x [1. 1.] 3``."""
    olympus.jit(lambda x: debug.print("values", x, 3))(jnp.ones(2))
    assert capsys.readouterr().out == "values [1. 1.] 3\n"


def test_print_format_is_checked_when_traced():
    with pytest.raises((IndexError, KeyError)):
        olympus.jit(lambda x: debug.print("{} {}", x))(1.0)
    with pytest.raises(KeyError):
        olympus.jit(lambda x: debug.print("{missing}", x=x))(1.0)


def test_print_uses_numpy_print_options_of_trace_time(capsys):
    with np.printoptions(precision=2):
        f = olympus.jit(lambda x: debug.print("{}", x))
        f(jnp.array([1 / 3]))
    f(jnp.array([1 / 3]))  # cached: the options captured when traced
    assert capsys.readouterr().out == "[0.33]\n[0.33]\n"


def test_debug_log_is_a_logging_record_at_the_users_line(caplog):
    import logging

    def f(x):
        debug.log("logged {}", x)  # this line
        return x

    with caplog.at_level(logging.INFO, logger="olympus._src.debugging"):
        olympus.jit(f)(2.0)
    (rec,) = [r for r in caplog.records if r.name == "olympus._src.debugging"]
    assert rec.getMessage() == "logged 2.0" and rec.levelno == logging.INFO
    assert rec.pathname == __file__
    import linecache

    assert "# this line" in linecache.getline(__file__, rec.lineno)


def _with_breakpoint(x):
    y = jnp.sin(x)
    olympus.debug.breakpoint()
    return y * 2


def test_breakpoint_reads_commands_from_stdin(monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(
        "p x\np y + 1\npp {'k': 1}\nw\nl\nup\ndown\ndown\nnot_a_name\nc\n"))
    out = olympus.jit(_with_breakpoint)(jnp.arange(3.0))
    np.testing.assert_allclose(out, 2 * np.sin(np.arange(3.0)), rtol=1e-6)
    text = capsys.readouterr().out
    assert text.startswith("Entering jdb:\n(jdb) Array([0., 1., 2.], dtype=float32)\n")
    assert "Array([1.       , 1.841471 , 1.9092975], dtype=float32)" in text
    assert "(jdb) {'k': 1}\n" in text
    assert f'  File "{__file__}", line' in text and "Traceback:" in text
    assert "->      olympus.debug.breakpoint()" in text
    assert "At bottommost frame." in text
    assert "*** NameError: name 'not_a_name' is not defined" in text


def test_breakpoint_quit_and_eager(monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("p x * 10\nc\n"))
    np.testing.assert_allclose(_with_breakpoint(jnp.float32(0.5)), 2 * np.sin(0.5),
                               rtol=1e-6)
    assert "(jdb) Array(5., dtype=float32)" in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    with pytest.raises(SystemExit):
        _with_breakpoint(jnp.float32(0.5))


def test_print_checks_its_format_at_trace_time():
    """Issue 17: a bad format key is a KeyError when `debug.print` is called (traced), not a
    runtime error from inside the compiled program; unused arguments are a ValueError
    (JAX 0.10.2's types and wording, recorded from reference JAX in its own process)."""
    import re

    with pytest.raises(KeyError, match="'y'"):
        olympus.jit(lambda x: olympus.debug.print("{y}", x=x))(1.0)
    with pytest.raises(KeyError, match="'y'"):
        olympus.debug.print("{y}", x=1.0)
    with pytest.raises(IndexError):
        olympus.debug.print("{} {}", 1.0)
    with pytest.raises(ValueError, match=re.escape(
            "Unused positional arguments to `olympus.debug.print`: [2.0]")):
        olympus.debug.print("{}", 1.0, 2.0)
    with pytest.raises(ValueError, match="Unused keyword arguments to `olympus.debug.print`"):
        olympus.debug.print("{x}", x=1.0, y=2.0)
