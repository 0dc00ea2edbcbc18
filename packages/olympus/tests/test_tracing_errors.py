"""Every tracing error: its type (and JAX's base classes) and its full message."""

from __future__ import annotations

import operator
import pickle

import numpy as np
import pytest

import olympus.numpy as jnp
from olympus_trace import make_olympuspr
from olympus_trace.core import concrete_or_error
from olympus_trace.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

DOCS = "\nSee https://docs.olympus.dev/en/latest/errors.html#olympus.errors."


def src(fun) -> str:
    """How a traced function is named in messages: ``name at file:line``."""
    code = fun.__code__
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"


def origin(fun, dep: str) -> str:
    return (f"\nThe error occurred while tracing the function {src(fun)} for make_olympuspr. "
            f"This concrete value was not available in Python because it depends on {dep}.")


def raised(fun, *args, exc=Exception) -> Exception:
    with pytest.raises(exc) as info:
        make_olympuspr(fun)(*args)
    return info.value


# --- the class hierarchy matches JAX's -----------------------------------------------------


def test_error_class_hierarchy():
    assert issubclass(ConcretizationTypeError, TypeError)
    assert issubclass(TracerBoolConversionError, ConcretizationTypeError)
    assert issubclass(TracerArrayConversionError, TypeError)
    # JAX 0.10.2: `class TracerIntegerConversionError(JAXTypeError)` (jax/_src/errors.py).
    assert issubclass(TracerIntegerConversionError, TypeError)
    assert not issubclass(TracerIntegerConversionError, IndexError)
    assert issubclass(UnexpectedTracerError, TypeError)


# --- ConcretizationTypeError -----------------------------------------------------------------


@pytest.mark.parametrize("conv", [float, int, complex])
def test_scalar_conversion_of_tracer(conv):
    def fun(x):
        return conv(x)

    err = raised(fun, 1.0, exc=ConcretizationTypeError)
    assert type(err) is ConcretizationTypeError
    name = conv.__name__
    assert str(err) == (
        "Abstract tracer value encountered where concrete value is expected: traced array "
        "with shape float32[]\n"
        f"The problem arose with the `{name}` function. If trying to convert the data type of "
        f"a value, try using `x.astype({name})` or `jnp.array(x, {name})` instead."
        + origin(fun, "the value of the argument x") + "\n"
        + DOCS + "ConcretizationTypeError"
    )


def test_scalar_conversion_of_nonscalar_tracer_is_a_plain_type_error():
    def fun(x):
        return float(x)

    err = raised(fun, np.ones(3, np.float32), exc=TypeError)
    assert type(err) is TypeError
    assert str(err) == "Only scalar arrays can be converted to Python scalars; got arr.ndim=1"


def test_concretization_of_value_computed_from_arguments_names_all_of_them():
    def fun(a, b, c):
        return float(a * b + c)

    err = raised(fun, 1.0, 2.0, 3.0, exc=ConcretizationTypeError)
    assert origin(fun, "the values of the arguments a, b, and c") in str(err)


def test_concrete_or_error_context():
    def fun(x):
        return concrete_or_error(int, x, "The `size` argument must be concrete.")

    err = raised(fun, 3, exc=ConcretizationTypeError)
    assert str(err) == (
        "Abstract tracer value encountered where concrete value is expected: traced array "
        "with shape int32[]\nThe `size` argument must be concrete."
        + origin(fun, "the value of the argument x") + "\n"
        + DOCS + "ConcretizationTypeError"
    )
    assert concrete_or_error(int, np.float32(3.5)) == 3


def test_pickling_a_tracer():
    def fun(x):
        return pickle.dumps(x)

    err = raised(fun, 1.0, exc=ConcretizationTypeError)
    assert str(err).startswith(
        "Abstract tracer value encountered where concrete value is expected: traced array "
        "with shape float32[]\nThe error occurred in the __reduce__ method, which may indicate "
        "an attempt to serialize/pickle a traced value.\nThe error occurred while tracing")


# --- TracerBoolConversionError ----------------------------------------------------------------


def test_python_if_on_traced_value_names_function_and_argument():
    def relu(x, y):
        if x > 0:
            return x
        return y

    err = raised(relu, 1.0, 2.0, exc=TracerBoolConversionError)
    assert str(err) == (
        "Attempted boolean conversion of traced array with shape bool[]."
        + origin(relu, "the value of the argument x")
        + DOCS + "TracerBoolConversionError"
    )
    assert isinstance(err, ConcretizationTypeError)


