"""The shape-polymorphism examples of JAX 0.10.2's ``docs/export/shape_poly.md`` (and the
"Shape polymorphic export" section of ``docs/export/export.md``, which points there) with
olympus names, run through `olympus.export`.

Expected values, printed avals and results are the documented ones; where the docs elide
an error's detail (``IGNORE_EXCEPTION_DETAIL``) or show only its first line, the full
message was recorded from reference JAX 0.10.2 run in its own process, with ``jax``
replaced by ``olympus`` where it names the library. Adapted: ``jnp.array(x.shape[0])``
examples use ``olympus.numpy``; the scope ids and source locations in the scope-mixing
message are matched by pattern.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import export, lax

_HELP = ("Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
         "#shape-assertion-errors for more details.")
_INCONCLUSIVE = (
    "This error arises for comparison operations with shapes that\n"
    "are non-constant, and the result of the operation cannot be represented as\n"
    "a boolean value for all values of the symbolic dimensions involved.\n\n"
    "Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
    "#comparison-of-symbolic-dimensions-is-partially-supported\nfor more details.\n")


def test_introductory_concatenate_example():
    def f(x):  # f: f32[a, b]
        return jnp.concatenate([x, x], axis=1)

    a, b = export.symbolic_shape("a, b")
    x_shape = (a, b)
    assert repr(x_shape) == "(a, b)"
    exp = export.export(olympus.jit(f))(olympus.ShapeDtypeStruct(x_shape, jnp.int32))
    assert repr(exp.in_avals) == "(ShapedArray(int32[a,b]),)"
    assert repr(exp.out_avals) == "(ShapedArray(int32[a,2*b]),)"
    res = exp.call(np.ones((3, 4), dtype=np.int32))
    assert res.shape == (3, 8)
    np.testing.assert_array_equal(res, np.ones((3, 8), np.int32))


def test_symbolic_args_specs_example():
    def f1(x, y):  # x: f32[a, 1], y : f32[a, 4]
        return x + y

    x = np.ones((3, 1), dtype=np.int32)
    y = np.ones((3, 4), dtype=np.int32)
    args_specs = export.symbolic_args_specs((x, y), "a, ...")
    exp = export.export(olympus.jit(f1))(*args_specs)
    assert repr(exp.in_avals) == "(ShapedArray(int32[a,1]), ShapedArray(int32[a,4]))"
    np.testing.assert_array_equal(exp.call(x, y), np.full((3, 4), 2, np.int32))


def test_reshape_with_symbolic_size():
    f = lambda x: jnp.reshape(x, (x.shape[0] * x.shape[1],))  # noqa: E731
    arg_spec = olympus.ShapeDtypeStruct(export.symbolic_shape("b, 4"), jnp.int32)
    exp = export.export(olympus.jit(f))(arg_spec)
    assert repr(exp.out_avals) == "(ShapedArray(int32[4*b]),)"
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(exp.call(x), x.reshape(-1))


def test_dimension_as_array_value():
    exp = export.export(olympus.jit(lambda x: jnp.array(x.shape[0]) + x))(
        olympus.ShapeDtypeStruct(export.symbolic_shape("b"), np.int32))
    out = exp.call(jnp.arange(3, dtype=np.int32))
    assert repr(out) == "Array([3, 4, 5], dtype=int32)"


def test_array_value_as_shape_is_an_error():
    with pytest.raises(TypeError, match=re.escape(
            "Shapes must be 1D sequences of concrete values of integer type, got [")):
        export.export(olympus.jit(lambda x: x.reshape(jnp.array(x.shape[0]) + 2)))(
            olympus.ShapeDtypeStruct(export.symbolic_shape("b"), np.int32))


def test_dimensions_in_arithmetic():
    exp = export.export(olympus.jit(
        lambda x: (5. + x.shape[0],
                   x.shape[0] - np.arange(5, dtype=jnp.int32),
                   x + x.shape[0] + jnp.sin(x.shape[0]))))(
        olympus.ShapeDtypeStruct(export.symbolic_shape("b"), jnp.int32))
    assert repr(exp.out_avals) == ("(ShapedArray(float32[], weak_type=True), "
                                   "ShapedArray(int32[5]), "
                                   "ShapedArray(float32[b], weak_type=True))")
    r0, r1, r2 = exp.call(jnp.ones((3,), jnp.int32))
    assert repr(r0) == "Array(8., dtype=float32, weak_type=True)"
    assert repr(r1) == "Array([ 3,  2,  1,  0, -1], dtype=int32)"
    assert r2.dtype == np.float32 and r2.weak_type
    np.testing.assert_allclose(r2, np.full(3, 4 + np.sin(3), np.float32), rtol=1e-6)


def test_mean_by_dimension():
    exp = export.export(olympus.jit(lambda x: jnp.sum(x, axis=0) / x.shape[0]))(
        olympus.ShapeDtypeStruct(export.symbolic_shape("b, c"), jnp.int32))
    out = exp.call(jnp.arange(12, dtype=jnp.int32).reshape((3, 4)))
    assert repr(out) == "Array([4., 5., 6., 7.], dtype=float32)"


def test_incompatible_shapes_errors():
    v, = export.symbolic_shape("v,")
    with pytest.raises(TypeError, match=re.escape(
            "add got incompatible shapes for broadcasting: (v,), (4,).")):
        export.export(olympus.jit(lambda x, y: x + y))(
            olympus.ShapeDtypeStruct((v,), dtype=np.int32),
            olympus.ShapeDtypeStruct((4,), dtype=np.int32))
    with pytest.raises(TypeError, match=re.escape(
            "dot_general requires contracting dimensions to have the same shape, "
            "got (4,) and (v,).")):
        export.export(olympus.jit(lambda x: jnp.matmul(x, x)))(
            olympus.ShapeDtypeStruct((v, 4), dtype=np.int32))


def test_inconclusive_comparison():
    with pytest.raises(Exception) as info:
        export.export(olympus.jit(lambda x: 0 if x.shape[0] + 1 >= x.shape[1] else 1))(
            olympus.ShapeDtypeStruct(export.symbolic_shape("a, b"), dtype=np.int32))
    assert type(info.value).__name__ == "InconclusiveDimensionOperation"
    assert str(info.value) == ("Symbolic dimension comparison 'a + 1' >= 'b' is "
                               "inconclusive.\n" + _INCONCLUSIVE)


def test_slice_with_offset_dimension():
    exp = export.export(olympus.jit(lambda x: x[0:16]))(
        olympus.ShapeDtypeStruct(export.symbolic_shape("b + 15"), dtype=np.int32))
    assert repr(exp.in_avals) == "(ShapedArray(int32[b + 15]),)"
    assert repr(exp.out_avals) == "(ShapedArray(int32[16]),)"
    np.testing.assert_array_equal(exp.call(np.arange(20, dtype=np.int32)), np.arange(16))
    with pytest.raises(ValueError) as info:  # b = 0 (recorded from reference JAX)
        exp.call(np.arange(15, dtype=np.int32))
    assert str(info.value) == (
        "Input shapes do not match the polymorphic shapes specification. Expected value "
        ">= 1 for dimension variable 'b'. Using the following polymorphic shapes "
        "specifications: args[0].shape = (b + 15,). Obtained dimension variables: 'b' = 0 "
        "from specification 'b + 15' for dimension args[0].shape[0] (= 15), . " + _HELP)


def test_user_constraints_example():
    a, b = export.symbolic_shape("a, b", constraints=("a >= b", "b >= 16"))
    exp = export.export(olympus.jit(lambda x: x[:x.shape[1], :16]))(
        olympus.ShapeDtypeStruct((a, b), dtype=np.int32))
    assert repr(exp.out_avals) == "(ShapedArray(int32[b,16]),)"
    x = np.arange(20 * 16, dtype=np.int32).reshape(20, 16)
    np.testing.assert_array_equal(exp.call(x), x[:16, :16])
    specs = "Using the following polymorphic shapes specifications: args[0].shape = (a, b)."
    with pytest.raises(ValueError) as info:  # recorded from reference JAX
        exp.call(np.ones((16, 17), np.int32))
    assert str(info.value) == (
        "Input shapes do not match the symbolic shape constraint a >= b. Expected '- b + a' "
        f"to be greater or equal to 0, but found -1.  {specs} Obtained dimension variables: "
        "'a' = 16 from specification 'a' for dimension args[0].shape[0] (= 16), 'b' = 17 "
        "from specification 'b' for dimension args[0].shape[1] (= 17), . " + _HELP)
    with pytest.raises(ValueError) as info:
        exp.call(np.ones((15, 15), np.int32))
    assert str(info.value) == (
        "Input shapes do not match the symbolic shape constraint b >= 16. Expected 'b - 16' "
        f"to be greater or equal to 0, but found -1.  {specs} Obtained dimension variables: "
        "'a' = 15 from specification 'a' for dimension args[0].shape[0] (= 15), 'b' = 15 "
        "from specification 'b' for dimension args[0].shape[1] (= 15), . " + _HELP)


def test_equality_constraints_example():
    a, b, c, d = export.symbolic_shape("a, b, c, d", constraints=("a * b == c + d",))
    assert str(2 * b * a) == "2*d + 2*c"
    assert str(a * b * b) == "b*d + b*c"


def test_mod_slice_needs_a_constraint():
    b, = export.symbolic_shape("b")
    f = lambda x: lax.slice_in_dim(x, 0, x.shape[0] % 3)  # noqa: E731
    with pytest.raises(Exception) as info:
        export.export(olympus.jit(f))(olympus.ShapeDtypeStruct((b,), dtype=np.int32))
    assert type(info.value).__name__ == "InconclusiveDimensionOperation"
    assert str(info.value) == ("Symbolic dimension comparison 'b' >= 'mod(b, 3)' is "
                               "inconclusive.\n" + _INCONCLUSIVE)
    b, = export.symbolic_shape("b", constraints=["b >= mod(b, 3)"])
    exp = export.export(olympus.jit(f))(olympus.ShapeDtypeStruct((b,), dtype=np.int32))
    assert repr(exp.out_avals) == "(ShapedArray(int32[mod(b, 3)]),)"
    np.testing.assert_array_equal(exp.call(np.arange(8, dtype=np.int32)), [0, 1])


def test_symbolic_scopes_examples():
    a1, = export.symbolic_shape("a,")
    a2, = export.symbolic_shape("a,", constraints=("a >= 8",))
    with pytest.raises(ValueError, match=(
            r"Invalid mixing of symbolic scopes for linear combination.\n"
            r"Expected  scope \d+ created at .*\n"
            r"and found for 'a' \(unknown\) scope \d+ created at .* with constraints:\n"
            r"  a >= 8\n")):
        a1 + a2
    a, = export.symbolic_shape("a,", constraints=("a >= 8",))
    b, = export.symbolic_shape("b,", scope=a.scope)
    assert repr(a + b) == "b + a"
    my_scope = export.SymbolicScope()
    c, = export.symbolic_shape("c", scope=my_scope)
    d, = export.symbolic_shape("d", scope=my_scope)
    assert repr(c + d) == "d + c"


def test_dimension_variables_must_appear_in_argument_shapes():
    def my_top_k(k, x):  # x: i32[4, 10], k <= 10
        return lax.top_k(x, k)[0]  # : i32[4, 3]

    x = np.arange(40, dtype=np.int32).reshape((4, 10))
    expected = [[9, 8, 7], [19, 18, 17], [29, 28, 27], [39, 38, 37]]
    exp_static_k = export.export(olympus.jit(my_top_k, static_argnums=0))(3, x)
    assert repr(exp_static_k.in_avals[0]) == "ShapedArray(int32[4,10])"
    assert repr(exp_static_k.out_avals[0]) == "ShapedArray(int32[4,3])"
    np.testing.assert_array_equal(exp_static_k.call(x), expected)

    k, = export.symbolic_shape("k", constraints=["k <= 10"])
    with pytest.raises(Exception) as info:
        export.export(olympus.jit(my_top_k, static_argnums=0))(k, x)
    assert type(info.value).__name__ == "UnexpectedDimVar"
    assert str(info.value) == (
        "Encountered dimension variable 'k' that is not appearing in the shapes of the "
        "function arguments.\nThe following dimension variables are appearing in the "
        "shapes of the function arguments: [].\nPlease see "
        "https://docs.jax.dev/en/latest/export/shape_poly.html"
        "#dimension-variables-must-be-solvable-from-the-input-shapes for more details.")

    def my_top_k_with_dimensions(dimensions, x):  # dimensions: i32[0, k], x: i32[4, 10]
        return my_top_k(dimensions.shape[1], x)

    exp = export.export(olympus.jit(my_top_k_with_dimensions))(
        olympus.ShapeDtypeStruct((0, k), dtype=np.int32), x)
    assert repr(exp.in_avals) == "(ShapedArray(int32[0,k]), ShapedArray(int32[4,10]))"
    assert repr(exp.out_avals[0]) == "ShapedArray(int32[4,k])"
    out = exp.call(np.zeros((0, 3), dtype=np.int32), x)
    assert repr(out) == ("Array([[ 9,  8,  7],\n       [19, 18, 17],\n       [29, 28, 27],\n"
                         "       [39, 38, 37]], dtype=int32)")


def test_dimension_variables_must_be_solvable():
    a, = export.symbolic_shape("a")
    with pytest.raises(ValueError) as info:
        export.export(olympus.jit(lambda x: x.shape[0]))(
            olympus.ShapeDtypeStruct((a * a,), dtype=np.int32))
    assert str(info.value) == (
        "Cannot solve for values of dimension variables {'a'}. We can only solve linear "
        "uni-variate constraints. Using the following polymorphic shapes specifications: "
        "args[0].shape = (a^2,). Unprocessed specifications: 'a^2' for dimension size "
        "args[0].shape[0]. Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
        "#dimension-variables-must-be-solvable-from-the-input-shapes for more details.")


def test_shape_assertion_errors_example():
    def f(x):  # x: f32[b, b, 2*d]
        return x

    exp = export.export(olympus.jit(f))(
        olympus.ShapeDtypeStruct(export.symbolic_shape("b, b, 2*d"), dtype=np.int32))
    specs = ("Using the following polymorphic shapes specifications: "
             "args[0].shape = (b, b, 2*d). Obtained dimension variables: 'b' = 3 from "
             "specification 'b' for dimension args[0].shape[0] (= 3), . ")
    with pytest.raises(ValueError) as info:
        exp.call(np.ones((3, 3, 5), dtype=np.int32))
    assert str(info.value) == (
        "Input shapes do not match the polymorphic shapes specification. Division had "
        "remainder 1 when computing the value of 'd'. " + specs + _HELP)
    with pytest.raises(ValueError) as info:  # recorded from reference JAX
        exp.call(np.ones((3, 4, 6), dtype=np.int32))
    assert str(info.value) == (
        "Input shapes do not match the polymorphic shapes specification. Found "
        "inconsistency between dimension size args[0].shape[1] (= 4) and the specification "
        "'b' (= 3). " + specs + _HELP)
    np.testing.assert_array_equal(exp.call(np.ones((3, 3, 4), np.int32)),
                                  np.ones((3, 3, 4), np.int32))
