"""`Exported` and `export`: a jitted function lowered to a versioned StableHLO portable
artifact plus its calling convention, with JAX 0.10.2's fields and behaviour.

The module follows JAX's export conventions, so JAX can call what Olympus exports and the
other way round: a public ``@main`` whose results carry ``jax.result_info``, the module
attribute ``jax.uses_shape_polymorphism``, with several platforms a leading ``i32``
platform index argument marked ``jax.global_constant = "_platform_index"``, unused
arguments dropped (``module_kept_var_idx``), no constants hoisted into arguments, and the
VHLO artifact at the StableHLO version of jaxlib's WEEK_4 compatibility requirement (as
jax.export picks it).

Dimensions in `in_avals`/`out_avals` may be symbolic: the module then has JAX's wrapper
for dimension variables (`olympus_lower.shape_refinement.export_main`), and serialization
writes ``str(d)`` and reads shapes back with the shape-polymorphism parser
(`_serialization._parse_shape`).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from jaxlib import _jax

import olympus_runtime as rt
from olympus_ir.avals import ShapedArray, ShapeDtypeStruct
from olympus_trace import tree_util

__all__ = [
    "DisabledSafetyCheck", "Exported", "export", "deserialize",
    "register_pytree_node_serialization", "register_namedtuple_serialization",
    "minimum_supported_calling_convention_version",
    "maximum_supported_calling_convention_version", "default_export_platform",
]

#: The calling conventions this module can produce and call (JAX 0.10.2's range).
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
_CALLING_CONVENTION_VERSION = 10

T = TypeVar("T")


class DisabledSafetyCheck:
    """A safety check to skip: `platform()` lets the calling platform differ from the
    export platforms; `custom_call(target)` allows serializing a custom call whose
    target has no compatibility guarantee."""

    _impl: str

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        return DisabledSafetyCheck("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        return DisabledSafetyCheck(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom call target this check allows, or None."""
        m = re.match(r"custom_call:(.+)$", self._impl)
        return m.group(1) if m else None

    def __init__(self, _impl: str):
        self._impl = _impl

    def __str__(self) -> str:
        return self._impl

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


