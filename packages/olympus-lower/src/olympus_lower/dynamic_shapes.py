"""Lowering with symbolic dimensions: ``?`` in tensor types, dimension values as IR values.

While a module with symbolic shapes is lowered, the values of its dimension variables are
``tensor<i32>`` values (the leading ``jax.global_constant`` arguments of the function, as
JAX's lowering passes them). `dim_value` evaluates a dimension expression into such a
value, and `shape_value` builds the ``tensor<Nxi32>`` shape operand of the dynamic ops
(``dynamic_broadcast_in_dim``, ``dynamic_reshape``, ``dynamic_iota``). The environment is
per thread and only set while a symbolic module is being lowered, so lowering with
static shapes never looks at it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir import shape_poly
from olympus_ir.shape_poly import DimExpr

__all__ = [
    "is_static", "ir_shape", "dim_env", "current_dim_env", "dim_value", "shape_value",
    "floor_divide", "remainder",
]


class _State(threading.local):
    env: dict | None = None


_state = _State()


def is_static(shape: Sequence) -> bool:
    """No symbolic dimension (ints of any integer type are static)."""
    return not any(type(d) is DimExpr for d in shape)


def ir_shape(shape: Sequence) -> list[int]:
    """The shape for an MLIR tensor type: ``?`` (the dynamic size) for symbolic dims."""
    dyn = ir.ShapedType.get_dynamic_size()
    return [dyn if type(d) is DimExpr else int(d) for d in shape]


def current_dim_env() -> dict:
    """The dimension variables' values where the lowering is now (empty outside a
    lowering with symbolic shapes)."""
    return _state.env or {}


@contextmanager
def dim_env(env: dict):
    """Binds dimension variable names to their ``tensor<i32>`` values while lowering."""
    prev = _state.env
    _state.env = env
    try:
        yield
    finally:
        _state.env = prev


def _i32():
    return ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))


def _const(v: int) -> ir.Value:
    attr = ir.DenseElementsAttr.get(np.asarray(v, np.int32), type=ir.IntegerType.get_signless(32),
                                    shape=[])
    return hlo.constant(attr)


def _val(x):
    return _const(x) if isinstance(x, int) else x


def floor_divide(a: ir.Value, b: ir.Value) -> ir.Value:
    """Python's ``a // b`` on int32 scalars (stablehlo.divide truncates toward zero)."""
    q = hlo.divide(a, b)
    r = hlo.remainder(a, b)
    signs_differ = hlo.compare(hlo.sign(a), hlo.sign(b),
                               hlo.ComparisonDirectionAttr.get("NE"),
                               compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))
    inexact = hlo.compare(r, _const(0), hlo.ComparisonDirectionAttr.get("NE"),
                          compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))
    return hlo.select(hlo.and_(signs_differ, inexact), hlo.subtract(q, _const(1)), q)


def remainder(a: ir.Value, b: ir.Value) -> ir.Value:
    """Python's ``a % b`` on int32 scalars (the sign of the divisor)."""
    r = hlo.remainder(a, b)
    lt = hlo.ComparisonDirectionAttr.get("LT")
    signed = hlo.ComparisonTypeAttr.get("SIGNED")
    nonzero = hlo.compare(r, _const(0), hlo.ComparisonDirectionAttr.get("NE"),
                          compare_type=signed)
    r_neg = hlo.compare(r, _const(0), lt, compare_type=signed)
    b_neg = hlo.compare(b, _const(0), lt, compare_type=signed)
    fix = hlo.and_(hlo.compare(r_neg, b_neg, hlo.ComparisonDirectionAttr.get("NE"),
                               compare_type=hlo.ComparisonTypeAttr.get("UNSIGNED")), nonzero)
    return hlo.select(fix, hlo.add(r, b), r)


def dim_value(d, env: dict | None = None) -> ir.Value:
    """A dimension (int or expression) as a ``tensor<i32>`` value."""
    if type(d) is not DimExpr:
        return _const(int(d))
    env = _state.env if env is None else env
    if env is None:  # no argument has a symbolic shape: JAX's UnexpectedDimVar (no vars)
        env = {}
    out = shape_poly.evaluate_dim(
        d, env,
        add=lambda a, b: hlo.add(_val(a), _val(b)),
        mul=lambda a, b: hlo.multiply(_val(a), _val(b)),
        floordiv=lambda a, b: floor_divide(_val(a), _val(b)),
        mod=lambda a, b: remainder(_val(a), _val(b)),
        maximum=lambda a, b: hlo.maximum(_val(a), _val(b)),
        minimum=lambda a, b: hlo.minimum(_val(a), _val(b)))
    return _val(out)


def shape_value(shape: Sequence) -> ir.Value:
    """The shape as a ``tensor<Nxi32>`` value (the operand of the dynamic shape ops)."""
    i32 = ir.IntegerType.get_signless(32)
    one = ir.RankedTensorType.get([1], i32)
    pieces = []
    for d in shape:
        if type(d) is not DimExpr:
            attr = ir.DenseElementsAttr.get(np.asarray([int(d)], np.int32), type=i32, shape=[1])
            pieces.append(hlo.constant(attr))
        else:
            pieces.append(hlo.reshape(one, dim_value(d)))
    if len(pieces) == 1:
        return pieces[0]
    if not pieces:
        attr = ir.DenseElementsAttr.get(np.zeros((0,), np.int32), type=i32, shape=[0])
        return hlo.constant(attr)
    return hlo.concatenate(pieces, 0)
