"""Key-typed programs rewritten to their key data, for lowering.

A program may hold typed PRNG keys (values of dtype ``key<fry>``, `dtypes.KeyDType`); the
runtime and the lowered module hold such a value as its ``uint32`` data (``key<fry>[n]`` is
``u32[n,2]``, `olympus_ir.avals.physical_aval`), as JAX's module boundary does. Before
lowering, `physicalize` re-traces the program with every key value replaced by its data:
the ``random_*`` primitives become their implementation's functions of the data (the
threefry2x32 hash for ``fry``, XLA's ``rng_bit_generator`` for ``rbg``/``urbg``), the data
movements applied to keys (slicing, reshapes, broadcasts, selects...) move the data with the
trailing key dimensions kept whole, and sub-programs (nested jit, scan, while, cond) are
rewritten the same way. Programs without keys are left alone.
"""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_ir.avals import physical_aval
from olympus_ir.core import ClosedOlympuspr, Literal, Olympuspr
from olympus_ir.prims import random as random_prims
from olympus_trace.core import bind
from olympus_trace.olympuspr_utils import _literal_value
from olympus_trace.staging import source_override, trace_to_olympuspr

__all__ = ["has_keys", "physicalize"]


def _is_key(aval) -> bool:
    return type(getattr(aval, "dtype", None)) is dtypes.KeyDType


def _sub_programs(params):
    for v in params.values():
        if isinstance(v, (ClosedOlympuspr, Olympuspr)):
            yield v
        elif isinstance(v, (tuple, list)):
            for x in v:
                if isinstance(x, (ClosedOlympuspr, Olympuspr)):
                    yield x


def _olympuspr_has_keys(jpr: Olympuspr, seen: dict) -> bool:
    found = seen.get(id(jpr))
    if found is not None:
        return found
    seen[id(jpr)] = False
    found = any(_is_key(v.aval) for v in (*jpr.constvars, *jpr.invars, *jpr.outvars)
                if hasattr(v, "aval"))
    if not found:
        for eqn in jpr.eqns:
            if (eqn.primitive in random_prims.KEY_PRIMITIVES
                    or any(_is_key(v.aval) for v in eqn.outvars)
                    or any(_is_key(getattr(v, "aval", None)) for v in eqn.invars)
                    or any(_olympuspr_has_keys(_open(s), seen)
                           for s in _sub_programs(eqn.params))):
                found = True
                break
    seen[id(jpr)] = found
    return found


def _open(p):
    return p.olympuspr if isinstance(p, ClosedOlympuspr) else p


def has_keys(closed: ClosedOlympuspr | Olympuspr) -> bool:
    """Whether `closed` (or a program inside it) holds typed keys."""
    return _olympuspr_has_keys(_open(closed), {})


