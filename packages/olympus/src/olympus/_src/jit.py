"""`olympus.jit`: trace, lower, compile once per signature; execute on every call.

A call looks up its signature (argument pytree, static values, avals with weak types) in a
cache shared by every `jit` of the same function, so `jit(f)(x)` in a loop compiles once.
Under another trace (e.g. a jit inside a jit) the call is one `jit` equation holding the
function's olympuspr, traced once per signature (`nested_jit`); with ``inline=True`` the
function is traced into the caller.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from jaxlib import _jax

import olympus_runtime as rt
from olympus_ir.avals import ShapeDtypeStruct, physical_aval
from olympus_ir.dtypes import KeyDType
from olympus_ir.dtypes import config as _dtype_config
from olympus_ir.shape_poly import is_constant_shape
from olympus_lower.rules.callbacks import take_callback_error
from olympus_runtime import mesh as _mesh_lib
from olympus_trace import tree_util
from olympus_trace.core import EvalTrace, trace_ctx
from olympus_trace.make_olympuspr import (
    NotAnArrayError,
    abstractify,
    abstractify_arguments,
    arg_names_of,
    trace_fun,
)
from olympus_trace.olympuspr_utils import dce_closed

from .. import monitoring
from . import cache_explain, debugging, nested_jit, stages, visualize
from . import layouts as _layouts
from . import placement as _placement
from . import ref_discharge as _ref_discharge
from . import tokens as _tokens
from .config import config
from .lowering import lower_olympuspr

_Array = rt.Array
_default_device = rt.config.default_device_state
_abstract_mesh = _mesh_lib.abstract_mesh_state  # part of the key, as in C++'s
_PY_SCALARS = (bool, int, float, complex)

#: fun -> {(options, signature): SpecializedCall}; entries die with their function.
_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: fun -> {(options, signature): nested_jit.NestedCall}: for calls under another trace.
_nested_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: How many signatures (over all jitted functions) the Python and C++ caches keep.
CACHE_CAPACITY = 4096
#: Every live signature, oldest first: (id of its function's dict, key) -> weakref to
#: that dict. Past `CACHE_CAPACITY` entries the oldest is forgotten, so a program that
#: keeps making new signatures (new shapes, new closures) holds a bounded set of them.
_order: OrderedDict = OrderedDict()
_order_lock = threading.Lock()
#: (id of a function's dict, key) -> the lock of a signature being traced right now, so
#: threads missing the same signature together trace it once (`Jitted._miss`).
_pending: dict = {}

#: Counters for tests and benchmarks: how many traces, lowerings and compiles happened.
counters = {"trace": 0, "lower": 0, "compile": 0}


class FastpathData(NamedTuple):
    """What jaxlib's C++ jit fast path needs to run a signature without Python."""

    xla_executable: Any
    out_pytree_def: Any
    in_shardings: Any
    out_shardings: Any
    out_avals: Any
    out_committed: Any
    kept_var_bitvec: Any
    in_device_local_layouts: Any
    const_args: Any


#: One C++ executable cache for every jit: keyed by (function, options), so `jit(f)` made
#: again in a loop reuses what an earlier `jit(f)` compiled.
_cpp_cache = _jax.PjitFunctionCache(CACHE_CAPACITY)


class _Calls(dict):
    """One function's signatures (a dict subclass: weakly referenceable), with its cache
    hit and miss counts (see `cache_explain`)."""

    __slots__ = ("__weakref__", "hits", "misses")

    def __init__(self):
        super().__init__()
        self.hits = self.misses = 0


def _per_fun_cache(fun, cache=_cache) -> _Calls:
    """The signature cache shared by every `jit` of `fun` (a fresh one, owned by the single
    `jit` object, for a callable that cannot be weakly referenced)."""
    try:
        d = cache.get(fun)
        if d is None:
            d = cache[fun] = _Calls()
        return d
    except TypeError:
        return _Calls()


def _remember(calls: _Calls, key, call) -> None:
    """Add a signature, forgetting the oldest one (of any function) past the capacity."""
    calls[key] = call
    with _order_lock:
        _order[(id(calls), key)] = weakref.ref(calls)
        while len(_order) > CACHE_CAPACITY:
            (_, old_key), ref = _order.popitem(last=False)
            owner = ref()
            if owner is not None:
                owner.pop(old_key, None)