@dataclasses.dataclass(frozen=True)
class Exported:
    """A function lowered to StableHLO, with what calling it needs (JAX's fields; the
    ones starting with ``_`` are private, as in JAX)."""

    fun_name: str
    in_tree: Any
    in_avals: tuple
    out_tree: Any
    out_avals: tuple
    _has_named_shardings: bool
    _in_named_shardings: tuple
    _out_named_shardings: tuple
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None

    def mlir_module(self, serialized: bool = True) -> Any:
        """The StableHLO module as text (with locations), or with ``serialized=False``
        the ``ir.Module`` itself."""
        from olympus_lower.context import get_context

        with get_context():
            module = _jax.mlir.deserialize_portable_artifact(self.mlir_module_serialized)
            if not serialized:
                return module
            return module.operation.get_asm(enable_debug_info=True)

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"

    def in_shardings_jax(self, mesh) -> tuple:
        """The input shardings for calling on `mesh`: None where unspecified (every
        sharding of an Olympus export today; split shardings are not supported yet)."""
        return _shardings_on(self._in_named_shardings, mesh)

    def out_shardings_jax(self, mesh) -> tuple:
        """The output shardings on `mesh` (see `in_shardings_jax`)."""
        return _shardings_on(self._out_named_shardings, mesh)

    def has_vjp(self) -> bool:
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The exported VJP: takes the flat primal arguments then one cotangent per flat
        primal output, returns the cotangents of the flat primal arguments."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The bytes of this Exported in JAX's format, with `vjp_order` orders of VJP
        (2 allows ``grad(grad(f))`` of the deserialized function)."""
        from ._serialization import serialize

        return serialize(self, vjp_order=vjp_order)

    def call(self, *args, **kwargs):
        """Call the exported function (eagerly or under jit, grad, another export) with
        arguments of the structure and types it was exported for."""
        from ._calling import call_exported

        return call_exported(self)(*args, **kwargs)

    def _arg_descriptor(self, flat_idx: int, dim_idx: int | None) -> str:
        """``args[0]['a'].shape[1]``: how errors name a flat argument (and dimension)."""
        from ._calling import arg_descriptor

        return arg_descriptor(self.in_tree, flat_idx, dim_idx)


def _shardings_on(named, mesh) -> tuple:
    del mesh
    if any(s is not None for s in named):
        raise NotImplementedError(
            "Exported with shardings over a mesh: converting them to olympus shardings is "
            "not supported yet")
    return tuple(named)


def deserialize(blob: bytearray) -> Exported:
    """An `Exported` from the bytes `Exported.serialize` (or JAX 0.10.2) wrote. Malformed
    bytes raise a Python exception (ValueError or NotImplementedError)."""
    from ._serialization import deserialize as _deserialize

    return _deserialize(blob)


# ---------------------------------------------------------------------------------------
# Pytree node serialization registry
# ---------------------------------------------------------------------------------------

#: type -> (serialized name, serialize_auxdata)
serialization_registry: dict[type, tuple[str, Callable]] = {}
#: serialized name -> (type, deserialize_auxdata, from_children)
deserialization_registry: dict[str, tuple[type, Callable, Callable]] = {}


def _is_namedtuple(nodetype: type) -> bool:
    return (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and isinstance(getattr(nodetype, "_fields", None), Sequence)
            and all(isinstance(f, str) for f in nodetype._fields))


def _registered_from_children(nodetype: type) -> Callable | None:
    """A `from_children` built from the node's pytree registration (its unflatten), or
    None when `nodetype` is not a registered pytree node."""
    if not tree_util.is_tree_node(nodetype) or _is_namedtuple(nodetype) \
            or nodetype in (tuple, list, dict, type(None)):
        return None
    leaf = tree_util.tree_structure(0)

    def from_children(aux, children):
        node = tree_util.PyTreeDef.from_node_data_and_children(
            tree_util.default_registry, (nodetype, aux), [leaf] * len(children))
        return node.unflatten(list(children))

    return from_children


def register_pytree_node_serialization(
        nodetype: type[T], *, serialized_name: str, serialize_auxdata: Callable,
        deserialize_auxdata: Callable, from_children: Callable | None = None) -> type[T]:
    """Register how a custom pytree node's auxdata is (de)serialized in an Exported's
    ``in_tree``/``out_tree``. Returns `nodetype` (usable as a class decorator)."""
    if nodetype in serialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. "
            "Previous registration was with serialized_name "
            f"`{serialization_registry[nodetype][0]}`.")
    if serialized_name in deserialization_registry:
        raise ValueError(
            "Duplicate serialization registration for "
            f"serialized_name `{serialized_name}`. "
            "Previous registration was for type "
            f"`{deserialization_registry[serialized_name][0]}`.")
    if from_children is None:
        from_children = _registered_from_children(nodetype)
        if from_children is None:
            raise ValueError(
                "If `from_children` is not present, you must call first"
                f"`olympus.tree_util.register_pytree_node` for `{nodetype}`")
    serialization_registry[nodetype] = (serialized_name, serialize_auxdata)
    deserialization_registry[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype: type[T], *, serialized_name: str) -> type[T]:
    """Register a ``collections.namedtuple`` type for serialization (its field names are
    stored, and must match on deserialization)."""
    if not _is_namedtuple(nodetype):
        raise ValueError("Use `olympus.export.register_pytree_node_serialization` for "
                         "types other than `collections.namedtuple`.")

    def serialize_auxdata(aux) -> bytes:
        del aux
        return json.dumps(nodetype._fields).encode("utf-8")

    def deserialize_auxdata(data: bytes):
        return json.loads(data.decode("utf-8"))

    def from_children(aux, children):
        if not isinstance(aux, list) or len(aux) != len(children):
            raise ValueError(f"Cannot deserialize the namedtuple {serialized_name!r}: "
                             f"field names {aux!r} for {len(children)} children")
        return nodetype(**dict(zip(aux, children)))

    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name, serialize_auxdata=serialize_auxdata,
        deserialize_auxdata=deserialize_auxdata, from_children=from_children)


def _serialize_ordereddict_keys(keys) -> bytes:
    if isinstance(keys, Sequence) and all(isinstance(k, str) for k in keys):
        return json.dumps(list(keys)).encode("utf-8")
    raise NotImplementedError(
        "Serialization of collections.OrderedDict is supported only when the "
        f"keys are strings. Found keys: {keys}.")


def _ordereddict_from_children(keys, children):
    if not isinstance(keys, list) or len(keys) != len(children):
        raise ValueError(f"Cannot deserialize a collections.OrderedDict with keys {keys!r} "
                         f"and {len(children)} children")
    return collections.OrderedDict(zip(keys, children))


register_pytree_node_serialization(
    collections.OrderedDict, serialized_name="collections.OrderedDict",
    serialize_auxdata=_serialize_ordereddict_keys,
    deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
    from_children=_ordereddict_from_children)


# ---------------------------------------------------------------------------------------
# Exporting
# ---------------------------------------------------------------------------------------

def default_export_platform() -> str:
    """The platform `export` lowers for by default: the default backend's (``'cpu'``)."""
    return rt.default_backend()


