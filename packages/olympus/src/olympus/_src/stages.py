"""The ahead-of-time stages: Wrapped -> Traced -> Lowered -> Compiled.

Each stage is a thin object over the next artifact: the closed olympuspr, the StableHLO
module, the loaded executable. A `Compiled` is bound to one type signature: it refuses
arguments of other types and refuses to be transformed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import olympus_runtime as rt
from olympus_ir.avals import ShapedArray
from olympus_runtime.layout import Format
from olympus_trace import tree_util
from olympus_trace.core import Tracer

#: XLA compiler options for `Lowered.compile`: option name -> value (JAX's type).
CompilerOptions = dict[str, str | bool]


class ArgInfo(NamedTuple):
    """What a stage knows about one argument."""

    shape: tuple
    dtype: np.dtype
    weak_type: bool
    donated: bool

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)


class OutInfo(NamedTuple):
    shape: tuple
    dtype: np.dtype
    weak_type: bool


def _transform_error(x: Tracer) -> TypeError:
    return TypeError(
        "Cannot apply OLYMPUS transformations to a function lowered and compiled for a "
        f"particular signature. Detected argument of Tracer type {type(x)}."
    )


def check_not_traced(leaves) -> None:
    for x in leaves:
        if isinstance(x, Tracer):
            raise _transform_error(x)


class Stage:
    """Shared by Traced, Lowered and Compiled: the argument and result structure."""

    _meta: Any  # a jit.SpecializedCall

    @property
    def in_tree(self):
        return self._meta.in_tree

    @property
    def out_tree(self):
        return self._meta.out_tree

    @property
    def args_info(self):
        m = self._meta
        infos = [ArgInfo(a.shape, a.dtype, a.weak_type, d)
                 for a, d in zip(m.in_avals, m.donated_mask)]
        return tree_util.tree_unflatten(m.in_tree, infos)

    @property
    def out_info(self):
        m = self._meta
        infos = [OutInfo(a.shape, a.dtype, a.weak_type) for a in m.out_avals]
        return tree_util.tree_unflatten(m.out_tree, infos)

    def __call__(self, *args, **kwargs):
        check_not_traced(tree_util.tree_leaves((args, kwargs)))
        raise TypeError(
            f"A {type(self).__name__} object is not callable; call .lower().compile() first."
        )


class Traced(Stage):
    """A function traced at one signature: `.olympuspr`, then `.lower()`."""

    def __init__(self, meta):
        self._meta = meta

    @property
    def olympuspr(self):
        return self._meta.closed

    @property
    def fun_name(self) -> str:
        return self._meta.name

    @property
    def lojax(self) -> LoTraced:
        """The low-level form (JAX's name): user high-level primitives expanded, custom
        derivative calls of high-level functions inlined (`olympuspr` as is if none)."""
        from olympus_trace.hi_primitives import lower_high_level

        return LoTraced(self._meta, lower_high_level(self._meta.closed))

    @property
    def loolympus(self) -> LoTraced:
        """`lojax` under Olympus's name for it (jax -> olympus)."""
        return self.lojax

    def lower(self) -> Lowered:
        return Lowered(self._meta, self._meta.lower())

    def __call__(self, *args, **kwargs):
        """Evaluate the traced olympuspr on the dynamic arguments (static ones were fixed at
        trace time), as JAX's `Traced` does: each equation runs in the current trace, so
        outside any trace op by op, inside another transformation inlined."""
        from olympus_trace.olympuspr_utils import eval_olympuspr

        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self._meta.in_tree:
            raise TypeError(
                f"A Traced object for {self.fun_name} takes arguments of structure "
                f"{self._meta.in_tree} (its dynamic arguments), got {tree}.")
        closed = self._meta.closed
        outs = eval_olympuspr(closed.olympuspr, closed.consts, *leaves)
        return tree_util.tree_unflatten(self._meta.out_tree, outs)


class LoTraced(Traced):
    """`Traced.lojax`: the same function, its olympuspr in low-level form."""

    def __init__(self, meta, closed):
        super().__init__(meta)
        self._closed = closed

    @property
    def olympuspr(self):
        return self._closed

    def __call__(self, *args, **kwargs):
        from olympus_trace.olympuspr_utils import eval_olympuspr

        leaves, _ = tree_util.tree_flatten((args, kwargs))
        outs = eval_olympuspr(self._closed.olympuspr, self._closed.consts, *leaves)
        return tree_util.tree_unflatten(self._meta.out_tree, outs)


class Lowered(Stage):
    """A function lowered to StableHLO: `.as_text()`, then `.compile()`."""

    def __init__(self, meta, lowered_module):
        self._meta = meta
        self._lowered = lowered_module

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module as text: StableHLO (the default) or ``dialect='hlo'``; with
        `debug_info`, the source locations too (for HLO, the instructions' metadata and
        the file/frame tables it refers to)."""
        if dialect == "hlo":
            if debug_info:
                from jaxlib import _hlo

                options = _hlo.HloPrintOptions.short_parsable()
                options.print_metadata = True
                return self._lowered.as_hlo().as_hlo_module().to_string(options)
            return self._lowered.as_hlo().as_hlo_text()
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"unknown dialect: {dialect}")
        return self._lowered.as_text(debug_info=debug_info)

    def compiler_ir(self, dialect: str | None = None):
        """The module: an MLIR ``Module`` (StableHLO, the default) or, with
        ``dialect='hlo'``, an ``XlaComputation``."""
        if dialect == "hlo":
            return self._lowered.as_hlo()
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"unknown dialect: {dialect}")
        return self._lowered.module

    def cost_analysis(self) -> dict | None:
        try:
            return self.compile().cost_analysis()
        except Exception:  # pragma: no cover - analysis is best effort
            return None

    def compile(self, compiler_options: CompilerOptions | None = None) -> Compiled:
        exe = self._meta.compile(self._lowered, compiler_options)
        return Compiled(self._meta, exe)


class Compiled(Stage):
    """An executable for one signature. Calling it checks argument types first."""

    def __init__(self, meta, executable):
        self._meta = meta
        self._executable = executable

    def cost_analysis(self) -> dict | None:
        try:
            return self._executable.cost_analysis()
        except Exception:  # pragma: no cover - unavailable on some backends
            return None

    def memory_analysis(self):
        try:
            return self._executable.memory_analysis()
        except Exception:  # pragma: no cover
            return None

    def as_text(self) -> str | None:
        try:
            return self._executable.as_text()
        except Exception:  # pragma: no cover
            return None

    def runtime_executable(self):
        return self._executable

    @property
    def input_shardings(self):
        """(args' shardings, kwargs' shardings) as pytrees like the arguments (unused
        arguments, which the executable does not take, are shown replicated where they
        would be put)."""
        m = self._meta
        exe = self._executable
        n_hoisted = len(m._hoisted)
        kept = list(exe.in_shardings[n_hoisted:])
        flat = []
        it = iter(kept)
        for i in range(len(m.in_avals)):
            if m.kept is None or i in m.kept:
                flat.append(next(it))
            else:
                p = m.placement.in_shardings
                flat.append(p[i] if p is not None else exe.in_shardings[0]
                            if exe.in_shardings else None)
        return tree_util.tree_unflatten(m.in_tree, flat)

    @property
    def output_shardings(self):
        return tree_util.tree_unflatten(self._meta.out_tree,
                                        list(self._executable.out_shardings))

    @property
    def input_formats(self):
        """(args' formats, kwargs' formats): the layout and sharding the executable takes
        each argument in (an unused argument, which it does not take, has
        ``Format(None, None)``, as in JAX)."""
        from .layouts import executable_formats

        m = self._meta
        ins, _ = executable_formats(self._executable, len(m._hoisted))
        it = iter(ins)
        flat = [next(it) if m.kept is None or i in m.kept else Format()
                for i in range(len(m.in_avals))]
        return tree_util.tree_unflatten(m.in_tree, flat)

    @property
    def output_formats(self):
        """The layout and sharding of each result, a pytree like the outputs."""
        from .layouts import executable_formats

        _, outs = executable_formats(self._executable, len(self._meta._hoisted))
        return tree_util.tree_unflatten(self._meta.out_tree, outs)

    @property
    def cache_key(self) -> str | None:
        """The persistent compilation cache's key of this executable (hex sha256 of the
        module, compile options, devices, backend and jaxlib version)."""
        return self._executable.cache_key

    def save(self, path) -> None:
        """Write this executable and its calling convention to `path`, for
        `olympus.stages.load_compiled` in this or a later process (no pickle)."""
        from .saved_compiled import save

        save(self, path)

    def __call__(self, *args, **kwargs):
        m = self._meta
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        check_not_traced(leaves)
        if tree != m.call_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was "
                f"called with. Compiled with {m.call_tree} and called with {tree}."
            )
        return m.run(self._executable, leaves, check_types=True)


__all__ = ["ArgInfo", "CompilerOptions", "OutInfo", "Traced", "Lowered", "Compiled", "rt"]
