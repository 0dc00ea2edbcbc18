"""`olympus.errors`: the exception classes exist, form JAX's hierarchy, and are what realistic
mistakes raise, with messages that say what happened and where."""

from __future__ import annotations

import operator
import re

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import errors

DOCS = "See https://docs.olympus.dev/en/latest/errors.html#olympus.errors."

NAMES = ["ConcretizationTypeError", "InconclusiveDimensionOperation", "KeyReuseError",
         "NonConcreteBooleanIndexError",
         "OLYMPUSIndexError", "OLYMPUSTypeError", "OlympusIndexError", "OlympusprTypeError",
         "OlympusRuntimeError", "OlympusTypeError", "TracerArrayConversionError",
         "TracerBoolConversionError", "TracerIntegerConversionError", "UnexpectedTracerError"]


def test_error_names_exist_and_are_exported():
    for name in NAMES:
        cls = getattr(errors, name)
        assert isinstance(cls, type) and issubclass(cls, Exception), name
    assert sorted(errors.__all__) == sorted(NAMES)


def test_hierarchy_matches_jax():
    assert issubclass(errors.OlympusTypeError, TypeError)
    assert issubclass(errors.ConcretizationTypeError, errors.OlympusTypeError)
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    assert issubclass(errors.TracerArrayConversionError, errors.OlympusTypeError)
    assert issubclass(errors.UnexpectedTracerError, errors.OlympusTypeError)
    assert issubclass(errors.KeyReuseError, errors.OlympusTypeError)
    # A traced integer used as a Python index is a TypeError in JAX 0.10.2 (JAXTypeError).
    assert issubclass(errors.TracerIntegerConversionError, TypeError)
    assert not issubclass(errors.TracerIntegerConversionError, IndexError)
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)
    assert issubclass(errors.OlympusRuntimeError, RuntimeError)


# --- TracerBoolConversionError -----------------------------------------------------------------


def test_python_if_on_an_argument():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(errors.TracerBoolConversionError) as info:
        olympus.jit(f)(1.0)
    msg = str(info.value)
    assert msg.splitlines()[0] == "Attempted boolean conversion of traced array with shape bool[]."
    assert "while tracing the function f at " in msg
    assert "test_errors.py" in msg
    assert "for jit" in msg
    assert "depends on the value of the argument x." in msg
    assert msg.endswith(DOCS + "TracerBoolConversionError")


def test_bool_of_a_float_reduction_names_its_shape_and_dtype():
    with pytest.raises(errors.TracerBoolConversionError,
                       match=r"traced array with shape float32\[\]"):
        olympus.jit(lambda x: bool(x.sum()))(jnp.ones(3))