def physicalize(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """`closed` with every key value replaced by its ``uint32`` data (see the module
    docstring); `closed` itself when it holds no keys."""
    if not has_keys(closed):
        return closed
    jpr = closed.olympuspr
    consts = [_physical_const(c) for c in closed.consts]
    in_avals = [physical_aval(a) for a in closed.in_avals]

    def run(*args):
        return _eval(jpr, consts, args)

    new, _ = trace_to_olympuspr(run, in_avals, jpr.debug_info)
    return new


def _physical_const(c):
    from ._prng import PRNGKeyArray

    return c._base if isinstance(c, PRNGKeyArray) else c


def _physicalize_param(p):
    if isinstance(p, ClosedOlympuspr):
        return physicalize(p)
    if isinstance(p, Olympuspr):
        if not has_keys(p):
            return p
        if p.constvars:
            raise NotImplementedError("a sub-program with free constants holding PRNG keys")
        return physicalize(ClosedOlympuspr(p, [])).olympuspr
    return p


def _eval(jpr: Olympuspr, consts, args) -> list:
    env: dict[int, object] = {}

    def read(v):
        return _literal_value(v) if isinstance(v, Literal) else env[id(v)]

    for v, x in zip(jpr.constvars, consts, strict=True):
        env[id(v)] = x
    for v, x in zip(jpr.invars, args, strict=True):
        env[id(v)] = x
    override = source_override
    outer = override[0]
    try:
        for eqn in jpr.eqns:
            override[0] = eqn.source_info or outer
            invals = [read(v) for v in eqn.invars]
            out = _physical_eqn(eqn, invals)
            outs = out if eqn.primitive.multiple_results else [out]
            for v, x in zip(eqn.outvars, outs, strict=True):
                env[id(v)] = x
    finally:
        override[0] = outer
    return [read(v) for v in jpr.outvars]


def _physical_eqn(eqn, invals):
    prim, params = eqn.primitive, eqn.params
    rule = _KEY_RULES.get(prim.name)
    if rule is not None and prim in random_prims.KEY_PRIMITIVES:
        return rule(eqn, *invals, **params)
    subs = [s for s in _sub_programs(params)]
    if subs:
        if any(has_keys(s) for s in subs):
            params = {k: (tuple(_physicalize_param(x) for x in v) if isinstance(v, (tuple, list))
                          and any(isinstance(x, (ClosedOlympuspr, Olympuspr)) for x in v)
                          else _physicalize_param(v))
                      for k, v in params.items()}
        return bind(prim, *invals, **params)
    key_avals = [v.aval for v in eqn.outvars if _is_key(v.aval)]
    key_avals += [v.aval for v in eqn.invars if _is_key(getattr(v, "aval", None))]
    if not key_avals:
        return bind(prim, *invals, **params)
    mover = _MOVES.get(prim.name)
    if mover is None:
        raise TypeError(f"{prim.name} is not supported on PRNG key arrays "
                        f"({', '.join(a.str_short() for a in key_avals)}).")
    return mover(eqn, key_avals[0].dtype.key_shape, invals, dict(params))


# --- the random_* primitives on key data -------------------------------------------------------


def _with_impl(impl, fn):
    """Run an implementation function with `impl` active (the raw helpers dispatch on it)."""
    from . import _prng

    prev = _prng._active.impl
    _prng._active.impl = _prng._IMPLS[impl.name]
    try:
        return fn(_prng._IMPLS[impl.name])
    finally:
        _prng._active.impl = prev


def _batched(fn, data, nbatch: int, *rest):
    """Apply the single-key function `fn(key, *rest)` over the `nbatch` leading key
    dimensions of `data` (and of `rest`, when they have them)."""
    if nbatch == 0:
        return fn(data, *rest)
    from olympus._src.api import vmap

    in_axes = (0,) * (1 + len(rest))
    return _batched(lambda d, *r: vmap(fn, in_axes=in_axes)(d, *r), data, nbatch - 1, *rest)


def _seed_rule(eqn, seeds, *, impl):
    nb = eqn.invars[0].aval.ndim
    return _with_impl(impl, lambda i: _batched(i.seed, seeds, nb))


def _split_rule(eqn, keys, *, shape):
    dt = eqn.invars[0].aval.dtype
    nb = eqn.invars[0].aval.ndim
    return _with_impl(dt.impl, lambda i: _batched(lambda k: i.split(k, tuple(shape)), keys, nb))


def _fold_in_rule(eqn, keys, msgs):
    from olympus_trace import lax_ops as lax

    kav, mav = eqn.invars[0].aval, eqn.invars[1].aval
    dt = kav.dtype
    shape = eqn.outvars[0].aval.shape
    if kav.shape != shape:
        keys = lax.broadcast_in_dim(keys, shape + dt.key_shape,
                                    tuple(range(len(shape), len(shape) + len(dt.key_shape))))
    if mav.shape != shape:
        msgs = lax.broadcast_in_dim(msgs, shape, ())
    return _with_impl(dt.impl, lambda i: _batched(i.fold_in, keys, len(shape), msgs))


def _bits_rule(eqn, keys, *, bit_width, shape):
    dt = eqn.invars[0].aval.dtype
    nb = eqn.invars[0].aval.ndim
    return _with_impl(dt.impl, lambda i: _batched(
        lambda k: i.random_bits(k, bit_width, tuple(shape)), keys, nb))


def _same_data(eqn, data, **params):
    return data


def _gamma_rule(eqn, keys, a, *, log_space):
    """``random_gamma`` as the program of its typed-key implementation (JAX lowers it
    through ``lower_fun`` of its impl), itself rewritten to key data and inlined here."""
    from ._gamma import _random_gamma_samples

    in_avals = [v.aval for v in eqn.invars]
    closed, _ = trace_to_olympuspr(
        lambda k, x: [_random_gamma_samples(k, x, log_space)], in_avals)
    closed = physicalize(closed)
    return _eval(closed.olympuspr, closed.consts, [keys, a])[0]


_KEY_RULES = {
    "random_seed": _seed_rule,
    "random_split": _split_rule,
    "random_fold_in": _fold_in_rule,
    "random_bits": _bits_rule,
    "random_wrap": _same_data,
    "random_unwrap": _same_data,
    "random_clone": _same_data,
    "consume": _same_data,
    "assert_consumed_value": _same_data,
    "random_gamma": _gamma_rule,
}


# --- data movements applied to keys -------------------------------------------------------------


def _trailing(nd: int, key_shape) -> tuple:
    return tuple(range(nd, nd + len(key_shape)))


def _move_slice(eqn, ks, invals, p):
    p["start_indices"] = tuple(p["start_indices"]) + (0,) * len(ks)
    p["limit_indices"] = tuple(p["limit_indices"]) + tuple(ks)
    if p.get("strides") is not None:
        p["strides"] = tuple(p["strides"]) + (1,) * len(ks)
    return bind(eqn.primitive, *invals, **p)


def _move_reshape(eqn, ks, invals, p):
    p["new_sizes"] = tuple(p["new_sizes"]) + tuple(ks)
    if p.get("dimensions") is not None:
        p["dimensions"] = tuple(p["dimensions"]) + _trailing(eqn.invars[0].aval.ndim, ks)
    return bind(eqn.primitive, *invals, **p)


def _move_broadcast(eqn, ks, invals, p):
    shape = tuple(p["shape"])
    p["shape"] = shape + tuple(ks)
    p["broadcast_dimensions"] = tuple(p["broadcast_dimensions"]) + _trailing(len(shape), ks)
    return bind(eqn.primitive, *invals, **p)


def _move_transpose(eqn, ks, invals, p):
    perm = tuple(p["permutation"])
    p["permutation"] = perm + _trailing(len(perm), ks)
    return bind(eqn.primitive, *invals, **p)


def _move_select(eqn, ks, invals, p):
    from olympus_trace import lax_ops as lax

    pred, *cases = invals
    pav = eqn.invars[0].aval
    if pav.ndim:
        shape = eqn.outvars[0].aval.shape + tuple(ks)
        pred = lax.broadcast_in_dim(pred, shape, tuple(range(pav.ndim)))
    return bind(eqn.primitive, pred, *cases, **p)


def _zero_indices(eqn, first_index: int, ks):
    idx = eqn.invars[first_index:]
    dt = idx[0].aval.dtype if idx else np.dtype(np.int32)
    return [np.zeros((), dt)] * len(ks)


def _move_dynamic_slice(eqn, ks, invals, p):
    p["slice_sizes"] = tuple(p["slice_sizes"]) + tuple(ks)
    return bind(eqn.primitive, *invals, *_zero_indices(eqn, 1, ks), **p)


def _move_dynamic_update_slice(eqn, ks, invals, p):
    return bind(eqn.primitive, *invals, *_zero_indices(eqn, 2, ks), **p)


def _move_same(eqn, ks, invals, p):
    """Operations whose parameters name only leading dimensions (or none)."""
    return bind(eqn.primitive, *invals, **p)


class _PhysicalExported:
    """An `Exported` seen with its key-typed inputs and outputs as their data (its module
    already has those types, as JAX's serialized modules do)."""

    def __init__(self, exported):
        self._exported = exported
        self.in_avals = tuple(physical_aval(a) for a in exported.in_avals)
        self.out_avals = tuple(physical_aval(a) for a in exported.out_avals)

    def __getattr__(self, name):
        return getattr(self._exported, name)

    def __hash__(self):
        return hash(("physical", id(self._exported)))

    def __eq__(self, other):
        return type(other) is _PhysicalExported and other._exported is self._exported


def _move_call_exported(eqn, ks, invals, p):
    p["exported"] = _PhysicalExported(p["exported"])
    return bind(eqn.primitive, *invals, **p)


_MOVES = {
    "call_exported": _move_call_exported,
    "slice": _move_slice,
    "reshape": _move_reshape,
    "broadcast_in_dim": _move_broadcast,
    "transpose": _move_transpose,
    "select_n": _move_select,
    "dynamic_slice": _move_dynamic_slice,
    "dynamic_update_slice": _move_dynamic_update_slice,
    **{name: _move_same for name in (
        "squeeze", "expand_dims", "concatenate", "stack", "unstack", "rev", "copy", "copy_p",
        "optimization_barrier", "device_put", "sharding_constraint")},
}


# --- the jit boundary --------------------------------------------------------------------------


def key_data_leaves(leaves) -> list:
    """A jitted call's argument leaves with each key array (or `EArray` of keys) replaced
    by its data."""
    from .._src.extended_arrays import EArray
    from ._prng import PRNGKeyArray

    return [x._base if isinstance(x, PRNGKeyArray) else x._data if type(x) is EArray else x
            for x in leaves]


def wrap_key_outputs(outs, out_avals) -> list:
    """A jitted call's outputs with each key-typed one's data wrapped as a key array."""
    from ._prng import _IMPLS, PRNGKeyArray

    return [PRNGKeyArray(x, _IMPLS[a.dtype.impl.name]) if _is_key(a) else x
            for x, a in zip(outs, out_avals, strict=True)]


def dispatch_out_tree(out_tree, out_avals):
    """A jitted call's output structure as jit's C++ dispatch builds it: key arrays are
    nodes over their data there (`tree_util.dispatch_registry`)."""
    from olympus_trace import tree_util

    from ._prng import _IMPLS, PRNGKeyArray

    stand_ins = [PRNGKeyArray(np.zeros(physical_aval(a).shape, np.uint32),
                              _IMPLS[a.dtype.impl.name]) if _is_key(a) else 0
                 for a in out_avals]
    return tree_util.dispatch_registry.flatten(tree_util.tree_unflatten(out_tree, stand_ins))[1]