def _is_jitted(f) -> bool:
    return isinstance(f, _jax.PjitFunction) and hasattr(f, "_olympus_jit")


def export(fun_jit, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()) -> Callable[..., Exported]:
    """Export a jitted function: returns a function of argument specs (arrays or
    `olympus.ShapeDtypeStruct`, the same pytree as the call) that returns an `Exported`.
    `platforms` (default: `default_export_platform()`) are the platforms to lower for;
    with several, the module takes a platform index argument. As in JAX, platform names
    are not validated here (a call checks its platform against them)."""
    if not _is_jitted(fun_jit):
        raise ValueError(
            f"Function to be exported must be the result of `jit` but is: {fun_jit}")

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        lowering_platforms = (tuple(platforms) if platforms is not None
                              else (default_export_platform(),))
        _check_symbolic_scopes(fun_jit, args_specs, kwargs_specs)
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        return _export_traced(traced._meta, lowering_platforms, tuple(disabled_checks))

    return do_export


def _check_symbolic_scopes(fun_jit, args_specs, kwargs_specs) -> None:
    """Every symbolic dimension of the specs must come from one `SymbolicScope` (JAX
    checks this before tracing, naming the first argument of each scope)."""
    from olympus_ir.shape_poly import is_symbolic_dim

    from ._calling import _path_str

    first = None
    leaves = tree_util.tree_flatten_with_path((args_specs, kwargs_specs))[0]
    for path, spec in leaves:
        for d in getattr(spec, "shape", ()):
            if not is_symbolic_dim(d):
                continue
            if first is None:
                first = (d.scope, path)
                continue
            name = getattr(fun_jit, "__name__", None) or str(fun_jit)
            first[0]._check_same_scope(
                d, when=f"when exporting {name}",
                self_descr=f"current (from {_path_str(first[1])}) ",
                other_descr=_path_str(path))