def test_and_or_chains_and_while_loops():
    with pytest.raises(errors.TracerBoolConversionError):
        olympus.jit(lambda x: x.sum() if x.shape[0] > 2 and x[0] > 0 else x.sum())(jnp.ones(3))

    def count_up(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    with pytest.raises(errors.TracerBoolConversionError) as info:
        olympus.jit(count_up)(10, 20)
    assert "argument n" in str(info.value)


def test_make_olympuspr_reports_itself_as_the_transformation():
    with pytest.raises(errors.TracerBoolConversionError) as info:
        olympus.make_olympuspr(lambda x: x if x else -x)(1.0)
    assert "for make_olympuspr" in str(info.value)


# --- ConcretizationTypeError -------------------------------------------------------------------


def test_int_and_float_of_a_traced_value():
    def h(x):
        return int(x * 2)

    with pytest.raises(errors.ConcretizationTypeError) as info:
        olympus.jit(h)(1)
    msg = str(info.value)
    assert msg.startswith("Abstract tracer value encountered where concrete value is expected: "
                          "traced array with shape int32[]\n")
    assert "The problem arose with the `int` function." in msg
    assert "x.astype(int)" in msg
    assert "argument x" in msg
    assert msg.endswith(DOCS + "ConcretizationTypeError")
    with pytest.raises(errors.ConcretizationTypeError, match="`float` function"):
        olympus.jit(lambda x: float(x))(2.0)
    with pytest.raises(errors.ConcretizationTypeError, match="`complex` function"):
        olympus.jit(lambda x: complex(x))(2.0)


def test_arange_with_traced_bound():
    with pytest.raises(errors.ConcretizationTypeError, match="olympus.numpy.arange"):
        olympus.jit(lambda n: jnp.arange(n))(5)
    # Static is the fix.
    out = olympus.jit(lambda n: jnp.arange(n), static_argnums=0)(5)
    np.testing.assert_array_equal(np.asarray(out), np.arange(5))


def test_static_argnums_makes_value_dependent_code_work():
    def f(x):
        if x > 0:
            return x
        return 2 * x

    with pytest.raises(errors.ConcretizationTypeError):  # the parent class catches it too
        olympus.jit(f)(10)
    assert int(olympus.jit(f, static_argnums=0)(-10)) == -20


# --- TracerIntegerConversionError --------------------------------------------------------------


def test_traced_value_used_as_a_python_index():
    def pick(table_index):
        return [10, 20, 30][table_index]

    with pytest.raises(errors.TracerIntegerConversionError) as info:
        olympus.jit(pick)(1)
    msg = str(info.value)
    assert msg.startswith("The __index__() method was called on traced array with shape "
                          "int32[]\n")
    assert "argument table_index" in msg
    assert msg.endswith(DOCS + "TracerIntegerConversionError")
    with pytest.raises(errors.TracerIntegerConversionError):
        olympus.jit(lambda n: sum(range(n)))(3)
    with pytest.raises(errors.TracerIntegerConversionError):
        olympus.jit(lambda n: operator.index(n))(jnp.int32(3))
    with pytest.raises(TypeError):  # catchable as a TypeError, as JAX 0.10.2's
        olympus.jit(pick)(2)


# --- TracerArrayConversionError ----------------------------------------------------------------


def test_numpy_function_on_a_traced_value():
    with pytest.raises(errors.TracerArrayConversionError) as info:
        olympus.jit(lambda x: np.sin(x))(jnp.ones(3))
    msg = str(info.value)
    assert msg.startswith("The numpy.ndarray conversion method __array__() was called on "
                          "traced array with shape float32[3]")
    assert msg.endswith(DOCS + "TracerArrayConversionError")
    with pytest.raises(errors.TracerArrayConversionError):
        olympus.jit(lambda x: np.asarray(x))(1.0)
    # The same function with olympus.numpy works.
    out = olympus.jit(lambda x: jnp.sin(x))(jnp.ones(3))
    np.testing.assert_allclose(np.asarray(out), np.sin(np.ones(3)), rtol=1e-6)


# --- NonConcreteBooleanIndexError -------------------------------------------------------------


def test_traced_boolean_mask_as_an_index():
    with pytest.raises(errors.NonConcreteBooleanIndexError) as info:
        olympus.jit(lambda x: x[x > 0])(jnp.arange(3.0))
    msg = str(info.value)
    assert msg.startswith("Array boolean indices must be concrete; got bool[3]")
    assert msg.endswith(DOCS + "NonConcreteBooleanIndexError")
    assert isinstance(info.value, IndexError)
    # A NumPy mask is concrete, and jnp.where keeps the shape static: both work under jit.
    out = olympus.jit(lambda x: x[np.array([True, False, True])])(jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0])
    out = olympus.jit(lambda x: jnp.where(x > 0, x, 0).sum())(jnp.arange(3.0))
    assert float(out) == 3.0


# --- UnexpectedTracerError ---------------------------------------------------------------------


def test_leaked_tracer_used_after_the_trace():
    leaked = []

    @olympus.jit
    def leak(x):
        leaked.append(x)
        return x + 1

    assert float(leak(1.0)) == 2.0
    for use in (lambda t: t + 1, lambda t: jnp.sin(t), lambda t: olympus.jit(lambda y: y + t)(1.0)):
        with pytest.raises(errors.UnexpectedTracerError) as info:
            use(leaked[0])
        msg = str(info.value)
        assert msg.startswith("Encountered an unexpected tracer.")
        assert "The function being traced when the value leaked was leak at" in msg
        assert "olympus.checking_leaks" in msg
        assert msg.endswith(DOCS + "UnexpectedTracerError")


