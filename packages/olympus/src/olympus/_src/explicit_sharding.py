"""Explicit-sharding mode at the API: what `olympus_trace.sharding_types` needs from
Arrays and meshes, the sharding a type shows (``typeof(x).sharding``), and the
``out_sharding=`` keyword of the functions that take one.

A mesh axis of type ``Explicit`` is part of every value's type: an Array's type keeps the
explicit axes of its `NamedSharding`, a traced value's type comes from the rules of the
primitives that made it, and a jitted function's results are laid out as their types say.
``Auto`` axes stay the compiler's business and never appear in types.
"""

from __future__ import annotations

import inspect
from typing import Any

import olympus_runtime as rt
from olympus_runtime import AbstractMesh, NamedSharding, PartitionSpec
from olympus_runtime import mesh as _mesh_lib
from olympus_trace import sharding_types
from olympus_trace.core import Tracer
from olympus_trace.sharding_types import ShardingTypeError, TypeSharding

__all__ = ["ShardingTypeError", "AbstractNamedSharding", "type_sharding", "apply_out_sharding",
           "call_with_out_sharding"]


class AbstractNamedSharding:
    """The sharding in a value's type: a `PartitionSpec` (one entry per dimension, only
    ``Explicit`` axes) on an `AbstractMesh`; printed as JAX prints a type's sharding."""

    __slots__ = ("mesh", "spec")

    def __init__(self, mesh: AbstractMesh, spec: PartitionSpec):
        self.mesh = mesh
        self.spec = spec

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, AbstractNamedSharding) and self.mesh == other.mesh
                and self.spec == other.spec)

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    @property
    def memory_kind(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def _as_seen(mesh: Any) -> AbstractMesh:
    """`mesh` (abstract) as the current mesh sees it: the current mesh's axis types when
    it is the same grid (``auto_axes``/``explicit_axes`` switch them)."""
    abstract = mesh.abstract_mesh
    ctx = _context_mesh()
    if ctx is not None and ctx.axis_names == abstract.axis_names and \
            ctx.axis_sizes == abstract.axis_sizes:
        return ctx
    return abstract


def _explicit_spec(mesh: AbstractMesh, spec: PartitionSpec, ndim: int) -> tuple:
    keep = set(mesh.explicit_axes)
    out = []
    for i in range(ndim):
        axes = tuple(a for a in spec.axes_of(i) if a in keep)
        out.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return tuple(out)


def _arg_type(x: Any) -> TypeSharding | None:
    """The sharding type of a jitted function's argument (the explicit axes of an
    Array's NamedSharding), None when it has none."""
    if type(x) is not rt.Array:
        return None
    s = x._sharding
    if type(s) is not NamedSharding:
        return None
    mesh = _as_seen(s.mesh)
    if not mesh.explicit_axes:
        return None
    spec = _explicit_spec(mesh, s.spec, x.ndim)
    return TypeSharding(mesh, spec) if any(spec) else None


def constraint_type(sharding: Any, ndim: int) -> TypeSharding | None:
    """The type a value gets from a sharding constraint (``reshard``) to `sharding`."""
    mesh = _as_seen(sharding.mesh)
    spec = _explicit_spec(mesh, sharding.spec, ndim)
    return TypeSharding(mesh, spec) if any(spec) else None


def _context_mesh() -> Any:
    m = _mesh_lib.get_abstract_mesh()
    return None if m.empty else m


def type_sharding(x: Any, ndim: int) -> AbstractNamedSharding:
    """What ``typeof(x).sharding`` shows: the explicit axes of `x`'s layout as seen from the
    current mesh (axes the current mesh switched to Auto drop out), on an abstract mesh."""
    if isinstance(x, Tracer):
        ty = sharding_types.type_of(x)
    else:
        ty = _arg_type(x)
    if ty is not None:
        return AbstractNamedSharding(ty.mesh, PartitionSpec(*ty.spec))
    if type(x) is rt.Array and type(x._sharding) is NamedSharding:
        mesh = _as_seen(x._sharding.mesh)
    else:
        mesh = _mesh_lib.get_abstract_mesh()
    return AbstractNamedSharding(mesh, PartitionSpec(*([None] * ndim)))


def _resolve(s: Any) -> Any:
    if isinstance(s, PartitionSpec):
        mesh = _mesh_lib.get_mesh()
        if mesh.empty:
            raise ValueError(
                f"out_sharding={s} is a PartitionSpec but no mesh is set: use "
                "`olympus.set_mesh(mesh)` or pass a NamedSharding")
        return NamedSharding(mesh, s)
    if not isinstance(s, (NamedSharding, rt.SingleDeviceSharding, rt.GSPMDSharding)):
        raise TypeError(f"out_sharding must be a Sharding or a PartitionSpec, got {s!r}")
    return s


def apply_out_sharding(value: Any, out_sharding: Any) -> Any:
    """`value` laid out (and, traced, typed) as `out_sharding` says."""
    from .sharding import reshard

    return reshard(value, _resolve(out_sharding))


def _run_with_out_sharding(fun: Any, out_sharding: Any, static: tuple, *dynamic: Any) -> Any:
    args, kwargs = _merge(static, dynamic)
    with sharding_types.ambiguity_allowed():
        out = fun(*args, **kwargs)
    return apply_out_sharding(out, out_sharding)


_jitted_run: Any = None


def _is_dynamic(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return True
    return isinstance(x, (rt.Array, Tracer))


def _freeze(x: Any) -> Any:
    if isinstance(x, list) and all(isinstance(v, int) for v in x):
        return tuple(x)
    return x


def _merge(static: tuple, dynamic: tuple) -> tuple:
    slots, kw_static = static
    it = iter(dynamic)
    args = [next(it) if k is _DYNAMIC else v for k, v in slots]
    kwargs = dict(kw_static)
    for name in [n for n, v in kw_static if v is _DYNAMIC]:
        kwargs[name] = next(it)
    return args, kwargs


class _Dynamic:
    def __repr__(self) -> str:
        return "<dynamic>"


_DYNAMIC = _Dynamic()


def call_with_out_sharding(fun: Any, out_sharding: Any, args: tuple, kwargs: dict) -> Any:
    """``fun(*args, **kwargs)`` laid out as `out_sharding` says; ambiguous result shardings
    inside are no error. Outside a trace it runs as one cached jit (so the primitives'
    eager executables, compiled where ambiguity is an error, are not reused here)."""
    global _jitted_run
    from olympus_trace.core import EvalTrace, trace_ctx

    out_sharding = _resolve(out_sharding)
    if type(trace_ctx.trace) is not EvalTrace:
        with sharding_types.ambiguity_allowed():
            out = fun(*args, **kwargs)
        return apply_out_sharding(out, out_sharding)
    args = [_freeze(a) for a in args]
    kwargs = {k: _freeze(v) for k, v in kwargs.items()}
    slots = tuple((_DYNAMIC, None) if _is_dynamic(a) else (None, a) for a in args)
    dyn = [a for a in args if _is_dynamic(a)]
    kw_static = []
    for k in sorted(kwargs):
        if _is_dynamic(kwargs[k]):
            kw_static.append((k, _DYNAMIC))
            dyn.append(kwargs[k])
        else:
            kw_static.append((k, kwargs[k]))
    if _jitted_run is None:
        from .jit import jit

        _jitted_run = jit(_run_with_out_sharding, static_argnums=(0, 1, 2))
    return _jitted_run(fun, out_sharding, (slots, tuple(kw_static)), *dyn)


#: The functions that take JAX 0.10.2's ``out_sharding=`` keyword, per public module
#: (`install` adds it when the module is imported).
OUT_SHARDING_FUNCTIONS = {
    "olympus.numpy": (
        "arange", "array", "asarray", "broadcast_to", "dot", "einsum", "empty", "full",
        "full_like", "matmul", "ones", "ones_like", "ravel", "repeat", "reshape",
        "tensordot", "zeros", "zeros_like"),
    "olympus.lax": (
        "broadcast", "broadcast_in_dim", "broadcasted_iota", "conv_general_dilated", "dot",
        "dot_general", "reduce", "reduce_sum", "reshape"),
    "olympus.random": (
        "ball", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare",
        "dirichlet", "exponential", "f", "gamma", "generalized_normal", "geometric",
        "gumbel", "laplace", "loggamma", "logistic", "lognormal", "maxwell",
        "multivariate_normal", "normal", "orthogonal", "pareto", "permutation", "poisson",
        "rademacher", "randint", "rayleigh", "t", "triangular", "truncated_normal",
        "uniform", "wald"),
}


def install(module_name: str) -> None:
    """Give the functions `OUT_SHARDING_FUNCTIONS` lists for `module_name` the
    ``out_sharding`` keyword."""
    import sys

    module = sys.modules[module_name]
    for name in OUT_SHARDING_FUNCTIONS[module_name]:
        fun = getattr(module, name)
        if "out_sharding" not in inspect.signature(fun).parameters:
            setattr(module, name, sharding_types.takes_out_sharding(
                fun, positional=(module_name, name) in _POSITIONAL))


#: Where JAX's out_sharding is also a positional parameter (the last one).
_POSITIONAL = {("olympus.lax", "conv_general_dilated"), ("olympus.lax", "reduce")}


sharding_types.hooks.arg_type = _arg_type
sharding_types.hooks.constraint_type = constraint_type
sharding_types.hooks.context_mesh = _context_mesh
sharding_types.hooks.call_with_out_sharding = call_with_out_sharding
