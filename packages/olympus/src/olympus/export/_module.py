"""The exported StableHLO module: lowered with JAX's export conventions, checked, and
serialized as a VHLO portable artifact.

What differs from a `jit` lowering: no constant is hoisted into an argument, several
platforms add a platform index argument, the result attributes are named
``jax.result_info`` (JAX's name, which JAX tooling reads back), and the module carries
``jax.uses_shape_polymorphism``. Custom calls must be among the targets with a
compatibility guarantee (JAX's list) unless a `DisabledSafetyCheck.custom_call` allows
them; host callbacks cannot be serialized (as in JAX).
"""

from __future__ import annotations

from jaxlib import _jax

__all__ = ["export_module", "STABLE_CUSTOM_CALL_TARGETS"]

def _lapack(*ops: str) -> list[str]:
    """``lapack_{s,d,c,z}<op>_ffi``; an op given as ``real/complex`` differs by type."""
    out = []
    for op in ops:
        real, _, cplx = op.partition("/")
        cplx = cplx or real
        out += [f"lapack_{p}{real}_ffi" for p in "sd"] + [f"lapack_{p}{cplx}_ffi" for p in "cz"]
    return out


_CPU_FFI_KERNELS = _lapack("potrf", "geqrf", "orgqr/ungqr", "syevd/heevd", "geev", "gesdd",
                           "getrf", "sytrd/hetrd", "gehrd", "gees", "trsm", "gtsv")

#: Custom call targets JAX guarantees stable (its ``_CUSTOM_CALL_TARGETS_GUARANTEED_STABLE``
#: that can appear in a CPU lowering, plus the platform-neutral ones).
STABLE_CUSTOM_CALL_TARGETS = frozenset({
    *_CPU_FFI_KERNELS, "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
    "annotate_device_placement", "AllocateBuffer", "shape_assertion",
    "stablehlo.dynamic_reduce_window", "stablehlo.dynamic_rng_bit_generator",
    "stablehlo.dynamic_top_k", "ApproxTopK", "stablehlo.dynamic_approx_top_k",
})
#: Custom call targets that exist only on the CPU backend.
_CPU_ONLY_PREFIX = "lapack_"


def _lower(meta, kept, platforms):
    from olympus._src.lowering import lower_olympuspr

    closed = meta._pruned if len(kept) != len(meta.in_avals) else meta.closed
    arg_names = [meta.arg_names[i] for i in kept]
    donated = tuple(j for j, i in enumerate(kept) if meta.donated_mask[i])
    return lower_olympuspr(closed, name=meta.name, arg_names=arg_names, donated=donated,
                           result_names=meta.result_names(), const_hoist_threshold=None,
                           platforms=platforms)


def _walk(op, visit) -> None:
    visit(op)
    for region in op.regions:
        for block in region:
            for inner in block:
                _walk(inner.operation, visit)


def _check_module(module, name: str, platforms, disabled_checks) -> None:
    from jaxlib.mlir import ir

    allowed = set(STABLE_CUSTOM_CALL_TARGETS)
    for c in disabled_checks:
        target = c.is_custom_call()
        if target is not None:
            allowed.add(target)
    bad: list[str] = []
    cpu_only: list[str] = []

    def visit(op):
        if op.name != "stablehlo.custom_call":
            return
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if "ALL" not in allowed and target not in allowed:
            bad.append(f"{op} at {op.location}")
        if target.startswith(_CPU_ONLY_PREFIX):
            cpu_only.append(target)

    _walk(module.operation, visit)
    if bad:
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no "
            "compatibility guarantees. "
            "See https://docs.jax.dev/en/latest/export/export.html#compatibility-guarantees-for-custom-calls. "
            "Examples are:\n" + "\n".join(bad) + ".\n")
    other = [p for p in platforms if p != "cpu"]
    if cpu_only and other:
        raise NotImplementedError(
            f"Exporting {name!r} for platforms {tuple(platforms)}: its lowering calls the "
            f"CPU-only kernels {sorted(set(cpu_only))}, and olympus lowers them only for "
            "'cpu'.")


def _jax_conventions(module, uses_shape_polymorphism: bool):
    """A copy of `module` with JAX's attribute names (``jax.result_info`` on the results
    of every function) and the ``jax.uses_shape_polymorphism`` module attribute."""
    from jaxlib.mlir import ir

    from olympus_lower.context import get_context

    with get_context(), ir.Location.unknown():
        module = ir.Module.parse(_bytecode(module))
        attrs = module.operation.attributes
        attrs["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(uses_shape_polymorphism)
        for fn in module.body.operations:
            if fn.operation.name != "func.func" or "res_attrs" not in fn.attributes:
                continue
            new = []
            for d in ir.ArrayAttr(fn.attributes["res_attrs"]):
                entries = {}
                for named in ir.DictAttr(d):
                    key = "jax.result_info" if named.name == "olympus.result_info" else named.name
                    entries[key] = named.attr
                new.append(ir.DictAttr.get(entries))
            fn.attributes["res_attrs"] = ir.ArrayAttr.get(new)
    return module


def _bytecode(module) -> bytes:
    import io

    buf = io.BytesIO()
    module.operation.write_bytecode(file=buf)
    return buf.getvalue()


def export_module(meta, *, kept, platforms, disabled_checks,
                  arg_names=None) -> tuple[bytes, bool]:
    """(the VHLO portable artifact, uses_global_constants) of a traced jit signature.

    With symbolic shapes the lowered ``@main`` takes the dimension variables first; it is
    wrapped as JAX's export does (`olympus_lower.shape_refinement.export_main`): the new
    ``@main`` takes only the arrays, derives the dimension values from their shapes and
    checks the shape constraints; `arg_names` (``args[0]``...) name the arguments in the
    shape assertions' messages."""
    from olympus_lower.lowering import portable_artifact_target
    from olympus_lower.shape_refinement import export_main

    lowered = _lower(meta, kept, platforms)
    if lowered.host_callbacks:
        raise NotImplementedError("serialization of host_callbacks is not yet implemented")
    uses_global_constants = len(platforms) > 1 or bool(lowered.dim_vars) \
        or getattr(lowered, "uses_dim_vars", False)
    module = lowered.module
    if lowered.dim_vars:
        in_avals = [meta.in_avals[i] for i in kept]
        module = export_main(lowered, in_avals, arg_names, module=module)
    module = _jax_conventions(module, uses_global_constants)
    _check_module(module, meta.name, platforms, disabled_checks)
    artifact = _jax.mlir.serialize_portable_artifact(_bytecode(module),
                                                     portable_artifact_target())
    return bytes(artifact), uses_global_constants