def test_checking_leaks_reports_the_leak_at_the_end_of_the_trace():
    """JAX 0.10.2 raises a plain Exception (recorded from it on the errors page's example):
    "Leaked trace DynamicJaxprTrace. Leaked tracer(s):", then each tracer, where it was
    traced, and the chain of objects keeping it alive."""
    store = []
    with olympus.checking_leaks():
        with pytest.raises(Exception) as info:
            olympus.jit(lambda x: store.append(x) or x * 2)(2.0)
    assert type(info.value) is Exception
    msg = str(info.value)
    assert msg.startswith("Leaked trace DynamicOlympusprTrace. Leaked tracer(s):\n\n"
                          "JitTracer(~float32[])\nThe error occurred while tracing the "
                          "function <lambda> at ")
    assert re.search(r"\n<DynamicOlympusprTracer \d+> is referred to by <list \d+>\[0\]",
                     msg)
    # Without leaking, the same context is silent.
    with olympus.checking_leaks():
        assert float(olympus.jit(lambda x: x * 2)(2.0)) == 4.0


# --- OlympusRuntimeError -----------------------------------------------------------------------


def test_runtime_error_from_the_compiler():
    lowered = olympus.jit(lambda x: x + 1).lower(1.0)
    with pytest.raises(errors.OlympusRuntimeError, match="INVALID_ARGUMENT") as info:
        lowered.compile({"xla_no_such_option_anywhere": 3})
    assert "xla_no_such_option_anywhere" in str(info.value)
    assert isinstance(info.value, RuntimeError)
    # The default options compile fine.
    assert float(lowered.compile()(1.0)) == 2.0


# --- KeyReuseError -----------------------------------------------------------------------------


def test_key_reuse_error_is_constructible_and_catchable_as_type_error():
    # No PRNG module exists yet to raise it for real; check the class contract.
    with pytest.raises(TypeError, match="reused"):
        raise errors.KeyReuseError("key reused")


# --- other realistic mistakes (plain Python exception types, as in JAX) ------------------------


def test_traced_shape_argument_raises_type_error_with_hint():
    with pytest.raises(TypeError) as info:
        olympus.jit(lambda n: jnp.zeros(n))(3)
    msg = str(info.value)
    assert msg.startswith("Shapes must be 1D sequences of concrete values of integer type, got ")
    assert "static_argnums" in msg
    with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
        jnp.ones((2.5, 2))
    out = olympus.jit(lambda n: jnp.zeros(n), static_argnums=0)(3)
    np.testing.assert_array_equal(np.asarray(out), np.zeros(3))


def test_item_assignment_on_an_array():
    x = jnp.arange(3)
    with pytest.raises(TypeError, match=r"do not support in-place item assignment.*\.at\["):
        x[1] = 5


def test_incompatible_shapes():
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: "
                                        r"\(3,\), \(4,\)\."):  # JAX 0.10.2's words
        jnp.ones(3) + jnp.ones(4)
    with pytest.raises(TypeError, match=r"mul got incompatible shapes for broadcasting"):
        jnp.multiply(jnp.ones(2), jnp.ones(3))
    with pytest.raises(TypeError, match="cannot reshape array of shape"):
        jnp.ones(3).reshape(2, 2)
    with pytest.raises(TypeError, match="contracting dimensions"):
        jnp.ones((2, 3)) @ jnp.ones((2, 3))


def test_lax_is_strict_about_dtypes():
    with pytest.raises(TypeError, match=r"lax.add requires arguments to have the same dtypes, "
                                        r"got int32, float32"):
        olympus.lax.add(jnp.ones(2, jnp.int32), jnp.ones(2))


def test_invalid_argument_and_result_types():
    with pytest.raises(TypeError, match=r"Error interpreting argument to <function .*> as an abstract array\. The problematic value is of type <class 'str'> and was passed to the function at path x\."):  # JAX 0.10.2's words
        olympus.jit(lambda x: x)("abc")
    with pytest.raises(TypeError, match="is not a valid OLYMPUS type"):
        olympus.jit(lambda x: "abc")(1)


