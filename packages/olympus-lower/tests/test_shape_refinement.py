"""Lowering with symbolic shapes, JAX's export wrapper and shape refinement, executed.

Olympusprs with symbolic input shapes are built by hand, lowered (``?`` dims, the dimension
variables as leading ``jax.global_constant`` arguments, dynamic shape ops), wrapped by
`export_main` (dimension sizes read with ``get_dimension_size``, shape assertions), refined
to concrete shapes and run on the CPU; results are compared with NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, execute

from olympus_ir import ShapedArray
from olympus_ir import primitives as P
from olympus_ir.shape_poly import evaluate_dim, max_dim, symbolic_shape
from olympus_ir.shape_poly_solve import dim_values_for_shapes
from olympus_lower import LoweredModule, lower_olympuspr
from olympus_lower.shape_refinement import export_main, refine_polymorphic_shapes

F32, I32 = np.dtype(np.float32), np.dtype(np.int32)


def _run(closed, in_avals, args):
    """Lower `closed`, wrap, refine to the arguments' shapes and execute."""
    lowered = lower_olympuspr(closed, name="f")
    module = export_main(lowered, in_avals)
    env = dim_values_for_shapes(in_avals, [a.shape for a in args])
    out_avals = [ShapedArray(tuple(evaluate_dim(d, env) for d in a.shape), a.dtype)
                 for a in closed.out_avals]
    refined = refine_polymorphic_shapes(module, [a.shape for a in args],
                                        [a.shape for a in out_avals])
    static = LoweredModule(refined, name="f",
                           in_avals=[ShapedArray(a.shape, a.dtype) for a in args],
                           out_avals=out_avals, hoisted_consts=(), hoisted_const_indices=(),
                           donated=(False,) * len(args))
    return execute(static, *args)


def test_dimension_values_and_dynamic_shape_ops():
    b, = symbolic_shape("b")
    x_aval = ShapedArray((b, 4), F32)
    bld = Builder()
    x = bld.arg(x_aval)
    n = bld.eqn(P.dim_as_value_p, dim=b)                          # b
    q = bld.eqn(P.dim_as_value_p, dim=max_dim(b // 2, 2) + b % 3)  # max(b//2, 2) + b%3
    io = bld.eqn(P.iota_p, dtype=I32, shape=(b,), dimension=0)
    ones = bld.eqn(P.broadcast_in_dim_p, bld.const(np.float32(1)), shape=(b, 4),
                   broadcast_dimensions=(), sharding=None)
    flat = bld.eqn(P.reshape_p, bld.eqn(P.add_p, x, ones), new_sizes=(4 * b,), dimensions=None,
                   sharding=None)
    tail = bld.eqn(P.slice_p, x, start_indices=(1, 0), limit_indices=(b, 4), strides=None)
    closed = bld.build([n, q, io, flat, tail])
    text = lower_olympuspr(closed, name="f").as_text()
    assert '%arg0: tensor<i32> {jax.global_constant = "b"}, %arg1: tensor<?x4xf32>' in text
    for op in ("stablehlo.dynamic_iota", "stablehlo.dynamic_broadcast_in_dim",
               "stablehlo.dynamic_reshape", "stablehlo.real_dynamic_slice"):
        assert op in text
    for size in (3, 8):
        xv = np.arange(size * 4, dtype=np.float32).reshape(size, 4)
        got_n, got_q, got_io, got_flat, got_tail = _run(closed, [x_aval], [xv])
        assert got_n == size and got_q == max(size // 2, 2) + size % 3
        np.testing.assert_array_equal(got_io, np.arange(size))
        np.testing.assert_array_equal(got_flat, (xv + 1).reshape(-1))
        np.testing.assert_array_equal(got_tail, xv[1:])


def test_export_main_computes_dimensions_and_checks_shapes():
    a, b = symbolic_shape("a, b", constraints=("a >= b",))
    x_aval, y_aval = ShapedArray((a, 2 * b), F32), ShapedArray((b,), F32)
    bld = Builder()
    for aval in (x_aval, y_aval):
        bld.arg(aval)
    closed = bld.build([bld.eqn(P.dim_as_value_p, dim=a * 10 + b)])
    module = export_main(lower_olympuspr(closed, name="f"), [x_aval, y_aval])
    text = str(module)
    assert "func.func public @main(%arg0: tensor<?x?xf32>, %arg1: tensor<?xf32>)" in text
    assert "stablehlo.get_dimension_size %arg0, dim = 1" in text
    assert "Input shapes do not match the symbolic shape constraint a >= b." in text
    assert _run(closed, [x_aval, y_aval], [np.zeros((5, 6), F32), np.zeros((3,), F32)]) == [53]
    with pytest.raises(ValueError, match="Found inconsistency between dimension size "
                                         r"args\[1\].shape\[0\] \(= 4\)"):
        refine_polymorphic_shapes(module, [(5, 6), (4,)], [()])
    with pytest.raises(ValueError, match="Input shapes do not match the symbolic shape "
                                         "constraint a >= b"):
        refine_polymorphic_shapes(module, [(2, 6), (3,)], [()])


def test_refinement_rejects_shapes_of_another_rank():
    b, = symbolic_shape("b")
    x_aval = ShapedArray((b,), F32)
    bld = Builder()
    x = bld.arg(x_aval)
    module = export_main(lower_olympuspr(bld.build([x]), name="f"), [x_aval])
    with pytest.raises(ValueError, match=r"argument shape \(3, 2\) does not match"):
        refine_polymorphic_shapes(module, [(3, 2)], [(3,)])