def _export_traced(meta, platforms: tuple[str, ...], disabled_checks) -> Exported:
    from olympus_ir.shape_poly import is_constant_shape

    from ._calling import arg_descriptor
    from ._module import export_module

    n_in = len(meta.in_avals)
    symbolic = not all(is_constant_shape(a.shape) for a in meta.in_avals)
    # As JAX: with symbolic shapes every argument is kept (the dimension variables are
    # read from the shapes of all of them).
    kept = tuple(range(n_in)) if meta.kept is None or symbolic else tuple(sorted(meta.kept))
    p = meta.placement
    if p.arg_attrs is not None or getattr(p, "num_partitions", 1) != 1:
        raise NotImplementedError(
            f"olympus.export of {meta.name!r}: exporting a function with shardings over "
            "several devices is not supported yet")
    arg_names = [arg_descriptor(meta.in_tree, i, None) for i in kept] if symbolic else None
    artifact, uses_global_constants = export_module(
        meta, kept=kept, platforms=platforms, disabled_checks=disabled_checks,
        arg_names=arg_names)
    in_avals = tuple(meta.in_avals)
    out_avals = tuple(meta.out_avals)
    closed = meta.closed
    in_tree = meta.in_tree

    def get_vjp(primal: Exported) -> Exported:
        return _export_vjp(closed, primal)

    return Exported(
        fun_name=meta.name, in_tree=in_tree, in_avals=in_avals, out_tree=meta.out_tree,
        out_avals=out_avals, _has_named_shardings=True,
        _in_named_shardings=(None,) * n_in, _out_named_shardings=(None,) * len(out_avals),
        in_shardings_hlo=(None,) * n_in, out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=1, platforms=tuple(platforms), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=tuple(disabled_checks), mlir_module_serialized=artifact,
        calling_convention_version=_CALLING_CONVENTION_VERSION, module_kept_var_idx=kept,
        uses_global_constants=uses_global_constants, _get_vjp=get_vjp)


def _tangent_aval(a: ShapedArray) -> ShapedArray:
    from olympus_ir import dtypes

    if dtypes.is_inexact(a.dtype):
        return a
    return ShapedArray(a.shape, dtypes.float0)


def _physical_spec(a: ShapedArray) -> ShapeDtypeStruct:
    """float0 values travel as bool arrays in the module (``tensor<i1>``, as in JAX)."""
    from olympus_ir import dtypes

    if a.dtype == dtypes.float0:
        return ShapeDtypeStruct(a.shape, np.bool_)
    return ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)


def _export_vjp(closed, primal: Exported) -> Exported:
    """Export the VJP of the primal olympuspr: flat primals then flat output cotangents
    in, the flat input cotangents out (JAX's convention for ``Exported.vjp()``). The
    cotangents of integer values are float0 in the signature and bool in the module."""
    import olympus
    import olympus.numpy as jnp
    from olympus_ir import dtypes
    from olympus_trace.olympuspr_utils import eval_olympuspr

    n_in = len(primal.in_avals)
    in_avals = (*primal.in_avals, *map(_tangent_aval, primal.out_avals))
    out_avals = tuple(_tangent_aval(a).update(weak_type=False) for a in primal.in_avals)
    # Integer values have no cotangent: the pullback is of the float outputs with respect
    # to the float inputs only (the float0 cotangents, bool arrays in the module, are not
    # read; those of integer inputs are bool zeros, of a shape that may be symbolic).
    diff_out = [i for i, a in enumerate(in_avals[n_in:]) if a.dtype != dtypes.float0]
    diff_in = [i for i, a in enumerate(out_avals) if a.dtype != dtypes.float0]

    def fun_vjp(*args_and_cts):
        xs, cts = list(args_and_cts[:n_in]), args_and_cts[n_in:]

        def primal_diff(*dxs):
            for i, v in zip(diff_in, dxs):
                xs[i] = v
            outs = eval_olympuspr(closed.olympuspr, closed.consts, *xs)
            return [outs[i] for i in diff_out]

        _, pullback = olympus.vjp(primal_diff, *[xs[i] for i in diff_in])
        grads = dict(zip(diff_in, pullback([cts[i] for i in diff_out])))
        return tuple(grads[i] if i in grads else jnp.zeros(a.shape, np.bool_)
                     for i, a in enumerate(out_avals))

    fun_vjp.__name__ = "fun_vjp_jax"  # the name JAX's exported VJPs carry
    exp = export(olympus.jit(fun_vjp), platforms=primal.platforms,
                 disabled_checks=primal.disabled_safety_checks)(*map(_physical_spec, in_avals))
    return dataclasses.replace(exp, in_avals=in_avals, out_avals=out_avals)