def test_non_hashable_static_argument():
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported") as i:
        olympus.jit(lambda x, s: x, static_argnums=1)(1, {"a": 1})
    assert "<class 'dict'>" in str(i.value)


def test_compiled_refuses_tracers_and_wrong_types():
    compiled = olympus.jit(lambda x: x * 2).lower(np.float32(1)).compile()
    with pytest.raises(TypeError, match="Cannot apply OLYMPUS transformations"):
        olympus.jit(lambda x: compiled(x))(np.float32(1))
    with pytest.raises(TypeError, match="Argument 'x' compiled with float32\\[\\] and called "
                                        "with int32\\[\\]"):
        compiled(np.int32(1))


def test_error_classes_report_olympus_errors_as_their_module():
    import traceback

    for name in NAMES:
        if name != "OlympusRuntimeError":
            assert getattr(errors, name).__module__ == "olympus.errors", name
    try:
        olympus.jit(lambda x: bool(x))(1)
    except errors.TracerBoolConversionError as e:
        last = traceback.format_exception_only(type(e), e)[0]
    assert last.startswith("olympus.errors.TracerBoolConversionError: Attempted boolean "
                           "conversion of traced array with shape int32[].")


def test_staged_equations_name_the_users_line_not_olympus_internals():
    import olympus.nn as onn
    import olympus.scipy.special as osp

    def f(v):
        return osp.logsumexp(onn.softmax(jnp.where(v > 0, v, 1.0)))  # the line to name

    closed = olympus.make_olympuspr(f)(np.ones(3, np.float32))
    line = f.__code__.co_firstlineno + 1
    infos = {(e.source_info.file, e.source_info.line, e.source_info.function)
             for e in closed.olympuspr.eqns}
    assert infos == {(__file__, line, "f")}


def test_bad_inputs_raise_as_jax_0_10_2_does():
    """Regressions of the bad-input corpus (instruments/badinput), with the exception types
    and messages reference JAX 0.10.2 gives (recorded in its own process)."""
    with pytest.raises(TypeError, match="Expected a callable value, got None"):
        olympus.jit(None)
    assert callable(olympus.jit(static_argnums=0))  # omitted: a decorator factory
    with pytest.raises(TypeError, match="the first argument must be callable"):
        olympus.make_olympuspr(3)
    with pytest.raises(ValueError, match=r"axis 3 is out of bounds for array of shape \(3,\)"):
        olympus.lax.cumsum(jnp.ones(3), axis=3)
    np.testing.assert_array_equal(olympus.lax.cumsum(jnp.ones(3), axis=-1), [1, 2, 3])
    with pytest.raises(TypeError, match=r"Integers cannot be raised to negative powers, got "
                                        r"integer_pow\(int32\[\], -1\)"):
        olympus.lax.integer_pow(jnp.int32(2), -1)
    with pytest.raises(TypeError):
        olympus.lax.integer_pow(2.0, 1.5)
    np.testing.assert_allclose(olympus.lax.integer_pow(2.0, -1), 0.5)


def test_more_bad_inputs_raise_as_jax_0_10_2_does():
    """More regressions of the bad-input corpus; types and messages recorded from
    reference JAX 0.10.2."""
    with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
        jnp.sort(jnp.ones(3), kind="foo")
    with pytest.raises(TypeError, match="'kind' argument to argsort is not supported"):
        jnp.argsort(jnp.ones(3), kind="stable")
    with pytest.raises(TypeError, match="exponent must be an integer, got 1.5"):
        jnp.linalg.matrix_power(jnp.eye(2), 1.5)
    np.testing.assert_allclose(jnp.linalg.matrix_power(2 * jnp.eye(2), np.int64(3)),
                               8 * np.eye(2))
    with pytest.raises(ValueError, match=r"can only take integer values greater than or equal "
                                         r"to `-len\(args\)` and less than `len\(args\)`, but "
                                         r"got \(4,\), while `len\(args\)` = 1"):
        olympus.checkpoint(lambda x: x, static_argnums=(4,))(1.0)
    with pytest.raises(ValueError, match=r"static_argnames and donate_argnames cannot "
                                         r"intersect. Argument names \{'x'\} appear in both"):
        olympus.jit(lambda x: x, static_argnums=0, donate_argnums=0)
    x = jnp.ones(3)
    x.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        repr(x)


