"""Running modules lowered with symbolic shapes: JAX's export calling convention and shape
refinement.

A module lowered with symbolic shapes (`lower_olympuspr` on symbolic avals) takes the
dimension variables as leading ``jax.global_constant`` int32 arguments. `export_main`
wraps it the way ``jax.export`` does: the new public ``@main`` takes only the arrays,
computes each dimension variable from their sizes (``stablehlo.get_dimension_size``),
checks the shape constraints with ``shape_assertion`` custom calls carrying JAX's error
text, and calls the original function, renamed ``@_wrapped_jax_export_main``.

`refine_polymorphic_shapes` specializes such a module to concrete argument shapes
(jaxlib's ``refine_polymorphic_shapes``: shape refinement, constant propagation of the
dimension values, and the shape assertions checked) so XLA can compile it.
"""

from __future__ import annotations

from collections.abc import Sequence

from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo

from olympus_ir import shape_poly
from olympus_ir.shape_poly_solve import solve_dim_vars

from . import dynamic_shapes as ds
from .context import get_context
from .lowering import LoweredModule

__all__ = ["export_main", "refine_polymorphic_shapes", "refine_static_module", "WRAPPED_MAIN"]

WRAPPED_MAIN = "_wrapped_jax_export_main"


def _find_func(module: ir.Module, name: str):
    for op in module.body.operations:
        if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op
    raise ValueError(f"module has no function @{name}")


def _fresh_name(module: ir.Module, base: str) -> str:
    """`base`, or ``base_0``, ``base_1``... the first not already a symbol of `module`."""
    taken = {ir.StringAttr(op.attributes["sym_name"]).value
             for op in module.body.operations if "sym_name" in op.attributes}
    name, k = base, 0
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


class _Converted(dict):
    """Dimension values read through a (no-op) ``stablehlo.convert`` each time, as JAX's
    evaluation of a dimension expression converts each variable it reads."""

    def __getitem__(self, name):
        v = super().__getitem__(name)
        return hlo.convert(v.type, v)


def _evaluator(env: dict):
    """The ``tensor<i32>`` value of a dimension expression over `env`, with JAX's ops: a
    bare variable is its value, a variable inside arithmetic is read through a convert."""
    converted = _Converted(env)

    def value(e):
        bare = not shape_poly.is_symbolic_dim(e) or e.to_var() is not None
        return ds.dim_value(e, env if bare else converted)

    return value


def _compare(a, b, direction: str):
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))


def export_main(lowered: LoweredModule, in_avals: Sequence,
                arg_names: Sequence[str] | None = None,
                module: ir.Module | None = None) -> ir.Module:
    """`lowered` (with symbolic shapes) with a public ``@main`` taking only its arrays.

    `in_avals` are the avals of the function's own arguments (the last ``len(in_avals)``
    arguments of ``@main``); `arg_names` describe them in error messages (``args[i]``).
    A platform index argument (lowered for several platforms) stays the first argument
    of both functions, as in JAX. A module without dimension variables is returned as it
    is. `module` (default ``lowered.module``) is the module to wrap, e.g. a copy with
    renamed attributes.
    """
    if not lowered.dim_vars:
        return lowered.module if module is None else module
    sol = solve_dim_vars(in_avals, arg_names)
    n_dims = len(lowered.dim_vars)
    with get_context(), ir.Location.unknown():
        module = ir.Module.parse(_bytecode(lowered.module if module is None else module))
        inner = _find_func(module, "main")
        wrapped = _fresh_name(module, WRAPPED_MAIN)  # an inlined Exported may have one
        inner.attributes["sym_name"] = ir.StringAttr.get(wrapped)
        inner.attributes["sym_visibility"] = ir.StringAttr.get("private")
        ftype = ir.FunctionType(ir.TypeAttr(inner.attributes["function_type"]).value)
        n_platform = len(ftype.inputs) - n_dims - len(in_avals)
        if n_platform not in (0, 1):
            raise ValueError(f"export_main: @main takes {len(ftype.inputs)} arguments, not "
                             f"{n_dims} dimension variables and {len(in_avals)} arrays")
        inputs = list(ftype.inputs)
        arg_types = inputs[:n_platform] + inputs[n_platform + n_dims:]
        res_types = list(ftype.results)
        with ir.InsertionPoint.at_block_begin(module.body):
            main = func.FuncOp("main", ir.FunctionType.get(arg_types, res_types))
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        if n_platform:
            main.arg_attrs = ir.ArrayAttr.get(
                [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get("_platform_index")})]
                + [ir.DictAttr.get({}) for _ in in_avals])
        if "res_attrs" in inner.attributes:
            main.attributes["res_attrs"] = inner.attributes["res_attrs"]
        module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(True)
        entry = main.add_entry_block()
        with ir.InsertionPoint(entry):
            args = list(entry.arguments)
            platform_args, args = args[:n_platform], args[n_platform:]
            offset = len(args) - len(in_avals)
            env = {name: hlo.get_dimension_size(args[offset + i], j)
                   for name, i, j in sol.synthetic}
            value = _evaluator(env)
            for c in sol.constraints:
                left, right = c.left, c.right
                if shape_poly.is_constant_dim(left) and shape_poly.is_constant_dim(right):
                    if not (left == right if c.cmp == shape_poly.EQ else left >= right):
                        raise c.error({})
                    continue
                ok = _compare(value(left), value(right),
                              "EQ" if c.cmp == shape_poly.EQ else "GE")
                msg, inputs = c.message_and_inputs(value)
                op = hlo.custom_call([], [ok, *inputs], "shape_assertion", has_side_effect=True,
                                     api_version=ir.IntegerAttr.get(
                                         ir.IntegerType.get_signless(32), 2))
                op.operation.attributes["error_message"] = ir.StringAttr.get(msg)
            dims = [value(sol.solution[v]) for v in lowered.dim_vars]
            call = func.CallOp(res_types, ir.FlatSymbolRefAttr.get(wrapped),
                               platform_args + dims + args)
            func.ReturnOp(list(call.results))
        module.operation.verify()
    return module


