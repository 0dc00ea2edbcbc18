"""`olympus.custom_batching`: functions with a user-defined vmap rule (``custom_vmap``) and
``sequential_vmap`` (batch by a loop).

The rule takes effect where vmap meets the call: when a ``custom_vmap`` function is called
with values batched by the innermost vmap, the rule is called with the axis size, which
arguments are batched (a pytree of bools like the arguments) and the arguments with their
batch axis first; it returns the outputs and which of them are batched. Elsewhere (eager,
jit, differentiation) the function itself runs. Unlike JAX, the call is not recorded as a
``custom_vmap_call`` equation: a function staged by jit (or differentiated) before it is
batched is batched primitive by primitive, which gives the same values whenever the rule
agrees with the function, as a rule must.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from olympus_trace import tree_util
from olympus_trace.batching import BatchTrace, BatchTracer, moveaxis
from olympus_trace.core import current_trace, set_current_trace

__all__ = ["custom_vmap", "sequential_vmap"]


class custom_vmap:  # noqa: N801 - JAX's name
    """Wrap `fun` so that vmap of it runs a rule set with ``def_vmap``."""

    def __init__(self, fun: Callable):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable | None = None

    def def_vmap(self, vmap_rule: Callable) -> Callable:
        """Set the batching rule ``rule(axis_size, in_batched, *args) -> (out, out_batched)``;
        returns it (usable as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self.fun, "__name__", repr(self.fun))
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 "using def_vmap.")
        if kwargs:
            import inspect

            args = inspect.signature(self.fun).bind(*args, **kwargs).args
        flat, in_tree = tree_util.tree_flatten(args)
        trace = current_trace()
        if not (isinstance(trace, BatchTrace)
                and any(isinstance(x, BatchTracer) and x._trace is trace for x in flat)):
            return self.fun(*args)
        vals, dims = zip(*(trace.to_batch_info(x) for x in flat))
        size = trace.axis_data.size
        with set_current_trace(trace.parent):
            vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
            in_batched = tree_util.tree_unflatten(in_tree, [d is not None for d in dims])
            out, out_batched = self.vmap_rule(size, list(in_batched),
                                              *tree_util.tree_unflatten(in_tree, vals))
        rule_name = getattr(self.vmap_rule, "__name__", repr(self.vmap_rule))
        flat_out, out_tree = tree_util.tree_flatten(out)
        flat_batched, batched_tree = tree_util.tree_flatten(out_batched)
        if out_tree != batched_tree:
            raise ValueError(
                "structure of output value and output batching specification returned by "
                f"custom vmap rule ({rule_name}) do not match.\n"
                f"Output values: {out_tree}\nBatching spec: {batched_tree}")
        results = []
        for o, b in zip(flat_out, flat_batched):
            if b:
                shape = getattr(o, "shape", ())
                if not shape or shape[0] != size:
                    raise ValueError(
                        f"custom vmap rule ({rule_name}) marked an output as batched, but its "
                        f"leading axis is not the batch axis of size {size}: shape {shape}")
                results.append(BatchTracer(trace, o, 0))
            else:
                results.append(o)
        return tree_util.tree_unflatten(out_tree, results)


def sequential_vmap(f: Callable) -> custom_vmap:
    """`f` as a custom_vmap whose batching rule is a loop (``lax.map``) over the batch:
    for functions without a batching rule, or whose vectorized form costs too much memory."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        from ..lax import map as lax_map

        flat, tree = tree_util.tree_flatten(args)
        flat_batched = tree_util.tree_leaves(in_batched)
        mapped = [x for x, b in zip(flat, flat_batched) if b]

        def one(xs):
            it = iter(xs)
            leaves = [next(it) if b else x for x, b in zip(flat, flat_batched)]
            return f.fun(*tree_util.tree_unflatten(tree, leaves))

        out = lax_map(one, mapped)
        return out, tree_util.tree_map(lambda _: True, out)

    return f