def test_bad_inputs_that_returned_values_raise_or_match_jax():
    """Cases where Olympus returned a value or raised while JAX 0.10.2 did the opposite
    (outcomes recorded from reference JAX)."""
    with pytest.raises(TypeError, match=r"argnums=\(0, 0\) names an argument more than once"):
        olympus.grad(lambda x, y: x * y, argnums=(0, 0))(2.0, 3.0)
    carry, ys = olympus.lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0), reverse=True,
                                 unroll=0)
    np.testing.assert_allclose(carry, 3.0)
    np.testing.assert_allclose(ys, [3.0, 2.0, 0.0])
    with pytest.raises(ValueError, match="`unroll` must be a `bool` or a non-negative `int`"):
        olympus.lax.scan(lambda c, x: (c, c), 0.0, jnp.arange(3.0), unroll=-1)
    out = jnp.fft.fft(jnp.ones(0))
    assert out.shape == (0,) and out.dtype == np.complex64
    assert jnp.fft.ifft(jnp.ones(0)).shape == (0,)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        jnp.fft.fft(jnp.ones(3), n=0)


def test_exception_types_match_jax_0_10_2():
    """Types (and messages where shown) recorded from reference JAX 0.10.2."""
    from olympus import lax

    with pytest.raises(TypeError, match="unexpected keyword argument 'newshape'"):
        jnp.reshape(jnp.ones(6), newshape=(2, 3))
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
        jnp.array(None)
    with pytest.raises(OverflowError, match="Python int 1099511627776 too large to convert "
                                            "to int32"):
        jnp.arange(3)[2**40]
    np.testing.assert_array_equal(jnp.arange(3)[5], 2)  # in int32: clamped, as before
    with pytest.raises(ValueError, match=r"tangent values inconsistent with the original "
                                         r"primal values:\nGot tangent aval float32\[2\] for "
                                         r"primal aval float32\[3\] but expected float32\[3\]"):
        olympus.linearize(jnp.sin, jnp.ones(3))[1](jnp.ones(2))
    with pytest.raises(ValueError, match=r"but 2 // 1 != 1\."):
        lax.conv_general_dilated(jnp.ones((1, 2, 3, 3)), jnp.ones((1, 1, 2, 2)), (1, 1),
                                 "VALID")
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        jnp.swapaxes(jnp.ones((2, 3)), 0, 2)
    with pytest.raises(olympus.errors.ConcretizationTypeError,
                       match="The axis argument must be known statically"):
        olympus.jit(lambda x, a: jnp.sum(x, axis=a))(jnp.ones((2, 3)), 0)
    with pytest.raises(olympus.errors.ConcretizationTypeError, match="argument `num_classes`"):
        olympus.jit(lambda n: olympus.nn.one_hot(jnp.array([0]), n))(3)
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        olympus.nn.one_hot(jnp.array([0, 1]), 2.5)

def test_base_error_classes():
    """JAX's ``JAXTypeError``/``JAXIndexError`` bases and ``JaxprTypeError``, renamed."""
    from olympus import errors

    assert issubclass(errors.OLYMPUSTypeError, TypeError)
    assert issubclass(errors.OLYMPUSIndexError, IndexError)
    assert issubclass(errors.ConcretizationTypeError, errors.OLYMPUSTypeError)
    assert issubclass(errors.NonConcreteBooleanIndexError, errors.OLYMPUSIndexError)
    assert issubclass(errors.OlympusprTypeError, TypeError)
    from olympus_ir.verify import check_olympuspr
    closed = olympus.make_olympuspr(lambda x: x + 1.0)(1.0)
    bad = closed.olympuspr.replace(outvars=[closed.olympuspr.invars[0]] * 2,
                                   eqns=closed.olympuspr.eqns * 2)
    with pytest.raises(errors.OlympusprTypeError):
        check_olympuspr(bad)