def _normalize_static(fun, static_argnums, static_argnames, kind="static"):
    """(argnums, argnames) of the static (or, with kind="donate", donated) arguments, each
    completed from the other through the signature; out-of-range entries raise JAX's
    error naming `kind`."""
    if static_argnums is None:
        static_argnums = ()
    elif isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if static_argnames is None:
        static_argnames = ()
    elif isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    static_argnums, static_argnames = tuple(static_argnums), tuple(static_argnames)
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return static_argnums, static_argnames
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
    if not any(p.kind == p.VAR_POSITIONAL for p in params):
        for i in static_argnums:
            if not -len(positional) <= i < len(positional):
                raise ValueError(
                    f"Jitted function has {kind}_argnums={static_argnums}, but only accepts "
                    f"{len(positional)} positional arguments."
                )
    if not any(p.kind == p.VAR_KEYWORD for p in params):
        names_ok = {p.name for p in params if p.kind != p.VAR_POSITIONAL}
        bad = {name for name in static_argnames if name not in names_ok}
        if bad:
            raise ValueError(f"Jitted function has invalid argnames {bad} in {kind}_argnames. "
                             "Function does not take these args.")
    for name in static_argnames:
        if name in positional and positional.index(name) not in static_argnums:
            static_argnums += (positional.index(name),)
    for i in static_argnums:
        if 0 <= i < len(positional) and positional[i] not in static_argnames:
            static_argnames += (positional[i],)
    return static_argnums, static_argnames


def _leaf_sig(x):
    """A leaf's part of the signature: its aval (a Python scalar is a weak-typed scalar, so
    `f(0)` and `f(weak int32 Array)` share one compilation), and for a committed Array its
    sharding (committed inputs decide where the call runs)."""
    if type(x) is _Array:
        if x._committed:
            return (x.aval, x._sharding)
        return x.aval
    if type(x) is ShapeDtypeStruct and x.sharding is not None:
        return (abstractify(x), x.sharding)  # it places the argument, as a committed Array
    return abstractify(x)