def test_bool_error_names_two_arguments():
    def fun(x, y):
        return 1 if x < y else 0

    err = raised(fun, 1.0, 2.0, exc=TracerBoolConversionError)
    assert origin(fun, "the values of the arguments x and y") in str(err)


def test_bool_error_names_pytree_paths_and_varargs_and_kwargs():
    def fun(p, *rest, scale=1.0):
        while p["w"][1] * rest[1] > scale:
            pass

    with pytest.raises(TracerBoolConversionError) as info:
        make_olympuspr(fun)({"w": (1.0, 2.0), "b": 3.0}, 4.0, 5.0, scale=6.0)
    assert origin(fun, "the values of the arguments p['w'][1], rest[1], and scale") in str(
        info.value)


def test_bool_error_for_value_computed_from_constants_lists_the_operations():
    def fun(x):
        c = np.ones(3, np.float32)
        if jnp.sum(c) > 0:
            return x
        return x

    err = raised(fun, 1.0, exc=TracerBoolConversionError)
    line = fun.__code__.co_firstlineno + 2
    assert str(err) == (
        "Attempted boolean conversion of traced array with shape bool[].\n"
        f"The error occurred while tracing the function {src(fun)} for make_olympuspr. "
        "This value became a tracer due to OLYMPUS operations on these lines:\n\n"
        "  operation a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
        f"    from line {fun.__code__.co_filename}:{line} (fun)"
        + DOCS + "TracerBoolConversionError"
    )


def test_truth_value_of_nonscalar_tracer_is_ambiguous():
    def fun(x):
        return bool(x > 0)

    err = raised(fun, np.ones(3, np.float32), exc=ValueError)
    assert str(err) == ("The truth value of an array with more than one element is ambiguous. "
                        "Use a.any() or a.all()")
    err = raised(fun, np.ones(0, np.float32), exc=ValueError)
    assert str(err).startswith("The truth value of an empty array is ambiguous.")


# --- TracerIntegerConversionError -----------------------------------------------------------


@pytest.mark.parametrize("use", [range, operator.index, lambda n: [0, 1, 2][n]],
                         ids=["range", "operator.index", "list_index"])
def test_index_of_traced_integer(use):
    def fun(n):
        return use(n)

    err = raised(fun, 3, exc=TracerIntegerConversionError)
    assert str(err) == (
        "The __index__() method was called on traced array with shape int32[]"
        + origin(fun, "the value of the argument n")
        + DOCS + "TracerIntegerConversionError"
    )


def test_index_of_float_tracer_is_a_plain_type_error():
    def fun(x):
        return operator.index(x)

    err = raised(fun, 3.0, exc=TypeError)
    assert str(err) == "Only integer scalar arrays can be converted to a scalar index."


# --- TracerArrayConversionError -------------------------------------------------------------


def test_numpy_conversion_of_tracer():
    def fun(x):
        return np.asarray(x)

    err = raised(fun, np.ones((2, 3), np.float32), exc=TracerArrayConversionError)
    assert str(err) == (
        "The numpy.ndarray conversion method __array__() was called on traced array with "
        "shape float32[2,3]" + origin(fun, "the value of the argument x")
        + DOCS + "TracerArrayConversionError"
    )


def test_numpy_function_on_tracer():
    def fun(x):
        return np.sin(x)

    raised(fun, np.ones(3, np.float32), exc=TracerArrayConversionError)


# --- UnexpectedTracerError ------------------------------------------------------------------


def leak_message(fun, type_str="float32[]", created_line=None) -> str:
    """JAX 0.10.2's wording (recorded from it); JAX also gives the column of the line where
    the leaked value was made (``file:17:6``), which Olympus does not record by default."""
    made = ""
    if created_line is not None:
        loc = f"{fun.__code__.co_filename}:{created_line} ({fun.__name__})"
        sep = "-" * 30
        made = (f"{sep}\nThe leaked intermediate value was created on line {loc}. \n{sep}\n"
                "When the value was created, the final 5 stack frames (most recent last) "
                f"excluding OLYMPUS-internal frames were:\n{sep}\n{loc}\n{sep}\n\n")
    return (
        "Encountered an unexpected tracer. A function transformed by OLYMPUS had a side "
        f"effect, allowing for a reference to an intermediate value with type {type_str} "
        "wrapped in a DynamicOlympusprTracer to escape the scope of the transformation.\n"
        "OLYMPUS transformations require that functions explicitly return their outputs, "
        "and disallow saving intermediate values to global state.\n"
        f"The function being traced when the value leaked was {src(fun)} traced for "
        "make_olympuspr.\n" + made +
        "To catch the leak earlier, try setting the environment variable "
        "OLYMPUS_CHECK_TRACER_LEAKS or using the `olympus.checking_leaks` context manager."
        + DOCS + "UnexpectedTracerError"
    )


