"""The olympuspr: variables, literals, equations, and (closed) olympusprs; primitives and
the shape-rule table that gives every primitive its abstract evaluation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .avals import MemorySpace, ShapedArray


class Primitive:
    """A named operation. Its behaviour in each layer lives in that layer's rule table.

    A primitive made by a user (JAX's ``jax.extend.core.Primitive(name)``) gets its
    rules from the ``def_*`` methods: `def_abstract_eval` fills this module's
    `shape_rules` (the one table every trace consults), `def_impl` gives its eager
    evaluation (the primitives Olympus defines instead evaluate eagerly as a compiled
    one-primitive program)."""

    __slots__ = ("name", "multiple_results", "_impl", "_builtin")

    # JAX's class-level flags, read by code written against ``jax.extend.core``.
    call_primitive = False
    map_primitive = False
    ref_primitive = False
    skip_canonicalization = False
    ref_allocating = False
    is_effectful = None

    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self._impl = None
        self._builtin = False

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):
        return (primitive_by_name, (self.name,))

    def bind(self, *args: Any, **params: Any):
        """Apply this primitive to `args` in the current trace (JAX's ``prim.bind``).

        Tracing lives above the IR: olympus-trace installs the function that binds
        (`set_binder`) when it is imported."""
        if _binder is None:
            raise RuntimeError(f"cannot bind {self.name}: olympus_trace is not imported")
        return _binder(self, *args, **params)

    # --- the rules a user defines (JAX's Primitive.def_*) ---------------------------------

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """`impl(*values, **params)` evaluates the primitive on concrete values outside
        any trace (it need not be traceable). Returns `impl`."""
        self._impl = impl
        return impl

    @property
    def impl(self) -> Callable[..., Any]:
        """The eager evaluation rule; without one, calling it raises JAX's
        ``NotImplementedError``."""
        if self._impl is not None:
            return self._impl
        return self._missing_impl

    @impl.setter
    def impl(self, impl: Callable[..., Any]) -> None:
        self._impl = impl

    def _missing_impl(self, *args: Any, **params: Any):
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")

    def def_abstract_eval(self, abstract_eval: Callable[..., Any]) -> Callable[..., Any]:
        """`abstract_eval(*avals, **params)` gives the output aval (a list of them with
        `multiple_results`): registered as this primitive's shape rule. Returns it."""
        shape_rules[self] = abstract_eval
        return abstract_eval

    def def_effectful_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """`rule(*avals, **params) -> (aval(s), effects)`: the shape rule drops the
        effects, which the equation records as its own (`effect_rules`). Returns `rule`."""
        from .prims.callbacks import effect_rules

        def shape_rule(*avals: Any, **params: Any):
            return rule(*avals, **params)[0]

        def effect_rule(eqn: Any):
            effects = rule(*(v.aval for v in eqn.invars), **eqn.params)[1]
            return next(iter(effects), None)

        shape_rules[self] = shape_rule
        effect_rules[self] = effect_rule
        return rule

    def abstract_eval(self, *avals: Any, **params: Any):
        """The output aval(s) of this primitive on `avals` (its shape rule)."""
        return abstract_eval(self, *avals, **params)

    def get_bind_params(self, params: dict) -> dict:
        return params


#: bind(prim, *args, **params), installed by olympus-trace (`set_binder`).
_binder: Callable[..., Any] | None = None


def set_binder(binder: Callable[..., Any]) -> None:
    """Install the function `Primitive.bind` calls (olympus-trace's `core.bind`)."""
    global _binder
    _binder = binder


#: primitive -> rule(*in_avals, **params) -> out aval, or a list of them if multiple_results.
shape_rules: dict[Primitive, Callable[..., Any]] = {}
#: name -> primitive, for serialization.
primitives_by_name: dict[str, Primitive] = {}


def primitive_by_name(name: str) -> Primitive:
    """The registered primitive called `name`; KeyError if there is none."""
    try:
        return primitives_by_name[name]
    except KeyError:
        raise ValueError(f"unknown primitive {name!r}") from None


def new_primitive(name: str, multiple_results: bool = False) -> Primitive:
    """Create and register a primitive called `name` (each name once)."""
    if name in primitives_by_name:
        raise ValueError(f"primitive {name!r} is already defined")
    p = Primitive(name, multiple_results)
    p._builtin = True  # evaluated eagerly as a compiled one-primitive program
    primitives_by_name[name] = p
    return p


def def_shape_rule(prim: Primitive):
    """Register `rule(*avals, **params) -> aval(s)` as the shape rule of `prim`."""
    def register(rule):
        shape_rules[prim] = rule
        return rule

    return register


#: The primitives whose results live in their operands' memory space (JAX's standard
#: abstract evaluation: the array operations; not transfers, calls or control flow, whose
#: rules say where their results live). Filled by `olympus_ir.prims`.
memory_space_follows_operands: set[Primitive] = set()

_DEVICE = MemorySpace.Device


def abstract_eval(prim: Primitive, *avals: ShapedArray, **params: Any):
    """Apply `prim`'s shape rule. Returns a list of avals if the primitive has many results."""
    try:
        rule = shape_rules[prim]
    except KeyError:
        raise NotImplementedError(
            f"Abstract evaluation for '{prim.name}' not implemented") from None
    out = rule(*avals, **params)
    if prim in memory_space_follows_operands:
        for a in avals:
            if getattr(a, "memory_space", _DEVICE) is not _DEVICE:
                return _in_operands_space(prim, avals, out)
    return out


def _in_operands_space(prim: Primitive, avals: Sequence[Any], out: Any) -> Any:
    """`out` (the shape rule's result avals) moved into the memory space of `prim`'s
    operands: the space every operand of rank >= 1 shares (an error if they differ; scalars
    do not count), device memory if only scalars were given."""
    spaces = [getattr(a, "memory_space", _DEVICE) for a in avals]
    if all(sp is MemorySpace.Any for sp in spaces):
        space = MemorySpace.Any
    else:
        first = None
        for a, sp in zip(avals, spaces):
            if not getattr(a, "shape", ()):
                continue
            if first is not None and sp is not first[1]:
                raise ValueError(
                    f"memory_space of all inputs passed to `{prim.name}` must be the same. "
                    f"Got one operand with type: {first[0].str_short(short_dtypes=False)} "
                    f"and another operand with type: {a.str_short(short_dtypes=False)}")
            first = first or (a, sp)
        space = _DEVICE if first is None else first[1]
    if prim.multiple_results:
        return [o.update(memory_space=space) if type(o) is ShapedArray else o for o in out]
    return out.update(memory_space=space) if type(out) is ShapedArray else out


class SourceInfo(NamedTuple):
    """Where an equation came from in user code: file, line, function name, the
    ``olympus.named_scope`` names active when it was traced (``"outer/inner"``), and the
    XLA metadata (``set_xla_metadata``, sorted ``(key, value)`` pairs) its lowered ops
    carry as ``mhlo.frontend_attributes``."""

    file: str
    line: int
    function: str = ""
    name_stack: str = ""
    xla_metadata: tuple = ()


class DebugInfo(NamedTuple):
    """What a traced function was, for error messages and argument names: what traced it
    (``"jit"``, ``"make_olympuspr"``, ...), ``"f at file.py:3"``, its argument names and
    result paths. An olympuspr carries it, so the JSON format does too."""

    traced_for: str
    func_src_info: str
    arg_names: tuple[str, ...]
    result_paths: tuple[str, ...] | None = None

    def __str__(self) -> str:
        return f"{self.func_src_info} traced for {self.traced_for}"


class Var:
    """A variable: defined once, by an olympuspr's inputs or by an equation."""

    __slots__ = ("aval", "suffix")

    def __init__(self, aval: ShapedArray, suffix: str = ""):
        self.aval = aval
        self.suffix = suffix

    def __repr__(self) -> str:
        """JAX's ``Var(id=140...):float32[3]`` (decimal id, long dtype names)."""
        return f"Var(id={id(self)}){self.suffix}:{self.aval.str_short(short_dtypes=False)}"


class DropVar(Var):
    """An output nobody reads (printed as ``_``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


class Literal:
    """A scalar constant inlined into an equation, printed as ``2:i32[]``. A Python float
    operand (weakly typed) also keeps its exact value, which is what prints (JAX prints a
    Python float passed to a jitted function unrounded)."""

    __slots__ = ("val", "aval", "py")

    def __init__(self, val: Any, aval: ShapedArray):
        self.py = val if type(val) is float and aval.weak_type else None
        self.val = np.asarray(val, dtype=aval.dtype) if aval.shape == () else val
        self.aval = aval

    def __repr__(self) -> str:
        """JAX's ``Literal(...)``: a weak int or complex shows as ``TypedInt(1, dtype=int32)``,
        a weak float as the Python float, any other scalar as its Python value (the typed
        form is printed by the olympuspr printer, not here)."""
        v = np.asarray(self.val)
        if v.shape != ():
            return f"Literal({self.val})"
        if self.aval.weak_type:
            if self.py is not None:
                return f"Literal({self.py!r})"
            kind = self.aval.dtype.kind
            if kind in "iu":
                return f"Literal(TypedInt({int(v)}, dtype={self.aval.dtype.name}))"
            if kind == "c":
                return f"Literal(TypedComplex({complex(v)!r}, dtype={self.aval.dtype.name}))"
        return f"Literal({v.item()})"


def format_literal(val: Any) -> str:
    v = np.asarray(val)
    if v.shape == ():
        return str(v[()])
    return np.array2string(v, separator=",").replace("\n", "")


Atom = Var | Literal


class Eqn:
    """``outvars = primitive[params] invars``."""

    __slots__ = ("primitive", "invars", "outvars", "params", "source_info")

    def __init__(
        self,
        primitive: Primitive,
        invars: Sequence[Atom],
        outvars: Sequence[Var],
        params: dict[str, Any],
        source_info: SourceInfo | None = None,
    ):
        self.primitive = primitive
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.params = params
        self.source_info = source_info

    def replace(self, **kw) -> Eqn:
        d = dict(
            primitive=self.primitive, invars=self.invars, outvars=self.outvars,
            params=self.params, source_info=self.source_info,
        )
        d.update(kw)
        return Eqn(**d)

    def __repr__(self) -> str:
        from .pretty import pp_eqn

        return pp_eqn(self)  # fresh names, as JAX's JaxprEqn.__repr__


class Olympuspr:
    """A typed, first-order program: ``{ lambda constvars ; invars . let eqns in outvars }``."""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "effects", "debug_info",
                 "sharding_types", "vma_types")

    def __init__(
        self,
        constvars: Sequence[Var],
        invars: Sequence[Var],
        outvars: Sequence[Atom],
        eqns: Sequence[Eqn],
        effects: frozenset = frozenset(),
        debug_info: Any = None,
        sharding_types: dict | None = None,
        vma_types: dict | None = None,
    ):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.effects = frozenset(effects)
        self.debug_info = debug_info
        # Var -> per-dimension Explicit mesh axes (None, a name or a tuple of names) of the
        # values traced in explicit-sharding mode: printed as JAX prints them (``f32[6@x]``).
        self.sharding_types = sharding_types
        # Var -> the manual mesh axes a value of a shard_map body varies over (``{V:i}``).
        self.vma_types = vma_types

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    @property
    def is_high(self) -> bool:
        """Whether an equation applies a user's high-level (hijax) primitive, here or in a
        sub-olympuspr (JAX's ``Jaxpr.is_high``): such a program has a lower-level form
        with those applications expanded (``Traced.lojax``)."""
        for e in self.eqns:
            if getattr(e.primitive, "high_level", False):
                return True
            for v in e.params.values():
                for x in (v if isinstance(v, (tuple, list)) else (v,)):
                    sub = x.olympuspr if isinstance(x, ClosedOlympuspr) else x
                    if isinstance(sub, Olympuspr) and sub.is_high:
                        return True
        return False

    def replace(self, **kw) -> Olympuspr:
        d = dict(
            constvars=self.constvars, invars=self.invars, outvars=self.outvars,
            eqns=self.eqns, effects=self.effects, debug_info=self.debug_info,
        )
        d.update(kw)
        return Olympuspr(**d)

    def pretty_print(self, *, source_info: bool = False, print_shapes: bool = True,
                     custom_pp_eqn_rules: bool = True, name_stack: bool = False,
                     print_effects: bool = False, **format_kwargs: Any) -> str:
        """The text of this olympuspr, as JAX's ``Jaxpr.pretty_print``: `format_kwargs` are
        ``width`` (80), ``use_color`` (default: in a terminal), ``annotation_prefix`` and
        ``source_map`` (a list to receive each line's equation spans, see `pp_olympuspr`)."""
        from .pretty import pp_olympuspr

        return pp_olympuspr(
            self, source_info=source_info, print_shapes=print_shapes,
            custom_pp_eqn_rules=custom_pp_eqn_rules, name_stack=name_stack,
            print_effects=print_effects, **format_kwargs)

    def __str__(self) -> str:
        return self.pretty_print()

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.pretty_print(use_color=True))


class ClosedOlympuspr:
    """An olympuspr together with the values of its constvars (weakly referenceable: the
    transformations of a nested jit's callee are cached per callee)."""

    __slots__ = ("olympuspr", "consts", "__weakref__")

    def __init__(self, olympuspr: Olympuspr, consts: Sequence[Any]):
        if len(consts) != len(olympuspr.constvars):
            raise ValueError(
                f"ClosedOlympuspr: got {len(consts)} consts for "
                f"{len(olympuspr.constvars)} constvars"
            )
        self.olympuspr = olympuspr
        self.consts = list(consts)

    @property
    def literals(self) -> list[Any]:
        """The constvars' values (JAX's other name for ``consts``)."""
        return self.consts

    constvars = property(lambda self: self.olympuspr.constvars)
    invars = property(lambda self: self.olympuspr.invars)
    outvars = property(lambda self: self.olympuspr.outvars)
    is_high = property(lambda self: self.olympuspr.is_high)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.olympuspr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.olympuspr.out_avals

    @property
    def eqns(self) -> list[Eqn]:
        return self.olympuspr.eqns

    @property
    def effects(self) -> frozenset:
        return self.olympuspr.effects

    def pretty_print(self, **kwargs: Any) -> str:
        return self.olympuspr.pretty_print(**kwargs)

    def __str__(self) -> str:
        return str(self.olympuspr)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.pretty_print(use_color=True))