class SpecializedCall:
    """Everything about one (function, signature): olympuspr, module, executable."""

    in_layouts = out_layouts = None  # per flat argument / result (`layouts`), or None

    def __init__(self, wrapped: Jitted, args, kwargs, in_avals=None):
        # No reference to `wrapped` (or its function) is kept: this object lives in a cache
        # weakly keyed by the function, and a value that refers to its key keeps it alive.
        self.name = fun_name(wrapped._fun)
        if config.olympus_no_tracing:
            from olympus_trace.make_olympuspr import fun_source_info

            raise RuntimeError(f"re-tracing function {fun_source_info(wrapped._fun)} for "
                               "`jit`, but 'no_tracing' is set")
        counters["trace"] += 1
        nums, names = wrapped._static_argnums, wrapped._static_argnames
        with debugging.Stage(monitoring.TRACE_EVENT, self.name, debugging.dispatch_logger,
                             "Finished tracing %s for jit in %.9f sec"):
            out_types: list = []
            self.closed, self.out_tree, self.out_avals = trace_fun(
                wrapped._fun, args, kwargs, nums, names, "jit", in_avals, out_types)
        if config.olympus_enable_checks:
            from olympus_ir.verify import check_olympuspr

            check_olympuspr(self.closed)
        nargs = len(args)
        nums = tuple(i % nargs if -nargs <= i < 0 else i for i in nums)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names}
        self.in_tree = tree_util.tree_structure((dyn_args, dyn_kwargs))
        self.call_tree = self.in_tree
        self.in_avals = self.closed.in_avals
        # Typed PRNG keys cross the boundary as their uint32 data (`random._physical`).
        self.key_io = any(type(getattr(a, "dtype", None)) is KeyDType for a in (*self.in_avals, *self.out_avals))
        self.arg_names = arg_names_of(wrapped._fun, args, kwargs, nums, names)
        if len(self.arg_names) != len(self.in_avals):
            self.arg_names = tuple(f"args[{i}]" for i in range(len(self.in_avals)))
        self.tokens = False
        # A program holding refs runs discharged (`ref_discharge`), off the compiled path.
        self.result_kinds = None  # per result, a memory kind to place it in (below)
        self.refs = _ref_discharge.ref_call_for(self.closed, self.out_tree, self.arg_names)
        if self.refs is not None:
            self.executable = self.lowered = self._fastpath = None
            self._hoisted, self._callbacks = [], False
            return
        self.donated_mask = _donation_mask(wrapped, dyn_args, dyn_kwargs, args, nums)
        self.kept = self._kept_args(wrapped._options[4])
        # Tokens cross the runtime boundary as empty bool buffers (`tokens`).
        self.tokens = _tokens.has_tokens(self.in_avals) or _tokens.has_tokens(self.out_avals)
        self.rt_in_avals, self.rt_out_avals = (
            (_tokens.runtime_avals(self.in_avals), _tokens.runtime_avals(self.out_avals))
            if self.tokens else (self.in_avals, self.out_avals))
        if self.key_io:  # the runtime and the lowered module hold keys as their data
            self.rt_in_avals = [physical_aval(a) for a in self.rt_in_avals]
            self.rt_out_avals = [physical_aval(a) for a in self.rt_out_avals]
        leaves = tree_util.tree_leaves((dyn_args, dyn_kwargs))
        self.placement = _placement.place(
            self.name, self.arg_names, self.rt_in_avals,
            [_tokens.unwrap(x) for x in leaves] if self.tokens else leaves, dyn_args,
            wrapped._in_shardings, wrapped._out_shardings, self.out_tree, self.rt_out_avals,
            _placement.constraint_shardings(self.closed), out_types)
        # Outputs whose sharding names another memory kind than their value's space are
        # placed there by the lowering (JAX's annotate_device_placement), and their arrays
        # are typed in that space (JAX keeps the traced type, so its typeof and sharding
        # disagree; here they agree, and the array works as an argument anywhere).
        self.result_kinds = _placement.result_memory_kinds(self.placement, self.rt_out_avals)
        if self.result_kinds is not None:
            self.rt_out_avals = _placement.in_memory_kinds(self.rt_out_avals,
                                                           self.result_kinds)
        self.in_layouts, self.out_layouts = _layouts.call_layouts(
            wrapped._in_shardings, wrapped._out_shardings, dyn_args, len(self.in_avals),
            self.out_tree, len(self.out_avals), self.arg_names, self.result_names(),
            self.rt_in_avals, self.rt_out_avals)
        via_constraints = _layouts.propagated_out_layouts(self.closed)
        if via_constraints is not None:  # as JAX: left to XLA, which takes the constraint's
            self.out_layouts = [p if p is not None and o is None else o for o, p in zip(
                self.out_layouts or [None] * len(self.out_avals), via_constraints,
                strict=True)]
        if self.out_layouts is not None:
            _layouts.state.custom_layouts_made = True
        self.compiler_options = wrapped._compiler_options
        self.executable = None
        self.lowered = None
        self._compile_lock = threading.Lock()  # threads racing to the first call wait
        self._hoisted: list = []
        self._fastpath = None
        self._callbacks = False  # the executable calls host callbacks

    def _kept_args(self, keep_unused: bool):
        """Indices of the arguments the executable takes, or None for all of them. Without
        `keep_unused`, arguments the computation does not use (after dead-code elimination)
        are dropped from the lowered module, as JAX does (a donated unused argument is
        dropped too, and so not deleted, also as in JAX)."""
        self._pruned = None  # the closed olympuspr without them, for lowering
        if keep_unused or not all(is_constant_shape(a.shape) for a in self.in_avals):
            return None  # symbolic shapes: the arguments give the dimension variables
        pruned = dce_closed(nested_jit.prune_callees(self.closed), prune_invars=True)
        live = {id(v) for v in pruned.olympuspr.invars}
        invars = self.closed.olympuspr.invars
        if len(live) == len(invars):
            return None
        self._pruned = pruned
        return tuple(i for i, v in enumerate(invars) if id(v) in live)

    # -- stages ---------------------------------------------------------------------------

    def result_names(self):
        paths = [p for p, _ in tree_util.tree_flatten_with_path(
            tree_util.tree_unflatten(self.out_tree, [0] * len(self.out_avals)))[0]]
        return ["result" + tree_util.keystr(p) for p in paths]

    def lower(self):
        if self.lowered is None:
            counters["lower"] += 1
            closed, arg_names, mask = self.closed, self.arg_names, self.donated_mask
            if self.kept is not None:
                closed = self._pruned
                arg_names = [arg_names[i] for i in self.kept]
                mask = [mask[i] for i in self.kept]
            closed = nested_jit.prune_callees(closed)
            donated = tuple(i for i, d in enumerate(mask) if d)
            p = self.placement
            sharding_kw = {}
            if p.arg_attrs is not None:
                sharding_kw = dict(meshes=p.meshes, arg_shardings=self._kept(p.arg_attrs),
                                   result_shardings=p.result_attrs,
                                   num_partitions=p.num_partitions)
            if self.in_layouts is not None:
                sharding_kw["arg_layouts"] = self._kept(
                    _layouts.layout_modes(self.in_layouts, self.rt_in_avals))
            if self.out_layouts is not None:
                sharding_kw["result_layouts"] = _layouts.layout_modes(
                    self.out_layouts, self.rt_out_avals)
            with debugging.Stage(
                    monitoring.LOWER_EVENT, self.name, debugging.dispatch_logger,
                    "Finished olympuspr to MLIR module conversion jit(%s) in %.9f sec"), \
                    visualize.compiling(p):
                self.lowered = lower_olympuspr(
                    closed, name=self.name, arg_names=arg_names, donated=donated,
                    result_names=self.result_names(), result_memory_kinds=self.result_kinds,
                    **sharding_kw)
        return self.lowered

    def _adopt_input_shardings(self, exe, n_hoisted: int) -> None:
        """Inputs lowered without a sharding take the one XLA chose for them."""
        p = self.placement
        if p.arg_attrs is None or all(a is not None for a in p.arg_attrs):
            return
        kept = range(len(self.in_avals)) if self.kept is None else self.kept
        targets = list(p.in_shardings)
        for k, i in enumerate(kept):
            if p.arg_attrs[i] is None:
                targets[i] = exe.in_shardings[n_hoisted + k]
        p.in_shardings = targets

    def _kept(self, items) -> list:
        return list(items) if self.kept is None else [items[i] for i in self.kept]

    def compile(self, lowered=None, options=None):
        if self.executable is None or lowered is not None and lowered is not self.lowered:
            lowered = lowered or self.lower()
            if getattr(lowered, "dim_vars", ()):  # as JAX: refinement needs their values
                raise ValueError(
                    "Error refining shapes. The module was lowered with symbolic shapes "
                    f"(dimension variables {', '.join(lowered.dim_vars)}), whose values are "
                    "arguments of @main: it can be compiled only after refinement to concrete "
                    "shapes (see olympus_lower.shape_refinement).")
            module = lowered.module
            if getattr(lowered, "uses_dim_vars", False):  # calls a shape-polymorphic Exported
                from olympus_lower.shape_refinement import refine_static_module

                module = refine_static_module(module)
            counters["compile"] += 1
            donated = tuple(i for i, d in enumerate(self._kept(self.donated_mask)) if d)
            hoisted = lowered.hoisted_consts
            debugging.log_event(
                debugging.pxla_logger, "Compiling jit(%s) with global shapes and types %s. "
                "Argument mapping: %s.", self.name, tuple(self.in_avals),
                "(" + ", ".join("UnspecifiedValue" for _ in self.in_avals)
                + ("," if len(self.in_avals) == 1 else "") + ")")
            with debugging.Stage(monitoring.COMPILE_EVENT, self.name, debugging.dispatch_logger,
                                 "Finished XLA compilation of jit(%s) in %.9f sec"), \
                    visualize.compiling(self.placement):  # inspect_array_sharding reports
                exe = rt.compile(
                    module,
                    in_avals=lowered.in_avals,  # the hoisted constants', then the kept args'
                    out_avals=list(self.rt_out_avals),
                    donated_args=tuple(len(hoisted) + i for i in donated),
                    options=self.compiler_options if options is None else options,
                    host_callbacks=lowered.host_callbacks,
                    devices=self.placement.devices,
                    num_partitions=self.placement.num_partitions,
                    mesh=self.placement.mesh,
                    out_shardings=self.placement.out_specified,
                    # As in JAX: outputs are committed when the placement was decided by
                    # committed inputs or explicit shardings, else they may move freely.
                    committed=self.placement is not _placement.DEFAULT,
                )
            self._hoisted = [rt.device_put(np.asarray(c), exe.in_shardings[k])
                             for k, c in enumerate(hoisted)]
            self._adopt_input_shardings(exe, len(hoisted))
            if lowered is self.lowered or self.executable is None:
                self.executable = exe
                self._callbacks = bool(lowered.host_callbacks)
            return exe
        return self.executable

    # -- execution ------------------------------------------------------------------------

    def run(self, exe, leaves, *, check_types: bool):
        """Execute `exe` on the flat argument `leaves` (non-Arrays are put on the device);
        return the output pytree. With `check_types`, the leaves are first checked against
        this signature's types, all of them (the kept ones and the dropped unused ones), with
        the seed page's TypeError naming each mismatched argument; a call that reached this
        signature through its cache key skips that, its leaves have the types by
        construction."""
        if self.key_io:
            from ..random._physical import key_data_leaves

            leaves = key_data_leaves(leaves)
        targets = self.placement.in_shardings
        if self.tokens:
            leaves = [_tokens.unwrap(x) for x in leaves]
        if targets is None:
            arrays = [x if type(x) is _Array else _put(x) for x in leaves]
        else:
            arrays = [x if type(x) is _Array and (x._sharding is s or x._committed)
                      else _put(x, s) for x, s in zip(leaves, targets, strict=True)]
        if check_types:
            rt.check_argument_types(self.arg_names, self.rt_in_avals, arrays)
        if self.kept is not None:
            arrays = [arrays[i] for i in self.kept]
        # (PJRT reports no parameter layouts for programs taking tokens.)
        if not self.tokens and (self.in_layouts is not None
                                or _layouts.state.custom_layouts_made):
            arrays = _layouts.relayout_arguments(exe, arrays, len(self._hoisted))
        if self._hoisted:
            arrays = self._hoisted + arrays
        try:
            outs = exe.run(arrays)
        except _jax.JaxRuntimeError as e:
            _chain_callback_error(e)
            raise
        if self.tokens:
            outs = _tokens.wrap_outputs(self.out_avals, outs)
        if self.key_io:
            from ..random._physical import wrap_key_outputs

            outs = wrap_key_outputs(outs, self.out_avals)
        return tree_util.tree_unflatten(self.out_tree, outs)

    def fastpath_data(self):
        """The C++ fast path's record for this signature (None: stay on the Python path)."""
        if (self._fastpath is None and not self._hoisted and self.executable is not None
                and not self._callbacks  # see _chain_callback_error
                and not self.tokens  # token arguments and results are wrapped here
                and self.in_layouts is None):  # arguments may need relaying out
            exe = self.executable
            n = len(self.in_avals)
            kept = [True] * n if self.kept is None else [i in self.kept for i in range(n)]
            out_tree, out_avals = self.out_tree, list(self.out_avals)
            if self.result_kinds is not None:
                out_avals = _placement.in_memory_kinds(out_avals, self.result_kinds)
            if self.key_io:  # the dispatch sees key arrays as their data
                from ..random._physical import dispatch_out_tree

                out_tree = dispatch_out_tree(out_tree, out_avals)
                out_avals = [physical_aval(a) for a in out_avals]
            self._fastpath = FastpathData(
                exe.loaded, out_tree, list(exe.in_shardings), list(exe.out_shardings),
                out_avals, [exe.committed] * len(out_avals), kept, [None] * sum(kept), [])
        return self._fastpath