_leaked = []


def _store_in_global(x):
    _leaked.append(x * 2)
    return x


@pytest.fixture
def leaked_tracer():
    _leaked.clear()
    make_olympuspr(_store_in_global)(np.ones(3, np.float32))
    yield _leaked[0]
    _leaked.clear()


def test_leaked_tracer_used_in_another_trace(leaked_tracer):
    def use(y):
        return y + leaked_tracer

    err = raised(use, np.ones(3, np.float32), exc=UnexpectedTracerError)
    assert str(err) == leak_message(_store_in_global, "float32[3]",
                                    _store_in_global.__code__.co_firstlineno + 1)


def test_leaked_tracer_returned_from_another_trace(leaked_tracer):
    err = raised(lambda y: leaked_tracer, 1.0, exc=UnexpectedTracerError)
    assert str(err) == leak_message(_store_in_global, "float32[3]",
                                    _store_in_global.__code__.co_firstlineno + 1)


# --- other misuse -------------------------------------------------------------------------


def test_tracer_is_unhashable():
    err = raised(lambda x: {x: 1}, 1.0, exc=TypeError)
    assert str(err) == "unhashable type: OlympusprTracer"


def test_tracer_item_assignment():
    def fun(x):
        x[0] = 1.0

    err = raised(fun, np.ones(3, np.float32), exc=TypeError)
    assert str(err) == (
        "OLYMPUS arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.olympus.dev/en/latest/_autosummary/olympus.numpy.ndarray.at.html")


def test_len_and_iteration_of_scalar_tracer():
    assert str(raised(len, 1.0, exc=TypeError)) == "len() of unsized object"
    assert str(raised(list, 1.0, exc=TypeError)) == "iteration over a 0-d array"


def test_iteration_over_tracer_unstacks_leading_axis():
    closed = make_olympuspr(lambda x: list(x))(np.ones((2, 3), np.float32))
    assert [a.str_short() for a in closed.out_avals] == ["f32[3]", "f32[3]"]
    assert len(make_olympuspr(len)(np.ones((4, 3), np.float32)).eqns) == 0


def test_invalid_argument_type():
    with pytest.raises(TypeError, match=r"Error interpreting argument to <function .*> as an abstract array\. The problematic value is of type <class 'str'> and was passed to the function at path x\."):  # JAX 0.10.2's words
        make_olympuspr(lambda x: x)("a string")


def test_python_int_out_of_int32_range():
    with pytest.raises(OverflowError, match="Python int 1099511627776 too large to convert "
                                            "to int32"):
        make_olympuspr(lambda x: x)(2 ** 40)


def test_shape_errors_surface_from_the_numpy_functions():
    # JAX 0.10.2's TypeError and message (recorded from it).
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: "
                                        r"\(2,\), \(3,\)\."):
        make_olympuspr(lambda x, y: x + y)(np.ones(2, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(3,\) \(size 3\) "
                                        r"into shape \(2, 2\) \(size 4\)"):
        make_olympuspr(lambda x: x.reshape(2, 2))(np.ones(3, np.float32))


def test_item_and_tolist_of_a_tracer_are_concretization_errors():
    """Issue 17: `.item()` / `.tolist()` under jit raise ConcretizationTypeError with JAX
    0.10.2's wording (recorded from reference JAX in its own process)."""
    import olympus

    with pytest.raises(ConcretizationTypeError) as e:
        olympus.jit(lambda x: x.item())(jnp.ones(1))
    lines = str(e.value).splitlines()
    assert lines[0] == ("Abstract tracer value encountered where concrete value is expected: "
                        "traced array with shape float32[1]")
    assert lines[1] == "This occurred in the item() method of olympus.Array"
    with pytest.raises(ConcretizationTypeError) as e:
        olympus.jit(lambda x: x.tolist())(jnp.ones(2))
    assert str(e.value).splitlines()[1] == ("The tolist() method was called on traced array "
                                            "with shape float32[2].")
    assert jnp.ones(2).tolist() == [1.0, 1.0] and jnp.ones(1).item() == 1.0