def refine_polymorphic_shapes(module: ir.Module, arg_shapes: Sequence[Sequence[int]],
                              out_shapes: Sequence[Sequence[int]]) -> ir.Module:
    """`module` (whose ``@main`` takes only arrays, e.g. from `export_main`) specialized to
    arguments of `arg_shapes` and results of `out_shapes` (evaluate the output avals with
    the dimension values, e.g. from `olympus_ir.shape_poly_solve.dim_values_for_shapes`):
    every shape static, dimension computations folded, shape assertions checked (a failing
    one raises ValueError with its message).

    As JAX's call of an exported function does, a new ``@main`` with the static types
    converts its arguments to the original's (dynamic) types and calls it (renamed
    ``@_wrapped_main``); jaxlib's refinement then propagates the static shapes."""
    with get_context(), ir.Location.unknown():
        module = ir.Module.parse(_bytecode(module))
        orig = _find_func(module, "main")
        ftype = ir.FunctionType(ir.TypeAttr(orig.attributes["function_type"]).value)
        ins = _static_types("argument", ftype.inputs, arg_shapes)
        outs = _static_types("result", ftype.results, out_shapes)
        orig.attributes["sym_name"] = ir.StringAttr.get("_wrapped_main")
        orig.attributes["sym_visibility"] = ir.StringAttr.get("private")
        with ir.InsertionPoint.at_block_begin(module.body):
            main = func.FuncOp("main", ir.FunctionType.get(ins, outs))
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        entry = main.add_entry_block()
        with ir.InsertionPoint(entry):
            args = [a if a.type == t else hlo.convert(t, a)
                    for a, t in zip(entry.arguments, ftype.inputs, strict=True)]
            call = func.CallOp(list(ftype.results), ir.FlatSymbolRefAttr.get("_wrapped_main"),
                               args)
            func.ReturnOp([r if r.type == t else hlo.convert(t, r)
                           for r, t in zip(call.results, outs, strict=True)])
        try:
            refined = _jax.mlir.refine_polymorphic_shapes(
                _bytecode(module), enable_shape_assertions=True, validate_static_shapes=True)
        except Exception as e:  # noqa: BLE001 - jaxlib reports failed assertions so
            raise ValueError(f"Error refining shapes: {e}") from e
        return ir.Module.parse(refined)


def _static_types(what: str, types, shapes) -> list:
    if len(shapes) != len(types):
        raise ValueError(f"refine_polymorphic_shapes: got {len(shapes)} {what} shapes for "
                         f"{len(types)} {what}s of main")
    out = []
    for t, shape in zip(types, shapes, strict=True):
        rt = ir.RankedTensorType(t)
        shape = [int(d) for d in shape]
        if len(shape) != rt.rank or any(not rt.is_dynamic_dim(i) and rt.get_dim_size(i) != d
                                        for i, d in enumerate(shape)):
            raise ValueError(f"refine_polymorphic_shapes: {what} shape {tuple(shape)} does "
                             f"not match the type {t}")
        out.append(ir.RankedTensorType.get(shape, rt.element_type))
    return out


def _bytecode(module: ir.Module) -> bytes:
    import io

    buf = io.BytesIO()
    module.operation.write_bytecode(file=buf)
    return buf.getvalue()


def refine_static_module(module: ir.Module) -> ir.Module:
    """`module`, whose ``@main`` has static types but which calls shape-polymorphic code
    (an inlined `Exported` lowered with symbolic shapes), with every shape refined to a
    static one and the shape assertions checked, as JAX refines such a module before
    compiling it. A failure raises ValueError ("Error refining shapes. ...")."""
    with get_context():
        try:
            refined = _jax.mlir.refine_polymorphic_shapes(
                _bytecode(module), enable_shape_assertions=True, validate_static_shapes=True)
        except Exception as e:  # noqa: BLE001 - jaxlib reports failed assertions so
            raise ValueError(f"Error refining shapes. {e}") from e
        return ir.Module.parse(refined)