def _chain_callback_error(e: Exception) -> None:
    """An execution that failed in a host callback: make the callback's own exception the
    runtime error's ``__cause__`` (programs with host callbacks stay off the C++ fast
    path so their errors pass here)."""
    cause = take_callback_error()
    if cause is not None and ("CpuCallback error" in str(e)
                              or "calling buffer callback" in str(e)):
        e.__cause__ = cause


def _put(x, sharding=None):
    """A non-Array (or uncommitted) argument on the default device or `sharding` (JAX's
    error for a non-array)."""
    if type(x) is not _Array:
        abstractify(x)
    return rt.device_put(x, sharding)


def _donation_mask(w: Jitted, dyn_args, dyn_kwargs, args, nums) -> tuple[bool, ...]:
    """Per flat dynamic leaf: is it donated?"""
    mask = []
    dyn_positions = [i for i in range(len(args)) if i not in nums]
    for pos, a in zip(dyn_positions, dyn_args):
        d = pos in w._donate_argnums
        mask += [d] * len(tree_util.tree_leaves(a))
    for k in sorted(dyn_kwargs):
        d = k in w._donate_argnames
        mask += [d] * len(tree_util.tree_leaves(dyn_kwargs[k]))
    return tuple(mask)


def fun_name(fun) -> str:
    """The name a jitted function goes by (in `Traced.fun_name`, the lowered module's name):
    its ``__name__``, a partial's underlying function's, or ``<unnamed function>``."""
    while True:
        name = getattr(fun, "__name__", None)
        if isinstance(name, str):
            return name
        if not isinstance(fun, functools.partial):
            return "<unnamed function>"
        fun = fun.func


class Jitted:
    """The state behind one `olympus.jit(fun, ...)`: options and the signature cache.

    Calls normally go through jaxlib's C++ `PjitFunction` (see `jit`), which runs a known
    signature without Python; it calls `cache_miss` for new signatures, tracers, and
    arguments it cannot handle.
    """

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                 keep_unused, in_shardings=None, out_shardings=None, compiler_options=None):
        if not callable(fun):
            raise TypeError(f"Expected a callable value, got {fun!r}")
        self._fun = fun
        self._static_argnums, self._static_argnames = _normalize_static(
            fun, static_argnums, static_argnames)
        donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(
            donate_argnums or ())
        donate_argnames = (donate_argnames,) if isinstance(donate_argnames, str) else tuple(
            donate_argnames or ())
        self._donate_argnums, self._donate_argnames = _normalize_static(
            fun, donate_argnums, donate_argnames, "donate")
        both = set(self._static_argnames) & set(self._donate_argnames)
        if both:  # JAX's check (after completing names from numbers and back)
            raise ValueError(
                "static_argnames and donate_argnames cannot intersect. Argument names "
                f"{both} appear in both static_argnames and donate_argnames")
        self._keep_unused = keep_unused
        self._in_shardings = _placement.normalize_shardings(in_shardings, "in_shardings")
        self._out_shardings = _placement.normalize_shardings(out_shardings, "out_shardings")
        self._compiler_options = _compiler_options(compiler_options)
        self._options = (self._static_argnums, self._static_argnames, self._donate_argnums,
                         self._donate_argnames, bool(keep_unused), self._in_shardings,
                         self._out_shardings,
                         tuple(sorted((self._compiler_options or {}).items())))
        # Bare PartitionSpecs are taken on the current mesh: it is part of the signature.
        self._mesh_key = in_shardings is not None or out_shardings is not None
        self._calls = _per_fun_cache(fun)
        self._nested_calls = _per_fun_cache(fun, _nested_cache)
        self._inline = False

    def _signature(self, args, kwargs):
        if self._mesh_key:
            key, leaves = self._plain_signature(args, kwargs)
            return key + (_mesh_lib.get_mesh(),), leaves
        return self._plain_signature(args, kwargs)

    def _plain_signature(self, args, kwargs):
        nums, names = self._static_argnums, self._static_argnames
        if not nums and not names:
            leaves, tree = tree_util.tree_flatten((args, kwargs))
            return (self._options, _dtype_config.enable_x64, _default_device.value,
                    (*config.jit_key, _abstract_mesh.value), tree,
                    *map(_leaf_sig, leaves)), leaves
        nargs = len(args)
        statics = []
        dyn = []
        for i, a in enumerate(args):
            if i in nums or (i - nargs) in nums:
                statics.append((i, _hashable_static(a, i)))
            else:
                dyn.append(a)
        kw_static = []
        kw_dyn = {}
        for k, v in kwargs.items():
            if k in names:
                kw_static.append((k, _hashable_static(v, k)))
            else:
                kw_dyn[k] = v
        leaves, tree = tree_util.tree_flatten((tuple(dyn), kw_dyn))
        return (self._options, _dtype_config.enable_x64, _default_device.value,
                (*config.jit_key, _abstract_mesh.value), tree, tuple(statics),
                tuple(sorted(kw_static)), *map(_leaf_sig, leaves)), leaves

    def _check_statics(self, args, kwargs):
        nums, names = self._static_argnums, self._static_argnames
        for i, a in enumerate(args):
            if i in nums or (i - len(args)) in nums:
                _hashable_static(a, i)
        for k, v in kwargs.items():
            if k in names:
                _hashable_static(v, k)

    def _specialize(self, args, kwargs, in_avals=None):
        try:
            key, leaves = self._signature(args, kwargs)
        except NotAnArrayError:
            nums, names = self._static_argnums, self._static_argnames
            leaves = tree_util.tree_leaves((
                tuple(a for i, a in enumerate(args) if i not in nums and i - len(args) not in nums),
                {k: v for k, v in kwargs.items() if k not in names}))
            abstractify_arguments(self._fun, leaves, lambda: arg_names_of(
                self._fun, args, kwargs, nums, names))
            raise
        if in_avals is not None:
            key = key + (tuple(in_avals),)
        call = self._calls.get(key)
        if call is None:
            return self._miss(key, args, kwargs, in_avals), leaves
        self._calls.hits += 1
        return call, leaves

    def _miss(self, key, args, kwargs, in_avals):
        """Trace a new signature, once: threads that miss the same key together wait on
        one per-key lock (taken only here, off the hit path), and all but the first find
        the signature the first one traced."""
        pending = (id(self._calls), key)
        with _order_lock:
            lock = _pending.get(pending)
            if lock is None:
                lock = _pending[pending] = threading.Lock()
        try:
            with lock:
                call = self._calls.get(key)
                if call is not None:
                    self._calls.hits += 1
                    return call
                self._calls.misses += 1
                monitoring.record_event(monitoring.CACHE_MISS_EVENT,
                                        fun_name=getattr(self._fun, "__name__", "fun"))
                if config.olympus_explain_cache_misses:
                    cache_explain.explain_miss(self, key, args, kwargs)
                call = SpecializedCall(self, args, kwargs, in_avals)
                _remember(self._calls, key, call)
                return call
        finally:
            with _order_lock:
                if _pending.get(pending) is lock:
                    del _pending[pending]

    def compiled_call(self, *args, **kwargs):
        """Run the compiled executable for these arguments, even under ``disable_jit``
        (op-by-op execution needs compiled primitives, or it would recurse forever). Under
        ``olympus_debug_nans`` / ``_infs`` the outputs are checked here, naming this
        function (a primitive, when op by op)."""
        outs, call = self._compiled_call(args, kwargs)
        if config.check_special:
            debugging.check_outputs(call.name, outs)
        return outs

    def _compiled_call(self, args, kwargs):
        call, leaves = self._specialize(args, kwargs)
        if config.olympus_no_execution:
            raise RuntimeError(f"OLYMPUS tried to execute function jit({call.name}), but the "
                               "no_execution config option is set")
        if call.refs is not None:
            return call.refs.run(leaves), call
        exe = call.executable
        if exe is None:  # the first call(s) of a signature: compile it once
            with call._compile_lock:
                exe = call.executable or call.compile()
        return call.run(exe, leaves, check_types=False), call

    def cache_miss(self, *args, **kwargs):
        """Called by the C++ fast path: returns (outputs, fast-path data or None)."""
        if type(trace_ctx.trace) is not EvalTrace or config.olympus_disable_jit:
            if (not self._inline and not config.olympus_disable_jit
                    and self._in_shardings is None and self._out_shardings is None):
                return nested_jit.call(self, args, kwargs), None, False
            # Inlined into the enclosing trace: static arguments must still be hashable.
            self._check_statics(args, kwargs)
            return self._fun(*args, **kwargs), None, False
        checking_keys = config._values["olympus_debug_key_reuse"]
        if checking_keys:  # consumed keys are tracked per call: no C++ fast path
            from ..random._key_reuse import checked_jit_call

            outs, call = checked_jit_call(self, args, kwargs)
        else:
            outs, call = self._compiled_call(args, kwargs)
        if config.check_special:  # every call checked: no C++ fast path
            kind = debugging.invalid_kind(tree_util.tree_leaves(outs))
            if kind is not None:
                debugging.rerun_deoptimized(self._fun, args, kwargs, call.name, kind)
            return outs, None, False
        if _layouts.state.custom_layouts_made and _layouts.any_custom_layout((args, kwargs)):
            return outs, None, False  # relaid out on every call: see `layouts`
        return outs, None if checking_keys else call.fastpath_data(), False

    def trace(self, *args, **kwargs) -> stages.Traced:
        stages.check_not_traced(tree_util.tree_leaves((args, kwargs)))
        call, _ = self._specialize(args, kwargs)
        return stages.Traced(call)

    def lower(self, *args, **kwargs) -> stages.Lowered:
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        call, _ = self._specialize(args, kwargs)
        return tree_util.tree_unflatten(call.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in call.out_avals])

    def clear_cache(self):
        self._calls.clear()
        self._nested_calls.clear()


def _hashable_static(v, where):
    try:
        hash(v)
    except TypeError as e:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(v)}, {v}. The error was:\nTypeError: {e}\n"
        ) from None
    return v


def _shard_arg_fallback(x, sharding, layout):
    """The C++ fast path's hook for arguments it cannot place itself (non-array types,
    uncommitted arrays for a computation on other devices)."""
    return rt.device_put(x, sharding)


#: The type of what `jit` returns (jaxlib's C++ PjitFunction, carrying Olympus attributes).
Wrapped = _jax.PjitFunction


def _compiler_options(options):
    """`jit`'s compiler_options: None or a dict of XLA option names to hashable values."""
    if options is None:
        return None
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise TypeError("jit: compiler_options must be a dict from XLA option names (str) "
                        f"to values, got {options!r}")
    try:
        hash(tuple(options.values()))
    except TypeError:
        raise TypeError(f"jit: compiler_options values must be hashable, got {options!r}") from None
    return dict(options)


def _device_backend(device, backend, in_shardings, out_shardings):
    """The deprecated `device`/`backend` arguments of `jit`, as the shardings they mean."""
    warnings.warn(
        "backend and device argument on jit is deprecated. You can use "
        '`olympus.device_put(..., olympus.local_devices(backend="cpu")[0])` on the inputs '
        "to the jitted function to get the same behavior.", DeprecationWarning, stacklevel=3)
    if in_shardings is not None or out_shardings is not None:
        raise ValueError("If backend or device is specified on jit, then in_shardings and "
                         "out_shardings should not be specified.")
    if backend is not None and backend != rt.default_backend():
        raise RuntimeError(f"Unknown backend {backend!r}: this process has only "
                           f"{rt.default_backend()!r}")
    if device is None:
        return None, None
    if not isinstance(device, rt.Device):
        raise TypeError(f"jit: device must be an olympus.Device, got {device!r}")
    s = rt.SingleDeviceSharding(device)
    return s, s


class _NotSpecified:
    """The default of `jit`'s function: omitted means "decorator factory", while an
    explicit None is an error (as in JAX)."""

    def __repr__(self) -> str:
        return "NotSpecified"


_NOT_SPECIFIED = _NotSpecified()


def jit(fun: Callable | Any = _NOT_SPECIFIED, *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None, keep_unused: bool = False,
        in_shardings: Any = None, out_shardings: Any = None, device: Any = None,
        backend: str | None = None, inline: bool = False,
        compiler_options: dict[str, Any] | None = None, **unsupported: Any):
    """Compile `fun` with XLA: traced and compiled once per argument signature.

    `in_shardings` / `out_shardings` (shardings, PartitionSpecs on the current mesh, or
    pytrees of them, None for unspecified) place the computation over several devices;
    XLA's SPMD partitioner (Shardy) partitions it. Called while another function is being
    traced, a jitted function is one ``jit`` equation of the caller's olympuspr (a private
    function of its module); ``inline=True`` traces it into the caller instead. `compiler_options` are XLA compile options (an unknown one fails at
    compile time, as in JAX). `device` and `backend` are deprecated, as in JAX: `device`
    runs the computation on that device.
    """
    if unsupported:
        raise TypeError(f"jit() got an unexpected keyword argument '{next(iter(unsupported))}'")
    if device is not None or backend is not None:
        in_shardings, out_shardings = _device_backend(device, backend, in_shardings,
                                                      out_shardings)
    if fun is _NOT_SPECIFIED:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, keep_unused=keep_unused,
                                 in_shardings=in_shardings, out_shardings=out_shardings,
                                 inline=inline, compiler_options=compiler_options)
    state = Jitted(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                   keep_unused, in_shardings, out_shardings, compiler_options)
    name = fun_name(fun)
    wrapped = _jax.pjit(
        name, fun, state.cache_miss, list(state._static_argnums),
        list(state._static_argnames), ("olympus", state._options), tree_util.dispatch_registry,
        _shard_arg_fallback, _cpp_cache)
    try:
        functools.update_wrapper(wrapped, fun, updated=())
    except AttributeError:  # pragma: no cover - exotic callables
        pass
    state._inline = bool(inline)
    wrapped._olympus_jit = state
    return wrapped


# The stages API and `clear_cache` are methods of the PjitFunction class (as JAX defines
# them), reading the instance's `_olympus_jit`. Per-instance attributes that refer back to
# the instance (a bound method, a closure over it) would form a cycle through the C++
# object's __dict__, which Python's cycle collector cannot see into: every jitted function
# and all it compiled would then live forever.
def _trace(self, *args, **kwargs) -> stages.Traced:
    return self._olympus_jit.trace(*args, **kwargs)


def _lower(self, *args, **kwargs) -> stages.Lowered:
    return self._olympus_jit.lower(*args, **kwargs)


def _eval_shape(self, *args, **kwargs):
    return self._olympus_jit.eval_shape(*args, **kwargs)


def _cache_info(self) -> cache_explain.CacheInfo:
    """Hits, misses (traces) and the signatures this function holds (see
    `cache_explain`)."""
    return cache_explain.cache_info(self._olympus_jit, CACHE_CAPACITY)


def _clear_cache(self) -> None:
    """Forget every compiled signature (both the Python and the C++ caches)."""
    self._olympus_jit.clear_cache()
    self._clear_cache()


Wrapped.trace = _trace
Wrapped.lower = _lower
Wrapped.eval_shape = _eval_shape
Wrapped.clear_cache = _clear_cache
Wrapped.cache_info = _cache_info


def clear_all() -> None:
    """Forget every jitted function's compiled signatures (``olympus.clear_caches``)."""
    for calls in [*_cache.values(), *_nested_cache.values()]:
        calls.clear()
    with _order_lock:
        _order.clear()
    _cpp_cache.clear()
